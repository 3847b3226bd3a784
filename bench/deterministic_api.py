"""torch.use_deterministic_algorithms(True) through the public API (issue 12): fa.attention's
backward then runs the deterministic backward kernel (fa-to-ptx{deterministic}); dq of repeated
loss.backward() calls is bitwise equal, and right against torch's math SDPA in f32. Without
the switch, the default kernel (dq may differ in its last bits between runs).

Bundle (here, with the compiler):
  PYTHONPATH=python FA_CAPI_LIBRARY=build/lib/libFAPythonCAPI.so python3 -m fa.precompile \
    --chip sm_90a --out BUNDLE $(python3 bench/deterministic_api.py --print-specs)
On the GPU machine: PYTHONPATH=python python3 bench/deterministic_api.py --bundle BUNDLE
"""
import argparse
import sys

SPECS = [f"{dt},d{d},{m},{kind}" for dt in ("f16", "bf16") for d in (64, 128)
         for m in ("causal", "full") for kind in ("lse", "grad", "grad,deterministic=true")]


def run(det, q, k, v, do, causal, runs=5):
    import torch
    import fa
    torch.use_deterministic_algorithms(det)
    dqs = []
    for _ in range(runs):
        qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
        out = fa.attention(qg, kg, vg, causal=causal)
        out.backward(do)
        dqs.append((qg.grad, kg.grad, vg.grad))
    torch.use_deterministic_algorithms(False)
    distinct = len({bytes(g[0].view(torch.int16).cpu().numpy()) for g in dqs})
    return distinct, dqs[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundle")
    ap.add_argument("--print-specs", action="store_true")
    a = ap.parse_args()
    if a.print_specs:
        print(" ".join(SPECS))
        return
    import torch
    import torch.nn.functional as F
    import fa
    fa.load_bundle(a.bundle)
    bad = 0
    for dt in (torch.float16, torch.bfloat16):
        for d in (64, 128):
            for causal in (True, False):
                torch.manual_seed(d)
                B, H, N = 2, 8, 2000
                q, k, v, do = (torch.randn(B, H, N, d, device="cuda", dtype=dt)
                               for _ in range(4))
                q32, k32, v32 = (t.float().requires_grad_() for t in (q, k, v))
                F.scaled_dot_product_attention(q32, k32, v32, is_causal=causal).backward(
                    do.float())
                for det in (True, False):
                    distinct, grads = run(det, q, k, v, do, causal)
                    errs = [((g.float() - r.grad).abs().max() / r.grad.abs().max()).item()
                            for g, r in zip(grads, (q32, k32, v32))]
                    tol = 1e-2 if dt == torch.float16 else 3e-2
                    ok = all(e <= tol for e in errs) and (distinct == 1 or not det)
                    bad += not ok
                    print(f"{'ok  ' if ok else 'FAIL'} {str(dt)[6:]:8s} d{d} "
                          f"{'causal' if causal else 'full  '} deterministic={det!s:5s}: "
                          f"distinct dq over 5 backward calls {distinct}; rel err dq dk dv "
                          + " ".join(f"{e:.1e}" for e in errs), flush=True)
    print(f"{bad} failures")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
