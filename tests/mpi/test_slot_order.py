"""ASAP's push layout orders each out-peer's slots by the rank's edges into them, on the
host's clock (:func:`asapgraph.engine.asap.push_rows`, twentieth session).

Every receiver rebuilds the sender's order from one byte a slot and reorders its map of
that sender's slots (:func:`asapgraph.engine.asap_delta.exchange_slot_orders`); a map out
of step with the sender's layout would put mass on the wrong vertices and the answer
would leave the reference.  So: on 2 and 3 ranks (relabelled rows forced, prefetch short
so that rows near the end go without), the answer with the slot order and without it is
within tol of one process, and ``--json`` says which layout ran.  On the virtual clock
the order is off (the compute model cannot see it) and the run is the one without it, to
the bit.
"""

import numpy as np
import pytest

pytestmark = pytest.mark.mpi

TOL = 1e-9


@pytest.fixture
def run_pr(pagerank_run):
    """``run_pr(tmp_path, name, args, env)``: ``(--json, the ranks by vertex id)`` of an
    rmat:12 PageRank with relabelled rows forced."""
    return lambda tmp_path, name, args, env=None: pagerank_run(
        tmp_path, name, args,
        {"ASAPGRAPH_ASAP_REORDER": "1", "ASAPGRAPH_ASAP_PREFETCH": "3", **(env or {})})


@pytest.mark.parametrize("k", [2, 3])
def test_slot_order_answers_equal_the_reference(run_pr, tmp_path, k):
    _, ref = run_pr(tmp_path, "ref", ["--tol", "1e-13"])
    for so in ("1", "0", None):
        env = {} if so is None else {"ASAPGRAPH_ASAP_SLOT_ORDER": so}
        js, x = run_pr(tmp_path, f"k{k}_{so}", ["--np", str(k), "--mode", "asap", "--tol",
                                                   str(TOL)], env)
        assert js["converged"], js
        assert np.abs(x - ref).sum() <= TOL, (so, np.abs(x - ref).sum())
        for p in js["per_rank"]:
            assert p["push_relabelled"] is True
            assert p["push_slot_order"] is (so != "0")  # (default: on, host's clock)


def test_slot_order_off_on_the_virtual_clock(run_pr, tmp_path):
    emu = ["--np", "2", "--mode", "asap", "--tol", str(TOL), "--latency", "0.001",
           "--bandwidth", "125e6", "--clock", "virtual", "--compute", "model"]
    js, x = run_pr(tmp_path, "virt", emu)
    js0, x0 = run_pr(tmp_path, "virt0", emu, {"ASAPGRAPH_ASAP_SLOT_ORDER": "0"})
    assert all(p["push_slot_order"] is False for p in js["per_rank"] + js0["per_rank"])
    assert np.array_equal(x, x0)
    assert js["compute_seconds"] == js0["compute_seconds"]
    assert js["edges_scanned"] == js0["edges_scanned"]
