"""Over-relaxation (SOR) of ASAP's ``jacobi`` PageRank Gauss-Seidel sweep
(:data:`asapgraph.engine.asap.SOR_OMEGA`, twenty-first session).

A pushed vertex moves ``omega r`` and keeps ``(1 - omega) r``; pushes only move mass, so
the answer must stay within tol of one process for any ``omega`` (on 2 and 3 ranks, with
relabelled rows forced).  ``--json`` says which ``omega`` ran: 1.15 by default with
relabelled rows, on either clock, and 1 with ``ASAPGRAPH_ASAP_OMEGA=1`` or rows in their
given order.  An ``omega`` too large for the graph is switched off by the guard and the
run still converges.
"""

import numpy as np
import pytest

pytestmark = pytest.mark.mpi

TOL = 1e-9


@pytest.fixture
def run_pr(pagerank_run):
    """``run_pr(tmp_path, name, args, env)``: :func:`pagerank_run` of rmat:12 with
    relabelled rows forced."""
    return lambda tmp_path, name, args, env=None: pagerank_run(
        tmp_path, name, args, {"ASAPGRAPH_ASAP_REORDER": "1", **(env or {})})


@pytest.mark.parametrize("k", [2, 3])
def test_sor_answers_equal_the_reference(run_pr, tmp_path, k):
    _, ref = run_pr(tmp_path, "ref", ["--tol", "1e-13"])
    for om, want in ((None, 1.15), ("1", 1.0), ("1.3", 1.3)):
        env = {} if om is None else {"ASAPGRAPH_ASAP_OMEGA": om}
        js, x = run_pr(tmp_path, f"k{k}_{om}", ["--np", str(k), "--mode", "asap", "--tol",
                                                   str(TOL)], env)
        assert js["converged"], js
        assert np.abs(x - ref).sum() <= TOL, (om, np.abs(x - ref).sum())
        assert [p["sor_omega"] for p in js["per_rank"]] == [want] * k


def test_sor_guard_turns_a_bad_omega_off(run_pr, tmp_path):
    """omega 1.9 makes the sweeps overshoot; the guard sees the bound stop halving,
    turns SOR off on every rank alike, and the run converges to the reference."""
    _, ref = run_pr(tmp_path, "ref", ["--tol", "1e-13"])
    js, x = run_pr(tmp_path, "bad", ["--np", "2", "--mode", "asap", "--tol", str(TOL)],
                   {"ASAPGRAPH_ASAP_OMEGA": "1.9"})
    assert js["converged"], js
    assert np.abs(x - ref).sum() <= TOL
    offs = {p.get("sor_off_wave") for p in js["per_rank"]}
    assert len(offs) == 1 and None not in offs, offs


def test_sor_on_the_virtual_clock(run_pr, tmp_path):
    """The emulated cluster runs the algorithm the host runs: SOR on the virtual clock
    too, the answer within tol, a model-compute run repeats to the bit, and omega 1
    (the env knob) is a different run."""
    _, ref = run_pr(tmp_path, "ref", ["--tol", "1e-13"])
    emu = ["--np", "2", "--mode", "asap", "--tol", str(TOL), "--latency", "0.001",
           "--bandwidth", "125e6", "--clock", "virtual", "--compute", "model"]
    js, x = run_pr(tmp_path, "virt", emu)
    js1, x1 = run_pr(tmp_path, "virt1", emu)
    js0, x0 = run_pr(tmp_path, "virt0", emu, {"ASAPGRAPH_ASAP_OMEGA": "1"})
    assert all(p["sor_omega"] == 1.15 for p in js["per_rank"])
    assert all(p["sor_omega"] == 1.0 for p in js0["per_rank"])
    for j, v in ((js, x), (js0, x0)):
        assert j["converged"], j
        assert np.abs(v - ref).sum() <= TOL, np.abs(v - ref).sum()
    assert np.array_equal(x, x1) and js["edges_scanned"] == js1["edges_scanned"]
    assert js["edges_scanned"] != js0["edges_scanned"]


def test_sor_not_without_relabelled_rows(run_pr, tmp_path):
    js, _ = run_pr(tmp_path, "given", ["--np", "2", "--mode", "asap", "--tol", str(TOL)],
                   {"ASAPGRAPH_ASAP_REORDER": "0"})
    assert all(p["sor_omega"] == 1.0 for p in js["per_rank"])
