"""fa.attention with kv_lens and page tables through the public API on the GPU (what a user
calls): prefill-like calls (Nq > 1, causal per sequence, GQA), decoding (one row, split through
the page table), the README's example, against fa.torch_ops.reference (the same semantics,
written with torch) in float32.

    python3 -m fa.precompile --chip sm_90a --out BUNDLE $(python3 bench/bench_decode.py --paged --print-specs)
    FA_BUNDLE=BUNDLE python3 bench/kv_cache_api.py [--out FILE]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import torch  # noqa: E402

import fa  # noqa: E402
from fa import torch_ops  # noqa: E402


def paged_copy(k, v, lens, S, gen):
    """Pools [P, Hkv, S, D] holding the first lens[b] keys of k[b], v[b] in shuffled pages, the
    table [B, ceil(Nk / S)], NaN in every pool row that is no key."""
    B, Hkv, Nk, D = k.shape
    M = -(-Nk // S)
    P = B * M + 2
    perm = torch.randperm(P, generator=gen, device=k.device)[: B * M].view(B, M)
    kp = torch.full((P, Hkv, S, D), float("nan"), dtype=k.dtype, device=k.device)
    vp = torch.full_like(kp, float("nan"))
    for b in range(B):
        for m in range(M):
            rows = max(0, min(S, lens[b] - m * S))
            if rows:
                kp[perm[b, m], :, :rows] = k[b, :, m * S:m * S + rows]
                vp[perm[b, m], :, :rows] = v[b, :, m * S:m * S + rows]
    return kp, vp, perm.to(torch.int32).contiguous()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out")
    a = ap.parse_args()
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(7)
    results = []
    cases = [  # B, Hq, Hkv, Nq, Nk, causal, page sizes
        (3, 32, 8, 1, 5000, True, (16, 64, 256)),
        (2, 16, 4, 7, 1000, True, (16, 64)),
        (2, 8, 8, 300, 700, True, (64, 256)),
        (4, 8, 2, 33, 640, False, (16, 256)),
    ]
    for B, Hq, Hkv, Nq, Nk, causal, pages in cases:
        q = torch.randn(B, Hq, Nq, 128, generator=gen, device=dev).half()
        k = torch.randn(B, Hkv, Nk, 128, generator=gen, device=dev).half()
        v = torch.randn(B, Hkv, Nk, 128, generator=gen, device=dev).half()
        lens_list = [Nk] + [int(x) for x in torch.randint(0, Nk + 1, (B - 1,), generator=gen,
                                                            device=dev).tolist()]
        lens = torch.tensor(lens_list, dtype=torch.int32, device=dev)
        ref, ref_lse = torch_ops.reference(q.float(), k.float(), v.float(), causal=causal,
                                           return_lse=True, kv_lens=lens)
        calls = {"contiguous": lambda: fa.attention(q, k, v, causal=causal, kv_lens=lens,
                                                    return_lse=True)}
        for S in pages:
            kp, vp, table = paged_copy(k, v, lens_list, S, gen)
            calls[f"page={S}"] = (lambda kp=kp, vp=vp, table=table: fa.attention(
                q, kp, vp, causal=causal, kv_lens=lens, page_table=table, return_lse=True))
        for name, call in calls.items():
            out, lse = call()
            torch.cuda.synchronize()
            err = (out.float() - ref).abs().max().item()
            fin = torch.isfinite(ref_lse)
            lse_err = (lse[fin] - ref_lse[fin]).abs().max().item() if fin.any() else 0.0
            ok = err < 4e-3 and lse_err < 1e-3 and torch.equal(torch.isinf(lse), ~fin)
            results.append(dict(B=B, Hq=Hq, Hkv=Hkv, Nq=Nq, Nk=Nk, causal=causal, layout=name,
                                lens=lens_list, err=err, lse_err=lse_err, ok=bool(ok)))
            print(f"{'ok  ' if ok else 'FAIL'} B={B} Hq={Hq} Hkv={Hkv} Nq={Nq} Nk={Nk} "
                  f"causal={causal} {name:10s} lens={lens_list} err {err:.2e} lse {lse_err:.2e}",
                  flush=True)
    # The README's example, as written there.
    k_pool = torch.randn(4096, 8, 16, 128, dtype=torch.float16, device="cuda")
    table = torch.randperm(4096, device="cuda")[:4 * 256].view(4, 256).int()
    lens = torch.tensor([4000, 17, 0, 4096], dtype=torch.int32, device="cuda")
    q4 = torch.randn(4, 32, 1, 128, dtype=torch.float16, device="cuda")
    out = fa.attention(q4, k_pool, k_pool, causal=True, kv_lens=lens, page_table=table)
    ref = torch_ops.reference(q4.float(), k_pool.float(), k_pool.float(), causal=True,
                              kv_lens=lens, page_table=table)
    ref = ref[0] if isinstance(ref, tuple) else ref  # (out, lse)
    err = (out.float() - ref).abs().max().item()
    ok = err < 4e-3 and bool(torch.isfinite(out).all())
    results.append(dict(layout="readme", err=err, ok=ok))
    print(f"{'ok  ' if ok else 'FAIL'} README example err {err:.2e}")
    bad = [r for r in results if not r["ok"]]
    print(f"{len(results) - len(bad)}/{len(results)} right")
    if a.out:
        json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                       results=results), open(a.out, "w"), indent=1)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
