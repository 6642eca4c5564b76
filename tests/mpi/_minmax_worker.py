"""Run under ``mpiexec -n K``: min/max programs on the tuned engine vs scipy.sparse.csgraph.

Usage: python _minmax_worker.py CASES.json OUT.json

CASES.json: list of ``{"graph": SOURCE, "weighted": bool, "partition": "range"|"hash",
"mode": "bsp"|"asap", "program": "wcc"|"sssp"|"bfs"|"user_min"|"user_max", "file": user
programs (user_*), "options": engine_options or absent}``.  Every rank runs every case
collectively through ``asapgraph.engine.distributed.run``; rank 0 compares the whole
result with scipy.sparse.csgraph (weak components, Dijkstra, unweighted shortest paths;
``user_max`` with the single-process run) and writes one record per case.
"""
import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csg

import asapgraph.programs as P
from asapgraph.engine import distributed as DP
from _programs_worker import adjacency, canon, graphs, main

BIG = np.iinfo(np.int64).max  # no larger original id exists


def lightest(G):
    """Weighted adjacency keeping the lightest of parallel edges (csr_matrix adds them)."""
    s, d, w = G.edges()
    o = np.lexsort((w, d, s))
    s, d, w = s[o], d[o], w[o]
    keep = np.ones(len(s), bool)
    keep[1:] = (s[1:] != s[:-1]) | (d[1:] != d[:-1])
    return sp.csr_matrix((w[keep], (s[keep], d[keep])), shape=(G.n, G.n))


def reference(name, G, src, prog_file):
    ids = G.original_ids()
    A = adjacency(G)
    U = (A > 0).astype(np.float64)
    if name == "wcc":
        nc, lab = csg.connected_components(A, directed=True, connection="weak")
        mins = np.full(nc, BIG)
        np.minimum.at(mins, lab, ids)
        return mins[lab], nc
    if name == "sssp":
        return csg.dijkstra(lightest(G) if G.weights is not None else U, directed=True,
                            indices=src), None
    if name == "bfs":
        ref = csg.shortest_path(U, method="D", unweighted=True, indices=src)
        return np.where(np.isinf(ref), -1, ref).astype(np.int64), None
    if name == "user_min":  # distance from the nearest vertex whose original id is 0 mod 5
        seeds = np.flatnonzero(ids % 5 == 0)
        W = lightest(G) if G.weights is not None else U
        return csg.dijkstra(W, directed=True, indices=seeds).min(axis=0), None
    return P.run(P.load_program(prog_file + ":MaxReach"), G, mode="asap").values, None


def check(case, comm, cache):
    G, pg = graphs(case, comm, cache)
    key = (case["graph"], case.get("weighted", False))
    name, ids = case["program"], G.original_ids()
    src = 3 % G.n
    if name == "wcc":
        prog = P.WCCProgram()
    elif name in ("sssp", "bfs"):
        s = pg.dense_id(int(ids[src]))
        prog = P.SSSPProgram(s) if name == "sssp" else P.BFSProgram(s)
    else:
        prog = P.load_program(case["file"] + (":NearestSeed" if name == "user_min" else ":MaxReach"))
    r = DP.run(prog, pg, comm, mode=case["mode"], engine_options=case.get("options"))
    rec = {"case": case, "converged": bool(r.converged), "engine": r.stats.get("engine"),
           "error_bound": r.stats.get("error_bound"), "iterations": int(r.iterations),
           "bytes_sent": int(r.stats["bytes_sent"]), "emulation": r.stats.get("emulation"),
           "delay": r.stats.get("emulated_delay_seconds")}
    if comm.Get_rank() == 0:
        rk = key + (name,)
        if rk not in cache:
            cache[rk] = reference(name, G, src, case.get("file"))
        ref, nc = cache[rk]
        rec["ids_equal"] = bool(np.array_equal(r.ids, ids))
        rec["exact"] = bool(np.array_equal(r.values, ref))
        if name == "wcc":
            rec["partition_equal"] = bool(np.array_equal(canon(r.values), canon(ref)))
            rec["ncomp"] = int(nc)
        elif name == "sssp":
            rec["reachable"] = int(np.isfinite(ref).sum())
        elif name == "bfs":
            rec["reachable"] = int((ref >= 0).sum())
        elif name == "user_min":
            rec["reachable"] = int(np.isfinite(ref).sum())
        else:
            rec["reachable"] = int((ref != ids).sum())  # some vertex got a label from afar
    else:
        assert r.values is None
    return rec


if __name__ == "__main__":
    main(check)
