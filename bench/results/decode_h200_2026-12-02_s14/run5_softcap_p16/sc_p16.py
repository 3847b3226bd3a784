"""(1) softcap split-kv kernels against torch_ops.reference at several num_splits;
(2) pages of 16 rows, 8 x 128k full: the plain paged kernel vs the split-kv one at S = 1 and 2,
and the plain kernel on the host split's layout (16 sequences of half the pages)."""
import sys, json
sys.path.insert(0, "python"); sys.path.insert(0, "bench")
import torch, fa, fa_runtime
from fa import torch_ops
from common import time_ms
fa.load_bundle(".dev/sk/scbundle")
ok = True
torch.manual_seed(0)
for dt, D, cap in ((torch.float16, 128, 30.0), (torch.bfloat16, 64, 50.0)):
    for B, Hq, Hkv, Nk in ((1, 32, 8, 4099), (3, 8, 8, 1000), (2, 16, 2, 20000)):
        q = torch.randn(B, Hq, 1, D, device="cuda", dtype=dt) * 3
        k = torch.randn(B, Hkv, Nk, D, device="cuda", dtype=dt) * 3
        v = torch.randn_like(k)
        ref, ref_lse = torch_ops.reference(q.float(), k.float(), v.float(), softcap=cap,
                                           return_lse=True)
        kern = torch_ops._kernel(q, v, False, None, None, cap, True, True, split_kv=True)
        assert not isinstance(kern, str), kern
        qp = q.view(B, Hkv, Hq // Hkv, D)
        for S in (1, 3, 16, 64):
            out, lse = kern(qp, k, v, num_splits=S)
            e = (out.view(B, Hq, 1, D).float() - ref).abs().max().item()
            el = (lse.view(B, Hq, 1) - ref_lse).abs().max().item()
            good = e <= (4e-3 if dt == torch.float16 else 3e-2) and el <= 1e-3
            ok &= good
            print(f"{'ok  ' if good else 'FAIL'} softcap {cap} {dt} D{D} B{B} Hq{Hq} Hkv{Hkv} Nk{Nk} S{S} err {e:.2e} lse {el:.2e}", flush=True)
print("softcap", "ALL OK" if ok else "FAIL", flush=True)

# (2) p16
plain = fa_runtime.Kernel.load(".dev/sk/kvplain/kv_f16_d128_full_p16_kernel.json")
split = fa_runtime.Kernel.load(".dev/sk/kv/kv_f16_d128_full_p16_kernel.json")
B, Hkv, G, Nk, P = 8, 8, 4, 131072, 16
pages = Nk // P
pool = B * pages + 1
kp = torch.randn(pool, Hkv, P, 128, device="cuda", dtype=torch.float16)
vp = torch.randn_like(kp)
table = torch.randperm(pool - 1, device="cuda")[:B * pages].view(B, pages).int()
lens = torch.full((B,), Nk, device="cuda", dtype=torch.int32)
q = torch.randn(B, Hkv, G, 128, device="cuda", dtype=torch.float16)
half = table.view(B * 2, pages // 2).contiguous()
lens2 = torch.full((B * 2,), Nk // 2, device="cuda", dtype=torch.int32)
q2 = q.repeat_interleave(2, dim=0).contiguous()
r = {}
r["plain_ms"] = time_ms(lambda: plain(q, kp, vp, kv_lens=lens, page_table=table, check_indices=False), 15)
r["split_S1_ms"] = time_ms(lambda: split(q, kp, vp, kv_lens=lens, page_table=table, check_indices=False, num_splits=1), 15)
r["split_S2_ms"] = time_ms(lambda: split(q, kp, vp, kv_lens=lens, page_table=table, check_indices=False, num_splits=2), 15)
r["plain_host_layout_ms"] = time_ms(lambda: plain(q2, kp, vp, kv_lens=lens2, page_table=half, check_indices=False), 15)
r["split_host_layout_S1_ms"] = time_ms(lambda: split(q2, kp, vp, kv_lens=lens2, page_table=half, check_indices=False, num_splits=1), 15)
print(json.dumps({a: round(x, 4) for a, x in r.items()}), flush=True)
