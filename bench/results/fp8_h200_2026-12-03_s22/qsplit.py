"""(From the repository root: python3 bench/results/fp8_h200_2026-12-03_s22/qsplit.py OUT.json DIR8)
Time the q / k / v quantization kernels of a per-block fp8 kernel separately (k: rows
written as they are; v: the same rows written transposed as V^T): what V^T costs in the pass."""
import json, sys
sys.path.insert(0, "bench"); sys.path.insert(0, "python")
import torch
from common import load_named, time_ms
from fa_runtime.driver import current_stream
from fa_runtime.manifest import FP8_QUANTIZE_OPS
out = sys.argv[1]; kdir = sys.argv[2]
rows = []
for d in (64, 128, 256):
    kern = load_named(kdir, f"attn_fp8_block_f16_d{d}_full")
    for n in (1024, 16384):
        B, H = 16384 // n, 2048 // d
        q, k, v = (torch.randn(B, H, n, d, device="cuda", dtype=torch.float16) for _ in range(3))
        res = kern.quantize(q, k, v)
        tensors = {"q": q, "k": k, "v": v, "q8": res["q"], "k8": res["k"], "v_t": res["v_t"],
                   "q_descale": res["q_descale"], "k_descale": res["k_descale"],
                   "v_descale": res["v_descale"]}
        s = {"B": B, "Hq": H, "Hkv": H, "Nq": n, "Nk": n}
        stream = current_stream(torch, q.device)
        row = dict(d=d, seqlen=n)
        for op in FP8_QUANTIZE_OPS:
            aux = kern._aux[op]
            ptrs = aux.grad_pointers(tensors, s)
            ts = [time_ms(lambda: aux._launch(ptrs, s, stream, 0), 20) for _ in range(3)]
            row[op[-1] + "_us"] = sorted(ts)[1] * 1e3
        row["GBps_k"] = q.numel() * 3 / (row["k_us"] * 1e3)
        row["GBps_v"] = q.numel() * 3 / (row["v_us"] * 1e3)
        print(d, n, {k_: round(v_, 1) for k_, v_ in row.items()}, flush=True)
        rows.append(row)
json.dump(dict(device=torch.cuda.get_device_name(), rows=rows), open(out, "w"), indent=1)
