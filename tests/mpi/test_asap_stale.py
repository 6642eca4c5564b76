"""ASAP's staleness bound and current-input gate under transient pauses
(:data:`asapgraph.engine.asap.STALE_SWEEPS`, :data:`asapgraph.engine.asap.CURRENT_INPUT`,
twenty-second session).

Where the sweep gate runs (rmat-like graphs: most of a sweep's input comes from peers), a
rank does not sweep again without a message from an in-peer that is silent (paused) --
until it sends or a termination wave completes -- and an in-peer of its speed opens the
gate only with output that answers this rank's last-but-one sweep.  Neither moves mass, so
the answer stays within tol of one process; ``--json`` reports the setting
(``stale_sweeps``) and the rounds held (``stale_waits``); ``ASAPGRAPH_ASAP_STALE=0`` and
``ASAPGRAPH_ASAP_CURRENT=0`` turn them off (other runs, the same answer within tol); a
model-compute run repeats to the bit.  The gate does not run on rows in their given
order of a graph with locality (cnr-2000), nor there the bound.
"""

import numpy as np
import pytest

from asapgraph.engine import exchange as ex

pytestmark = pytest.mark.mpi

TOL = 1e-9

# 3 ranks, emulated cluster on the virtual clock; pauses of 2-5 ms every ~10 ms against
# sweeps of well under a millisecond: a paused rank is silent for many of its peers' sweeps
EMU = ["--np", "3", "--mode", "asap", "--tol", str(TOL), "--latency", "0.0002",
       "--bandwidth", "125e6", "--clock", "virtual", "--compute", "model",
       "--pauses", "0.002:0.005:0.01", "--emulate-seed", "3"]


@pytest.fixture
def run_pr(pagerank_run):
    """``run_pr(tmp_path, name, args, env)``: :func:`pagerank_run` of rmat:12 with
    relabelled rows forced."""
    return lambda tmp_path, name, args, env=None: pagerank_run(
        tmp_path, name, args, {"ASAPGRAPH_ASAP_REORDER": "1", **(env or {})})


def test_header_carries_the_generations():
    """The sender's sweep count and the receiver's count its last sweep had seen."""
    assert ex.HEADER == 9 and (ex.GEN, ex.SEEN) == (7, 8)
    buf = ex.message_buffer(4)
    f = ex.header(buf)
    f[ex.GEN], f[ex.SEEN] = 12.0, 11.0
    assert ex.header(buf)[ex.GEN] == 12.0 and ex.header(buf)[ex.SEEN] == 11.0


def test_stale_bound_holds_sweeps_and_keeps_the_answer(run_pr, tmp_path):
    _, ref = run_pr(tmp_path, "ref", ["--tol", "1e-13"])
    js, x = run_pr(tmp_path, "on", EMU)
    js1, x1 = run_pr(tmp_path, "on1", EMU)
    js0, x0 = run_pr(tmp_path, "off", EMU, {"ASAPGRAPH_ASAP_STALE": "0"})
    jc, xc = run_pr(tmp_path, "cur0", EMU, {"ASAPGRAPH_ASAP_CURRENT": "0"})
    for j, v in ((js, x), (js0, x0), (jc, xc)):
        assert j["converged"], j
        assert np.abs(v - ref).sum() <= TOL, np.abs(v - ref).sum()
        assert sum(p.get("pauses", 0) for p in j["per_rank"]) > 0  # (the pauses ran)
    assert [p["stale_sweeps"] for p in js["per_rank"]] == [1.0] * 3
    assert sum(p.get("stale_waits", 0) for p in js["per_rank"]) > 0
    assert [p["stale_sweeps"] for p in js0["per_rank"]] == [0] * 3
    assert all("stale_waits" not in p for p in js0["per_rank"])
    # a model-compute run repeats to the bit; the knobs make other runs
    assert np.array_equal(x, x1) and js["edges_scanned"] == js1["edges_scanned"]
    assert js["edges_scanned"] != js0["edges_scanned"]  # (the current-input rule: the
    # same run here, jc, whose answer is checked above)


def test_stale_bound_not_without_the_gate(run_pr, tmp_path):
    """Without the sweep gate (``ASAPGRAPH_ASAP_PATIENCE=0``; by default it is off where
    most in-edges are local, as on cnr-2000) the bound and the rule are off."""
    js, _ = run_pr(tmp_path, "given", EMU, {"ASAPGRAPH_ASAP_PATIENCE": "0"})
    assert js["converged"], js
    assert [p["stale_sweeps"] for p in js["per_rank"]] == [0] * 3
    assert all("stale_waits" not in p for p in js["per_rank"])
