"""High-precision references and the power-iteration error trajectory, cached per graph.

Rationale
---------
Every benchmark run is judged by the L1 error of its final ranks against a reference
computed once per graph by single-process asapgraph (:func:`asapgraph.programs.pagerank.pagerank`,
Jacobi, ``tol=1e-13``: L1 error ``<= 5.67e-13``), so the error levels of the report
(1e-2 .. 1e-8) are measured against something five orders of magnitude more accurate.

The BSP engine is power iteration from the uniform vector (its module states the
invariant: the iterates equal single-process power iteration up to summation order), so
the *true* L1 error of BSP after superstep ``k`` is the error ``e_k`` of the ``k``-th
power iterate.  It is computed here once per graph with scipy (an implementation
independent of both engines) and stored with the reference; the driver maps superstep
``k`` of a run to the time of its ``k``-th trace sample.  The asynchronous engine has no
such sequence; its trace carries a certified upper bound of its error instead.

The trajectory doubles as a verifier of the reference: scipy power iteration must converge
to it (L1 <= 1e-8), else :func:`ensure_reference` raises.

Cache: ``<results>/ref/<graph-key>.npz`` with ``ids`` (original ids, increasing), ``ranks``
(aligned), ``traj`` (``e_1, e_2, ...``, until ``e_k <= 1e-10`` or 2000 sweeps), ``n``, ``m``.
"""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

import numpy as np

__all__ = ["graph_key", "resolve_graph", "shared_datasets_dir", "ensure_reference",
           "power_trajectory", "load_reference"]

ALPHA = 0.85


def shared_datasets_dir():
    """Where real graphs are looked up: ``$ASAPGRAPH_SHARED_DATASETS``, else ``../shared/datasets``
    next to the source tree or to the current directory (first that exists), else None."""
    env = os.environ.get("ASAPGRAPH_SHARED_DATASETS")
    cands = [Path(env)] if env else []
    cands += [Path(__file__).resolve().parents[3] / "shared" / "datasets",
              Path.cwd().parent / "shared" / "datasets", Path.cwd() / "datasets"]
    for c in cands:
        if c.is_dir():
            return c
    return None


def resolve_graph(name):
    """``(source, label)``: the source string given to the engines, and a display label.

    Generator specs without a seed get seed 1 (``rmat:20`` -> ``rmat:20:16:1``): the
    graphs of benchmarks/REPORT.md's figures since the first session (the engines' own
    default is seed 0, ``asapgraph pagerank rmat:20``); the records' ``source`` and the
    progress lines name the resolved spec.  A name
    that is not a file is looked up in :func:`shared_datasets_dir` (``cnr-2000`` ->
    ``.../cnr-2000.txt.gz``).

    Raises
    ------
    asapgraph.errors.InputError
        Unknown file or malformed spec.
    """
    from asapgraph.errors import InputError
    from asapgraph.graph.generators import is_spec, parse_spec

    if is_spec(name) and not os.path.exists(name):
        kind, p = parse_spec(name)
        if kind == "rmat":
            seed = 1 if p["seed"] is None else p["seed"]
            return f"rmat:{p['scale']}:{p['edge_factor']}:{seed}", name
        seed = 1 if p["seed"] is None else p["seed"]
        return f"er:{p['n']}:{p['m']}:{seed}", name
    if os.path.exists(name):
        return os.path.abspath(name), Path(name).name.split(".")[0]
    d = shared_datasets_dir()
    if d is not None:
        for cand in (name, name + ".txt.gz", name + ".txt", name + ".gz"):
            if (d / cand).exists():
                return str(d / cand), name.split(".")[0]
    raise InputError(name, None, "no such graph file or generator spec (real graphs are looked "
                                 "up in $ASAPGRAPH_SHARED_DATASETS or ../shared/datasets)")


def graph_key(source):
    """File-name-safe cache key of a source string: a generator spec as it is; a file by
    its name and a digest of its absolute path, size and modification time (the name alone
    kept the reference of an edited file, or of another directory's file of that name:
    every record was scored against the wrong answer, ``ERROR ABOVE TOLERANCE``)."""
    if not os.path.exists(source):
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", source)
    import hashlib

    st = os.stat(source)
    tag = hashlib.sha1(f"{os.path.abspath(source)}\0{st.st_size}\0{st.st_mtime_ns}"
                       .encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", os.path.basename(source)) + "-" + tag


def power_trajectory(graph, ref, alpha=ALPHA, stop=1e-10, max_iter=2000):
    """L1 errors ``e_k = ||x_k - ref||_1`` of power iteration ``x_{k+1} = G x_k`` from ``1/n``.

    Parameters
    ----------
    graph : asapgraph.graph.Graph
        Unweighted graph (networkx semantics: dangling mass and teleport uniform).
    ref : float64 array
        Reference ranks over the graph's dense ids.

    Returns
    -------
    float64 array
        ``e_1, e_2, ...`` until ``e_k <= stop`` or ``max_iter``.
    """
    import scipy.sparse as sp

    n = graph.n
    at = sp.csr_matrix((np.ones(graph.m), graph.indices, graph.indptr), shape=(n, n))
    deg = np.asarray(graph.out_degree)
    inv = np.zeros(n)
    np.divide(1.0, deg, out=inv, where=deg != 0)
    dmask = deg == 0
    x = np.full(n, 1.0 / n)
    errs = []
    for _ in range(max_iter):
        x = alpha * (at @ (x * inv)) + (alpha * x[dmask].sum() + 1.0 - alpha) / n
        e = float(np.abs(x - ref).sum())
        errs.append(e)
        if e <= stop:
            break
    return np.array(errs)


def ensure_reference(source, results_dir, progress=None):
    """Path of the cached reference ``.npz`` of ``source`` (computed when missing)."""
    from asapgraph.graph.io import load_graph
    from asapgraph.programs.pagerank import pagerank

    d = Path(results_dir) / "ref"
    d.mkdir(parents=True, exist_ok=True)
    path = d / (graph_key(source) + ".npz")
    if path.exists():
        return path
    if progress is not None:
        progress(f"reference for {source} (single-process, tol 1e-13)")
    t = time.perf_counter()
    g = load_graph(source)
    r = pagerank(g, tol=1e-13, max_iter=10000, method="jacobi")
    ids = np.asarray(r.ids, dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    traj = power_trajectory(g, r.ranks)
    if not len(traj) or traj[-1] > 1e-8:
        # two independent solvers must agree before anything is measured against them
        raise RuntimeError(f"reference for {source}: asapgraph.pagerank (tol 1e-13) and scipy "
                           f"power iteration disagree (L1 {traj[-1] if len(traj) else 'n/a'})")
    from asapgraph.graph.io.atomic import atomic_write

    with atomic_write(path) as f:   # (a fixed NAME.tmp.npz was left by a Ctrl-C)
        np.savez(f, ids=ids[order], ranks=r.ranks[order], traj=traj, n=g.n, m=g.m,
                 seconds=time.perf_counter() - t)
    return path


def load_reference(path):
    """``dict(ids, ranks, traj, n, m)`` from a cached reference file."""
    with np.load(path) as z:
        return {k: z[k].copy() if z[k].ndim else z[k].item() for k in z.files}
