"""networkx backend and converters: asapgraph vs networkx vs graphblas-algorithms.

Part ``nx`` (default graph rmat:18): the networkx ``DiGraph`` is built once; then, interleaved
over ``--repeat`` rounds, each algorithm (pagerank, hits, weakly_connected_components) runs

* ``networkx``: networkx's own implementation;
* ``asapgraph+conv`` / ``graphblas+conv``: ``backend=...`` with the conversion cache off, so
  every call converts the networkx graph (what a first call costs);
* ``asapgraph reused`` / ``graphblas reused``: on a graph converted once
  (``asapgraph.from_networkx(G)``, graphblas-algorithms' ``DiGraph.from_networkx(G)``);

and the conversions alone are timed.  Medians are printed with the ratios to networkx.

Part ``scipy`` (default rmat:22, 67M entries): ``Graph.from_scipy`` of a ``csr_array`` that
keeps every R-MAT edge (duplicates included) against writing the same edges to a text edge
list (the package's vectorised ``format_rows`` writer) and loading it with ``load_graph``.

    python benchmarks/bench_nx_backend.py [--part nx|scipy|all] [--graph rmat:18]
                                          [--scipy-graph rmat:22] [--repeat 3]
                                          [--algos pagerank,hits,hits-svds,wcc]

``--algos`` runs part ``nx`` for a subset (e.g. ``--algos wcc``: the networkx, asapgraph and
graphblas columns of ``weakly_connected_components`` alone, still interleaved).
"""
import argparse
import gc
import os
import statistics
import sys
import tempfile
import time

import numpy as np


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _rss_gb():
    from asapgraph._rss import peak_rss_bytes

    return peak_rss_bytes() / 2**30


def bench_nx(spec, repeat, only=None):
    import networkx as nx

    import asapgraph
    from asapgraph.graph import generators

    try:
        import graphblas_algorithms as ga
    except ImportError:
        ga = None
        print("graphblas-algorithms not installed: its columns are skipped", file=sys.stderr)
    src, dst, n = generators.from_spec(spec)
    t, G = _timed(lambda: _digraph(nx, src, dst, n))
    print(f"{spec}: n={G.number_of_nodes():,} m={G.number_of_edges():,} "
          f"(DiGraph: duplicate R-MAT edges merged), built in {t:.1f} s")
    src = dst = None   # free the edge arrays before timing
    nx.config.cache_converted_graphs = False
    nx.config.warnings_to_ignore.add("cache")

    def hits_svds(g, **kw):
        # asapgraph forced to networkx's ARPACK call; networkx's own hits and
        # graphblas-algorithms' are the same calls as in "hits"
        nx.config.backends.asapgraph.hits_method = "svds"
        try:
            return nx.hits(g, **kw)
        finally:
            nx.config.backends.asapgraph.hits_method = "auto"

    algos = {
        "pagerank": lambda g, **kw: nx.pagerank(g, **kw),
        "hits": lambda g, **kw: nx.hits(g, **kw),      # asapgraph: the default, 'auto'
        "hits (asapgraph svds)": hits_svds,
        "wcc": lambda g, **kw: list(nx.weakly_connected_components(g, **kw)),
    }
    if only:
        keys = {"hits-svds": "hits (asapgraph svds)"}
        algos = {k: f for k, f in algos.items()
                 if k in {keys.get(a, a) for a in only}}
    conv = {"asapgraph": lambda: asapgraph.from_networkx(G)}
    if ga is not None:
        conv["graphblas"] = lambda: ga.DiGraph.from_networkx(G, weight="weight")
    times = {}
    check = {}
    missing = set()

    def measure(alg, label, call, first):
        gc.collect()
        try:
            t, out = _timed(call)
        except NotImplementedError:
            missing.add((alg, label))
            return
        times.setdefault((alg, label), []).append(t)
        if first:
            check[(alg, label)] = out
    for r in range(repeat):
        for name, fn in conv.items():
            t, conv_obj = _timed(fn)
            times.setdefault(("conversion", name), []).append(t)
            del conv_obj
        for alg, f in algos.items():
            variants = [("networkx", lambda: f(G, backend="networkx")),
                        ("asapgraph+conv", lambda: f(G, backend="asapgraph"))]
            if alg.startswith("hits ("):   # networkx and graphblas: measured under "hits"
                variants = variants[1:]
            elif ga is not None:
                variants.append(("graphblas+conv", lambda: f(G, backend="graphblas")))
            for label, call in variants[r % len(variants):] + variants[:r % len(variants)]:
                measure(alg, label, call, r == 0)
        # reused graphs: converted once per round, outside the timings
        for label, make in (("asapgraph reused", conv["asapgraph"]),
                            ("graphblas reused", conv.get("graphblas"))):
            if make is None:
                continue
            g2 = make()
            for alg, f in algos.items():
                if not (alg.startswith("hits (") and label.startswith("graphblas")):
                    measure(alg, label, lambda: f(g2), r == 0)
            g2 = None
    _report(times, check)
    for alg, label in sorted(missing):
        print(f"{alg}: {label} not implemented (NotImplementedError)")
    print(f"peak RSS {_rss_gb():.1f} GB")


def _digraph(nx, src, dst, n):
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(src.tolist(), dst.tolist()))
    return G


def _l1(a, b):
    if isinstance(a, tuple):
        return max(_l1(x, y) for x, y in zip(a, b))
    if isinstance(a, list):
        return 0.0 if sorted(map(len, a)) == sorted(map(len, b)) else float("inf")
    keys = list(a)
    va = np.fromiter((a[k] for k in keys), float, len(keys))
    vb = np.fromiter((b[k] for k in keys), float, len(keys))
    return float(np.abs(va - vb).sum())


def _report(times, check):
    med = {k: statistics.median(v) for k, v in times.items()}
    print()
    print("| algorithm | variant | median s | vs networkx | L1 diff to networkx |")
    print("|---|---|---|---|---|")
    for (alg, label), t in med.items():
        base = med.get((alg.split(" (")[0], "networkx"))
        ratio = f"{base / t:.1f}x" if base else ""
        diff = ""
        ref = check.get((alg.split(" (")[0], "networkx"))
        if (alg, label) in check and ref is not None and label != "networkx":
            diff = f"{_l1(ref, check[(alg, label)]):.1e}"
        print(f"| {alg} | {label} | {t:.3f} | {ratio} | {diff} |")
    ca, cg = med.get(("conversion", "asapgraph")), med.get(("conversion", "graphblas"))
    if ca and cg:
        print(f"\nconversion: asapgraph {ca:.3f} s, graphblas-algorithms {cg:.3f} s "
              f"(asapgraph/graphblas = {ca / cg:.2f})")


def _csr_with_duplicates(src, dst, n):
    """CSR keeping every edge (scipy's coo->csr would merge duplicates)."""
    import scipy.sparse as sp

    order = np.argsort(src, kind="stable")
    indices = dst[order].astype(np.int32)
    del order
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return sp.csr_array((np.ones(indices.shape[0]), indices, indptr), shape=(n, n))


def _write_edges(path, A):
    """Text edge list of a CSR (one 'u v' line per entry) with the package's vectorised
    formatter (``asapgraph.graph.io.output.format_rows``), in 4M-line blocks."""
    from asapgraph.graph.io.output import format_rows

    rows = np.repeat(np.arange(A.shape[0], dtype=np.int64), np.diff(A.indptr))
    with open(path, "wb") as f:
        step = 1 << 22
        for i in range(0, rows.shape[0], step):
            f.write(format_rows([rows[i:i + step], A.indices[i:i + step]], sep=" "))


def bench_scipy(spec, repeat):
    import asapgraph
    from asapgraph import Graph
    from asapgraph.graph import generators

    src, dst, n = generators.from_spec(spec)
    A = _csr_with_duplicates(src, dst, n)
    del src, dst
    gc.collect()
    print(f"\n{spec}: csr_array n={n:,} nnz={A.nnz:,} ({A.data.nbytes + A.indices.nbytes + A.indptr.nbytes >> 20} MiB)")
    tdir = tempfile.mkdtemp(prefix="asap-bench-")
    path = os.path.join(tdir, "edges.txt")
    t_write, _ = _timed(lambda: _write_edges(path, A))
    size = os.path.getsize(path)
    t_scipy, t_csc, t_load = [], [], []
    Ac = A.tocsc()    # the in-CSR as it is: no transposition left for from_scipy
    for _ in range(repeat):
        gc.collect()
        t, g = _timed(lambda: Graph.from_scipy(A))
        t_scipy.append(t)
        m1 = g.m
        del g
        gc.collect()
        t, g = _timed(lambda: Graph.from_scipy(Ac))
        t_csc.append(t)
        assert g.m == m1
        del g
        gc.collect()
        t, g = _timed(lambda: asapgraph.load_graph(path))
        t_load.append(t)
        assert g.m == m1 == A.nnz
        del g
    os.remove(path)
    os.rmdir(tdir)
    ms, mc, ml = (statistics.median(t) for t in (t_scipy, t_csc, t_load))
    print(f"Graph.from_scipy(csr_array): {ms:.2f} s, (csc_array): {mc:.2f} s (medians of "
          f"{repeat}); write edge list ({size >> 20} MiB): {t_write:.1f} s; load_graph of it: "
          f"{ml:.2f} s")
    for what, t in (("csr", ms), ("csc", mc)):
        print(f"from_scipy({what}) vs write+load: {(t_write + ml) / t:.1f}x faster; vs load "
              f"alone: {ml / t:.1f}x")
    print(f"peak RSS {_rss_gb():.1f} GB")


ALGOS = ("pagerank", "hits", "hits-svds", "wcc")


def _algos(text):
    names = [a.strip() for a in text.split(",") if a.strip()]
    bad = [a for a in names if a not in ALGOS]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"--algos takes {','.join(ALGOS)}, not {text!r}")
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=["nx", "scipy", "all"], default="all")
    ap.add_argument("--graph", default="rmat:18")
    ap.add_argument("--scipy-graph", default="rmat:22")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--algos", type=_algos, default=None,
                    help="comma-separated subset of pagerank,hits,hits-svds,wcc (part nx)")
    a = ap.parse_args()
    if a.part in ("nx", "all"):
        bench_nx(a.graph, a.repeat, a.algos)
    if a.part in ("scipy", "all"):
        bench_scipy(a.scipy_graph, a.repeat)


if __name__ == "__main__":
    main()
