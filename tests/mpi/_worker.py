"""Run under ``mpiexec -n K``: distributed PageRank cases vs a scipy reference.

Usage: python _worker.py CASES.json OUT.json
CASES.json: list of {"name", "source", "weighted", "personalization", "dangling",
"runs": [{"mode", "partition", ...pagerank kwargs}]}.  Rank 0 writes OUT.json with the
L1 error of every run against a scipy power iteration (networkx semantics, written here)
and, for small graphs, against networkx.
"""
import gzip
import json
import os
import signal
import sys
import threading
import time

import numpy as np
import scipy.sparse as sp
from mpi4py import MPI

import asapgraph.engine as ad


def read_edges(source, weighted):
    if ":" in source and not os.path.exists(source):
        from asapgraph.graph.generators import from_spec

        s, d, n = from_spec(source)
        return s, d, (np.ones(len(s)) if weighted else None), np.arange(n)
    op = gzip.open if source.endswith(".gz") else open
    rows = []
    with op(source, "rb") as f:
        for line in f:
            line = line.strip()
            if not line or line[:1] in (b"#", b"%"):
                continue
            rows.append(line.replace(b",", b" ").split())
    s = np.array([int(r[0]) for r in rows], dtype=np.int64)
    d = np.array([int(r[1]) for r in rows], dtype=np.int64)
    w = np.array([float(r[2]) for r in rows]) if weighted else None
    return s, d, w, np.unique(np.concatenate([s, d]))


def read_vec(path, ids):
    if path is None:
        return None
    a = np.loadtxt(path, ndmin=2)
    v = np.zeros(len(ids))
    pos = np.searchsorted(ids, a[:, 0].astype(np.int64))
    ok = (pos < len(ids)) & (ids[np.minimum(pos, len(ids) - 1)] == a[:, 0])
    v[pos[ok]] = a[ok, 1]
    return v / v.sum()


def reference(source, weighted, pers, dang, alpha=0.85):
    """Power iteration with networkx semantics, to L1 change < 1e-15."""
    s, d, w, ids = read_edges(source, weighted)
    n = len(ids)
    si, di = np.searchsorted(ids, s), np.searchsorted(ids, d)
    A = sp.csr_matrix((np.ones(len(s)) if w is None else w, (si, di)), shape=(n, n))
    outw = np.asarray(A.sum(1)).ravel()
    dm = outw == 0
    W = sp.diags(np.where(dm, 0.0, 1.0 / np.where(dm, 1.0, outw))) @ A
    WT = W.T.tocsr()
    p = read_vec(pers, ids)
    p = np.full(n, 1.0 / n) if p is None else p
    dv = read_vec(dang, ids)
    dv = p if dv is None else dv
    x = np.full(n, 1.0 / n)
    for _ in range(5000):
        xn = alpha * (WT @ x + x[dm].sum() * dv) + (1 - alpha) * p
        if np.abs(xn - x).sum() < 1e-15:
            x = xn
            break
        x = xn
    nx_err = None
    if n <= 400 and w is None and dang is None:
        import networkx as nx

        G = nx.MultiDiGraph()
        G.add_nodes_from(ids.tolist())
        G.add_edges_from(zip(s.tolist(), d.tolist()))
        pd = None if pers is None else dict(zip(ids.tolist(), p.tolist()))
        r = nx.pagerank(G, alpha=alpha, personalization=pd, tol=1e-15, max_iter=10000)
        nx_err = float(np.abs(np.array([r[i] for i in ids.tolist()]) - x).sum())
    return ids, x, nx_err


def main():
    comm = MPI.COMM_WORLD
    cases = json.load(open(sys.argv[1]))
    out = []
    kill = os.environ.get("ASAPGRAPH_TEST_KILL_RANK")
    if kill is not None and comm.rank == int(kill):
        def _die():
            time.sleep(float(os.environ.get("ASAPGRAPH_TEST_KILL_AFTER", "0.5")))
            # the test matches this pid with the one mpiexec reports as killed
            print(f"test: rank {comm.rank} (pid {os.getpid()}) sends itself SIGKILL",
                  file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

        threading.Thread(target=_die, daemon=True).start()
    for c in cases:
        ref = reference(c["source"], c.get("weighted", False), c.get("personalization"),
                        c.get("dangling")) if comm.rank == 0 else None
        for run in c["runs"]:
            kw = dict(run)
            force = kw.pop("force_seed", None)  # forced migrations (engine.rebalance)
            if force is None:
                os.environ.pop("ASAPGRAPH_REBALANCE_FORCE", None)
            else:
                os.environ["ASAPGRAPH_REBALANCE_FORCE"] = str(force)
            if os.environ.get("ASAPGRAPH_TEST_VERBOSE") and comm.rank == 0:
                print(c["name"], run, file=sys.stderr, flush=True)
            src = c["source"]
            if kw.pop("preload", False):  # ad.load() once, then pagerank on the loaded graph
                src = ad.load(src, comm, weighted=c.get("weighted", False))
            r = ad.pagerank(src, comm, weighted=c.get("weighted", False),
                            personalization=c.get("personalization"),
                            dangling=c.get("dangling"), **kw)
            if comm.rank == 0:
                ids, x, nx_err = ref
                same_ids = bool(np.array_equal(ids, r.ranks is not None and r.ids))
                l1 = float(np.abs(r.ranks - x).sum()) if same_ids else float("inf")
                out.append({"case": c["name"], **run, "l1": l1, "same_ids": same_ids,
                            "nx_l1": nx_err, "iterations": r.iterations,
                            "converged": r.converged, "residual": r.residual,
                            "mass_checks": r.stats.get("mass_checks"),
                            "max_mass_error": r.stats.get("max_mass_error"),
                            "spectral_gap": r.stats.get("spectral_gap"),
                            "messages": r.stats["messages_sent"],
                            "clock": r.stats.get("clock"),
                            "virtual_seconds": r.stats.get("virtual_seconds"),
                            "bytes": r.stats.get("bytes_sent"),
                            "rank_rounds": [q.get("rounds") for q in r.stats["per_rank"]],
                            "rank_virtual": [q.get("virtual_seconds")
                                             for q in r.stats["per_rank"]],
                            "rank_pauses": [q.get("pauses", 0) for q in r.stats["per_rank"]],
                            "rank_pause_seconds": [q.get("pause_seconds", 0.0)
                                                   for q in r.stats["per_rank"]],
                            "rank_patience": [q.get("sweep_patience")
                                              for q in r.stats["per_rank"]],
                            "rank_skip_gamma": [q.get("skip_gamma")
                                                for q in r.stats["per_rank"]],
                            "rank_rtt_min": [q.get("rtt_min_seconds")
                                             for q in r.stats["per_rank"]],
                            "rank_idle_prio": [q.get("idle_prio")
                                               for q in r.stats["per_rank"]],
                            "rank_edges_visited": [q.get("edges_visited")
                                                   for q in r.stats["per_rank"]],
                            "rank_relabelled": [q.get("push_relabelled", False)
                                                for q in r.stats["per_rank"]],
                            "rank_layout_seconds": [q.get("layout_seconds")
                                                    for q in r.stats["per_rank"]],
                            "rank_layouts_charged": [
                                sorted(k for k in q.get("compute_calibration", {})
                                       if k.startswith("layout_"))
                                for q in r.stats["per_rank"]],
                            "edges_visited": r.stats.get("edges_visited"),
                            "emulation": r.stats.get("emulation"),
                            "rebalance": r.stats.get("rebalance"),
                            "bounds": r.stats.get("bounds"),
                            "vertices_per_rank": [q["vertices"] for q in r.stats["per_rank"]],
                            "edges_per_rank": [q["edges"] for q in r.stats["per_rank"]]})
    if comm.rank == 0:
        json.dump(out, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
