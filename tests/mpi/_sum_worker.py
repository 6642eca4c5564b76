"""Run under ``mpiexec -n K``: accumulative sum programs on the tuned engine vs references.

Usage: python _sum_worker.py CASES.json OUT.json

CASES.json: list of ``{"graph": SOURCE, "partition": "range"|"hash", "mode": "bsp"|"asap",
"program": "ppr"|"seeded_katz"|"katz", "file": path of the user programs (ppr,
seeded_katz)}``.  Every rank runs every case collectively through
``asapgraph.engine.distributed.run``; rank 0 compares the result with the single-process run
of the same program (``asapgraph.programs.run``) and with a direct sparse solve
(``scipy.sparse.linalg.spsolve`` of ``(I - A_c^T) x = d0``), both over the full vectors.
"""
import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

import asapgraph.programs as P
from asapgraph.engine import distributed as DP
from asapgraph.graph.io import load_graph


def katz_alpha(G):
    """Half of ``1 / max(max in-degree, max out-degree)`` (a bound on 1/lambda_max)."""
    deg = max(int(np.diff(G.indptr).max(initial=1)), int(np.max(G.out_degree, initial=1)))
    return 0.5 / deg


def make(case, G):
    name = case["program"]
    if name == "katz":
        return P.KatzProgram(alpha=katz_alpha(G))
    ids = G.original_ids()
    seeds = ids[[0, len(ids) // 3, len(ids) - 1]].tolist()
    spec = case["file"] + ":" + case["cls"]
    if name == "ppr":
        return P.load_program(spec, seeds=seeds)
    return P.load_program(spec, seeds=seeds, alpha=katz_alpha(G))


def direct(prog, G):
    """Direct solve of the program's linear fixed point on one process (scipy)."""
    ctx = P.Context(G)
    prog.setup(ctx)
    v0, d0 = prog.init_delta(ctx)
    coef = prog.coef(ctx)
    coef = np.ones(G.n) if coef is None else np.asarray(coef, dtype=np.float64)
    s, d, w = G.edges()
    w = np.ones(len(s)) if (w is None or not prog.use_weights or prog.edge_op == "copy") else w
    A = sp.csr_matrix((coef[s] * w, (s, d)), shape=(G.n, G.n))  # duplicates add up
    x = np.asarray(v0) + spsolve((sp.identity(G.n, format="csc") - A.T.tocsc()), d0)
    return prog.result(ctx, x)


def check(case, comm, cache):
    key = case["graph"]
    if key not in cache:
        cache[key] = load_graph(key)
    G = cache[key]
    pk = (key, case["partition"])
    if pk not in cache:
        cache[pk] = DP.load(key, comm, partition=case["partition"])
    pg = cache[pk]
    r = DP.run(make(case, G), pg, comm, mode=case["mode"], tol=1e-13, max_iter=5000)
    rec = {"case": case, "converged": bool(r.converged), "engine": r.stats.get("engine"),
           "error_bound": r.stats.get("error_bound"), "iterations": int(r.iterations)}
    if comm.Get_rank() == 0:
        ref = P.run(make(case, G), G, mode="bsp", tol=1e-14, max_iter=10000)
        exact = direct(make(case, G), G)
        rec["ids_equal"] = bool(np.array_equal(r.ids, ref.ids))
        rec["l1_single"] = float(np.abs(r.values - ref.values).sum())
        rec["l1_direct"] = float(np.abs(r.values - exact).sum())
        rec["single_engine"] = ref.stats.get("engine")
        rec["norm"] = float(np.abs(exact).sum())
    else:
        assert r.values is None
    return rec


if __name__ == "__main__":
    from _programs_worker import main  # the same case loop (this script's folder is on sys.path)

    main(check)
