"""ASAP's flush right before a sweep (:data:`asapgraph.engine.asap.SWEEP_FLUSH`,
twenty-sixth session): the last sweep's output buffered for a peer that has answered this
rank's latest output goes out before the next sweep, whatever the expander's round.  The
knob is applied (``sweep_flush`` in ``--json`` per rank) or refused, the flush happens
where the emulated ranks' speeds differ, and the answer is networkx's either way; unset,
it is on where a round reaches at least half of the peers (``2 fanout >= K - 1``)."""
import gzip

import networkx as nx
import numpy as np
import pytest

pytestmark = pytest.mark.mpi

TOL = 1e-9
#: 4 ranks at speeds 1, 1.5, 2, 3 on the virtual clock with the compute model (a seeded
#: run repeats to the bit): on p2p-Gnutella31 ranks 1-3 flush before 1-7 of their sweeps
ARGS = ["--np", "4", "--mode", "asap", "--schedule", "sweep", "--fanout", "2", "--seed", "1",
        "--tol", str(TOL), "--latency", "0.001", "--bandwidth", "125e6",
        "--straggler", "1:1.5,2:2,3:3", "--clock", "virtual", "--compute", "model"]


def _networkx(path):
    g = nx.DiGraph()
    with gzip.open(path, "rt") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                u, v = line.split()[:2]
                g.add_edge(int(u), int(v))
    pr = nx.pagerank(g, alpha=0.85, tol=1e-14, max_iter=10000)
    x = np.zeros(max(pr) + 1)
    for v, r in pr.items():
        x[v] = r
    return x


@pytest.mark.parametrize("value", ["1", "0"])
def test_sweep_flush_applied_and_exact(pagerank_run, shared, tmp_path, value):
    path = shared("p2p-Gnutella31.txt.gz")
    js, x = pagerank_run(tmp_path, f"sf{value}", ARGS, graph=str(path),
                         env={"ASAPGRAPH_ASAP_SWEEP_FLUSH": value})
    assert js["converged"], js
    ref = _networkx(path)
    assert len(x) == len(ref)
    assert np.abs(x - ref).sum() <= 2 * TOL, np.abs(x - ref).sum()
    ranks = js["per_rank"]
    assert {p["sweep_flush"] for p in ranks} == {value == "1"}, ranks
    flushed = sum(p.get("flushed_before_sweep", 0) for p in ranks)
    if value == "1":
        assert flushed > 0, ranks  # the case it is for happens here
    else:
        assert flushed == 0, ranks


@pytest.mark.parametrize("k,fanout,env,on", [(2, 1, None, True), (4, 2, None, True),
                                              (4, 1, None, False), (6, 2, None, False),
                                              (6, 2, "1", True), (3, 2, "0", False)])
def test_sweep_flush_default_by_fanout(pagerank_run, tmp_path, k, fanout, env, on):
    _, ref = pagerank_run(tmp_path, "ref", ["--tol", "1e-13"], graph="rmat:10")
    js, x = pagerank_run(tmp_path, "run", ["--np", str(k), "--mode", "asap", "--fanout",
                                           str(fanout), "--tol", str(TOL)], graph="rmat:10",
                         env=None if env is None else {"ASAPGRAPH_ASAP_SWEEP_FLUSH": env})
    assert js["converged"], js
    assert np.abs(x - ref).sum() <= TOL, np.abs(x - ref).sum()
    assert {p["sweep_flush"] for p in js["per_rank"]} == {on}, js["per_rank"]


@pytest.mark.parametrize("value", ["yes", "2", ""])
def test_sweep_flush_refused(env_refused, tmp_path, value):
    env_refused(tmp_path, "ASAPGRAPH_ASAP_SWEEP_FLUSH", value)
