"""PageRank and personalised PageRank written as a vertex program (Maiter delta form).

Rationale
---------
Algorithm: PageRank with networkx semantics (``networkx.pagerank``): ranks ``x`` solve
``x = (1 - alpha) p + alpha P^T x + alpha (sum of x over dangling vertices) q`` where
``P`` is the out-weight-normalised adjacency (parallel edges add up), ``p`` the
(normalised) personalisation vector (uniform by default) and ``q`` the dangling
distribution (``p`` by default).

Variant: delta-accumulative (Maiter, Zhang et al. TPDS 2014): values start at 0 and the
pending deltas at ``(1 - alpha) p``; processing a vertex adds its delta to its rank and
sends ``alpha * delta_u * w_uv / out_weight_u`` along its out-edges (``coef`` times edge
op ``mul``).  Dangling mass sent in a round is a global aggregate (``dangling``), spread
by ``post_delta`` as ``alpha * D * q``.  The same program runs in BSP (Jacobi: power
series from 0) and ASAP (Gauss-Seidel sweeps).

Invariant: ``values + deltas`` after each round equals the partial sum of the power
series; the pending L1 mass is exactly the change the next Jacobi round would make.
Termination as :func:`asapgraph.programs.pagerank.pagerank`: ``tol`` bounds the L1 error; the
engines stop when ``alpha / (1 - alpha)`` times the pending L1 mass is ``<= tol``.

References: Page, Brin, Motwani, Winograd 1999; Zhang, Gao, Gao, Wang, "Maiter", IEEE
TPDS 25(8), 2014; networkx ``pagerank`` (``_pagerank_scipy``).
"""
from __future__ import annotations

import numpy as np

from asapgraph.options import check_alpha, negative_weights_error, pagerank_error_bound
from asapgraph.errors import InputError
from asapgraph.graph.convert import as_engine_graph
from asapgraph.programs._util import _TINY_SUM, normalized, safe_distribution, vertex_vector
from asapgraph.engine.program import VertexProgram
from asapgraph.engine.single import run

__all__ = ["PageRankProgram", "pagerank_program"]


class PageRankProgram(VertexProgram):
    """PageRank as an accumulative vertex program (see module docstring).

    Parameters
    ----------
    alpha : float
        Damping factor.
    personalization, dangling : array over dense ids or None
        Non-negative vectors (normalised here); None = uniform / = personalisation.
    """

    name = "pagerank"
    #: this class (and a subclass that redefines none of it) runs on PageRank's own solvers:
    #: BSP and ASAP on MPI ranks, BSP on one process (one process's ASAP and exact
    #: ``steps`` run the delta form below)
    engine_solver = "pagerank"
    value_dtype = np.float64
    combiner = "sum"
    direction = "out"
    edge_op = "mul"
    accumulative = True
    aggregators = {"dangling": "sum"}
    default_max_iter = 1000
    default_tol = 1e-10

    def __init__(self, alpha=0.85, personalization=None, dangling=None):
        self.alpha = check_alpha(alpha)
        self.personalization = personalization
        self.dangling = dangling

    def error_factor(self, ctx):
        """``L1 error <= alpha / (1 - alpha) * pending L1 mass`` (the next Jacobi change)."""
        return pagerank_error_bound(self.alpha, 1.0)

    def setup(self, ctx):
        w = getattr(ctx.graph, "weights", None)
        if ctx.weighted and ctx.allreduce(int(w is not None and w.size > 0 and float(w.min()) < 0),
                                          "max"):
            from asapgraph.graph.convert import in_memory, negative_weight_at

            # a graph given in memory, on one process: its edge named (ranks: as before)
            src = getattr(ctx.graph, "source", None)
            one = ctx.comm is None or ctx.size == 1
            raise negative_weights_error(src, edge=negative_weight_at(None, ctx.graph)
                                         if one and in_memory(src) else None)
        out = ctx.out_weight if ctx.weighted else ctx.out_degree
        out = np.asarray(out, dtype=np.float64)
        if ctx.weighted and ctx.allreduce(int(np.any(~np.isfinite(out) | ((out > 0) & (
                out < _TINY_SUM)))), "max"):
            # w / out-weight needs the weights of that vertex rescaled (asapgraph.pagerank
            # and the CLI do it); this per-vertex coefficient form cannot
            raise InputError(getattr(ctx.graph, "source", None) or "<graph>", None,
                             "the edge weights of a vertex sum past the largest double (or "
                             "so little that 1/sum overflows): scale the weights, or use "
                             "asapgraph.pagerank, which normalises them exactly")
        self.is_dangling = out == 0
        with np.errstate(divide="ignore"):
            self._coef = np.where(self.is_dangling, 0.0, self.alpha / np.where(out == 0, 1.0, out))
        n = ctx.n
        if self.personalization is None:
            self.p = np.full(ctx.n_local, 1.0 / max(n, 1))
        else:
            self.p = safe_distribution(self.personalization, ctx.allreduce)
        if self.dangling is None:
            self.q = self.p
        else:
            self.q = safe_distribution(self.dangling, ctx.allreduce)
        # uniform dangling distribution (the default): add a scalar, no vector pass
        self.q_scalar = 1.0 / n if (self.dangling is None and self.personalization is None) else None
        self.dangling_idx = np.flatnonzero(self.is_dangling)

    def single_process_solve(self, graph, tol, max_iter, weighted, threads=None,
                             progress=None):
        """BSP on one process (called by :func:`asapgraph.engine.single.run` for a plain
        program, after :meth:`setup`): PageRank's Jacobi solver
        (:func:`asapgraph.programs.pagerank.pagerank`) from the uniform vector, the
        iterates MPI ranks compute (:func:`asapgraph.engine.bsp.run_bsp`).  Returns its
        :class:`~asapgraph.programs.pagerank.PageRankResult`."""
        from asapgraph.programs.pagerank import pagerank

        custom = self.personalization is not None or self.dangling is not None
        return pagerank(graph, alpha=self.alpha, personalization=self.p if custom else None,
                        dangling=self.q if custom else None, tol=tol, max_iter=max_iter,
                        weighted=weighted, threads=threads, method="jacobi",
                        progress=progress)

    def init_delta(self, ctx):
        return np.zeros(ctx.n_local), (1.0 - self.alpha) * self.p

    def coef(self, ctx):
        return self._coef

    def aggregate(self, ctx, sent):
        return {"dangling": float(sent[self.dangling_idx].sum())}

    def post_delta(self, ctx, deltas):
        d = ctx.aggregates.get("dangling", 0.0)
        if d:
            if self.q_scalar is not None:
                deltas += self.alpha * d * self.q_scalar
            else:
                deltas += (self.alpha * d) * self.q
        return deltas


def pagerank_program(graph, alpha=0.85, personalization=None, dangling=None, tol=1e-10,
                     max_iter=1000, mode="bsp", comm=None, progress=None, threads=None):
    """PageRank on the public program API (networkx semantics).

    Parameters
    ----------
    graph : Graph, or anything :func:`run` converts (edge array, networkx, scipy, DataFrame)
    alpha : float
    personalization, dangling : dict ``{original id: weight}``, array over dense ids, or None
    tol : float
        Bound on the L1 error, as :func:`asapgraph.programs.pagerank.pagerank`.
    max_iter : int
        Supersteps (BSP) or sweeps (ASAP).  BSP runs PageRank's Jacobi solver from the
        uniform vector, on one process as on ranks, so ``max_iter=k`` gives the same k-th
        iterate everywhere; the delta form (one process's ASAP, and exact ``steps``)
        starts from 0 and needs about ``log(tol) / log(alpha)`` rounds (about 140 at the
        defaults), hence 1000.
    mode : {"bsp", "asap"}
    threads : int, optional
        Cap on the kernels' OpenMP threads (see :func:`asapgraph.programs.run`).

    Returns
    -------
    ProgramResult
        ``values`` are the ranks (sum 1 up to the tolerance).
    """
    graph = as_engine_graph(graph)
    p = vertex_vector(graph, personalization, "personalization")
    q = vertex_vector(graph, dangling, "dangling")
    p = None if p is None else normalized(p, "personalization")
    q = None if q is None else normalized(q, "dangling")
    prog = PageRankProgram(alpha, p, q)
    return run(prog, graph, mode=mode, max_iter=max_iter, tol=tol, comm=comm,
               progress=progress, threads=threads)
