"""The fp8 kernels' compiled quantization (Kernel.quantize: the manifest's attention_fp8_quantize_q
/ _k / _v kernels) on the GPU machine, against bench_fp8.quantize (torch ops) and transpose_v_fp8:

    python3 bench/check_fp8_quantize.py DIR8 [--bench] [--out F.json]

DIR8 as for bench_fp8.py (its per-block kernels have the quantization kernels). --check (always):
q8, k8, v_t and the three descales bitwise equal to the torch reference (f16 and bf16 sources
from the f16 / bf16-out kernels; odd lengths, GQA, one row, outliers), then the attention on the
quantized operands equal to the attention on torch's; two negative controls (a flipped byte, a
changed descale) must be told apart. --bench: at 16k tokens, hidden 2048, d64/128/256: the three
kernels' time (and GB/s of bytes read and written) against the torch quantization, and
quantization + attention against the attention alone.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import torch  # noqa: E402

from bench_fp8 import fp8_name, quantize, run_fp8  # noqa: E402
from common import load_named, time_ms  # noqa: E402
from fa_runtime.driver import transpose_v_fp8  # noqa: E402


def reference(kern, q, k, v):
    (q8, qd), (k8, kd), (v8, vd) = (quantize(x, "block") for x in (q, k, v))
    return dict(q=q8, k=k8, v=None, v_t=transpose_v_fp8(v8, kern.manifest["v_key_order"]),
                q_descale=qd, k_descale=kd, v_descale=vd)


def same(a, b):
    if a.dtype == torch.float8_e4m3fn:
        a, b = a.view(torch.uint8), b.view(torch.uint8)
    return a.shape == b.shape and bool(torch.equal(a, b))


def check(k8dir):
    rows = []
    torch.manual_seed(0)
    for out in ("f16", "bf16"):
        for d in (64, 128, 256):
            for causal in (False, True):
                name = fp8_name(out, d, causal, granularity="block")
                path = os.path.join(k8dir, name + "_kernel.json")
                if not os.path.exists(path):
                    continue
                kern = load_named(k8dir, name)
                dt = torch.float16 if out == "f16" else torch.bfloat16
                for B, Hq, Hkv, Nq, Nk in ((2, 8, 2, 1000, 1000), (1, 4, 4, 77, 333),
                                           (1, 2, 1, 1, 1), (2, 6, 3, 333, 77),
                                           (1, 2, 2, 256, 512)):
                    q = torch.randn(B, Hq, Nq, d, device="cuda", dtype=dt)
                    k = torch.randn(B, Hkv, Nk, d, device="cuda", dtype=dt)
                    v = torch.randn(B, Hkv, Nk, d, device="cuda", dtype=dt)
                    # Outliers and blocks of very different magnitude.
                    for x in (q, k, v):
                        x.view(-1)[torch.randint(0, x.numel(), (max(1, x.numel() // 1000),),
                                                 device="cuda")] *= 100
                        x[..., : x.shape[2] // 2, :] *= 0.01
                    got = kern.quantize(q, k, v)
                    ref = reference(kern, q, k, v)
                    torch.cuda.synchronize()
                    eq = {n: same(got[n], ref[n]) for n in ref if ref[n] is not None}
                    o_got = run_fp8(kern, got["q"], got["k"], None, got["q_descale"],
                                    got["k_descale"], got["v_descale"], v_t=got["v_t"])
                    o_ref = run_fp8(kern, ref["q"], ref["k"], None, ref["q_descale"],
                                    ref["k_descale"], ref["v_descale"], v_t=ref["v_t"])
                    attn_eq = same(o_got, o_ref)
                    # Negative controls: what the comparison must catch.
                    bad = got["v_t"].clone()
                    bad.view(torch.uint8).view(-1)[0] ^= 1
                    caught_byte = not same(bad, ref["v_t"])
                    badd = got["k_descale"].clone()
                    badd.view(-1)[-1] *= 1.0000001 + 1e-6
                    caught_descale = not same(badd, ref["k_descale"])
                    ok = all(eq.values()) and attn_eq and caught_byte and caught_descale
                    row = dict(out=out, d=d, causal=causal, B=B, Hq=Hq, Hkv=Hkv, Nq=Nq, Nk=Nk,
                               equal=eq, attention_equal=attn_eq, negative_controls_caught=(
                                   caught_byte and caught_descale), ok=ok)
                    print(f"quantize {name} B{B} Hq{Hq} Hkv{Hkv} Nq{Nq} Nk{Nk}: "
                          f"{' '.join(n for n, e in eq.items() if not e) or 'all bitwise equal'}"
                          f", attention {'equal' if attn_eq else 'DIFFERS'} "
                          f"{'OK' if ok else 'FAIL'}", flush=True)
                    rows.append(row)
    bad = [r for r in rows if not r["ok"]]
    print(f"check: {len(rows) - len(bad)}/{len(rows)} OK", flush=True)
    return rows


def bench(k8dir, iters=20):
    rows = []
    for d in (64, 128, 256):
        for n in (1024, 4096, 16384):
            B, H = 16384 // n, 2048 // d
            kern = load_named(k8dir, fp8_name("f16", d, False, granularity="block"))
            q, k, v = (torch.randn(B, H, n, d, device="cuda", dtype=torch.float16)
                       for _ in range(3))
            ops = kern.quantize(q, k, v)
            bytes_moved = 3 * q.numel() * (2 + 1)
            flops = 4 * B * H * n * n * d
            fns = {"compiled": lambda: kern.quantize(q, k, v),
                   "torch": lambda: reference(kern, q, k, v),
                   "attention": lambda: kern(**ops),
                   "compiled+attention": lambda: kern(**kern.quantize(q, k, v)),
                   "torch+attention": lambda: kern(**reference(kern, q, k, v))}
            row = dict(d=d, seqlen=n, B=B, H=H)
            for name, fn in fns.items():
                row[name + "_ms"] = time_ms(fn, iters)
            row["compiled_GBps"] = bytes_moved / row["compiled_ms"] / 1e6
            row["torch_over_compiled"] = row["torch_ms"] / row["compiled_ms"]
            for name in ("attention", "compiled+attention", "torch+attention"):
                row[name + "_tflops"] = flops / row[name + "_ms"] / 1e9
            print(f"bench d{d} N{n}: compiled {row['compiled_ms']*1e3:.0f} us "
                  f"({row['compiled_GBps']:.0f} GB/s), torch {row['torch_ms']*1e3:.0f} us "
                  f"({row['torch_over_compiled']:.1f}x); TFLOP/s attention "
                  f"{row['attention_tflops']:.0f}, + compiled {row['compiled+attention_tflops']:.0f}"
                  f", + torch {row['torch+attention_tflops']:.0f}", flush=True)
            rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("k8")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()
    res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "check": check(a.k8)}
    if a.bench:
        res["bench"] = bench(a.k8)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)
    if not all(r["ok"] for r in res["check"]):
        sys.exit(1)


if __name__ == "__main__":
    main()
