"""Audit 30: Katz at huge and tiny beta on K ranks (one process: tests/test_audit30.py).

* ``katz G --beta 1e308 --np 2 --mode asap`` overflowed ASAP's pending-mass sum and
  exited 2 "diverged" while one process and BSP converged.  Katz now solves for
  ``x / 2^k`` (``max |beta| / 2^k`` in [1, 2)) in every mode and on every rank count.
* ``tol`` is in units of beta and ``error_bound`` is absolute (it claimed 4e-11 for an
  error of 8e84 at beta 1e100); ``relative_error_bound`` is what ``tol`` bounds.
* Unnormalised values beyond float64 are refused with the same line everywhere.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(900)]

#: 7 vertices: a cycle, a self-loop, parallel edges, a dangling vertex (6) and a source (5)
EDGES = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 3), (3, 4), (4, 0), (4, 0), (5, 2), (2, 6),
         (1, 6)]
ALPHA = 0.1
CONFIGS = [["--np", "2", "--mode", "asap"], ["--np", "3", "--mode", "asap"],
           ["--np", "2", "--mode", "bsp"]]


def _reference():
    """scipy sparse solve of (I - alpha A^T) x = 1 (the ids are the dense ids 0..6)."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as sla

    e = np.array(EDGES)
    n = int(e.max()) + 1
    A = sp.csr_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
    return sla.spsolve((sp.identity(n) - ALPHA * A.T).tocsc(), np.ones(n))


def _cli(cwd, args):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))


def _katz(tmp_path, beta, norm, extra):
    out = tmp_path / "k.csv"
    if out.exists():
        out.unlink()
    r = _cli(tmp_path, ["katz", "g.txt", "--alpha", ALPHA, "--beta", beta, norm, "--json",
                        "-q", "-o", out, *extra])
    assert r.returncode == 0, (beta, norm, extra, r.stderr[-2000:])
    rows = np.loadtxt(out, delimiter=",", skiprows=1)
    return rows[np.argsort(rows[:, 0]), 1], json.loads(r.stdout)


@pytest.mark.parametrize("beta,norm", [("1e308", "--normalized"), ("1e308", "--no-normalized"),
                                       ("1e-300", "--normalized"),
                                       ("1e100", "--no-normalized")])
def test_katz_huge_and_tiny_beta_alike_on_ranks(tmp_path, beta, norm):
    """Every configuration: the full vector within its own certified bound of scipy's
    (absolute ``error_bound``; normalised: 1e-10 in L1) and of one process (normalised:
    2e-10 in L1; unnormalised: 1e-9 relative, L1); ``relative_error_bound`` =
    error_bound / beta <= tol."""
    (tmp_path / "g.txt").write_text("".join(f"{u} {v}\n" for u, v in EDGES))
    b = float(beta)
    x1 = _reference()
    one, d1 = _katz(tmp_path, beta, norm, [])
    for extra in CONFIGS:
        x, d = _katz(tmp_path, beta, norm, extra)
        assert d["converged"] and d["ranks"] == int(extra[1]), d
        assert d["relative_error_bound"] <= d["tol"] == 1e-10, d
        if norm == "--normalized":
            # (each within tol = 1e-10 of the truth in units of beta, ||x1||_2 > 1)
            assert np.abs(x - x1 / np.linalg.norm(x1)).sum() < 1e-10, (extra, x)
            assert np.abs(x - one).sum() < 2e-10, (extra, x, one)
        else:
            err = np.abs(x / b - x1).sum() * b       # (x1 * b would overflow its sum)
            assert err <= d["error_bound"], (extra, err, d["error_bound"])
            assert d["error_bound"] == pytest.approx(d["relative_error_bound"] * b, rel=1e-12)
            assert np.abs(x / b - one / b).sum() < 1e-9 * np.abs(one / b).sum(), extra


def test_katz_overflow_refused_alike(tmp_path):
    """beta 1.7e308 unnormalised: max x = 1.7e308 * 1.2 -> the same one line, exit 2,
    nothing written, on 1 process and on ranks in both modes."""
    (tmp_path / "g.txt").write_text("".join(f"{u} {v}\n" for u, v in EDGES))
    out = tmp_path / "k.csv"
    seen = set()
    for extra in [[], *CONFIGS[:2], ["--np", "2", "--mode", "bsp"]]:
        r = _cli(tmp_path, ["katz", "g.txt", "--alpha", ALPHA, "--beta", "1.7e308",
                            "--no-normalized", "-q", "-o", out, *extra])
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and not out.exists(), (extra, r.stderr)
        seen.add(lines[0])
    assert len(seen) == 1, seen
    assert seen.pop().startswith("asapgraph: katz overflowed: the unnormalised values exceed "
                                 "the largest float64")


BIG = '''
import numpy as np
from asapgraph.programs import VertexProgram


class Big(VertexProgram):
    """x = 1e308 + 0.05 A^T x: a user sum program with deltas near the largest float64."""
    name = "big"
    value_dtype = np.float64
    combiner = "sum"
    direction = "out"
    edge_op = "mul"
    use_weights = False
    accumulative = True

    def init_delta(self, ctx):
        return np.zeros(ctx.n_local), np.full(ctx.n_local, 1e308)

    def coef(self, ctx):
        return np.full(ctx.n_local, 0.05)
'''


def test_user_sum_program_with_huge_deltas_alike(tmp_path):
    """The sum engine solves deltas outside [2^-64, 2^64] in a scaled unit (any program,
    not only Katz): ASAP on 2 ranks exited 2 "diverged" (its pending mass overflowed)
    where one process and BSP converged.  The vectors agree to 1e-12 relative (L1)."""
    (tmp_path / "g.txt").write_text("".join(f"{u} {v}\n" for u, v in EDGES))
    (tmp_path / "big.py").write_text(BIG)
    got = {}
    for extra in [[], *CONFIGS]:
        out = tmp_path / "b.csv"
        if out.exists():
            out.unlink()
        r = _cli(tmp_path, ["run", "big.py:Big", "g.txt", "--max-iter", "2000", "-q",
                            "-o", out, *extra])
        assert r.returncode == 0, (extra, r.stderr[-2000:])
        rows = np.loadtxt(out, delimiter=",", skiprows=1)
        got[" ".join(extra)] = rows[np.argsort(rows[:, 0]), 1] / 1e308
    one = got.pop("")
    assert np.all(np.isfinite(one)) and one.min() >= 1.0
    for k, x in got.items():
        assert np.abs(x - one).sum() < 1e-12 * one.sum(), (k, x, one)
