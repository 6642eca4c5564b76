"""Audit 25 on ranks: ``asapgraph.engine.distributed.run`` called directly checks the
``ASAPGRAPH_*`` knobs at entry in both modes, as ``pagerank()`` and the command line do
(before, a BSP run -- or one on the general program engine -- read none of them and a
value such as ``ASAPGRAPH_ASAP_GS=yes`` went unchecked), and refuses alike on every
rank; with the knob valid the same call runs and agrees with networkx."""
import json
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.mpi

SCRIPT = r"""
import json, sys
import numpy as np
from mpi4py import MPI
from asapgraph.engine import distributed
from asapgraph.errors import InputError
from asapgraph.programs import PageRankProgram

mode = sys.argv[1]
comm = MPI.COMM_WORLD
try:
    res = distributed.run(PageRankProgram(), "g.txt", comm, mode=mode, tol=1e-10)
    out = {"ok": True}
    if comm.Get_rank() == 0:
        out["ids"] = np.asarray(res.ids).tolist()
        out["values"] = np.asarray(res.values).tolist()
except InputError as e:
    out = {"ok": False, "error": str(e)}
lines = comm.gather(json.dumps(out), root=0)
if comm.Get_rank() == 0:
    print("\n".join(lines), flush=True)
"""


def _graph(tmp_path):
    rng = np.random.default_rng(25)
    e = rng.integers(0, 60, size=(400, 2))
    (tmp_path / "g.txt").write_text("".join(f"{u} {v}\n" for u, v in e))
    return e


@pytest.mark.parametrize("mode", ["bsp", "asap"])
def test_run_refuses_a_bad_knob_on_every_rank(mpirun, tmp_path, mode):
    import networkx as nx

    edges = _graph(tmp_path)
    (tmp_path / "s.py").write_text(SCRIPT)
    r = mpirun(2, [sys.executable, "s.py", mode], timeout=240,
               env={"ASAPGRAPH_ASAP_GS": "yes"})
    assert r.returncode == 0, r.stderr
    got = [json.loads(x) for x in r.stdout.strip().splitlines()]
    assert len(got) == 2 and not any(g["ok"] for g in got), got
    for g in got:
        assert "ASAPGRAPH_ASAP_GS='yes'" in g["error"], g
    # the same call with the knob valid runs, and its ranks are networkx's
    r = mpirun(2, [sys.executable, "s.py", mode], timeout=240, env={"ASAPGRAPH_ASAP_GS": "1"})
    assert r.returncode == 0, r.stderr
    got = [json.loads(x) for x in r.stdout.strip().splitlines()]
    assert all(g["ok"] for g in got), got
    G = nx.MultiDiGraph()
    G.add_edges_from(map(tuple, edges.tolist()))
    ref = nx.pagerank(G, alpha=0.85, tol=1e-14, max_iter=10000)
    x = dict(zip(got[0]["ids"], got[0]["values"]))
    assert sorted(x) == sorted(ref)
    assert sum(abs(x[v] - ref[v]) for v in ref) <= 1e-8
