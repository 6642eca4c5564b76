"""The priority schedule's sweep kernel (:func:`asapgraph.kernels._local.jacobi_push` with
``0 < rho < 1``, issue 14 item 1) against a plain-Python statement of its rule.

The choice: blocks whose mean ``|r|`` (pools in) exceeds ``min(theta, max mean / 2)``,
keyed by ``sum |r|`` per unit of work (out-edges plus vertices), bucketed at 4 per octave
below the largest key; the fewest top buckets holding ``rho`` of the candidates' mass are
pushed, in block order.  A block that waits keeps its residual, pools in, in ``acc``.
Jacobi order pushes the snapshot; Gauss-Seidel order pushes a vertex's snapshot plus what
reached it earlier in the sweep.  The nineteenth session made the choice cost nothing per
vertex (the blocks' work kept beside their sums, buckets from the bits of the ratio, no
restore of the waiting blocks, no zeroing of the chosen ones in Gauss-Seidel order); this
pins the rule it must still follow, on skewed degrees (hubs and dangling runs, so blocks
differ in key by many octaves) and on blocks whose key ties the largest.
"""
import math

import numpy as np
import pytest

from asapgraph.kernels import _local

ALPHA = 0.85


def _rows(rng, n, nslots):
    deg = np.minimum(rng.zipf(1.6, n), 400)
    deg[rng.random(n) < 0.2] = 0  # dangling vertices
    deg[n // 2:n // 2 + 40] = 0  # a run of dangling blocks
    indptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    m = int(indptr[-1])
    tgt = rng.integers(0, n + nslots, m + 64).astype(np.int32)  # (padded for prefetch)
    return indptr, tgt, (deg == 0).astype(np.uint8), 1.0 / np.maximum(deg, 1)


def _reference(rows, acc, pend_p, bq_p, pend_d, bq_d, theta, block, rho, gs):
    """The rule, vertex by vertex: returns ``(x, acc, nedge, dp, pushed, pushed_abs, left,
    chosen blocks)``."""
    indptr, tgt, dangling, vcoef = rows
    n = len(indptr) - 1
    acc = acc.copy()
    x = np.zeros(n)
    bp = np.broadcast_to(bq_p, (n,))
    bd = np.broadcast_to(bq_d, (n,))
    r = [float(acc[u]) + pend_p * float(bp[u]) + (pend_d * float(bd[u]) if pend_d else 0.0)
         for u in range(n)]
    nb = -(-n // block)
    spans = [(b * block, min(n, b * block + block)) for b in range(nb)]
    bs = [sum(abs(r[u]) for u in range(lo, hi)) for lo, hi in spans]
    work = [int(indptr[hi] - indptr[lo]) + hi - lo for lo, hi in spans]
    th = min(theta, 0.5 * max(s / (hi - lo) for s, (lo, hi) in zip(bs, spans)))
    keys = [s / w for s, w in zip(bs, work)]
    kmax = max(keys)
    cand = [s > th * (hi - lo) for s, (lo, hi) in zip(bs, spans)]

    def bucket(k):
        if k <= 0.0:
            return 127
        return min(127, max(0, math.floor(4.0 * math.log2(kmax / k))))

    hist = [0.0] * 128
    for b in range(nb):
        if cand[b]:
            hist[bucket(keys[b])] += bs[b]
    kb, cum = 127, 0.0
    for i in range(128):
        cum += hist[i]
        if cum >= rho * sum(hist):
            kb = i
            break
    chosen = [b for b in range(nb) if cand[b] and bucket(keys[b]) <= kb]
    acc[:n] = r
    for b in chosen:  # Jacobi: the chosen residuals leave before any push
        if not gs:
            lo, hi = spans[b]
            acc[lo:hi] = 0.0
    nedge, dp, pushed, pushed_abs = 0, 0.0, 0.0, 0.0
    for b in chosen:
        for u in range(*spans[b]):
            ru = float(acc[u]) if gs else r[u]
            if gs:
                acc[u] = 0.0
            if ru == 0.0:
                continue
            x[u] += ru
            pushed += ru
            pushed_abs += abs(ru)
            if dangling[u]:
                dp += ALPHA * ru
                continue
            for e in range(indptr[u], indptr[u + 1]):
                acc[tgt[e]] += ALPHA * ru * vcoef[u]
            nedge += int(indptr[u + 1] - indptr[u])
    return x, acc, nedge, dp, pushed, pushed_abs, float(np.abs(acc[:n]).sum()), chosen


@pytest.mark.parametrize("gs", [False, True])
@pytest.mark.parametrize("rho,theta", [(0.8, 0.0), (0.5, 2e-3), (0.95, 0.0)])
@pytest.mark.parametrize("pools", ["none", "uniform", "per-vertex"])
def test_priority_sweep_follows_its_rule(gs, rho, theta, pools, rng):
    n, nslots, block = 1500, 300, 16
    rows = _rows(rng, n, nslots)
    indptr, tgt, dangling, vcoef = rows
    acc0 = rng.standard_normal(n + nslots) * np.exp(rng.uniform(-12, 0, n + nslots))
    acc0[200:260] = 0.0  # empty blocks (key 0)
    if pools == "none":
        pp, bqp, pd, bqd = 0.0, np.ones(1), 0.0, np.ones(1)
    elif pools == "uniform":
        pp, bqp, pd, bqd = 0.3, np.full(1, 1.0 / n), -0.1, np.full(1, 1.0 / n)
    else:
        bqp, bqd = rng.random(n), rng.random(n)
        bqp /= bqp.sum()
        bqd /= bqd.sum()
        pp, pd = 0.3, -0.1
    want = _reference(rows, acc0, pp, bqp, pd, bqd, theta, block, rho, gs)
    nb = -(-n // block)
    for prefetch in (0, 64):
        acc, x, rs = acc0.copy(), np.zeros(n), np.zeros(n)
        act, bsum = np.zeros(nb, np.int32), np.zeros(nb)
        nedge, dp, tot, tabs, left = _local.jacobi_push(
            indptr, tgt, None, vcoef, x, acc, rs, act, bsum, dangling, ALPHA, pp, bqp, pd, bqd,
            theta, block, rho, prefetch, None, 0.0, False, gs)
        assert 0 < len(want[7]) < nb  # (the choice is a real one)
        assert nedge == want[2]
        np.testing.assert_array_equal(np.sort(act[:len(want[7])]), want[7])
        np.testing.assert_allclose(x, want[0], rtol=1e-13, atol=1e-300)
        np.testing.assert_allclose(acc, want[1], rtol=1e-12, atol=1e-17)
        assert dp == pytest.approx(want[3], rel=1e-12, abs=1e-300)
        assert tot == pytest.approx(want[4], rel=1e-12, abs=1e-17)
        assert tabs == pytest.approx(want[5], rel=1e-12)
        assert left == pytest.approx(want[6], rel=1e-12)


def test_priority_sweep_ties_and_one_block(rng):
    """Every block with the same key (one bucket: all pushed), and a single block: the
    block of the largest key is always pushed."""
    n, block = 64, 16
    indptr = np.arange(0, 4 * n + 1, 4, dtype=np.int64)
    tgt = ((np.arange(4 * n) * 7 + 3) % n).astype(np.int32)
    rows = (indptr, np.concatenate([tgt, np.zeros(64, np.int32)]), np.zeros(n, np.uint8),
            np.full(n, 0.25))
    for acc0, want_blocks in ((np.full(n, 1e-3), 4), (np.r_[np.full(16, 1.0), np.zeros(48)], 1)):
        ref = _reference(rows, acc0, 0.0, np.ones(1), 0.0, np.ones(1), 0.0, block, 0.8, True)
        acc, x = acc0.copy(), np.zeros(n)
        act, bsum = np.zeros(4, np.int32), np.zeros(4)
        nedge = _local.jacobi_push(indptr, rows[1], None, rows[3], x, acc, np.zeros(n), act,
                                   bsum, rows[2], ALPHA, 0.0, np.ones(1), 0.0, np.ones(1),
                                   0.0, block, 0.8, 0, None, 0.0, False, True)[0]
        assert len(ref[7]) == want_blocks and nedge == ref[2] == 4 * 16 * want_blocks
        np.testing.assert_allclose(acc, ref[1], rtol=1e-13)
