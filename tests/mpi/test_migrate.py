"""Vertex migration (:func:`asapgraph.partition.migrate.migrate`) on its own.

K = 2 and 3 ranks move the rows of a loaded graph to seeded random range bounds, on an
unweighted R-MAT spec and on a weighted text file with sparse ids, self-loops,
duplicates and dangling vertices.  After the move, gathered on rank 0 and compared
exactly with the graph before it: every edge (original source, original target,
coefficient), every vertex's ``vcoef`` and dangling flag, every moved vector (a varying
one, a constant one -- rebuilt, not sent -- and a missing one); each rank owns the
requested range; the bytes counted exclude the measurement-only vector and count no
``vcoef``/dangling for the unweighted graph.
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.mpi

WORKER = (Path(__file__).with_name("_abort_hook.py").read_text() + r'''
import asapgraph.engine as ad
from asapgraph.comm.mpi import allgatherv, gatherv
from asapgraph.partition.migrate import global_targets, migrate

out, cases = sys.argv[1], json.loads(sys.argv[2])
comm = MPI.COMM_WORLD
K, me = comm.Get_size(), comm.Get_rank()


def snapshot(lg, vecs):
    """Rank 0: the sorted edge list and per-vertex table in original ids."""
    orig_of = allgatherv(comm, np.asarray(lg.orig, dtype=np.int64))[0]
    deg = np.diff(np.asarray(lg.indptr))
    src = np.repeat(np.asarray(lg.orig, dtype=np.int64), deg)
    tgt = orig_of[global_targets(lg)]
    coef = (np.asarray(lg.coef) if lg.coef is not None
            else np.repeat(np.asarray(lg.vcoef), deg))
    e = [gatherv(comm, a) for a in (src, tgt, coef)]
    cols = [np.asarray(lg.orig, dtype=np.float64), np.asarray(lg.vcoef),
            np.asarray(lg.dangling, dtype=np.float64)]
    cols += [np.asarray(v) for v in vecs if v is not None]
    v = gatherv(comm, np.stack(cols, 1).ravel())
    if me != 0:
        return None
    o = np.lexsort((e[2], e[1], e[0]))
    v = v.reshape(-1, len(cols))
    return [a[o] for a in e], v[np.argsort(v[:, 0], kind="stable")]


recs = []
for c in cases:
    g = ad.load(c["source"], comm, weighted=c["weighted"],
                weight_col=3 if c["weighted"] else None)
    lg, part = g.lg, g.part
    n = lg.n
    for seed in c["seeds"]:
        rng = np.random.default_rng([seed, K])
        cuts = np.sort(rng.choice(np.arange(1, n), K - 1, replace=False))
        bounds = np.concatenate([[0], cuts, [n]]).astype(np.int64)
        vrng = np.random.default_rng([seed, me])
        vecs = [vrng.random(lg.nloc), np.full(lg.nloc, 0.25), None, vrng.random(lg.nloc)]
        before = snapshot(lg, vecs)
        new, newpart, outv, fig = migrate(comm, lg, part, bounds, vecs, untimed=1)
        after = snapshot(new, outv)
        sent = comm.allreduce(fig["bytes"], op=MPI.SUM)
        moved = comm.allreduce(np.array([fig["moved_vertices"], fig["moved_edges"]]),
                               op=MPI.SUM)
        owned_ok = comm.allreduce(int(new.nloc == bounds[me + 1] - bounds[me]
                                      and np.array_equal(newpart.bounds, bounds)
                                      and outv[2] is None
                                      and np.all(outv[1] == 0.25)), op=MPI.MIN)
        if me == 0:
            (eb, vb), (ea, va) = before, after
            per_edge = 4 + 8 * c["weighted"]
            per_vertex = 8 * (2 + 2 * c["weighted"] + 1)  # one timed varying vector
            recs.append({
                "case": c["source"], "seed": seed, "K": K,
                "edges_equal": all(np.array_equal(x, y) for x, y in zip(eb, ea)),
                "vertices_equal": bool(np.array_equal(vb, va)),
                "owned_ok": bool(owned_ok), "m": int(len(eb[0])), "n": int(n),
                "bytes": int(sent),
                "bytes_expected": int(per_edge * moved[1] + per_vertex * moved[0]),
                "moved_vertices": int(moved[0])})
        lg, part = new, newpart  # migrate again from the new split
if me == 0:
    json.dump(recs, open(out, "w"))
''')


def _weighted_file(tmp_path):
    rng = np.random.default_rng(7)
    n = 400
    ids = np.sort(rng.choice(10**8, n, replace=False)) * 3 + 1
    s = rng.integers(0, n - 30, 3000) ** 2 // (n - 30)
    d = rng.integers(0, n, 3000)
    s = np.concatenate([s, s[:50], np.arange(10, 20)])       # duplicates, self-loops
    d = np.concatenate([d, d[:50], np.arange(10, 20)])
    w = rng.uniform(0.1, 4.0, len(s))
    f = tmp_path / "w.txt"
    f.write_text("".join(f"{ids[a]} {ids[b]} {x:.5f}\n" for a, b, x in zip(s, d, w)))
    return str(f)


@pytest.mark.parametrize("k", [2, 3])
def test_migrate_moves_rows_and_vectors_exactly(k, tmp_path, mpirun):
    cases = [{"source": "rmat:10:8:3", "weighted": False, "seeds": [1, 2, 3]},
             {"source": _weighted_file(tmp_path), "weighted": True, "seeds": [4, 5]}]
    w = tmp_path / "worker.py"
    w.write_text(WORKER)
    of = tmp_path / "out.json"
    r = mpirun(k, [sys.executable, str(w), str(of), json.dumps(cases)], timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    recs = json.loads(of.read_text())
    assert len(recs) == 5
    for rec in recs:
        assert rec["m"] > 1000 and rec["moved_vertices"] > 0, rec
        assert rec["edges_equal"] and rec["vertices_equal"] and rec["owned_ok"], rec
        assert rec["bytes"] == rec["bytes_expected"], rec
