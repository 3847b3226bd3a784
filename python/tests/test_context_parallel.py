"""fa.context_parallel without torch or a GPU: the ring schedule, the lse
merge, and the whole ring (forward and backward) run by threads over an
in-memory ring with a float64 numpy attention standing in for the kernel,
against the unsharded float64 attention and its gradient. Negative controls:
a wrong chunk order, a wrong step, a wrong merge are caught."""
import itertools

import numpy as np
import pytest

from fa import context_parallel as cp

# ---------------------------------------------------------------------------
# The numpy stand-ins for the kernels (float64; bottom-right causal, GQA,
# natural-log lse: fa.attention's semantics)


def _scores(q, k, causal, scale):
    G = q.shape[1] // k.shape[1]
    s = q @ np.repeat(k, G, axis=1).swapaxes(-1, -2) * scale
    if causal:
        Nq, Nk = q.shape[2], k.shape[2]
        i, j = np.arange(Nq)[:, None], np.arange(Nk)[None, :]
        s = np.where(j <= i + (Nk - Nq), s, -np.inf)
    return s


def attend(q, k, v, causal, scale=0.3):
    s = _scores(q, k, causal, scale)
    m = s.max(-1, keepdims=True)
    lse = (m + np.log(np.exp(s - m).sum(-1, keepdims=True)))[..., 0]
    p = np.exp(s - lse[..., None])
    return p @ np.repeat(v, q.shape[1] // v.shape[1], axis=1), lse


def attend_backward(do, q, k, v, out, lse, dlse, causal, scale=0.3):
    """docs/Backward.md's math given out and lse (the ring passes the merged,
    global ones: then this is the block's share of the gradient)."""
    G = q.shape[1] // k.shape[1]
    kk, vv = np.repeat(k, G, axis=1), np.repeat(v, G, axis=1)
    p = np.exp(_scores(q, k, causal, scale) - lse[..., None])
    delta = (do * out).sum(-1)
    if dlse is not None:
        delta = delta - dlse
    ds = p * (do @ vv.swapaxes(-1, -2) - delta[..., None])
    B, Hkv, Nk, D = k.shape
    dq = ds @ kk * scale
    dk = (ds.swapaxes(-1, -2) @ q * scale).reshape(B, Hkv, G, Nk, D).sum(2)
    dv = (p.swapaxes(-1, -2) @ do).reshape(B, Hkv, G, Nk, D).sum(2)
    return dq, dk, dv


def _inputs(N, Hq=4, Hkv=2, D=8, B=2, seed=0):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((B, h, N, D)) for h in (Hq, Hkv, Hkv))
    do = rng.standard_normal((B, Hq, N, D))
    dlse = rng.standard_normal((B, Hq, N))
    return q, k, v, do, dlse


def test_numpy_backward_is_the_gradient():
    """The oracle itself: attend_backward against central differences of
    L = sum(do * out) + sum(dlse * lse)."""
    q, k, v, do, dlse = _inputs(5, B=1, D=4)

    def loss(q, k, v):
        o, l = attend(q, k, v, True)
        return (do * o).sum() + (dlse * l).sum()
    o, l = attend(q, k, v, True)
    grads = attend_backward(do, q, k, v, o, l, dlse, True)
    for x, g in zip((q, k, v), grads):
        num = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            x[idx] += 1e-6
            up = loss(q, k, v)
            x[idx] -= 2e-6
            num[idx] = (up - loss(q, k, v)) / 2e-6
            x[idx] += 1e-6
        np.testing.assert_allclose(g, num, atol=1e-6)


# ---------------------------------------------------------------------------
# The schedule

def visible_pairs(rank, world, causal, layout):
    """{(q chunk, k chunk): kind} that `rank` computes over the ring, kind
    "diag" (causal within the pair) or "full"; each pair at most once."""
    seen = {}
    mine = cp.chunks_of(rank, world, layout)
    for step in range(world):
        src = (rank - step) % world
        p = cp.step_part(rank, src, world, causal, layout)
        if p is None:
            continue
        qs, ks = mine[p.q0:p.q1], cp.chunks_of(src, world, layout)[p.k0:p.k1]
        for (i, a), (j, b) in itertools.product(enumerate(qs), enumerate(ks)):
            if p.causal:  # a causal call on equal chunks: below the local diagonal
                assert qs == ks
                if i < j:
                    continue
                kind = "diag" if i == j else "full"
            else:
                kind = "full"
            assert (a, b) not in seen, f"rank {rank} computes {(a, b)} twice"
            seen[(a, b)] = kind
    return seen


def check_schedule(world, causal, layout):
    """Every (q chunk, k chunk) pair the attention needs computed exactly
    once over all ranks, by the rank holding the q chunk, nothing above the
    diagonal, the diagonal ones causal; returns the work per rank (in
    chunk pairs, a diagonal one counting half)."""
    n = world * cp.chunks_per_rank(layout)
    want = {(a, b): ("diag" if a == b else "full") for a in range(n) for b in range(n)
            if not causal or a >= b}
    if not causal:
        want = {ab: "full" for ab in want}
    got, work = {}, []
    for r in range(world):
        pairs = visible_pairs(r, world, causal, layout)
        assert all(a in cp.chunks_of(r, world, layout) for a, _ in pairs)
        assert not set(pairs) & set(got), "a pair computed by two ranks"
        got.update(pairs)
        work.append(sum(0.5 if kind == "diag" else 1 for kind in pairs.values()))
    assert got == want
    return work


@pytest.mark.parametrize("world", [1, 2, 3, 4, 5, 8])
@pytest.mark.parametrize("layout", cp.LAYOUTS)
@pytest.mark.parametrize("causal", [False, True])
def test_schedule(world, layout, causal):
    work = check_schedule(world, causal, layout)
    if causal and layout == "zigzag" or not causal:
        assert len(set(work)) == 1, work  # balanced
    elif world > 1:
        assert work == [r + 0.5 for r in range(world)]  # contiguous causal: the last rank gates


def test_zigzag_steps_are_balanced():
    """Zigzag, causal: every step of every rank is 2 chunk pairs of work
    (the diagonal: 2 x 2 halved), so no rank waits at any step."""
    W = 4
    for r, step in itertools.product(range(W), range(W)):
        p = cp.step_part(r, (r - step) % W, W, True)
        area = (p.q1 - p.q0) * (p.k1 - p.k0)
        assert (area / 2 if p.causal else area) == 2


def test_schedule_check_catches_errors(monkeypatch):
    right = cp.step_part
    # src > r with the first query chunk instead of the second: above the diagonal.
    monkeypatch.setattr(cp, "step_part", lambda r, s, W, c, lay="zigzag":
                        cp.Part(0, 1, 0, 2, False) if c and s > r else right(r, s, W, c, lay))
    with pytest.raises(AssertionError):
        check_schedule(3, True, "zigzag")
    # src < r with both of src's chunks: the late one is above the diagonal.
    monkeypatch.setattr(cp, "step_part", lambda r, s, W, c, lay="zigzag":
                        cp.Part(0, 2, 0, 2, False) if c and s < r else right(r, s, W, c, lay))
    with pytest.raises(AssertionError):
        check_schedule(3, True, "zigzag")
    # Contiguous, causal, skipping nothing: pairs above the diagonal.
    monkeypatch.setattr(cp, "step_part", lambda r, s, W, c, lay="zigzag": cp.Part(0, 1, 0, 1,
                                                                                 s == r))
    with pytest.raises(AssertionError):
        check_schedule(3, True, "contiguous")


def test_shard_unshard():
    x = np.arange(2 * 3 * 24 * 2).reshape(2, 3, 24, 2)
    for W, layout in itertools.product((1, 2, 3, 4), cp.LAYOUTS):
        parts = [cp.shard(x, r, W, layout) for r in range(W)]
        np.testing.assert_array_equal(cp.unshard(parts, layout), x)
    # Zigzag over 3 ranks: 6 chunks of 4; rank 1 holds chunks 1 and 4.
    np.testing.assert_array_equal(cp.shard(x, 1, 3)[0, 0, :, 0],
                                  x[0, 0, [4, 5, 6, 7, 16, 17, 18, 19], 0])
    with pytest.raises(ValueError, match="multiple of 8"):
        cp.shard(x[:, :, :20], 0, 4)
    with pytest.raises(ValueError, match="layout"):
        cp.shard(x, 0, 2, "ring")


# ---------------------------------------------------------------------------
# The merge

def test_merge_is_attention_over_the_union():
    q, k, v, _, _ = _inputs(12)
    o, l = attend(q, k, v, False)
    a_o, a_l = attend(q, k[:, :, :5], v[:, :, :5], False)
    b_o, b_l = attend(q[:, :, 4:], k[:, :, 5:], v[:, :, 5:], False)
    out, lse = a_o.copy(), a_l.copy()
    cp.merge(out, lse, b_o, b_l, slice(4, None))  # rows 4.. get the other keys
    np.testing.assert_allclose(out[:, :, 4:], o[:, :, 4:], atol=1e-12)
    np.testing.assert_allclose(lse[:, :, 4:], l[:, :, 4:], atol=1e-12)
    np.testing.assert_array_equal(out[:, :, :4], a_o[:, :, :4])  # other rows untouched
    # Large and very different lse: no overflow (the weights are exp of differences).
    out, lse = np.ones((1, 1, 1, 2)), np.array([[[1000.0]]])
    cp.merge(out, lse, np.zeros((1, 1, 1, 2)), np.array([[[1000.0 + np.log(3.0)]]]),
             slice(None))
    np.testing.assert_allclose(out, 0.25)
    np.testing.assert_allclose(lse, 1000 + np.log(4.0))


# ---------------------------------------------------------------------------
# The whole ring, simulated

def run_ring(world, causal, layout, Hq=4, Hkv=2, chunk=3, with_dlse=True):
    """Forward and backward of every rank at once (threads over a LocalRing),
    unsharded: (out, lse, dq, dk, dv) in the whole sequence's order, and the
    single-process float64 reference of each."""
    N = world * cp.chunks_per_rank(layout) * chunk
    q, k, v, do, dlse = _inputs(N, Hq, Hkv)
    if not with_dlse:
        dlse = None

    def rank(comm):
        r, W = comm.rank, comm.world
        s = (lambda x: None if x is None else cp.shard(x, r, W, layout))
        out, lse = cp.ring_forward(s(q), s(k), s(v), comm, attend, causal, layout)
        grads = cp.ring_backward(s(do), s(q), s(k), s(v), out, lse, s(dlse), comm,
                                 attend_backward, causal, layout)
        return (out, lse) + tuple(grads)
    per_rank = cp.run_local(world, rank, timeout=30)
    got = [cp.unshard([res[i] for res in per_rank], layout) for i in range(5)]
    o, l = attend(q, k, v, causal)
    want = [o, l] + list(attend_backward(do, q, k, v, o, l, dlse, causal))
    return got, want


def assert_same(got, want):
    for name, g, w in zip(("out", "lse", "dq", "dk", "dv"), got, want):
        assert g.shape == w.shape, name
        np.testing.assert_allclose(g, w, atol=1e-10, rtol=1e-10, err_msg=name)


@pytest.mark.parametrize("world", [1, 2, 3, 4])
@pytest.mark.parametrize("layout", cp.LAYOUTS)
@pytest.mark.parametrize("causal", [False, True])
def test_ring_matches_unsharded(world, layout, causal):
    assert_same(*run_ring(world, causal, layout))


@pytest.mark.parametrize("world", [2, 3])
def test_ring_mha_without_lse_gradient(world):
    assert_same(*run_ring(world, True, "zigzag", Hq=3, Hkv=3, chunk=4, with_dlse=False))


def test_ring_catches_wrong_chunk_order(monkeypatch):
    """Zigzag with each rank's chunks stored late-first: step_part's cases no
    longer hold and the result is wrong (shard and unshard stay inverse)."""
    right = cp.chunks_of
    monkeypatch.setattr(cp, "chunks_of", lambda r, W, lay="zigzag": right(r, W, lay)[::-1])
    got, want = run_ring(3, True, "zigzag")
    with pytest.raises(AssertionError):
        assert_same(got, want)


def test_ring_catches_wrong_step(monkeypatch):
    """src < r against the second key chunk instead of the first."""
    right = cp.step_part
    monkeypatch.setattr(cp, "step_part", lambda r, s, W, c, lay="zigzag":
                        cp.Part(0, 2, 1, 2, False) if c and s < r else right(r, s, W, c, lay))
    with pytest.raises(AssertionError):
        assert_same(*run_ring(2, True, "zigzag"))


def test_ring_catches_wrong_merge(monkeypatch):
    """A merge that averages the partials instead of weighting them by lse."""
    def average(out, lse, o, l, rows):
        out[:, :, rows] = (out[:, :, rows] + o) / 2
        lse[:, :, rows] = np.logaddexp(lse[:, :, rows], l)
    monkeypatch.setattr(cp, "merge", average)
    got, want = run_ring(2, False, "zigzag")
    with pytest.raises(AssertionError):
        assert_same(got, want)
    np.testing.assert_allclose(got[1], want[1], atol=1e-10)  # lse alone is still right


def test_ring_catches_gradients_not_sent_home(monkeypatch):
    """dK/dV kept by the rank that finished them (the last hop dropped): dq is
    still right, dk and dv are not."""
    class NoLastHop:
        def __init__(self, comm):
            self.comm, self.rank, self.world, self.calls = comm, comm.rank, comm.world, 0

        def send_recv(self, tensors):
            self.calls += 1
            h = self.comm.send_recv(tensors)
            if self.calls < 2 * self.world - 1:  # W - 1 K/V hops, W dK/dV hops
                return h
            return cp._Done(lambda: (h.wait(), tensors)[1])
    right = cp.ring_backward
    monkeypatch.setattr(cp, "ring_backward", lambda *a: right(*a[:7], NoLastHop(a[7]), *a[8:]))
    got, want = run_ring(2, False, "zigzag")
    np.testing.assert_allclose(got[2], want[2], atol=1e-10)
    for i in (3, 4):
        with pytest.raises(AssertionError):
            np.testing.assert_allclose(got[i], want[i], atol=1e-10)


def test_local_ring_copies_at_receive():
    """A transfer completes at wait(): what the sender changed before then
    is what arrives (so the ring must not change what it sent)."""
    ring = cp.LocalRing(2, timeout=5)
    a, b = ring.comm(0), ring.comm(1)
    x = np.zeros(3)
    a.send_recv([x])
    h = b.send_recv([np.ones(3)])
    x[0] = 7
    (got,) = h.wait()
    assert got[0] == 7 and got is not x


def test_run_local_raises():
    """A failing rank's error comes out, and the ranks waiting for it stop at
    once (not after the timeout)."""
    import time

    def bad(comm):
        if comm.rank == 1:
            raise RuntimeError("rank 1 failed")
        comm.send_recv([np.zeros(1)]).wait()
        comm.send_recv([np.zeros(1)]).wait()
        return comm.rank
    t = time.perf_counter()
    with pytest.raises(RuntimeError, match="rank 1"):
        cp.run_local(3, bad, timeout=60)
    assert time.perf_counter() - t < 10


def test_import_needs_no_torch():
    import subprocess
    import sys
    code = ("import sys, fa.context_parallel, fa; assert fa.context_parallel; "
            "assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
