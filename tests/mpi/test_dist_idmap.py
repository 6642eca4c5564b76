"""The partitioned text loader's dense id map (a bit map with a rank directory,
``partition/idmap.py``) and the rows' int32 counting sort (``partition/rows.py``) give
exactly the arrays of the sample-sort id map (the path taken when the dense map does not
apply, forced here), on 1-4 ranks, push and pull layouts, range and hash partitions,
directed and undirected, on a text file whose ids leave gaps (absent ids, id 0 absent,
a largest id at a word boundary of the bit map); a weighted load (the general loader,
ids mapped before it) too.  The dense path must actually be taken, and its id map
(``BitIdMap``, ranges answered from the bit map) must answer any dense ids as the
sample-sort blocks do."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.mpi

WORKER = (Path(__file__).with_name("_abort_hook.py").read_text() + r'''
import asapgraph.partition.idmap as idmap
from asapgraph.kernels import _graph
from asapgraph.partition.loader import load_partitioned

out, path = sys.argv[1], sys.argv[2]
comm = MPI.COMM_WORLD
calls = []
_map_rank = _graph.map_rank
def counted(*a):
    calls.append(1)
    return _map_rank(*a)
_graph.map_rank = counted
dense = idmap._map_ids_dense

def arrays(obj):
    d = {}
    for k, v in sorted(vars(obj).items()):
        if isinstance(v, np.ndarray):
            d[k] = v
        elif isinstance(v, list) and v and all(isinstance(x, np.ndarray) for x in v):
            for i, x in enumerate(v):
                d[f"{k}[{i}]"] = x
        elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            d[k] = np.array([v])
    return d

recs = []
for layout in ("push", "pull"):
    for part in ("range", "hash"):
        for undirected in (False, True):
            for weighted in (False, True):
                got = []
                for use_dense in (True, False):
                    idmap._map_ids_dense = dense if use_dense else (lambda *a: None)
                    del calls[:]
                    lg, p, im = load_partitioned(path, comm, part, weighted=weighted,
                                                 undirected=undirected, layout=layout)
                    got.append((arrays(lg), bool(calls)))
                    if use_dense and not weighted:  # BitIdMap: ranges answered locally
                        assert isinstance(im, idmap.BitIdMap), type(im)
                        rng = np.random.default_rng(comm.rank)
                        lo = int(rng.integers(0, im.n))
                        asks = [np.arange(lo, min(im.n, lo + 17)),  # a range everywhere
                                rng.integers(0, im.n, 50),          # unsorted ids
                                np.arange(lo, min(im.n, lo + 9))[::2],  # sorted, gaps
                                # a range on rank 0, empty elsewhere; then the reverse
                                np.arange(im.n) if comm.rank == 0 else np.zeros(0, int),
                                np.zeros(0, int) if comm.rank == 0 else np.arange(3)]
                        for ask in asks:
                            a_ = im.original(ask)
                            b_ = idmap.IdMap.original(im, ask)
                            assert a_.dtype == np.int64 and np.array_equal(a_, b_), ask
                idmap._map_ids_dense = dense
                a, b = got[0][0], got[1][0]
                same = sorted(a) == sorted(b) and all(
                    a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in a)
                bad = [k for k in a if k not in b or not np.array_equal(a[k], b[k])]
                took = comm.allreduce(int(got[0][1]), op=MPI.SUM)
                recs.append({"layout": layout, "part": part, "undirected": undirected,
                             "weighted": weighted, "same": bool(comm.allreduce(
                                 int(same), op=MPI.MIN)), "bad": bad, "dense": took,
                             "keys": sorted(a)})
if comm.rank == 0:
    json.dump(recs, open(out, "w"))
''')


# above pyproject's 300 s: one launch of up to 600 s, plus 60 s
@pytest.mark.timeout(660)
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_dense_id_map_and_int32_rows_equal_the_sample_sort(k, mpirun, tmp_path):
    rng = np.random.default_rng(13 + k)
    ids = np.unique(rng.integers(1, 4095, 900))  # id 0 absent, gaps everywhere
    ids = np.append(ids[ids < 4095], 4095)  # the largest id ends a 64-bit word
    m = 40000  # every rank holds more than 2 x 4096 edges: the dense map applies
    s = ids[rng.integers(0, len(ids), m) ** 2 // len(ids)]  # skewed sources
    d = ids[rng.integers(0, len(ids), m)]
    s[:50] = d[:50]  # self-loops
    w = rng.uniform(0.5, 2.0, m)
    p = tmp_path / "g.txt"
    p.write_text("# comment\n" + "".join(f"{a} {b} {x:.3f}\n" for a, b, x in zip(s, d, w)))
    wk = tmp_path / "w.py"
    wk.write_text(WORKER)
    of = tmp_path / "o.json"
    r = mpirun(k, [sys.executable, str(wk), str(of), str(p)], timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    recs = json.loads(of.read_text())
    assert len(recs) == 16
    for rec in recs:
        assert rec["same"], rec
        assert rec["dense"] >= 1, rec  # the dense map was used (on every rank with edges)
    pull = [r_ for r_ in recs if r_["layout"] == "pull" and not r_["weighted"]]
    assert all("outdeg" in r_["keys"] for r_ in pull)  # the in-rows were compared
