"""A networkx user's script for tests/mpi/test_nx_ranks.py.

``python _nx_ranks_script.py OUT MODE NP [nstart]`` (NP "none" or an int) sets
``nx.config.backends.asapgraph.mode`` / ``.np``, runs ``nx.pagerank(G,
backend="asapgraph")`` on a weighted digraph with string node keys, an isolated node,
dangling nodes, a personalization and a dangling dict, and writes (rank 0 of the world,
or the only process) a JSON record: the result by node, networkx's own answer at tol
1e-13, the backend's ``last_run()``, or the one-line error it raised.  The same script runs
under ``mpiexec -n K`` (every rank calls: the collective form); every rank then checks that
its dict equals rank 0's and writes its own record ``OUT.rank<r>``.
"""
import json
import os
import sys
import warnings

import networkx as nx

warnings.simplefilter("ignore")


def graph():
    G = nx.gnp_random_graph(240, 0.025, directed=True, seed=7)
    G = nx.relabel_nodes(G, {i: f"v{i}" for i in G})
    G.add_node("isolated")
    for i, (u, v) in enumerate(list(G.edges())):
        G[u][v]["weight"] = 1.0 + i % 4
    G.remove_edges_from([(u, v) for u, v in list(G.edges()) if u in ("v3", "v11")])  # dangling
    return G


def main(out, mode, np_, extra):
    from asapgraph.interop import nx_ranks

    G = graph()
    pers = {f"v{i}": float(i % 5) for i in range(240)}
    dang = {f"v{i}": 1.0 for i in range(0, 240, 7)}
    ref = nx.pagerank(G, backend="networkx", tol=1e-13, max_iter=1000,
                      personalization=pers, dangling=dang)
    cfg = nx.config.backends.asapgraph
    cfg.mode = None if mode == "none" else mode
    cfg.np = None if np_ == "none" else int(np_)
    rec = {"ref": ref}
    kw = {"nstart": {n: 1.0 for n in G}} if extra == "nstart" else {}
    try:
        rec["got"] = nx.pagerank(G, backend="asapgraph", tol=1e-10, personalization=pers,
                                 dangling=dang, **kw)
        rec["last_run"] = nx_ranks.last_run()
    except Exception as e:  # noqa: BLE001  (the test checks the message)
        rec["error"] = f"{type(e).__name__}: {e}"
    rank = os.environ.get("PMI_RANK")
    if rank is not None:
        out = f"{out}.rank{rank}"
    with open(out, "w") as f:
        json.dump(rec, f)


if __name__ == "__main__":
    main(*sys.argv[1:4], sys.argv[4] if len(sys.argv) > 4 else None)
