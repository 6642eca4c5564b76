"""Audit 31b: Katz's ``--json`` ``residual`` is in the values' unit, as ``error_bound``.

Katz solves for ``x / 2^k`` (audit 30); ``error_bound`` was made absolute but ``residual``
stayed in the engines' scaled unit: at beta 1e100 it read 9.9e-11 next to an
``error_bound`` of 3.7e89 (1e-100: 1.5e-10 next to 3.7e-111), on 1 process and on
ranks, both modes.  Now ``error_bound = F x residual`` with Katz's error factor ``F``,
whatever beta, in every mode and on every rank count.
"""
import json
import os

import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(900)]

#: 7 vertices: a cycle, a self-loop, parallel edges, a dangling vertex (6), a source (5)
EDGES = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 3), (3, 4), (4, 0), (4, 0), (5, 2), (2, 6),
         (1, 6)]
CONFIGS = [[], ["--mode", "asap"], ["--np", "2", "--mode", "bsp"],
           ["--np", "2", "--mode", "asap"]]


def _katz(cli, tmp_path, beta, extra):
    (tmp_path / "g.txt").write_text("".join(f"{u} {v}\n" for u, v in EDGES))
    r = cli(["katz", "g.txt", "--alpha", "0.1", "--beta", beta, "--no-normalized", "--json",
             "-q", *extra], tmp_path, timeout=300, env=dict(os.environ))
    assert r.returncode == 0, (beta, extra, r.stderr[-2000:])
    d = json.loads(r.stdout)
    assert d["converged"], d
    return d


def test_katz_residual_in_the_unit_of_error_bound(tmp_path, cli):
    """``error_bound / residual`` is Katz's error factor (beta 1: nothing scaled) at
    beta 1e100 and 1e-100, on 1 process and 2 ranks, BSP and ASAP; the residual is
    within tol of 0 in units of beta."""
    one = _katz(cli, tmp_path, "1", [])
    factor = one["error_bound"] / one["residual"]
    assert 0 < factor < 10, one
    for beta in ("1e100", "1e-100"):
        b = float(beta)
        for extra in CONFIGS:
            d = _katz(cli, tmp_path, beta, extra)
            assert d["error_bound"] == pytest.approx(factor * d["residual"], rel=1e-9), \
                (beta, extra, d["residual"], d["error_bound"])
            assert 0 < d["residual"] * factor <= d["tol"] * b * (1 + 1e-9), (beta, extra, d)
            assert d["relative_error_bound"] == pytest.approx(d["error_bound"] / b, rel=1e-12)
