#!/usr/bin/env python3
r"""Ring attention (fa.context_parallel, issue 14 item 4) on the GPU.

Bundle, on the build machine (8 kernels: f16/bf16 x d128 x causal or not, the
forward with lse and the backward; about 10 s), then its check (no torch):

    PYTHONPATH=python FA_CAPI_LIBRARY=build/lib/libFAPythonCAPI.so \
      python3 -m fa.precompile --chip sm_90a --out .dev/ring-bundle \
      $(python3 bench/bench_context_parallel.py --print-specs)
    PYTHONPATH=python python3 bench/bench_context_parallel.py --bundle .dev/ring-bundle \
      --check-bundle-only

On the GPU machine (bench/context_parallel.sh runs both):

    python3 bench/bench_context_parallel.py --bundle B --out DIR            # one GPU
    python3 -m torch.distributed.run --standalone --nproc_per_node=2 \
      bench/bench_context_parallel.py --bundle B --out DIR                  # two GPUs

One process (WORLD_SIZE unset), section "local": W = 2 and 4 ranks run by
threads over fa.context_parallel.LocalRing on one GPU, with fa's kernels (the
seams fa_kernels gives ring_attention), forward and backward (ring_forward,
ring_backward as the autograd Function calls them), f16/bf16 x causal or not,
d128, GQA 8:2 zigzag, plus contiguous, MHA and a loss on lse; and W = 1
through ring_attention's autograd (bitwise equal to fa.attention). Each
against fa.attention on the whole sequence (forward + loss.backward()) and
torch SDPA (math) in float32 with autograd (lse from the f32 scores). Pass:
every max abs error against f32 <= 2 x fa.attention's own + one ulp of the
quantity's scale (its largest entry; lse: + 1e-4).

Under torchrun (2 processes, one GPU each, NCCL): section "exact": the same
checks with the real ring (ring_attention with autograd, 8k tokens, GQA 16:4)
against fa.attention and SDPA math computed on each GPU; section "speed": B = 1,
H = 16 and 32 (MHA: the most K/V to move), d128, f16, 32k, 64k, 128k tokens,
causal or not, forward and backward: fa.attention on one GPU at the whole
length, the ring (ring_forward / ring_backward over TorchRing), the ring with
the transfers skipped (compute only: a communicator that returns what it is
given) and the transfers alone (the ring's send_recv calls, no kernels). CUDA
events around back-to-back calls, the median of rounds, the slowest rank's.
Scaling efficiency = t_1gpu / (2 t_ring) (tokens/s on 2 GPUs over twice those
on 1); exposed transfer = t_ring - t_compute_only; hidden = 1 - exposed /
t_transfers_alone. Writes DIR/local.{json,md} or DIR/ring.{json,md}; exits 1
on a failed check.
"""
import argparse
import json
import math
import os
import statistics
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import fa  # noqa: E402
from fa import context_parallel as cp  # noqa: E402

DTYPES = ("f16", "bf16")
D = 128


def needed_variants(chip="sm_90a"):
    return [fa.Variant.make(dt, D, causal, None, None, None, kind == "lse", chip,
                            grad=kind == "grad")
            for dt in DTYPES for causal in (False, True) for kind in ("lse", "grad")]


def check_bundle(path, chip="sm_90a"):
    """The specs of the needed variants missing from the bundle."""
    have = set(fa.Bundle.load(path).variants())
    return [v.spec() for v in needed_variants(chip) if v not in have]


# ---------------------------------------------------------------------------
# Shared by both modes

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL", msg, flush=True)


def torch_dtype(name):
    import torch
    return {"f16": torch.float16, "bf16": torch.bfloat16}[name]


def inputs(B, Hq, Hkv, N, dt, seed, dev, lse_loss=False):
    import torch
    g = torch.Generator(device=dev).manual_seed(seed)
    t = {n: torch.randn(B, h, N, D, generator=g, device=dev, dtype=torch_dtype(dt))
         for n, h in (("q", Hq), ("k", Hkv), ("v", Hkv), ("do", Hq))}
    t["dlse"] = torch.randn(B, Hq, N, generator=g, device=dev) if lse_loss else None
    return t


def single(t, causal):
    """fa.attention on the whole sequence, forward and loss.backward()."""
    import torch
    q, k, v = (t[n].clone().requires_grad_() for n in "qkv")
    out, lse = fa.attention(q, k, v, causal=causal, return_lse=True)
    torch.autograd.backward([out] + ([lse] if t["dlse"] is not None else []),
                            [t["do"]] + ([t["dlse"]] if t["dlse"] is not None else []))
    return dict(out=out.detach(), lse=lse.detach(), dq=q.grad, dk=k.grad, dv=v.grad)


def reference(t, causal):
    """SDPA (math) in float32 with autograd; lse from the f32 scores."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = (t[n].float().requires_grad_() for n in "qkv")
    G = q.shape[1] // k.shape[1]
    with sdpa_kernel(SDPBackend.MATH):
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                               enable_gqa=G > 1)
    s = q @ k.repeat_interleave(G, 1).transpose(-1, -2) / math.sqrt(D)
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device)
                          .triu(1), float("-inf"))
    lse = torch.logsumexp(s, -1)
    del s
    torch.autograd.backward([out] + ([lse] if t["dlse"] is not None else []),
                            [t["do"].float()] + ([t["dlse"]] if t["dlse"] is not None else []))
    return dict(out=out.detach(), lse=lse.detach(), dq=q.grad, dk=k.grad, dv=v.grad)


ULP = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7}


def errors(ring, one, ref):
    """{quantity: [err ring-1gpu, err ring-f32, err 1gpu-f32, scale]} (max abs)."""
    res = {}
    for n in ("out", "lse", "dq", "dk", "dv"):
        r, o, f = ring[n].float(), one[n].float(), ref[n].float()
        res[n] = [(r - o).abs().max().item(), (r - f).abs().max().item(),
                  (o - f).abs().max().item(), f.abs().max().item()]
    return res


def verdict(name, errs, dt):
    ok = True
    for n, (e_one, e_ring, e_single, scale) in errs.items():
        tol = 2 * e_single + (1e-4 if n == "lse" else ULP[dt] * scale)
        if not e_ring <= tol:
            ok = False
            fail(f"{name}: {n} error {e_ring:.3e} against f32 > {tol:.3e} "
                 f"(fa.attention's {e_single:.3e})")
    print(f"{'ok  ' if ok else 'FAIL'} {name}: " + ", ".join(
        f"{n} {e[1]:.2e} (1gpu {e[2]:.2e}, vs 1gpu {e[0]:.2e})" for n, e in errs.items()),
        flush=True)
    return ok


def ring_call(t, rank, world, comm, causal, layout, lock=None):
    """One rank's ring forward and backward on its shards, as the autograd
    Function runs them (out rounded to the dtype before the backward)."""
    attend, attend_backward = cp.fa_kernels()
    if lock is not None:  # one rank's host-side launches at a time (threads)
        plain, plain_b = attend, attend_backward

        def attend(*a):
            with lock:
                return plain(*a)

        def attend_backward(*a):
            with lock:
                return plain_b(*a)
    s = {n: (None if x is None else cp.shard(x, rank, world, layout)) for n, x in t.items()}
    out, lse = cp.ring_forward(s["q"], s["k"], s["v"], comm, attend, causal, layout)
    out = out.to(s["q"].dtype)
    dq, dk, dv = cp.ring_backward(s["do"], s["q"], s["k"], s["v"], out, lse, s["dlse"], comm,
                                  attend_backward, causal, layout)
    return dict(out=out, lse=lse, dq=dq.to(out.dtype), dk=dk.to(out.dtype), dv=dv.to(out.dtype))


# ---------------------------------------------------------------------------
# One process, one GPU

def local_cases():
    cases = [dict(W=W, dt=dt, causal=c, B=2, Hq=8, Hkv=2, N=4096, layout="zigzag")
             for W in (2, 4) for dt in DTYPES for c in (False, True)]
    cases += [dict(W=2, dt="f16", causal=True, B=2, Hq=8, Hkv=2, N=4096, layout="contiguous"),
              dict(W=4, dt="bf16", causal=True, B=1, Hq=8, Hkv=8, N=8192, layout="zigzag"),
              dict(W=3, dt="f16", causal=True, B=2, Hq=8, Hkv=2, N=3072, layout="zigzag",
                   lse_loss=True)]
    return cases


def section_local():
    import torch
    dev = torch.device("cuda")
    rows = []
    for i, c in enumerate(local_cases()):
        name = (f"W={c['W']} {c['dt']} {'causal' if c['causal'] else 'full'} {c['layout']} "
                f"B={c['B']} H={c['Hq']}:{c['Hkv']} N={c['N']}"
                + (" lse-loss" if c.get("lse_loss") else ""))
        try:
            t = inputs(c["B"], c["Hq"], c["Hkv"], c["N"], c["dt"], i, dev, c.get("lse_loss"))
            one, ref = single(t, c["causal"]), reference(t, c["causal"])
            lock = threading.Lock()
            per_rank = cp.run_local(c["W"], lambda comm: ring_call(
                t, comm.rank, comm.world, comm, c["causal"], c["layout"], lock), timeout=60)
            torch.cuda.synchronize()
            ring = {n: cp.unshard([r[n] for r in per_rank], c["layout"]) for n in one}
            errs = errors(ring, one, ref)
            rows.append(dict(c, name=name, errors=errs, ok=verdict(name, errs, c["dt"])))
        except Exception:
            fail(f"{name}: raised\n{traceback.format_exc()}")
            rows.append(dict(c, name=name, ok=False, error=traceback.format_exc()))
    # W = 1 through the autograd Function: no transfer, the same kernels on the
    # same inputs, so fa.attention's results (dq may differ in its last bit:
    # the backward kernel adds into it atomically, in no fixed order).
    for dt in DTYPES:
        name = f"ring_attention W=1 autograd {dt} causal lse-loss"
        try:
            t = inputs(2, 8, 2, 2048, dt, 99, dev, lse_loss=True)
            one = single(t, True)
            q, k, v = (t[n].clone().requires_grad_() for n in "qkv")
            out, lse = cp.ring_attention(q, k, v, causal=True, return_lse=True,
                                         comm=cp.LocalRing(1).comm(0))
            torch.autograd.backward([out, lse], [t["do"], t["dlse"]])
            got = dict(out=out.detach(), lse=lse.detach(), dq=q.grad, dk=k.grad, dv=v.grad)
            same = {n: bool(torch.equal(got[n], one[n])) for n in got}
            diff = {n: (got[n].float() - one[n].float()).abs().max().item() for n in got}
            ok = all(same[n] or (n == "dq" and diff[n] <= ULP[dt] * one[n].abs().max().item())
                     for n in got)
            if not ok:
                fail(f"{name}: not fa.attention's: bitwise {same}, max abs diff {diff}")
            print(f"{'ok  ' if ok else 'FAIL'} {name}: bitwise {same}, diff {diff}", flush=True)
            rows.append(dict(name=name, dt=dt, W=1, bitwise=same, diff=diff, ok=ok))
        except Exception:
            fail(f"{name}: raised\n{traceback.format_exc()}")
            rows.append(dict(name=name, ok=False, error=traceback.format_exc()))
    return rows


# ---------------------------------------------------------------------------
# torchrun: the NCCL ring

def section_exact(rank, world, dev):
    import torch
    import torch.distributed as dist
    rows = []
    cases = [dict(dt=dt, causal=c, layout="zigzag") for dt in DTYPES for c in (False, True)]
    cases += [dict(dt="f16", causal=True, layout="contiguous")]
    for i, c in enumerate(cases):
        name = f"NCCL W={world} {c['dt']} {'causal' if c['causal'] else 'full'} {c['layout']}"
        try:
            t = inputs(1, 16, 4, 8192, c["dt"], 100 + i, dev, lse_loss=True)  # same on every rank
            one, ref = single(t, c["causal"]), reference(t, c["causal"])
            s = {n: cp.shard(x, rank, world, c["layout"]) for n, x in t.items()}
            q, k, v = (s[n].clone().requires_grad_() for n in "qkv")
            out, lse = cp.ring_attention(q, k, v, causal=c["causal"], layout=c["layout"],
                                         return_lse=True)
            torch.autograd.backward([out, lse], [s["do"], s["dlse"]])
            got = dict(out=out.detach(), lse=lse.detach(), dq=q.grad, dk=k.grad, dv=v.grad)
            sh = {n: {m: cp.shard(x[m], rank, world, c["layout"]) for m in x}
                  for n, x in (("one", one), ("ref", ref))}
            errs = errors(got, sh["one"], sh["ref"])
            flat = torch.tensor([e for n in errs for e in errs[n]], device=dev)
            dist.all_reduce(flat, op=dist.ReduceOp.MAX)  # the largest over the ranks
            errs = {n: flat[4 * j:4 * j + 4].tolist() for j, n in enumerate(errs)}
            ok = verdict(name, errs, c["dt"]) if rank == 0 else True
            rows.append(dict(c, name=name, errors=errs, ok=ok))
        except Exception:
            fail(f"{name}: raised on rank {rank}\n{traceback.format_exc()}")
            rows.append(dict(c, name=name, ok=False, error=traceback.format_exc()))
    return rows


class NoTransfer:
    """A communicator that moves nothing: every rank keeps computing on its own
    block (the same shapes and schedule as the ring): compute only."""

    def __init__(self, rank, world):
        self.rank, self.world = rank, world

    def send_recv(self, tensors):
        return cp._Done(lambda: list(tensors))


def transfers_only(comm, k, v, backward):
    """The ring's send_recv calls in its order, no kernels: W - 1 K/V hops and,
    for the backward, W f32 dK/dV hops."""
    import torch
    world = comm.world
    dk, dv = torch.zeros_like(k, dtype=torch.float32), torch.zeros_like(v, dtype=torch.float32)
    grads = None
    for step in range(world):
        pending = comm.send_recv([k, v]) if step + 1 < world else None
        if backward and step:
            dk, dv = grads.wait()
        if pending is not None:
            k, v = pending.wait()
        if backward:
            grads = comm.send_recv([dk, dv])
    if backward:
        grads.wait()


def timed(fn, reps, rounds):
    """Median over rounds of the mean time of `reps` back-to-back calls (s),
    after one warm-up call; a barrier before each round; the slowest rank's."""
    import torch
    import torch.distributed as dist
    fn()
    times = []
    for _ in range(rounds):
        dist.barrier()
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3 / reps)
    t = torch.tensor([statistics.median(times)], device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def section_speed(rank, world, dev, args):
    import torch
    rows = []
    for N in args.lengths:
        for H in args.heads:
            for causal in (False, True):
                name = f"N={N // 1024}k H={H} {'causal' if causal else 'full'} f16"
                try:
                    rows.append(speed_case(name, N, H, causal, rank, world, dev, args))
                    if rank == 0:
                        print(json.dumps(rows[-1]), flush=True)
                except Exception:
                    fail(f"{name}: raised on rank {rank}\n{traceback.format_exc()}")
                    rows.append(dict(name=name, error=traceback.format_exc()))
                torch.cuda.empty_cache()
    return rows


def speed_case(name, N, H, causal, rank, world, dev, args):
    attend, attend_backward = cp.fa_kernels()
    t = inputs(1, H, H, N, "f16", 7, dev)
    q, k, v, do = (t[n] for n in ("q", "k", "v", "do"))
    res = dict(N=N, H=H, causal=causal, name=name)
    out, lse = attend(q, k, v, causal)
    res["1gpu"] = dict(
        fwd=timed(lambda: attend(q, k, v, causal), args.reps, args.rounds),
        bwd=timed(lambda: attend_backward(do, q, k, v, out, lse, None, causal), args.reps,
                  args.rounds))
    s = {n: cp.shard(t[n], rank, world) for n in ("q", "k", "v", "do")}
    ring = cp.TorchRing()
    o, l = cp.ring_forward(s["q"], s["k"], s["v"], ring, attend, causal)
    o = o.to(q.dtype)
    for mode, comm in (("ring", ring), ("compute_only", NoTransfer(rank, world))):
        res[mode] = dict(
            fwd=timed(lambda: cp.ring_forward(s["q"], s["k"], s["v"], comm, attend, causal),
                      args.reps, args.rounds),
            bwd=timed(lambda: cp.ring_backward(s["do"], s["q"], s["k"], s["v"], o, l, None,
                                               comm, attend_backward, causal),
                      args.reps, args.rounds))
    res["transfers_only"] = dict(
        fwd=timed(lambda: transfers_only(ring, s["k"], s["v"], False), args.reps, args.rounds),
        bwd=timed(lambda: transfers_only(ring, s["k"], s["v"], True), args.reps, args.rounds))
    derive(res, world)
    return res


def derive(res, world):
    for p in ("fwd", "bwd", "total"):
        if p == "total":
            for m in ("1gpu", "ring", "compute_only", "transfers_only"):
                res[m]["total"] = res[m]["fwd"] + res[m]["bwd"]
        ring, alone, comm = res["ring"][p], res["compute_only"][p], res["transfers_only"][p]
        exposed = max(ring - alone, 0.0)
        res.setdefault("derived", {})[p] = dict(
            efficiency=res["1gpu"][p] / (world * ring),
            tokens_per_s_1gpu=res["N"] / res["1gpu"][p], tokens_per_s_ring=res["N"] / ring,
            step_ms=1e3 * ring / world, exposed_ms=1e3 * exposed,
            hidden=(1 - exposed / comm) if comm > 0 else None)


# ---------------------------------------------------------------------------
# Reports

def write_markdown(path, result):
    lines = [f"# Ring attention ({result['mode']}), {result['env'].get('device')}, "
             f"{result['env'].get('date')}", ""]
    for key in ("local", "exact"):
        if isinstance(result.get(key), list):
            lines += ["| case | ok | max abs error vs f32 (out, lse, dq, dk, dv) | fa.attention's "
                      "| ring vs fa.attention |", "|---|---|---|---|---|"]
            for r in result[key]:
                e = r.get("errors")
                if e:
                    lines.append(f"| {r['name']} | {'yes' if r['ok'] else 'NO'} | "
                                 + " / ".join(f"{e[n][1]:.1e}" for n in e) + " | "
                                 + " / ".join(f"{e[n][2]:.1e}" for n in e) + " | "
                                 + " / ".join(f"{e[n][0]:.1e}" for n in e) + " |")
                else:
                    lines.append(f"| {r['name']} | {'yes' if r.get('ok') else 'NO'} | "
                                 f"{'bitwise: ' + str(r['bitwise']) if 'bitwise' in r else 'raised'}"
                                 " | | |")
            lines.append("")
    if isinstance(result.get("speed"), list):
        lines += ["Times in ms (slowest rank); eff = t_1gpu / (2 t_ring); hidden = share of the "
                  "transfers' own time not added to the compute-only ring.", "",
                  "| case | phase | 1 GPU | ring | per step | compute only | transfers alone | "
                  "eff | hidden |", "|---|---|---|---|---|---|---|---|---|"]
        for r in result["speed"]:
            if "derived" not in r:
                lines.append(f"| {r['name']} | raised | | | | | | | |")
                continue
            for p in ("fwd", "bwd", "total"):
                d = r["derived"][p]
                hid = "-" if d["hidden"] is None else f"{100 * d['hidden']:.0f}%"
                lines.append(f"| {r['name']} | {p} | {1e3 * r['1gpu'][p]:.2f} | "
                             f"{1e3 * r['ring'][p]:.2f} | {d['step_ms']:.2f} | "
                             f"{1e3 * r['compute_only'][p]:.2f} | "
                             f"{1e3 * r['transfers_only'][p]:.2f} | {d['efficiency']:.2f} | "
                             f"{hid} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def environment(args):
    import torch
    from fa.torch_ops import chip_for_device
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "torch": torch.__version__,
            "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(),
            "gpus": torch.cuda.device_count(), "chip": chip_for_device(torch.device("cuda")),
            "nccl": str(torch.cuda.nccl.version()),
            "bundle": os.path.abspath(args.bundle), "reps": args.reps, "rounds": args.rounds}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", help="bundle directory (python -m fa.precompile)")
    ap.add_argument("--out", help="output directory")
    ap.add_argument("--lengths", default="32768,65536,131072",
                    help="speed: total tokens (comma-separated)")
    ap.add_argument("--heads", default="16,32", help="speed: heads (comma-separated)")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sections", default="local,exact,speed")
    ap.add_argument("--print-specs", action="store_true",
                    help="print the variant specs the bundle needs and exit (no torch)")
    ap.add_argument("--check-bundle-only", action="store_true",
                    help="check that --bundle has every kernel and exit (no torch)")
    args = ap.parse_args()
    if args.print_specs:
        print(" ".join(v.spec() for v in needed_variants()))
        return 0
    if not args.bundle:
        ap.error("--bundle is required")
    if args.check_bundle_only:
        missing = check_bundle(args.bundle)
        print(f"{args.bundle}: " + (f"missing {', '.join(missing)}" if missing else
                                    f"all {len(needed_variants())} kernels"))
        return 1 if missing else 0
    if not args.out:
        ap.error("--out is required")
    args.lengths = [int(x) for x in args.lengths.split(",")]
    args.heads = [int(x) for x in args.heads.split(",")]
    import torch
    fa.load_bundle(args.bundle)
    sections = args.sections.split(",")
    distributed = "WORLD_SIZE" in os.environ
    rank, world = 0, 1
    if distributed:
        import torch.distributed as dist
        local = int(os.environ.get("LOCAL_RANK", 0))
        torch.cuda.set_device(local)
        dev = torch.device("cuda", local)
        dist.init_process_group("nccl", device_id=dev)
        rank, world = dist.get_rank(), dist.get_world_size()
    result = {"mode": f"NCCL, {world} processes" if distributed else "one process",
              "env": environment(args)}
    if rank == 0:
        print(json.dumps(result["env"]), flush=True)
    t0 = time.perf_counter()
    if not distributed and "local" in sections:
        result["local"] = section_local()
    if distributed and "exact" in sections:
        result["exact"] = section_exact(rank, world, dev)
    if distributed and "speed" in sections:
        result["speed"] = section_speed(rank, world, dev, args)
    result["seconds"] = time.perf_counter() - t0
    result["failures"] = failures
    if rank == 0:
        os.makedirs(args.out, exist_ok=True)
        stem = os.path.join(args.out, "ring" if distributed else "local")
        with open(stem + ".json", "w") as f:
            json.dump(result, f, indent=1, default=str)
        write_markdown(stem + ".md", result)
        print(open(stem + ".md").read())
        print(f"{result['seconds']:.0f} s; failures: {len(failures)}", flush=True)
    if distributed:
        import torch.distributed as dist
        bad = torch.tensor([len(failures)], device=dev)
        dist.all_reduce(bad)
        dist.destroy_process_group()
        return 1 if bad.item() else 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
