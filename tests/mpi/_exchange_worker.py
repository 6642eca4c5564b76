"""Run under ``mpiexec -n K``: ``comm.alltoallv`` past its count limit (lowered to a few
elements) against the collective path and the expected buffers, element by element.

Usage: python _exchange_worker.py OUT.json   (rank 0 writes {"ok": ..., "detail": ...})
"""
import json
import sys

import numpy as np
from mpi4py import MPI

import asapgraph.engine as ad
from asapgraph.comm import mpi as cm

world = MPI.COMM_WORLD
K, me = world.Get_size(), world.Get_rank()
pieces = {"n": 0}
_orig_pieces = cm._pieces


def counting_pieces(start, count):
    out = _orig_pieces(start, count)
    pieces["n"] += len(out)
    return out


cm._pieces = counting_pieces


def count(src, dst):  # zero for some pairs (including to self), up to 11 elements
    return (src * 7 + dst * 3 + 1) % 12 if (src + dst) % 4 else 0


def payload(src, dst, dtype):
    c = count(src, dst)
    v = 1000 * src + 100 * dst + np.arange(c)
    return (v % 251 if dtype == np.uint8 else v).astype(dtype)


problems = []
for dtype in (np.int64, np.float64, np.int32, np.uint8):
    send = np.concatenate([payload(me, j, dtype) for j in range(K)])
    counts = np.array([count(me, j) for j in range(K)])
    want = np.concatenate([payload(j, me, dtype) for j in range(K)])
    for limit in (cm.COUNT_LIMIT, 3, 1):
        old, cm.COUNT_LIMIT = cm.COUNT_LIMIT, limit
        before = pieces["n"]
        try:
            got, rc = cm.alltoallv(world, send, counts)
        finally:
            cm.COUNT_LIMIT = old
        used_p2p = pieces["n"] > before
        if limit < 100 and not used_p2p:
            problems.append(f"limit {limit}: the point-to-point path was not taken")
        if limit >= 100 and used_p2p:
            problems.append("default limit: the point-to-point path was taken")
        if got.dtype != np.dtype(dtype) or not np.array_equal(got, want) or \
                list(rc) != [count(j, me) for j in range(K)]:
            problems.append(f"rank {me} {np.dtype(dtype).name} limit {limit}: got {got.tolist()} "
                            f"want {want.tolist()}")

# a whole distributed load + PageRank through the point-to-point path: same ranks
ref = ad.pagerank("rmat:9:8:5", world, mode="bsp", partition="range", tol=1e-12)
cm.COUNT_LIMIT = 5
before = pieces["n"]
small = ad.pagerank("rmat:9:8:5", world, mode="bsp", partition="range", tol=1e-12)
cm.COUNT_LIMIT = 2**31 - 1
if pieces["n"] == before:
    problems.append("the loader never took the point-to-point path")
if not (np.array_equal(ref.ids, small.ids) and np.array_equal(ref.ranks, small.ranks)):
    problems.append(f"rank {me}: PageRank differs through the point-to-point exchange")

allp = world.gather(problems, root=0)
if me == 0:
    flat = [p for ps in allp for p in ps]
    with open(sys.argv[1], "w") as f:
        json.dump({"ok": not flat, "detail": flat[:20]}, f)
