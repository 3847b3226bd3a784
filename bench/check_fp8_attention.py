"""fa.attention_fp8 (the public call: compiled quantization + the fp8 kernel) on the GPU machine:

    FA_BUNDLE=DIR python3 bench/check_fp8_attention.py [--bench] [--out F.json]

DIR from  python3 -m fa.precompile --chip sm_90a --out DIR $(python3 bench/check_fp8_attention.py
--print-specs)  (here, where the compiler is). Check: out against the float64 attention of the
unquantized inputs (RMSE relative to the RMS of v: what FP8 inputs cost), lse within the same
bound, no NaN; f16 and bf16, d64/128/256, causal or not, a window, GQA, odd lengths; a negative
control (k's heads swapped) must fail. --bench: what a user sees, 20 back-to-back calls through
fa.attention_fp8 against fa.attention (f16) and torch SDPA's cudnn and flash in this process
(16k tokens, hidden 2048; FLOPs 4 B H N^2 D, halved when causal).
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))

SPECS = [f"{dt},d{d},{mask}{lse},fp8" for dt in ("f16", "bf16") for d in (64, 128, 256)
         for mask in ("full", "causal") for lse in ("", ",lse")] + \
    ["f16,d128,causal,window=256:0,fp8"] + \
    [f"f16,d{d},{mask}" for d in (128, 256) for mask in ("full", "causal")] + \
    ["f16,d128,causal,dynamic-tiles=true"]
# The RMSE bound, relative to v's RMS: e4m3 keeps 3 mantissa bits (relative error up to 2^-4 per
# element, ~2^-5.8 RMS), q and k's errors move the scores, P is rounded to e4m3 too; measured
# ~1e-2 (docs/FP8.md). A kernel that pairs P with the wrong keys is off by ~1.
RMSE_BOUND = 4e-2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--print-specs", action="store_true")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.print_specs:
        print(" ".join(SPECS))
        return
    import torch
    import fa
    from bench_fp8 import reference64
    from common import peer_fns, time_back_to_back

    torch.manual_seed(0)
    rows = []
    for dt in (torch.float16, torch.bfloat16):
        for d in (64, 128, 256):
            for causal in (False, True):
                for B, Hq, Hkv, Nq, Nk in ((2, 8, 2, 1000, 1000), (1, 4, 4, 77, 333),
                                           (2, 6, 3, 333, 77)):
                    lse = Nq == 77
                    q = torch.randn(B, Hq, Nq, d, device="cuda", dtype=dt)
                    k = torch.randn(B, Hkv, Nk, d, device="cuda", dtype=dt)
                    v = torch.randn(B, Hkv, Nk, d, device="cuda", dtype=dt)
                    res = fa.attention_fp8(q, k, v, causal=causal, return_lse=lse)
                    out, olse = res if lse else (res, None)
                    ref, rlse = reference64(q, k, v, causal)
                    vr = v.double().pow(2).mean().sqrt().item()
                    rmse = (out.double() - ref).pow(2).mean().sqrt().item() / vr
                    ok = not bool(torch.isnan(out).any()) and rmse <= RMSE_BOUND and \
                        out.dtype == dt
                    row = dict(dtype=str(dt), d=d, causal=causal, B=B, Hq=Hq, Hkv=Hkv, Nq=Nq,
                               Nk=Nk, rel_rmse=rmse)
                    if lse:
                        fin = torch.isfinite(rlse)
                        lerr = (olse.double()[fin] - rlse[fin]).abs().max().item()
                        row["lse_err"] = lerr
                        ok = ok and lerr <= RMSE_BOUND and bool(
                            torch.isneginf(olse[~fin]).all())
                    if Hkv > 1 and not lse:
                        # Negative control: k's heads swapped.
                        bad = fa.attention_fp8(q, k.roll(1, 1), v, causal=causal)
                        brmse = (bad.double() - ref).pow(2).mean().sqrt().item() / vr
                        row["negative_control_rmse"] = brmse
                        ok = ok and brmse > RMSE_BOUND
                    row["ok"] = ok
                    print(f"fp8 {dt} d{d} causal={causal} B{B} Hq{Hq} Hkv{Hkv} Nq{Nq} Nk{Nk}: "
                          f"RMSE / rms(v) {rmse:.2e}"
                          + (f", lse err {row['lse_err']:.1e}" if lse else "")
                          + (f", control {row['negative_control_rmse']:.2e}"
                             if "negative_control_rmse" in row else "")
                          + (" OK" if ok else " FAIL"), flush=True)
                    rows.append(row)
    # A window (bottom-right, 256 keys to the left).
    q, k, v = (torch.randn(1, 4, 700, 128, device="cuda", dtype=torch.float16) for _ in range(3))
    out = fa.attention_fp8(q, k, v, causal=True, window=(256, 0))
    i = torch.arange(700, device="cuda")
    mask = (i[None, :] <= i[:, None]) & (i[None, :] >= i[:, None] - 256)
    s = (q.double() @ k.double().transpose(-1, -2)) / 128 ** 0.5
    ref = torch.softmax(s.masked_fill(~mask, float("-inf")), -1) @ v.double()
    rmse = (out.double() - ref).pow(2).mean().sqrt().item()
    rows.append(dict(window=[256, 0], rel_rmse=rmse, ok=rmse <= RMSE_BOUND))
    print(f"fp8 window 256:0: RMSE / rms(v) {rmse:.2e} {'OK' if rmse <= RMSE_BOUND else 'FAIL'}")
    bad = [r for r in rows if not r["ok"]]
    print(f"check: {len(rows) - len(bad)}/{len(rows)} OK", flush=True)
    res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "check": rows}
    if a.bench:
        bench = []
        for d in (128, 256):
            for causal in (False, True):
                for n in (1024, 4096, 16384):
                    B, H = 16384 // n, 2048 // d
                    flops = 4 * B * H * n * n * d / (2 if causal else 1)
                    q, k, v = (torch.randn(B, H, n, d, device="cuda", dtype=torch.float16)
                               for _ in range(3))
                    fns = {"fa_fp8": lambda: fa.attention_fp8(q, k, v, causal=causal),
                           "fa_f16": lambda: fa.attention(q, k, v, causal=causal)}
                    fns.update(peer_fns(q, k, v, causal))
                    row = dict(d=d, causal=causal, seqlen=n)
                    for name, fn in fns.items():
                        ms = time_back_to_back(fn)
                        row[name + "_tflops"] = flops / ms / 1e9
                    for p in ("fa_f16", "cudnn", "flash"):
                        if p + "_tflops" in row:
                            row["fp8_vs_" + p] = row["fa_fp8_tflops"] / row[p + "_tflops"]
                    print(f"bench d{d} causal={causal} N{n}: " + " ".join(
                        f"{k_[:-7]} {v_:.0f}" for k_, v_ in row.items() if k_.endswith("_tflops"))
                        + " TFLOP/s; fp8 / f16 {:.2f}x, / cudnn {:.2f}x".format(
                            row["fp8_vs_fa_f16"], row.get("fp8_vs_cudnn", float("nan"))),
                        flush=True)
                    bench.append(row)
        res["bench"] = bench
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
