"""ASAP's skip threshold scaled by the rank's own progress where the last completed wave
lags a cycle (:data:`asapgraph.engine.asap.SKIP_STALE`, trans27): the switch is applied
(``skip_stale`` in ``--json`` per rank; ``skip_scaled`` counts the sweeps whose
threshold it lowered) or refused, it does not apply where the sweep gate does not run,
and the answer is the reference's either way (the threshold only decides which blocks a
sweep pushes)."""
import numpy as np
import pytest

pytestmark = pytest.mark.mpi

TOL = 1e-9
#: 4 ranks at speeds 1, 1.5, 2, 3 on the virtual clock with the compute model (a seeded
#: run repeats to the bit), 1 ms links: rmat:12's cut is ~3/4 of its edges, so the sweep
#: gate runs, and some sweeps start before the wave of the cycle before has completed
ARGS = ["--np", "4", "--mode", "asap", "--schedule", "sweep", "--seed", "1",
        "--tol", str(TOL), "--latency", "0.001", "--bandwidth", "125e6",
        "--straggler", "1:1.5,2:2,3:3", "--clock", "virtual", "--compute", "model"]


@pytest.mark.parametrize("value", [None, "1", "0"])
def test_skip_stale_applied_and_exact(pagerank_run, tmp_path, value):
    _, ref = pagerank_run(tmp_path, "ref", ["--tol", "1e-13"], graph="rmat:12")
    js, x = pagerank_run(tmp_path, f"ss{value}", ARGS, graph="rmat:12",
                         env=None if value is None else {"ASAPGRAPH_ASAP_SKIP_STALE": value})
    assert js["converged"], js
    assert np.abs(x - ref).sum() <= 2 * TOL, np.abs(x - ref).sum()
    ranks = js["per_rank"]
    assert all(p["sweep_patience"] > 0 for p in ranks), ranks  # (the gate runs here)
    on = value != "0"
    assert {p["skip_stale"] for p in ranks} == {on}, ranks
    scaled = sum(p.get("skip_scaled", 0) for p in ranks)
    if on:
        assert scaled > 0, ranks  # the case it is for happens here
    else:
        assert scaled == 0, ranks


def test_skip_stale_off_without_gate(pagerank_run, tmp_path):
    """Where the sweep gate does not run (``ASAPGRAPH_ASAP_PATIENCE=0``) it does not
    apply: ``skip_stale`` false in ``--json``, no sweep's threshold scaled."""
    js, _ = pagerank_run(tmp_path, "nogate", ARGS, graph="rmat:12",
                         env={"ASAPGRAPH_ASAP_PATIENCE": "0", "ASAPGRAPH_ASAP_SKIP_STALE": "1"})
    assert js["converged"], js
    ranks = js["per_rank"]
    assert {p["skip_stale"] for p in ranks} == {False}, ranks
    assert sum(p.get("skip_scaled", 0) for p in ranks) == 0, ranks


@pytest.mark.parametrize("value", ["yes", "2", ""])
def test_skip_stale_refused(env_refused, tmp_path, value):
    env_refused(tmp_path, "ASAPGRAPH_ASAP_SKIP_STALE", value)
