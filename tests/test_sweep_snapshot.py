"""A Gauss-Seidel ``jacobi`` sweep of the uniform schedule makes no snapshot array
(:func:`asapgraph.kernels._local.jacobi_push`; benchmarks/REPORT.md, nineteenth session):
``rs`` is neither written nor read, the sweep pushes the same residuals (to rounding) as
the snapshotting sweep did, and the compute model charges the snapshot
(:data:`asapgraph.engine.emulation.RS_NS`) only to the ``push_r`` sweeps that still write
it."""
import numpy as np
import pytest

from asapgraph.engine.emulation import MODEL_NS, RS_NS, Emulator
from asapgraph.kernels import _local

ALPHA = 0.85


def _sweep(rows, x, acc, rs, pend, gs, theta=0.0, rho=0.0, mass=None, block=16):
    indptr, tgt, dangling, vcoef = rows
    nb = -(-len(x) // block)
    act, bsum = np.zeros(nb, np.int32), np.zeros(nb)
    bq = np.full(1, 1.0 / len(x))
    return _local.jacobi_push(indptr, tgt, None, vcoef, x, acc, rs, act, bsum, dangling,
                              ALPHA, pend, bq, 0.0, bq, theta, block, rho, 0, mass,
                              1e-3 if mass is not None else 0.0, False, gs)


def _reference(rows, x, acc, pend, theta, block=16):
    """The Gauss-Seidel sweep as the snapshotting kernel made it (before this change):
    the chosen blocks' residuals (pools in) snapshotted, acc zeroed there, each vertex
    pushing its snapshot plus what reached it since; waiting blocks keep theirs."""
    indptr, tgt, dangling, vcoef = rows
    n = len(x)
    r = acc[:n] + pend / n
    bs = np.add.reduceat(np.abs(r), np.arange(0, n, block))
    cnt = np.diff(np.append(np.arange(0, n, block), n))
    th = min(theta, 0.5 * float((bs / cnt).max()))
    chosen = bs > th * cnt
    acc[:n] = r
    rs = r.copy()
    pushed = np.repeat(chosen, cnt)
    acc[:n][pushed] = 0.0
    dp = tot = 0.0
    for u in np.flatnonzero(pushed):
        ru = rs[u] + acc[u]
        acc[u] = 0.0
        if ru == 0.0:
            continue
        x[u] += ru
        tot += ru
        lo, hi = indptr[u], indptr[u + 1]
        if hi == lo:
            dp += ALPHA * ru
        for e in range(lo, hi):
            acc[tgt[e]] += ALPHA * ru * vcoef[u]
    return dp, tot


@pytest.mark.parametrize("theta", [0.0, 2e-3, 1e9])
def test_gauss_seidel_sweep_leaves_rs_alone(rng, theta, push_rows):
    """rs full of NaN: a Gauss-Seidel uniform sweep neither reads nor writes it (the
    snapshotting kernel wrote every entry, so the NaN were gone and, read, would have
    poisoned x); the result matches the snapshotting sweep's to rounding."""
    n, nslots, m = 500, 80, 4000
    rows = push_rows(n, nslots, m)
    acc0 = rng.standard_normal(n + nslots) * rng.random(n + nslots) ** 4
    x, acc, rs = np.zeros(n), acc0.copy(), np.full(n, np.nan)
    mass = np.zeros(4)
    nedge, dp, tot, tabs, left = _sweep(rows, x, acc, rs, 0.3, True, theta, mass=mass)
    assert np.isnan(rs).all()
    xr, accr = np.zeros(n), acc0.copy()
    dpr, totr = _reference(rows, xr, accr, 0.3, theta)
    np.testing.assert_allclose(x, xr, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(acc, accr, rtol=1e-12, atol=1e-15)
    assert dp == pytest.approx(dpr, rel=1e-12, abs=1e-15)
    assert tot == pytest.approx(totr, rel=1e-12, abs=1e-15)
    assert left == pytest.approx(np.abs(acc[:n]).sum(), rel=1e-12)
    # the mass moved, signed: what left the residuals is in x, the slots and the pools
    assert mass[2] == pytest.approx(acc.sum(), abs=1e-12)
    assert mass[2] + (1 - ALPHA) * tot + dp == pytest.approx(acc0.sum() + 0.3, abs=1e-11)


@pytest.mark.parametrize("gs,rho", [(False, 0.0), (True, 0.8)])
def test_jacobi_and_priority_sweeps_still_snapshot(rng, gs, rho, push_rows):
    """A Jacobi sweep (the warm start) and the priority schedule keep writing rs."""
    n, nslots, m = 300, 40, 2000
    rows = push_rows(n, nslots, m)
    x, acc, rs = np.zeros(n), rng.standard_normal(n + nslots), np.full(n, np.nan)
    _sweep(rows, x, acc, rs, 0.0, gs, 1e-3, rho)
    assert not np.isnan(rs).any()


def test_model_charges_the_snapshot_only_where_written():
    e = Emulator({"latency": 1e-3, "clock": "virtual", "compute": "model",
                  "straggler": {1: 3.0}}, 1, 4)
    e.start()
    e.after_compute(9.0, edges=1000, vertices=100, kernel="push_r")
    t1 = e.vt
    assert t1 == pytest.approx(3e-9 * (1000 * MODEL_NS["push_r"][0]
                                       + 100 * MODEL_NS["push_r"][1]))
    e.after_compute(9.0, edges=1000, vertices=100, kernel="push_r", snapshot=True)
    assert e.vt - t1 == pytest.approx(t1 + 3e-9 * 100 * RS_NS)
    # the fit's constant, which included the snapshot, for the sweeps that write it
    assert MODEL_NS["push_r"][1] + RS_NS == pytest.approx(3.48)
    t2 = e.vt  # push (the given order, the programs) keeps the fit's constant whole
    e.after_compute(9.0, edges=1000, vertices=100, kernel="push", snapshot=True)
    e.after_compute(9.0, edges=1000, vertices=100, kernel="push")
    assert e.vt - t2 == pytest.approx(6e-9 * (1000 * MODEL_NS["push"][0]
                                              + 100 * MODEL_NS["push"][1]))
