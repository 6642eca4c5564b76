"""The ``jacobi`` PageRank sweep in Gauss-Seidel order within a rank
(:func:`asapgraph.kernels._local.jacobi_push`, ``gauss_seidel=True``;
:data:`asapgraph.engine.asap.GAUSS_SEIDEL`): a pushed vertex also pushes what earlier
vertices of the same sweep sent it; the signed mass is conserved, the fixed point is
power iteration's, and fewer sweeps reach it."""
import numpy as np
import pytest

from asapgraph.kernels import _local

ALPHA = 0.85


def _sweep(rows, x, acc, pend, gs, theta=0.0, block=16, rho=0.0):
    indptr, tgt, dangling, vcoef = rows
    n = len(x)
    nb = -(-n // block)
    rs, act, bsum = np.zeros(n), np.zeros(nb, np.int32), np.zeros(nb)
    bq = np.full(1, 1.0 / n)
    return _local.jacobi_push(indptr, tgt, None, vcoef, x, acc, rs, act, bsum, dangling,
                              ALPHA, pend, bq, 0.0, bq, theta, block, rho, 0, None, 0.0,
                              False, gs)


def test_a_later_vertex_pushes_what_an_earlier_one_sent_it():
    # 0 -> 1 -> 2 (2 dangling), all in one block: Jacobi leaves 1's gain in acc[1],
    # Gauss-Seidel pushes it on to 2 and 2's into the dangling pool in the same sweep
    indptr = np.array([0, 1, 2, 2], dtype=np.int64)
    rows = (indptr, np.array([1, 2], dtype=np.int32), np.array([0, 0, 1], np.uint8),
            np.ones(3))
    a2 = ALPHA * ALPHA
    for gs, want_acc, want_x, want_dp in ((False, [0.0, ALPHA, 0.0], [1.0, 0.0, 0.0], 0.0),
                                          (True, [0.0, 0.0, 0.0], [1.0, ALPHA, a2],
                                           ALPHA * a2)):
        x, acc = np.zeros(3), np.array([1.0, 0.0, 0.0])
        nedge, dp, tot, tabs, left = _sweep(rows, x, acc, 0.0, gs)
        np.testing.assert_allclose(acc, want_acc, rtol=1e-15)
        np.testing.assert_allclose(x, want_x, rtol=1e-15)
        assert nedge == 1 + gs  # (a dangling vertex visits no edge)
        assert dp == pytest.approx(want_dp)
        assert tot == pytest.approx(sum(want_x))
        assert left == pytest.approx(sum(want_acc))


@pytest.mark.parametrize("theta,rho", [(0.0, 0.0), (1e-3, 0.0), (1e-3, 0.8)])
def test_mass_is_conserved(rng, theta, rho, push_rows):
    """One sweep moves signed mass only: what left the owned residuals is in ``x``, the
    slots, the owned residuals again (alpha) and the pools ((1 - alpha) + dangling)."""
    n, nslots, m = 400, 60, 3000
    rows = push_rows(n, nslots, m)
    acc = rng.standard_normal(n + nslots)
    before = acc.sum() + 0.3  # (the teleport pool spread in the sweep)
    x = np.zeros(n)
    nedge, dp, tot, tabs, left = _sweep(rows, x, acc, 0.3, True, theta, rho=rho)
    assert x.sum() == pytest.approx(tot, abs=1e-12)
    # the pools' share: (1 - alpha) of everything pushed, alpha of what dangling pushed
    assert acc.sum() + (1 - ALPHA) * tot + dp == pytest.approx(before, abs=1e-11)
    assert left == pytest.approx(np.abs(acc[:n]).sum(), rel=1e-12)


def test_same_fixed_point_in_fewer_sweeps(rng, push_rows):
    """Repeated sweeps (pools re-spread uniformly) from ``x = 1/n, r = G x - x`` with
    everything local: both orders reach the PageRank vector; Gauss-Seidel in fewer where
    edges run forward in the sweep's order (here: to one of the next 200 vertices)."""
    n, m = 2000, 16000
    indptr, tgt, dangling, vcoef = push_rows(n, 0, m)
    src = np.repeat(np.arange(n), np.diff(indptr))
    tgt = ((src + rng.integers(1, 200, m)) % n).astype(np.int32)
    rows = (indptr, tgt, dangling, vcoef)
    W = np.zeros((n, n))
    deg = np.diff(indptr)
    np.add.at(W, (tgt, np.repeat(np.arange(n), deg)), np.repeat(vcoef, deg))
    d = dangling.astype(float)
    G = ALPHA * (W + np.outer(np.full(n, 1.0 / n), d)) + (1 - ALPHA) / n
    ref = np.full(n, 1.0 / n)
    for _ in range(300):
        ref = G @ ref
    sweeps = {}
    for gs in (False, True):
        x = np.full(n, 1.0 / n)
        acc = G @ x - x
        pend = 0.0
        for k in range(1, 200):
            nedge, dp, tot, tabs, left = _sweep(rows, x, acc, pend, gs)
            pend = (1 - ALPHA) * tot + dp
            if np.abs(x / x.sum() - ref).sum() < 1e-10:
                break
        assert np.abs(x / x.sum() - ref).sum() < 1e-10, gs
        assert abs(acc.sum() + pend) < 1e-12  # sum r stays 0
        sweeps[gs] = k
    assert sweeps[True] < 0.8 * sweeps[False], sweeps


def _sweep_om(rows, x, acc, pend, gs, omega, nslots=0):
    indptr, tgt, dangling, vcoef = rows
    n = len(x)
    nb = -(-n // 16)
    rs, act, bsum = np.zeros(n), np.zeros(nb, np.int32), np.zeros(nb)
    bq = np.full(1, 1.0 / n)
    return _local.jacobi_push(indptr, tgt, None, vcoef, x, acc, rs, act, bsum, dangling,
                              ALPHA, pend, bq, 0.0, bq, 0.0, 16, 0.0, 0, None, 0.0,
                              False, gs, omega)


@pytest.mark.parametrize("gs", [False, True])
def test_over_relaxation_pushes_omega_r_and_keeps_the_rest(gs):
    # 0 -> 1 -> 2 (2 dangling): 0 pushes omega, keeps 1 - omega; Gauss-Seidel: 1 pushes
    # omega of what 0 sent it in the same sweep, 2 omega of what 1 sent
    indptr = np.array([0, 1, 2, 2], dtype=np.int64)
    rows = (indptr, np.array([1, 2], dtype=np.int32), np.array([0, 0, 1], np.uint8),
            np.ones(3))
    w = 1.25
    x, acc = np.zeros(3), np.array([1.0, 0.0, 0.0])
    _sweep_om(rows, x, acc, 0.0, gs, w)
    a = ALPHA * w
    if gs:
        want_x = [w, w * a, w * a * a]
        want_acc = [1 - w, (1 - w) * a, (1 - w) * a * a]
    else:
        want_x, want_acc = [w, 0.0, 0.0], [1 - w, a, 0.0]
    np.testing.assert_allclose(x, want_x, rtol=1e-14)
    np.testing.assert_allclose(acc, want_acc, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("gs", [False, True])
def test_over_relaxation_one_is_the_sweep_to_the_bit(rng, push_rows, gs):
    n, nslots, m = 400, 60, 3000
    rows = push_rows(n, nslots, m)
    acc0 = rng.standard_normal(n + nslots)
    out = []
    for om in (None, 1.0):
        x, acc = np.zeros(n), acc0.copy()
        r = (_sweep(rows, x, acc, 0.3, gs) if om is None
             else _sweep_om(rows, x, acc, 0.3, gs, om))
        out.append((r, x, acc))
    assert out[0][0] == out[1][0]
    assert np.array_equal(out[0][1], out[1][1]) and np.array_equal(out[0][2], out[1][2])


@pytest.mark.parametrize("omega", [0.8, 1.15, 1.5])
def test_over_relaxation_conserves_mass(rng, push_rows, omega):
    n, nslots, m = 400, 60, 3000
    rows = push_rows(n, nslots, m)
    acc = rng.standard_normal(n + nslots)
    before = acc.sum() + 0.3
    x = np.zeros(n)
    nedge, dp, tot, tabs, left = _sweep_om(rows, x, acc, 0.3, True, omega)
    assert x.sum() == pytest.approx(tot, abs=1e-12)
    assert acc.sum() + (1 - ALPHA) * tot + dp == pytest.approx(before, abs=1e-11)
    assert left == pytest.approx(np.abs(acc[:n]).sum(), rel=1e-12)
