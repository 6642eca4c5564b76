"""Run under ``mpiexec -n K``: distributed vertex programs vs independent peers.

Usage: python _programs_worker.py CASES.json OUT.json

CASES.json: list of ``{"graph": SOURCE, "weighted": bool, "partition": "range"|"hash",
"mode": "bsp"|"asap", "program": NAME, ...}``; NAME is one of wcc, sssp, bfs, katz,
pagerank, labelprop, hits, user (``"file": path, "cls": name``), asap_labelprop (expects
the refusal), stress_pagerank / stress_katz (``"reps": R`` repeated ASAP runs: totals of
stale and late messages, worst L1 error).  Every rank runs every case collectively; rank 0 computes the reference
(scipy / networkx / the single-process run, none of them written here except the peers'
calls) and writes one record per case with the error figures to OUT.json.  The test
asserts on the records.
"""
import json
import sys
import time
import traceback

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csg
from mpi4py import MPI

import asapgraph.programs as P
from asapgraph.engine import distributed as DP
from asapgraph.graph.io import load_graph


def single_graph(source, weighted):
    return load_graph(source, weighted=weighted) if weighted else load_graph(source)


def adjacency(G):
    """``A[u, v]`` = number (sum of weights) of edges u->v, canonical CSR."""
    A = G.to_scipy()
    A.sum_duplicates()  # to_scipy may keep parallel edges as duplicate entries
    return A


def canon(labels):
    """Relabel by first occurrence (labels as a partition)."""
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return order[inv.reshape(-1)]


def graphs(case, comm, cache):
    """``(single-process Graph, ProgramGraph)`` of a case, loaded once per launch."""
    key = (case["graph"], case.get("weighted", False))
    if key not in cache:
        cache[key] = single_graph(*key)
    pg_key = key + (case["partition"],)
    if pg_key not in cache:
        cache[pg_key] = DP.load(case["graph"], comm, partition=case["partition"],
                                weighted=case.get("weighted", False))
    return cache[key], cache[pg_key]


def check(case, comm, cache):
    G, pg = graphs(case, comm, cache)
    me = comm.Get_rank()
    name, mode = case["program"], case["mode"]
    rec = {"case": case}
    ids = G.original_ids()
    if name in ("wcc", "hook"):
        if name == "wcc":
            r = DP.run(P.WCCProgram(), pg, comm, mode=mode)
        else:  # the single-process API on a communicator dispatches to the MPI engine
            r = P.run(P.WCCProgram(), G, mode=mode, comm=comm)
        if me == 0:
            A = adjacency(G)
            nc, lab = csg.connected_components(A, directed=True, connection="weak")
            # min-original-id label of every component
            mins = np.full(nc, np.iinfo(np.int64).max)
            np.minimum.at(mins, lab, ids)
            rec["ids_equal"] = bool(np.array_equal(r.ids, ids))
            rec["partition_equal"] = bool(np.array_equal(canon(r.values), canon(lab)))
            rec["labels_equal"] = bool(np.array_equal(r.values, mins[lab]))
            rec["ncomp"] = int(nc)
    elif name in ("sssp", "bfs"):
        srcv = int(case.get("source_index", 0))
        s = pg.dense_id(int(ids[srcv]))
        prog = P.SSSPProgram(s) if name == "sssp" else P.BFSProgram(s)
        r = DP.run(prog, pg, comm, mode=mode)
        if me == 0:
            A = adjacency(G)
            if name == "sssp":
                if G.weights is not None:  # scipy keeps the lightest parallel edge? use min
                    s_, d_, w_ = G.edges()
                    # keep the lightest of parallel edges (csr_matrix would add them up)
                    o = np.lexsort((w_, d_, s_))
                    s2, d2, w2 = s_[o], d_[o], w_[o]
                    keep = np.ones(len(s2), bool)
                    keep[1:] = (s2[1:] != s2[:-1]) | (d2[1:] != d2[:-1])
                    Am = sp.csr_matrix((w2[keep], (s2[keep], d2[keep])), shape=(G.n, G.n))
                else:
                    Am = (A > 0).astype(np.float64)
                ref = csg.dijkstra(Am, directed=True, indices=s)
                rec["exact"] = bool(np.array_equal(r.values, ref))
                rec["reachable"] = int(np.isfinite(ref).sum())
            else:
                ref = csg.shortest_path((A > 0).astype(np.float64), method="D", unweighted=True,
                                        indices=s)
                ref = np.where(np.isinf(ref), -1, ref).astype(np.int64)
                rec["exact"] = bool(np.array_equal(r.values, ref))
                rec["reachable"] = int((ref >= 0).sum())
    elif name == "katz":
        alpha = float(case.get("alpha", 0.1))
        r = DP.run(P.KatzProgram(alpha=alpha), pg, comm, mode=mode, tol=1e-10)
        if me == 0:
            ref = P.run(P.KatzProgram(alpha=alpha), G, mode="bsp", tol=1e-13).values
            rec["l1"] = float(np.abs(r.values - ref).sum())
            if G.n <= 3000:
                import networkx as nx

                # parallel edges add up: A[u, v] = multiplicity, used as the edge weight
                s_, d_, _ = G.edges()  # the program ignores weights: count edges
                C = sp.csr_matrix((np.ones(len(s_)), (s_, d_)), shape=(G.n, G.n))
                C.sum_duplicates()
                H = nx.from_scipy_sparse_array(C, create_using=nx.DiGraph)
                kz = nx.katz_centrality_numpy(H, alpha=alpha, beta=1.0, normalized=True,
                                              weight="weight")
                ref2 = np.array([kz[i] for i in range(G.n)])
                rec["l1_networkx"] = float(np.abs(r.values - ref2).sum())
    elif name == "pagerank":
        r = DP.run(P.PageRankProgram(alpha=0.85), pg, comm, mode=mode, tol=1e-9)
        if me == 0:
            from asapgraph.programs.pagerank import pagerank

            ref = pagerank(G, alpha=0.85, tol=1e-14, max_iter=10000)
            refv = getattr(ref, "ranks", ref)
            refv = np.asarray(refv if not hasattr(ref, "values") else ref.values)
            rec["l1"] = float(np.abs(r.values - refv).sum())
    elif name == "labelprop":
        r = DP.run(P.LabelPropProgram(), pg, comm, mode="bsp", max_iter=30, tol=0.0)
        if me == 0:
            ref = P.run(P.LabelPropProgram(), G, mode="bsp", max_iter=30, tol=0.0)
            rec["identical"] = bool(np.array_equal(r.values, ref.values))
            rec["iters_equal"] = bool(r.iterations == ref.iterations)
            rec["converged_equal"] = bool(r.converged == ref.converged)
    elif name == "hits":
        r = DP.run(P.HITSProgram(), pg, comm, mode="bsp", tol=1e-9, max_iter=300)
        if me == 0:
            ref = P.run(P.HITSProgram(), G, mode="bsp", tol=1e-9, max_iter=300)
            rec["l1"] = float(sum(np.abs(r.values[k] - ref.values[k]).sum() for k in ref.values))
            rec["converged_equal"] = bool(r.converged == ref.converged)
            rec["ref_converged"] = bool(ref.converged)
            if G.n <= 20000:  # networkx's HITS (svds) on the same (multi)graph
                import networkx as nx

                # parallel edges add up (weights when the graph is weighted), as in the program
                s_, d_, w_ = G.edges()
                C = sp.csr_matrix((np.ones(len(s_)) if w_ is None else w_, (s_, d_)),
                                  shape=(G.n, G.n))
                C.sum_duplicates()
                H = nx.from_scipy_sparse_array(C, create_using=nx.DiGraph)
                h, a = nx.hits(H, max_iter=10000, tol=1e-12)
                rec["l1_networkx"] = float(
                    np.abs(r.values["hub"] - np.array([h[i] for i in range(G.n)])).sum()
                    + np.abs(r.values["authority"] - np.array([a[i] for i in range(G.n)])).sum())
    elif name == "user":
        prog = P.load_program(case["file"] + ":" + case["cls"])
        r = DP.run(prog, pg, comm, mode=mode)
        if me == 0:
            ref = P.run(P.load_program(case["file"] + ":" + case["cls"]), G, mode="bsp")
            a, b = np.asarray(r.values, dtype=np.float64), np.asarray(ref.values, dtype=np.float64)
            rec["max_abs"] = float(np.max(np.abs(a - b))) if a.size else 0.0
    elif name in ("stress_pagerank", "stress_katz"):
        # the same ASAP run repeated within one launch: a message left in flight by a
        # run's termination would show as late (found by the final count check) or
        # stale (arriving in the next run)
        reps = int(case["reps"])
        if name == "stress_pagerank":
            mk, tol = (lambda: P.PageRankProgram(alpha=0.85)), 1e-9
            ref = P.run(P.PageRankProgram(alpha=0.85), G, mode="bsp", tol=1e-14,
                        max_iter=10000).values if me == 0 else None
        else:
            mk, tol = (lambda: P.KatzProgram(alpha=0.1)), 1e-10
            ref = P.run(P.KatzProgram(alpha=0.1), G, mode="bsp", tol=1e-13).values \
                if me == 0 else None
        stale = late = data = acks = unacked = 0
        engines, reported = set(), True
        l1s, conv = [], True
        for _ in range(reps):
            r = DP.run(mk(), pg, comm, mode="asap", tol=tol)
            # (the tuned engine of Katz runs each solve on its own communicator: no counts)
            stale += int(r.stats.get("stale_messages", 0))
            late += int(r.stats.get("late_messages", 0))
            engines.add(r.stats.get("engine"))
            reported = reported and "stale_messages" in r.stats and "late_messages" in r.stats
            # every data message delivered in the run is ACKed once (NotifyAck): the
            # totals are equal iff no message was left in flight by the termination
            data += int(r.stats["data_messages_sent"])
            acks += int(r.stats["acks_sent"])
            unacked = max(unacked, int(r.stats["data_messages_sent"]) - int(r.stats["acks_sent"]))
            conv = conv and bool(r.converged)
            if me == 0:
                l1s.append(float(np.abs(r.values - ref).sum()))
        if me == 0:
            rec.update(reps=reps, stale_total=stale, late_total=late, l1_max=max(l1s),
                       all_converged=conv, engines=sorted(map(str, engines)),
                       stale_reported=reported, data_messages_total=data, acks_total=acks,
                       unacked_max=unacked)
    elif name == "asap_labelprop":
        try:
            DP.run(P.LabelPropProgram(), pg, comm, mode="asap")
            rec["error"] = None
        except ValueError as e:
            rec["error"] = str(e)
    else:
        raise ValueError(name)
    if name != "asap_labelprop":
        rec["converged"] = bool(r.converged)
        rec["iterations"] = int(r.iterations)
        # None where the engine does not count them (the tuned sum / min-max engines:
        # only the general engine's ASAP reports stale and late messages)
        rec["stale"] = r.stats.get("stale_messages")
        rec["late"] = r.stats.get("late_messages")
        rec["engine"] = r.stats.get("engine")
        rec["data_messages"] = r.stats.get("data_messages_sent")
        rec["acks"] = r.stats.get("acks_sent")
        if me != 0:
            assert r.values is None
    return rec


def main(check_case=None):
    """Run every case of ``sys.argv[1]`` with ``check_case`` (default :func:`check`)."""
    check_case = check_case or check
    comm = MPI.COMM_WORLD
    cases = json.load(open(sys.argv[1]))
    cache, out = {}, []
    try:
        for c in cases:
            t0 = time.perf_counter()
            out.append(check_case(c, comm, cache))
            out[-1]["seconds"] = time.perf_counter() - t0
    except Exception:  # noqa: BLE001 - one rank's failure must not hang the others
        traceback.print_exc()
        sys.stderr.flush()
        comm.Abort(1)
    if comm.Get_rank() == 0:
        json.dump(out, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
