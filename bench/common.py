"""What the fa GPU benchmarks share: kernel loading, the f32 reference, one correctness case, timing.

bench_sm80.py and bench_sm90.py only list their cases and their timing rows.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from fa_runtime import Kernel  # noqa: E402

DT = {"f16": torch.float16, "bf16": torch.bfloat16}
# Max abs error against the f32 reference (unit-variance inputs): a few ulps of the output type
# at |o| ~ 1, what torch's own f16/bf16 SDPA reaches against the same reference.
TOL = {"f16": 4e-3, "bf16": 3e-2}
LSE_TOL = 1e-3

_LOADED = {}


def kernel_name(dt, d, causal, lse=False):
    return f"attn_{dt}_d{d}_{'causal' if causal else 'full'}" + ("_lse" if lse else "")


def has_kernel(kdir, name):
    return bool(kdir) and os.path.exists(os.path.join(kdir, name + "_kernel.json"))


def load_named(kdir, name):
    """The kernel `name` (a func.func of the bench .mlir) of `kdir`, JIT-compiled once per process."""
    path = os.path.join(kdir, name + "_kernel.json")
    if path not in _LOADED:
        _LOADED[path] = Kernel.load(path)
    return _LOADED[path]


def load(kdir, dt, d, causal, lse=False):
    return load_named(kdir, kernel_name(dt, d, causal, lse))


def reference(q, k, v, causal, window=None):
    """f32 reference; causal is bottom-right aligned; window = (left, right) keys
    around the bottom-right diagonal (-1 unbounded); fully masked rows -> 0, lse -inf."""
    B, Hq, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    r = Hq // Hkv
    kf = k.float().repeat_interleave(r, dim=1)
    vf = v.float().repeat_interleave(r, dim=1)
    s = torch.matmul(q.float(), kf.transpose(-1, -2)) / math.sqrt(D)
    if causal:
        window = (-1, 0)
    if window:
        i = torch.arange(Nq, device=q.device)[:, None]
        j = torch.arange(Nk, device=q.device)[None, :]
        dist = j - (i + (Nk - Nq))
        left, right = window
        if right >= 0:
            s = s.masked_fill(dist > right, float("-inf"))
        if left >= 0:
            s = s.masked_fill(dist < -left, float("-inf"))
    m = s.amax(-1, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    p = torch.exp(s - m)
    l = p.sum(-1, keepdim=True)
    o = torch.matmul(p, vf) / torch.where(l == 0, torch.ones_like(l), l)
    lse = (m + torch.log(l)).squeeze(-1)
    return o, lse


def check_case(kern, dt, d, B, Hq, Hkv, Nq, Nk, causal=False, window=None, lse=False,
               torch_err=False, key_growth=0.0):
    """Runs `kern` on random inputs [B, H, N, d] and compares with `reference`: max abs error of
    the output (and of lse, whose fully masked rows must be -inf). With `torch_err`, also the error
    of torch's own SDPA against the same reference, for scale. `key_growth` g scales key j by
    1 + g j / Nk: the scores' spread grows along the keys, so a row's running max keeps rising by
    several log2 units (the kernels' conditional rescale fires again and again). Prints one line,
    returns the row."""
    q = torch.randn(B, Hq, Nq, d, device="cuda", dtype=DT[dt])
    k = torch.randn(B, Hkv, Nk, d, device="cuda", dtype=DT[dt])
    if key_growth:
        ramp = 1 + key_growth * torch.arange(Nk, device="cuda", dtype=torch.float32) / Nk
        k = (k.float() * ramp.view(1, 1, Nk, 1)).to(DT[dt])
    v = torch.randn(B, Hkv, Nk, d, device="cuda", dtype=DT[dt])
    o, olse = kern(q, k, v) if lse else (kern(q, k, v), None)
    torch.cuda.synchronize()
    ref, rlse = reference(q, k, v, causal, window)
    err = (o.float() - ref).abs().max().item()
    tol = TOL[dt]
    ok = err <= tol and not math.isnan(err)
    row = dict(dtype=dt, d=d, causal=causal, B=B, Hq=Hq, Hkv=Hkv, Nq=Nq, Nk=Nk,
               max_abs_err=err, tol=tol)
    what = f"causal={causal}" if window is None else f"window{tuple(window)}"
    if key_growth:
        row["key_growth"] = key_growth
        what += f" key_growth={key_growth:g}"
    msg = ""
    if window is not None:
        row["window"] = list(window)
    if torch_err:
        if (causal or window is not None) and Nq != Nk:
            terr = float("nan")  # torch aligns causal top-left
        else:
            to = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=Hq != Hkv)
            terr = (to.float() - ref).abs().max().item()
        row["torch_sdpa_err"] = terr
        msg += f" (torch {terr:.2e})"
    if lse:
        fin = torch.isfinite(rlse)
        lerr = (olse[fin] - rlse[fin]).abs().max().item() if bool(fin.any()) else 0.0
        inf_ok = bool(torch.all(torch.isneginf(olse[~fin])).item())
        ok = ok and lerr <= LSE_TOL and inf_ok
        row.update(lse=True, lse_err=lerr, masked_rows=int((~fin).sum().item()))
        msg += f" lse err {lerr:.2e} masked rows -inf {inf_ok} ({row['masked_rows']})"
    row["ok"] = ok
    print(f"check {dt} d{d} {what}{' lse' if lse else ''} B{B} Hq{Hq} Hkv{Hkv} Nq{Nq} Nk{Nk}: "
          f"err {err:.2e}{msg} {'OK' if ok else 'FAIL'}", flush=True)
    return row


def check_growing_scores(kdir, dims):
    """Scores whose spread grows along the keys (`key_growth`), for every (dtype, head dim in
    `dims`, causal) kernel of `kdir` and the f16 causal lse kernel of the first head dim: the
    running max rises often and far, where a kernel that defers its rescale (a threshold on the
    max's growth) must still rescale O, the sum and lse right."""
    rows = []
    for dt in ("f16", "bf16"):
        for d in dims:
            for causal in (False, True):
                rows.append(check_case(load(kdir, dt, d, causal), dt, d, 1, 4, 2, 1000, 3000,
                                       causal=causal, key_growth=6.0))
    if dims and has_kernel(kdir, kernel_name("f16", dims[0], True, lse=True)):
        rows.append(check_case(load(kdir, "f16", dims[0], True, lse=True), "f16", dims[0],
                               2, 4, 2, 300, 2000, causal=True, lse=True, key_growth=6.0))
    return rows


PEERS = (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION))


def peer_fns(q, k, v, causal, enable_gqa=False):
    """name -> callable running torch SDPA with that backend only (flash = FlashAttention-2,
    cudnn), for the backends that accept these inputs (each is tried once here)."""
    fns = {}
    for name, be in PEERS:
        def fn(be=be):
            with sdpa_kernel([be]):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                      enable_gqa=enable_gqa)
        try:
            fn()
            fns[name] = fn
        except Exception as e:  # backend unavailable for this shape
            print(f"  {name} failed: {e}", flush=True)
    return fns


# GPU cycles of torch.cuda._sleep queued before each timed call (~0.5 ms at 1.98 GHz): the host
# enqueues the start event, the call and the end event while the GPU spins, so the events time
# the kernel alone, not the host's launch path (Python + ctypes for ours, the dispatcher for
# torch), which at short sequence lengths is as long as the kernel.
SLEEP_CYCLES = 1_000_000


def time_once(fn):
    """ms of one call of `fn` on the GPU, the host's launch path hidden (SLEEP_CYCLES)."""
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(SLEEP_CYCLES)
    a.record()
    fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b)


def time_back_to_back(fn, calls=20):
    """ms per call of `calls` back-to-back calls between two CUDA events, the host path
    included (argument checks, tensor maps, launch): what a user of the public API sees."""
    fn()
    torch.cuda.synchronize()
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(calls):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / calls


def time_interleaved(fns, iters):
    """Median ms of each callable in `fns` (name -> fn), timed round-robin: one call of each per
    round, the order rotated every round, so that clock/power drift over a row hits all alike."""
    names = list(fns)
    for nm in names:
        fns[nm]()
    torch.cuda.synchronize()
    times = {nm: [] for nm in names}
    for it in range(iters):
        k = it % len(names)
        for nm in names[k:] + names[:k]:
            times[nm].append(time_once(fns[nm]))
    return {nm: sorted(t)[len(t) // 2] for nm, t in times.items()}


def time_ms(fn, iters):
    """Median ms of `iters` calls (time_once) after a warm-up call."""
    fn()
    torch.cuda.synchronize()
    ts = sorted(time_once(fn) for _ in range(iters))
    return ts[len(ts) // 2]
