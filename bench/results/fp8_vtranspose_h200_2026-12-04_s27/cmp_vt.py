"""The V layout decision measured (issue 11): the fp8 kernels that read V^T from a pre-pass
against the same kernels built with transpose-v (V taken as stored, transposed in shared memory
by the producer warpgroup), one process, interleaved:

    python3 cmp_vt.py OUT.json BASE_DIR TV_DIR -- KERNEL_NAMES

BASE_DIR / TV_DIR: fa-opt kernels_fp8_d64_d128.mlir (bench/kernels_fp8.mlir without D = 256)
'--pass-pipeline=builtin.module(fa-to-ptx{chip=sm_90a[ transpose-v=true]},fa-dump-kernel{dir=D})'.
Per kernel and N (16k tokens, hidden 2048): kernel-only TFLOP/s of the base with v_t already
made, of the base plus the pre-pass in torch (transpose_v_fp8, timed with it), of transpose-v;
the pre-pass alone (us); the outputs' max |difference| (the kernels compute the same sums in the
same order: 0 expected)."""
import json, os, sys
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import torch
from common import load_named, time_ms
from bench_fp8 import quantize, run_fp8
from fa_runtime.driver import transpose_v_fp8

out, base_dir, tv_dir = sys.argv[1:4]
i = sys.argv.index("--")
names = sys.argv[i + 1:]
rows = []
for name in names:
    d = int(name.split("_d")[1].split("_")[0])
    causal = "causal" in name
    gran = "block" if "_block_" in name else "head" if "_head_" in name else "tensor"
    kb, kt = load_named(base_dir, name), load_named(tv_dir, name)
    assert "v_key_order" in kb.manifest and "v_key_order" not in kt.manifest
    assert kt.manifest["transpose_v"] and not kb.manifest["transpose_v"]
    for n in (512, 1024, 4096, 16384):
        B, H = 16384 // n, 2048 // d
        flops = 4 * B * H * n * n * d / (2 if causal else 1)
        torch.manual_seed(n)
        q, k, v = (torch.randn(B, H, n, d, device="cuda", dtype=torch.float16) for _ in range(3))
        (q8, qd), (k8, kd), (v8, vd) = (quantize(x, gran) for x in (q, k, v))
        order = kb.manifest["v_key_order"]
        v_t = transpose_v_fp8(v8, order)
        first = lambda o: o[0] if isinstance(o, tuple) else o  # noqa: E731
        fns = {"prepass_kernel": lambda: run_fp8(kb, q8, k8, None, qd, kd, vd, v_t=v_t),
               "prepass_torch+kernel": lambda: run_fp8(kb, q8, k8, v8, qd, kd, vd),
               "transpose_v": lambda: run_fp8(kt, q8, k8, v8, qd, kd, vd)}
        ob, ot = first(fns["prepass_kernel"]()), first(fns["transpose_v"]())
        row = dict(name=name, seqlen=n, batch=B, heads=H,
                   maxdiff=(ob.float() - ot.float()).abs().max().item(),
                   bitwise_equal=bool(torch.equal(ob, ot)))
        ts = {f: [] for f in fns}
        tt = []
        for r in range(5):
            for f, fn in fns.items():
                ts[f].append(time_ms(fn, 20))
            tt.append(time_ms(lambda: transpose_v_fp8(v8, order), 20))
        for f in fns:
            row[f + "_ms"] = sorted(ts[f])[2]
            row[f + "_tflops"] = flops / row[f + "_ms"] / 1e9
        row["prepass_torch_us"] = sorted(tt)[2] * 1e3
        row["tv_over_kernel"] = row["transpose_v_tflops"] / row["prepass_kernel_tflops"]
        row["tv_over_torch_prepass"] = (row["transpose_v_tflops"]
                                        / row["prepass_torch+kernel_tflops"])
        print(f"{name} N={n}: prepass kernel {row['prepass_kernel_tflops']:.0f}, +torch V^T "
              f"{row['prepass_torch+kernel_tflops']:.0f}, transpose-v "
              f"{row['transpose_v_tflops']:.0f} TFLOP/s: {row['tv_over_kernel']:.3f}x / "
              f"{row['tv_over_torch_prepass']:.3f}x; V^T in torch {row['prepass_torch_us']:.1f} us;"
              f" equal {row['bitwise_equal']} (max diff {row['maxdiff']:.2g})", flush=True)
        rows.append(row)
json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__, rows=rows),
          open(out, "w"), indent=1)
