"""fa.context_parallel with torch (skipped without it; CI has none): the
autograd Function of ring_attention with W ranks as threads on the CPU, and
TorchRing over gloo with two processes, each with a float64 torch attention
standing in for the kernels, against torch's own autograd through the
unsharded attention (an oracle independent of the ring's backward)."""
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from fa import context_parallel as cp  # noqa: E402

SCALE = 0.3


def attention(q, k, v, causal):
    """float64 attention with autograd: (out, lse); bottom-right causal, GQA."""
    G = q.shape[1] // k.shape[1]
    s = q @ k.repeat_interleave(G, 1).transpose(-1, -2) * SCALE
    if causal:
        Nq, Nk = q.shape[2], k.shape[2]
        i, j = torch.arange(Nq)[:, None], torch.arange(Nk)[None, :]
        s = s.masked_fill(j > i + (Nk - Nq), float("-inf"))
    lse = torch.logsumexp(s, -1)
    return torch.exp(s - lse[..., None]) @ v.repeat_interleave(G, 1), lse


def kernels(scale=None, softcap=None, fallback=False):
    """fa_kernels' seams in float64 torch (the backward through autograd of
    the block, with P from the global lse: what the kernel computes)."""
    def attend(q, k, v, causal):
        return attention(q, k, v, causal)

    def attend_backward(do, q, k, v, out, lse, dlse, causal):
        with torch.enable_grad():
            q, k, v = (x.detach().requires_grad_() for x in (q, k, v))
            G = q.shape[1] // k.shape[1]
            s = q @ k.repeat_interleave(G, 1).transpose(-1, -2) * SCALE
            if causal:
                Nq, Nk = q.shape[2], k.shape[2]
                i, j = torch.arange(Nq)[:, None], torch.arange(Nk)[None, :]
                s = s.masked_fill(j > i + (Nk - Nq), float("-inf"))
            p = torch.exp(s - lse[..., None])
            delta = (do * out).sum(-1) - (0 if dlse is None else dlse)
            # dS = P (dO V^T - delta) into q, k through s; dV = P^T dO.
            p = p.detach()
            ds = p * (do @ v.detach().repeat_interleave(G, 1).transpose(-1, -2) - delta[..., None])
            torch.autograd.backward([s, p @ v.repeat_interleave(G, 1)], [ds, do])
            return q.grad, k.grad, v.grad
    return attend, attend_backward


def full(world, layout, causal, seed=0, N_chunk=3):
    N = world * cp.chunks_per_rank(layout) * N_chunk
    g = torch.Generator().manual_seed(seed)
    t = {n: torch.randn(2, h, N, 8, generator=g, dtype=torch.float64)
         for n, h in (("q", 4), ("k", 2), ("v", 2), ("do", 4))}
    t["dlse"] = torch.randn(2, 4, N, generator=g, dtype=torch.float64)
    q, k, v = (t[n].clone().requires_grad_() for n in "qkv")
    out, lse = attention(q, k, v, causal)
    torch.autograd.backward([out, lse], [t["do"], t["dlse"]])
    return t, dict(out=out.detach(), lse=lse.detach(), dq=q.grad, dk=k.grad, dv=v.grad)


def ring_rank(t, rank, world, layout, causal, comm):
    s = {n: cp.shard(x, rank, world, layout) for n, x in t.items()}
    q, k, v = (s[n].clone().requires_grad_() for n in "qkv")
    out, lse = cp.ring_attention(q, k, v, causal=causal, layout=layout, return_lse=True,
                                 comm=comm, fallback=False)
    torch.autograd.backward([out, lse], [s["do"], s["dlse"]])
    return dict(out=out.detach(), lse=lse.detach(), dq=q.grad, dk=k.grad, dv=v.grad)


@pytest.mark.parametrize("world", [1, 2, 3])
@pytest.mark.parametrize("layout", cp.LAYOUTS)
@pytest.mark.parametrize("causal", [False, True])
def test_autograd_function_threads(world, layout, causal, monkeypatch):
    monkeypatch.setattr(cp, "fa_kernels", kernels)
    t, want = full(world, layout, causal)
    per_rank = cp.run_local(world, lambda comm: ring_rank(t, comm.rank, world, layout, causal,
                                                         comm), timeout=30)
    for n in want:
        got = cp.unshard([r[n] for r in per_rank], layout)
        assert got.dtype == want[n].dtype
        torch.testing.assert_close(got, want[n], atol=1e-10, rtol=1e-10, msg=n)


def test_only_lse_in_the_loss(monkeypatch):
    monkeypatch.setattr(cp, "fa_kernels", kernels)
    t, _ = full(2, "zigzag", True)
    q, k, v = (t[n].clone().requires_grad_() for n in "qkv")
    _, lse = attention(q, k, v, True)
    lse.sum().backward()

    def rank(comm):
        s = {n: cp.shard(t[n], comm.rank, 2).clone().requires_grad_() for n in "qkv"}
        _, l = cp.ring_attention(s["q"], s["k"], s["v"], causal=True, return_lse=True,
                                 comm=comm, fallback=False)
        l.sum().backward()
        return s["q"].grad, s["k"].grad
    per_rank = cp.run_local(2, rank, timeout=30)
    torch.testing.assert_close(cp.unshard([r[0] for r in per_rank]), q.grad)
    torch.testing.assert_close(cp.unshard([r[1] for r in per_rank]), k.grad)


def test_argument_errors():
    x = torch.zeros(1, 2, 5, 8)
    with pytest.raises(ValueError, match="even"):
        cp.ring_attention(x, x, x, comm=cp.LocalRing(1).comm(0), fallback=False)
    with pytest.raises(ValueError, match=r"\[B, H, N_local, D\]"):
        cp.ring_attention(x[0], x[0], x[0], comm=cp.LocalRing(1).comm(0), fallback=False)
    with pytest.raises(ValueError, match="layout"):
        cp.ring_attention(x, x, x, layout="ring", comm=cp.LocalRing(1).comm(0), fallback=False)


GLOO_RANK = r"""
import sys, torch, torch.distributed as dist
sys.path.insert(0, {tests!r})
import test_context_parallel_torch as T
from fa import context_parallel as cp
cp.fa_kernels = T.kernels
rank, world, layout, causal = int(sys.argv[1]), 2, sys.argv[2], sys.argv[3] == "1"
dist.init_process_group("gloo", init_method="file://" + {store!r}, rank=rank, world_size=world)
t, want = T.full(world, layout, causal)
got = T.ring_rank(t, rank, world, layout, causal, None)   # comm None: TorchRing(group=None)
for n in want:
    torch.testing.assert_close(got[n], cp.shard(want[n], rank, world, layout), atol=1e-10,
                               rtol=1e-10, msg=n)
dist.destroy_process_group()
print("rank", rank, "ok")
"""


@pytest.mark.parametrize("layout,causal", [("zigzag", True), ("contiguous", False)])
def test_torch_ring_over_gloo(tmp_path, layout, causal):
    tests = os.path.dirname(os.path.abspath(__file__))
    code = GLOO_RANK.format(tests=tests, store=str(tmp_path / "store"))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(r), layout, str(int(causal))],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(2)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    for r, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, out
        assert f"rank {r} ok" in out
