"""Context parallelism: ring attention over torch.distributed (issue 14, item 4).

A sequence too long for one GPU is cut along N and each of W ranks holds its
slice of q, k, v ([B, H, N/W, D]). Queries never move: the K/V blocks travel
around the ring (rank r sends to r+1, receives from r-1), so at step s rank r
holds the block of rank src = (r - s) mod W. Each step's attention is one call
of our kernel giving a partial (o, lse) over the keys of that block, and the
partials are merged in f32 by their lse: for key sets A and B,

    lse = log(exp(lse_A) + exp(lse_B)),  o = exp(lse_A - lse) o_A + exp(lse_B - lse) o_B,

exact in real arithmetic (softmax over A u B written through the sums over A
and B). The next block's transfer (torch.distributed.batch_isend_irecv) is
issued before the kernel runs on the current one, so it overlaps the compute.

Causal, load-balanced: the "zigzag" layout cuts the sequence into 2W equal
chunks and rank r holds chunks r and 2W-1-r (an early one and a late one), so
every rank has the same work at every step:

* the diagonal step (src == r): chunks (r, 2W-1-r) against themselves, a
  plain causal call on the local tensors: with equal chunks the local
  positions keep the global order, so local causality is global causality;
* src < r: src's chunks are (src, 2W-1-src) with src < r < 2W-1-r < 2W-1-src:
  both of our query chunks come after key chunk src (seen fully) and before
  key chunk 2W-1-src (not seen): all our queries against src's FIRST chunk;
* src > r: r < src <= W-1 < 2W-1-src < 2W-1-r: our first query chunk
  precedes both of src's chunks (sees nothing), our second follows both
  (sees all): our SECOND query chunk against all of src's keys.

Each off-diagonal step is (2 chunks x 1 chunk) of full attention and the
diagonal (2 x 2)/2, so no rank waits for another. The "contiguous" layout
(rank r holds chunk r of W) is the plain split: causal, rank r does r+1 of
the W steps' work (the rest are above the diagonal), the last rank gates the
ring. Without causal the layouts do the same work.

Backward (torch.autograd.Function): the ring again. Each step calls the
backward kernel with the merged (global) out and lse, so P = exp(S - lse) is
the global softmax and delta = rowsum(dO * O) the global one: the step's dQ,
dK, dV are exactly that block's share of the gradient. dQ accumulates at home;
dK and dV accumulate (f32) in buffers that travel with their K/V block one
step behind it and, after the last step, one more hop brings them home.

The algorithm (ring_forward, ring_backward) is written against two seams, so
it runs without torch.distributed and without a GPU (python/tests run it on
numpy with threads): `attend(q, k, v, causal) -> (o, lse)` and
`attend_backward(do, q, k, v, out, lse, dlse, causal) -> (dq, dk, dv)`, and a
communicator with `rank`, `world` and `send_recv(tensors)`, which sends to
rank+1 and receives the same shapes from rank-1, returning a handle whose
`wait()` gives the received tensors. `import fa.context_parallel` imports
no torch; ring_attention does, on its first call. docs/Inference.md.
"""
import queue
import threading
from typing import NamedTuple

LAYOUTS = ("zigzag", "contiguous")


def chunks_per_rank(layout):
    if layout not in LAYOUTS:
        raise ValueError(f"layout {layout!r}: one of {', '.join(LAYOUTS)}")
    return 2 if layout == "zigzag" else 1


def chunks_of(rank, world, layout="zigzag"):
    """The global chunks `rank` holds, in its local order: zigzag (r, 2W-1-r)
    of 2W chunks, contiguous (r,) of W."""
    return (rank, 2 * world - 1 - rank) if chunks_per_rank(layout) == 2 else (rank,)


class Part(NamedTuple):
    """One step's attention in local chunk units: queries [q0, q1) against
    keys [k0, k1) of the held block, causal only on the diagonal."""
    q0: int
    q1: int
    k0: int
    k1: int
    causal: bool


def step_part(rank, src, world, causal, layout="zigzag"):
    """What `rank` computes while it holds the K/V block of rank `src`, or
    None (nothing visible). The module's docstring says why each case holds."""
    n = chunks_per_rank(layout)
    if not causal:
        return Part(0, n, 0, n, False)
    if src == rank:  # the diagonal: local order is global order
        return Part(0, n, 0, n, True)
    if n == 1:  # contiguous: earlier ranks' keys fully, later ones' not at all
        return Part(0, 1, 0, 1, False) if src < rank else None
    if src < rank:  # both query chunks see src's first chunk only
        return Part(0, 2, 0, 1, False)
    return Part(1, 2, 0, 2, False)  # only the late query chunk sees src's keys


# ---------------------------------------------------------------------------
# Helpers on numpy arrays and torch tensors alike

def _xp(x):
    if type(x).__module__.startswith("numpy"):
        import numpy
        return numpy
    import torch
    return torch


def _acc(x):
    """A fresh copy of x in the accumulation type: f32 (f64 stays f64)."""
    xp = _xp(x)
    dtype = xp.promote_types(x.dtype, xp.float32)
    return x.astype(dtype) if xp.__name__ == "numpy" else x.to(dtype, copy=True)


def _take(x, dim, start, stop):
    return x[(slice(None),) * dim + (slice(start, stop),)]


def _cat(xs, dim):
    xp = _xp(xs[0])
    return (xp.concatenate if xp.__name__ == "numpy" else xp.cat)(xs, dim)


def shard(x, rank, world, layout="zigzag", dim=2):
    """Rank `rank`'s slice of a whole sequence x (default: the N of [B, H, N,
    D]; dim=2 also cuts an lse [B, H, N]): its chunks (chunks_of) in order."""
    total = world * chunks_per_rank(layout)
    if x.shape[dim] % total:
        raise ValueError(f"sequence length {x.shape[dim]} is not a multiple of {total} "
                         f"({layout} layout over {world} ranks)")
    c = x.shape[dim] // total
    return _cat([_take(x, dim, i * c, (i + 1) * c) for i in chunks_of(rank, world, layout)],
                dim)


def unshard(shards, layout="zigzag", dim=2):
    """The whole sequence from the ranks' slices (a list in rank order):
    the inverse of shard."""
    world, n = len(shards), chunks_per_rank(layout)
    c = shards[0].shape[dim] // n
    chunk = {}
    for r, x in enumerate(shards):
        for j, i in enumerate(chunks_of(r, world, layout)):
            chunk[i] = _take(x, dim, j * c, (j + 1) * c)
    return _cat([chunk[i] for i in range(world * n)], dim)


def merge(out, lse, o, l, rows):
    """Adds a partial (o, l) over other keys to the running (out, lse) of the
    query rows `rows` (a slice of dim 2), in place, in out's type (f32):
    lse' = log(e^lse + e^l), out' = e^(lse - lse') out + e^(l - lse') o. Rows
    with no key so far would need lse = -inf on both sides; the diagonal step
    comes first and gives every row a key, so that never happens here."""
    xp = _xp(out)
    old = lse[:, :, rows]
    new = xp.logaddexp(old, l)
    out[:, :, rows] = (out[:, :, rows] * xp.exp(old - new)[..., None]
                       + o * xp.exp(l - new)[..., None])
    lse[:, :, rows] = new


# ---------------------------------------------------------------------------
# The ring

def ring_forward(q, k, v, comm, attend, causal=False, layout="zigzag"):
    """This rank's (out, lse) of attention over the whole sequence, both f32
    (f64 for f64 inputs): q, k, v are its slices; the other ranks run the same
    call at the same time."""
    rank, world = comm.rank, comm.world
    c = q.shape[2] // chunks_per_rank(layout)
    out = lse = None
    for step in range(world):
        if step + 1 < world:  # the next block travels while this one is used
            pending = comm.send_recv([k, v])
        p = step_part(rank, (rank - step) % world, world, causal, layout)
        if p is not None:
            rows = slice(p.q0 * c, p.q1 * c)
            o, l = attend(q[:, :, rows], k[:, :, p.k0 * c:p.k1 * c], v[:, :, p.k0 * c:p.k1 * c],
                          p.causal)
            if out is None:  # step 0, the diagonal: every row
                out, lse = _acc(o), _acc(l)
            else:
                merge(out, lse, o, l, rows)
        if step + 1 < world:
            k, v = pending.wait()
    return out, lse


def ring_backward(do, q, k, v, out, lse, dlse, comm, attend_backward, causal=False,
                  layout="zigzag"):
    """This rank's (dq, dk, dv) (f32, f64 for f64 inputs) given its slices of
    the forward's inputs, of the merged out and lse, and of the gradients of
    out and lse (dlse None: the loss does not use lse). dK and dV of a block
    travel one step behind it and come home after the last step."""
    rank, world = comm.rank, comm.world
    c = q.shape[2] // chunks_per_rank(layout)
    dq = dk = dv = grads = None
    for step in range(world):
        if step + 1 < world:
            pending = comm.send_recv([k, v])
        p = step_part(rank, (rank - step) % world, world, causal, layout)
        part = None
        if p is not None:
            rows, keys = slice(p.q0 * c, p.q1 * c), slice(p.k0 * c, p.k1 * c)
            part = attend_backward(do[:, :, rows], q[:, :, rows], k[:, :, keys], v[:, :, keys],
                                   out[:, :, rows], lse[:, :, rows],
                                   None if dlse is None else dlse[:, :, rows], p.causal)
        if step == 0:  # the diagonal: every row and key; this block's sums start here
            dq, dk, dv = (_acc(g) for g in part)
        else:
            # What the ranks before us added for the block we now hold (it
            # left the previous rank at the end of its step, after its part).
            dk, dv = grads.wait()
            if part is not None:
                dq[:, :, rows] += part[0]
                dk[:, :, keys] += part[1]
                dv[:, :, keys] += part[2]
        if step + 1 < world:
            k, v = pending.wait()
        if world > 1:  # to the block's next holder; after the last step, its owner
            grads = comm.send_recv([dk, dv])
    if world > 1:
        dk, dv = grads.wait()
    return dq, dk, dv


# ---------------------------------------------------------------------------
# Communicators

class _Done:
    def __init__(self, get):
        self._get = get

    def wait(self):
        return self._get()


class LocalRing:
    """W ranks in one process, each run by a thread (run_local): rank r's
    send_recv puts its tensors in rank r+1's mailbox and receives from its
    own. The copy is made when the receiver waits, as a transfer that
    completes at wait(): a sender that changed a sent tensor before then would
    give wrong results (the tests would see it). For the tests on numpy and
    the one-GPU check (bench/bench_context_parallel.py)."""

    def __init__(self, world, timeout=300):
        self.world, self.timeout = world, timeout
        self._boxes = [queue.Queue() for _ in range(world)]

    def comm(self, rank):
        return _LocalComm(self, rank)

    def abort(self):
        """Wakes every rank waiting for a message with an error (a rank failed)."""
        for box in self._boxes:
            box.put(None)


class _LocalComm:
    def __init__(self, ring, rank):
        self.ring, self.rank, self.world = ring, rank, ring.world

    def send_recv(self, tensors):
        self.ring._boxes[(self.rank + 1) % self.world].put(list(tensors))
        box = self.ring._boxes[self.rank]

        def wait():
            got = box.get(timeout=self.ring.timeout)
            if got is None:
                raise RuntimeError("LocalRing: another rank failed")
            return [x.copy() if _xp(x).__name__ == "numpy" else x.clone() for x in got]
        return _Done(wait)


def run_local(world, fn, timeout=300):
    """[fn(comm) for each rank] with the ranks run at once by threads over a
    LocalRing (rank order); the first exception of a rank is raised here (the
    ranks waiting for a message then stop too)."""
    ring = LocalRing(world, timeout)
    results, errors = [None] * world, []

    def run(r):
        try:
            results[r] = fn(ring.comm(r))
        except BaseException as e:  # noqa: BLE001 (re-raised below)
            errors.append(e)
            ring.abort()
    threads = [threading.Thread(target=run, args=(r,), daemon=True) for r in range(world)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


class TorchRing:
    """The ring over a torch.distributed process group (None: the default
    one, NCCL on GPUs): send_recv is one batch_isend_irecv of an isend of
    each tensor to rank+1 and an irecv of its shape from rank-1; wait() makes
    the current stream wait for them (NCCL runs them on its own stream)."""

    def __init__(self, group=None):
        import torch.distributed as dist
        self.dist, self.group = dist, group
        self.rank, self.world = dist.get_rank(group), dist.get_world_size(group)

        def peer(i):
            i %= self.world
            return i if group is None else dist.get_global_rank(group, i)
        self.next, self.prev = peer(self.rank + 1), peer(self.rank - 1)

    def send_recv(self, tensors):
        import torch
        dist = self.dist
        sent = [t.contiguous() for t in tensors]
        got = [torch.empty_like(t) for t in sent]
        ops = [dist.P2POp(dist.isend, t, self.next, self.group) for t in sent]
        ops += [dist.P2POp(dist.irecv, t, self.prev, self.group) for t in got]
        reqs = dist.batch_isend_irecv(ops)

        def wait():
            for r in reqs:
                r.wait()
            sent.clear()  # held until here: the sends read them
            return got
        return _Done(wait)


# ---------------------------------------------------------------------------
# torch: fa's kernels as the seams, the autograd Function, the public call

def fa_kernels(scale=None, softcap=None, fallback=False):
    """(attend, attend_backward) on fa's kernels: fa.attention(...,
    return_lse=True) and torch.ops.fa.attention_backward, which is given the
    merged out and lse (so delta and P are the global ones)."""
    import torch
    from . import torch_ops

    def attend(q, k, v, causal):
        return torch_ops.attention(q, k, v, causal=causal, scale=scale, softcap=softcap,
                                   return_lse=True, fallback=fallback)

    def attend_backward(do, q, k, v, out, lse, dlse, causal):
        return torch.ops.fa.attention_backward(do.contiguous(), q, k, v, out, lse, dlse, causal,
                                               -1, -1, scale, softcap, fallback)
    return attend, attend_backward


def _function():
    import torch

    class RingAttention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, causal, scale, softcap, layout, comm, fallback):
            attend, _ = fa_kernels(scale, softcap, fallback)
            out, lse = ring_forward(q, k, v, comm, attend, causal, layout)
            out = out.to(q.dtype)
            ctx.save_for_backward(q, k, v, out, lse)
            ctx.ring = (causal, scale, softcap, layout, comm, fallback)
            ctx.set_materialize_grads(False)
            return out, lse

        @staticmethod
        def backward(ctx, dout, dlse):
            q, k, v, out, lse = ctx.saved_tensors
            causal, scale, softcap, layout, comm, fallback = ctx.ring
            if dout is None:  # only lse reaches the loss
                dout = torch.zeros_like(out)
            _, attend_backward = fa_kernels(scale, softcap, fallback)
            dq, dk, dv = ring_backward(dout, q, k, v, out, lse, dlse, comm, attend_backward,
                                       causal, layout)
            return (dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)) + (None,) * 6
    return RingAttention


_RingAttention = None


def ring_attention(q, k, v, *, causal=False, scale=None, softcap=None, group=None,
                   layout="zigzag", return_lse=False, comm=None, fallback=None):
    """Attention over a sequence split across the ranks of `group` (every
    rank calls it at once). q [B, Hq, n, D], k, v [B, Hkv, n, D]: this rank's
    slice of the sequence in `layout` (shard() makes it: "zigzag", rank r
    holding chunks r and 2W-1-r of 2W, balances causal work; "contiguous",
    chunk r of W); n must be even for zigzag. Returns this rank's slice of
    the output ([B, Hq, n, D], q's dtype) and with return_lse its lse
    ([B, Hq, n] f32, natural log), equal to shard() of fa.attention on the
    whole sequence up to rounding. causal: over the whole sequence. GQA as
    in fa.attention; scale and softcap as there; no window. K/V blocks go
    around the ring by NCCL P2P while our kernel computes; backward (autograd)
    runs the ring again through fa's backward kernel. comm: a communicator
    instead of the group's ring (LocalRing's, for tests)."""
    global _RingAttention
    chunks = chunks_per_rank(layout)
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dim() != 4:
            raise ValueError(f"ring_attention: {name} must be [B, H, N_local, D], got "
                             f"{list(t.shape)}")
    if not (q.shape[2] == k.shape[2] == v.shape[2]) or q.shape[2] % chunks:
        raise ValueError(f"ring_attention: q, k, v must hold the same {'even ' * (chunks == 2)}"
                         f"number of positions ({layout} layout), got "
                         f"{q.shape[2]}, {k.shape[2]}, {v.shape[2]}")
    if _RingAttention is None:
        _RingAttention = _function()
    if fallback is None:
        from . import torch_ops
        fallback = torch_ops._FALLBACK_ENV
    comm = comm if comm is not None else TorchRing(group)
    out, lse = _RingAttention.apply(q, k, v, bool(causal), scale, softcap, layout, comm,
                                    bool(fallback))
    return (out, lse) if return_lse else out
