"""Audit 30: Katz at huge and tiny beta (one process; ranks: tests/mpi/test_audit30_mpi.py).

* The engines solved ``x = alpha A^T x + beta`` in the unit of beta: the pending mass
  ``sum |r|`` of beta 1e308 overflowed (ASAP on ranks exited 2 "diverged"; one process
  and BSP survived only because their first sum was never checked), and ``tol`` was
  absolute: beta 1e-300 stopped at once with ``x = beta`` (the normalised result 14% off),
  and beta 1e100 ran 111 rounds (324 at 1e308) to a pending mass of 1e-11 that no float64
  sum of values near 1e100 can certify.  Now Katz solves for ``x / 2^k`` (``max |beta| /
  2^k`` in [1, 2): exact, no sum over- or underflows), and ``tol`` is in units of beta.
* ``error_bound`` claimed 4e-11 for values near 1e100 whose true error was 8e84: it was
  ``F * pending mass`` in beta's unit.  Now ``error_bound`` is absolute (in the values'
  unit) and ``relative_error_bound`` (= error_bound / max |beta|) is what ``tol`` bounds.
* Unnormalised values beyond the largest float64 are refused (exit 2, one line) instead
  of written as ``inf``.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from asapgraph.errors import InputError
from asapgraph.programs import katz

#: 7 vertices: a cycle, a self-loop, parallel edges, a dangling vertex (6) and a source (5)
EDGES = np.array([(0, 1), (1, 2), (2, 0), (2, 3), (3, 3), (3, 4), (4, 0), (4, 0), (5, 2),
                  (2, 6), (1, 6)])
ALPHA = 0.1


def _reference(beta=1.0):
    """scipy sparse solve of (I - alpha A^T) x = beta (dense ids 0..6 are the ids)."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as sla

    n = int(EDGES.max()) + 1
    A = sp.csr_matrix((np.ones(len(EDGES)), (EDGES[:, 0], EDGES[:, 1])), shape=(n, n))
    return sla.spsolve((sp.identity(n) - ALPHA * A.T).tocsc(), np.full(n, 1.0)) * beta


def _vec(res):
    return res.values[np.argsort(res.ids)]


@pytest.mark.parametrize("beta", [1e-300, 1.0, 1e100, 1e308])
@pytest.mark.parametrize("mode", ["bsp", "asap"])
def test_error_bound_is_absolute_and_holds(beta, mode):
    """The true L1 error (vs scipy) is within ``error_bound``, and ``relative_error_bound``
    = error_bound / beta <= tol; the iterations do not depend on beta's scale."""
    x1 = _reference()
    tol = 1e-10
    res = katz(EDGES, alpha=ALPHA, beta=beta, tol=tol, normalized=False, mode=mode)
    assert res.converged
    x = _vec(res)
    assert np.all(np.isfinite(x))
    err = float(np.sum(np.abs(x / beta - x1))) * beta     # (x1 * beta overflows its sum)
    bound, rel = res.stats["error_bound"], res.stats["relative_error_bound"]
    assert err <= bound, (beta, err, bound)
    assert rel <= tol and bound == pytest.approx(rel * beta, rel=1e-12), (bound, rel)
    assert bound > 1e-13 * beta * tol    # (not a pending mass of beta's unit at 1e100)
    assert res.iterations == katz(EDGES, alpha=ALPHA, beta=1.0, tol=tol, normalized=False,
                                  mode=mode).iterations


@pytest.mark.parametrize("beta", [1e-300, 5e-324, 1.7976931348623157e308])
def test_normalised_independent_of_beta_scale(beta):
    """Normalised: the same vector (to 1e-12) for every beta, and scipy's to the bound."""
    x1 = _reference()
    want = x1 / np.linalg.norm(x1)
    one = _vec(katz(EDGES, alpha=ALPHA, beta=1.0, tol=1e-12))
    for mode in ("bsp", "asap"):
        res = katz(EDGES, alpha=ALPHA, beta=beta, tol=1e-12, mode=mode)
        x = _vec(res)
        np.testing.assert_allclose(x, one, rtol=0, atol=1e-14)
        assert np.abs(x - want).sum() < 1e-11, (mode, x, want)


def test_power_of_two_beta_is_exact_scaling():
    """beta = 2^k gives exactly 2^k times the beta-1 run (the scaled unit is exact)."""
    for k in (1000, -1000, 3):
        for mode in ("bsp", "asap"):
            a = katz(EDGES, alpha=ALPHA, beta=1.0, normalized=False, mode=mode)
            b = katz(EDGES, alpha=ALPHA, beta=2.0 ** k, normalized=False, mode=mode)
            assert b.iterations == a.iterations
            assert np.array_equal(_vec(b), _vec(a) * 2.0 ** k), k


def test_vector_beta_scaled_by_its_largest_entry():
    """A per-vertex beta: the unit is max |beta| (1e300 * (1 + v % 3) here)."""
    n = int(EDGES.max()) + 1
    beta = 1e300 * (1.0 + np.arange(n) % 3)
    res = katz(EDGES, alpha=ALPHA, beta=beta, tol=1e-12, normalized=False)
    import scipy.sparse as sp
    import scipy.sparse.linalg as sla

    A = sp.csr_matrix((np.ones(len(EDGES)), (EDGES[:, 0], EDGES[:, 1])), shape=(n, n))
    want = sla.spsolve((sp.identity(n) - ALPHA * A.T).tocsc(), beta / 1e300)
    err = np.abs(_vec(res) / 1e300 - want).sum() * 1e300
    assert err <= res.stats["error_bound"]
    assert res.stats["relative_error_bound"] <= 1e-12
    assert res.stats["error_bound"] == pytest.approx(
        res.stats["relative_error_bound"] * 3e300, rel=1e-12)


@pytest.mark.parametrize("mode", ["bsp", "asap"])
def test_unnormalised_overflow_refused(mode):
    """x = beta * x1 with max x1 > 1: beyond float64 -> refused (not inf values);
    normalised, the same beta is fine."""
    with pytest.raises(InputError, match="katz overflowed: the unnormalised values exceed "
                                         "the largest float64"):
        katz(EDGES, alpha=ALPHA, beta=1.7e308, normalized=False, mode=mode)
    assert np.all(np.isfinite(katz(EDGES, alpha=ALPHA, beta=1.7e308, mode=mode).values))


def _cli(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=240, env=dict(os.environ))


def test_cli_json_bounds_and_overflow_line(tmp_path):
    g = tmp_path / "g.txt"
    g.write_text("".join(f"{u} {v}\n" for u, v in EDGES))
    r = _cli(tmp_path, "katz", g, "--alpha", ALPHA, "--beta", "1e100", "--no-normalized",
             "--json", "-q", "-o", tmp_path / "k.csv")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    rows = np.loadtxt(tmp_path / "k.csv", delimiter=",", skiprows=1)
    x = rows[np.argsort(rows[:, 0]), 1]
    err = np.abs(x / 1e100 - _reference()).sum() * 1e100
    assert err <= d["error_bound"] and d["relative_error_bound"] <= d["tol"] == 1e-10
    assert d["error_bound"] == pytest.approx(1e100 * d["relative_error_bound"], rel=1e-12)
    out = tmp_path / "big.csv"
    r = _cli(tmp_path, "katz", g, "--alpha", ALPHA, "--beta", "1.7e308", "--no-normalized",
             "-q", "-o", out)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and not out.exists(), r.stderr
    assert lines[0].startswith("asapgraph: katz overflowed: the unnormalised values exceed")
