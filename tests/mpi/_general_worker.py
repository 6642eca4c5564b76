"""Run under ``mpiexec -n K``: programs of the general program engine in ASAP mode.

Usage: python _general_worker.py CASES.json OUT.json

The programs here run on the general engine (:mod:`asapgraph.engine.asap_programs`):
a PageRank subclass (its ``aggregate``/``post_delta`` dangling hook keeps it off the
tuned solvers) and a BFS with a ``direction_at`` override.  CASES.json: list of
``{"graph": SPEC, "partition": ..., "program": "hookpr"|"dirbfs", "options": {...},
"reps": R}``; every rank runs every case collectively, rank 0 compares with
independent peers (networkx PageRank, scipy's BFS) and writes one record per case.
"""
import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csg
from _programs_worker import main

import asapgraph.programs as P
from asapgraph.engine import distributed as DP
from asapgraph.engine.distributed import engine_kind
from asapgraph.graph.io import load_graph


class HookPR(P.PageRankProgram):
    """The built-in PageRank program with a hook of its own: the general engine."""

    def post_delta(self, ctx, deltas):
        return super().post_delta(ctx, deltas)


class DirBFS(P.BFSProgram):
    def direction_at(self, ctx):  # an override: the general engine
        return self.direction


def _reference_pagerank(G):
    import networkx as nx

    s, d, _ = G.edges()
    C = sp.csr_matrix((np.ones(len(s)), (s, d)), shape=(G.n, G.n))
    C.sum_duplicates()  # parallel edges: multiplicity as the weight
    H = nx.from_scipy_sparse_array(C, create_using=nx.DiGraph)
    pr = nx.pagerank(H, alpha=0.85, tol=1e-15, max_iter=10000, weight="weight")
    return np.array([pr[i] for i in range(G.n)])


def check(case, comm, cache):
    me = comm.Get_rank()
    key = (case["graph"], case["partition"])
    if key not in cache:
        cache[key] = (load_graph(case["graph"]),
                      DP.load(case["graph"], comm, partition=case["partition"]))
    G, pg = cache[key]
    rec = {"case": case, "l1": [], "exact": [], "stale": 0, "late": 0}
    ref = None
    for _ in range(int(case.get("reps", 1))):
        if case["program"] == "hookpr":
            prog = HookPR(alpha=0.85)
            r = DP.run(prog, pg, comm, mode="asap", tol=1e-10,
                       engine_options=case.get("options"))
            if me == 0:
                ref = _reference_pagerank(G) if ref is None else ref
                rec["l1"].append(float(np.abs(r.values - ref).sum()))
        else:
            src = pg.dense_id(int(G.original_ids()[3]))
            prog = DirBFS(src)
            r = DP.run(prog, pg, comm, mode="asap", engine_options=case.get("options"))
            if me == 0:
                A = G.to_scipy()
                A.sum_duplicates()
                d = csg.shortest_path((A > 0).astype(np.float64), method="D", unweighted=True,
                                      indices=src)
                d = np.where(np.isinf(d), -1, d).astype(np.int64)
                rec["exact"].append(bool(np.array_equal(r.values, d)))
                rec["reachable"] = int((d >= 0).sum())
        rec.setdefault("run_seconds", []).append(float(r.stats["seconds"]))
        rec["engine_kind"] = engine_kind(prog)
        rec["stale"] += int(r.stats["stale_messages"])
        rec["late"] += int(r.stats["late_messages"])
        rec["converged"] = bool(r.converged)
        for k in ("fanout", "window", "seed", "approx", "emulation", "spectral_gap",
                  "data_messages_sent", "acks_sent", "bytes_sent", "edges_scanned",
                  "straggler_sleep_seconds", "emulated_delay_seconds"):
            rec[k] = r.stats.get(k)
    return rec


if __name__ == "__main__":
    main(check)  # the driver of _programs_worker (same folder: on sys.path)
