"""Single-source shortest paths and BFS levels as vertex programs (min-plus propagation).

Rationale
---------
Algorithm: Bellman-Ford with a frontier (label-correcting): ``dist(source) = 0``, every
vertex whose distance dropped offers ``dist(u) + w_uv`` to its out-neighbours and each
keeps the minimum.  Weights must be non-negative (checked: a negative weight raises
``InputError``); unreachable vertices get ``inf``.  Of parallel edges the lightest counts
(as in networkx's and igraph's multigraph shortest paths).  BFS is the same program with unit
weights over int64 levels (edge op ``add_one``), unreachable = ``-1``.

Variant: min-accumulative.  BSP = synchronous Bellman-Ford over the frontier (Ligra's
``BellmanFord.C``; sparse push with atomic min when the frontier is small, dense pull
otherwise, with a bottom-up early exit); BSP BFS = level-synchronous direction-optimising
BFS (the default: on low-diameter graphs the bottom-up supersteps skip most edges).
ASAP = asynchronous label-correcting worklist: on one process a binary
heap ordered by tentative distance (Dijkstra's order with lazy deletion, so each vertex is
settled once for non-negative weights) for SSSP and a FIFO queue (BFS order) for BFS, run
to quiescence in one kernel call; distributed, per-sweep worklists.  Both modes reach the
unique least fixed point (the shortest distances).

Invariant: ``dist`` never increases; at the fixed point ``dist(v) <= dist(u) + w_uv`` on
every edge (GAPBS's SSSP verifier).

References: Bellman 1958; Ford 1956; Shun & Blelloch, Ligra PPoPP 2013; Beamer et al.,
GAPBS 2015; Maiter (Zhang et al., TPDS 2014) for the delta/async formulation.
"""
from __future__ import annotations

import numpy as np

from asapgraph.errors import InputError
from asapgraph.graph.convert import as_engine_graph
from asapgraph.programs._util import check_nonnegative_weights, dense_id
from asapgraph.engine.program import VertexProgram
from asapgraph.engine.single import run

__all__ = ["SSSPProgram", "BFSProgram", "sssp", "bfs"]

_INT_INF = np.iinfo(np.int64).max


class SSSPProgram(VertexProgram):
    """Shortest-path distances from dense vertex ``source`` (float64; inf unreachable)."""

    name = "distance"
    value_dtype = np.float64
    combiner = "min"
    direction = "out"
    edge_op = "add"
    accumulative = True
    default_max_iter = 1 << 30
    reads_weights = True   # (check_finite_weights: the distances add them)

    def __init__(self, source):
        self.source = int(source)

    def setup(self, ctx):
        check_nonnegative_weights(ctx.graph, "sssp", ctx.allreduce)

    def init(self, ctx):
        d = np.full(ctx.n_local, np.inf)
        d[ctx.vertices == self.source] = 0.0
        return d

    def result(self, ctx, values):
        """The distances; refused (InputError, on every rank alike) when one of them
        exceeds the largest double: ``d_u + w_uv`` overflowed to inf, which would read as
        "unreachable"."""
        _check_no_overflow(ctx, values)
        return values


def _check_no_overflow(ctx, values):
    """Raise when a vertex left at inf was offered ``d_u + w_uv`` = inf by an overflow
    (collective: the same decision on every rank).  Skipped unless the largest finite
    distance plus the largest weight overflows, the only case where one can."""
    g = ctx.graph
    w = getattr(g, "weights", None)
    values = np.asarray(values, dtype=np.float64)
    fin = values[np.isfinite(values)]
    top = float(fin.max()) if fin.size else 0.0
    wmax = float(np.max(w)) if w is not None and len(w) else 0.0
    if not ctx.allreduce(int(top + wmax == np.inf), "max"):
        return
    over = np.empty(0, np.int64)  # dense ids offered an overflowing distance
    if w is not None and len(w):
        if hasattr(g, "indptr"):  # one process: the in-CSR graph
            src = np.asarray(g.indices)
            dst = np.repeat(np.arange(g.n, dtype=np.int64), np.diff(np.asarray(g.indptr)))
            du = values[src]
        else:  # a rank: its edges, sources owned
            src, dst = np.asarray(g.src), np.asarray(g.dst)
            du = values[np.searchsorted(ctx.vertices, src)]
        with np.errstate(over="ignore"):
            cand = du + np.asarray(w, dtype=np.float64)
        over = np.unique(dst[np.isfinite(du) & np.isinf(cand)]).astype(np.int64)
    if ctx.size > 1:
        over = np.concatenate([np.asarray(o, np.int64) for o in ctx.comm.allgather(over)])
    lost = np.isin(np.asarray(ctx.vertices, dtype=np.int64), over) & np.isinf(values)
    if ctx.allreduce(int(lost.any()), "max"):
        raise InputError(getattr(g, "source", None) or "<graph>", None,
                         "sssp: a shortest-path distance exceeds the largest double "
                         "(1.8e308); scale the weights down")


class BFSProgram(VertexProgram):
    """BFS levels from dense vertex ``source`` (int64; -1 unreachable)."""

    name = "level"
    value_dtype = np.int64
    combiner = "min"
    direction = "out"
    edge_op = "add_one"
    use_weights = False
    accumulative = True
    default_max_iter = 1 << 30

    def __init__(self, source):
        self.source = int(source)

    def init(self, ctx):
        d = np.full(ctx.n_local, _INT_INF, dtype=np.int64)
        d[ctx.vertices == self.source] = 0
        return d

    def result(self, ctx, values):
        return np.where(values == _INT_INF, -1, values)


def sssp(graph, source, mode="bsp", comm=None, progress=None, threads=None):
    """Shortest-path distances from the vertex with original id ``source``.

    Unweighted graphs use weight 1 per edge.  Raises ``InputError`` for a negative
    weight or a source that is not in the graph.  ``mode="bsp"`` (default): synchronous
    Bellman-Ford supersteps, direction-optimised (fastest on low-diameter graphs such as
    R-MAT); ``"asap"``: asynchronous label-correcting in priority order (Dijkstra's order;
    faster on long-path graphs such as web crawls).  Same distances either way.
    ``threads`` caps the OpenMP threads (see :func:`asapgraph.programs.run`).

    Returns
    -------
    ProgramResult
        ``values``: float64 distances, ``inf`` for unreachable vertices.
    """
    graph = as_engine_graph(graph)
    return run(SSSPProgram(dense_id(graph, source)), graph, mode=mode, comm=comm, progress=progress,
               threads=threads)


def bfs(graph, source, mode="bsp", comm=None, progress=None, threads=None):
    """BFS levels (hops, ignoring weights) from the vertex with original id ``source``.

    ``mode="bsp"`` (default): level-synchronous, direction-optimising (bottom-up
    supersteps skip visited vertices and stop at the first frontier parent); ``"asap"``:
    FIFO worklist (top-down only).  Same levels either way.

    Returns
    -------
    ProgramResult
        ``values``: int64 levels, ``-1`` for unreachable vertices.
    """
    graph = as_engine_graph(graph)
    return run(BFSProgram(dense_id(graph, source)), graph, mode=mode, comm=comm, progress=progress,
               threads=threads)
