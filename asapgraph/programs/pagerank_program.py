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
Termination as :func:`asapgraph.programs.pagerank.pagerank`: pending L1 mass ``<= tol`` (absolute,
networkx's ``tol * n``), so the L1 error is at most ``alpha / (1 - alpha) * tol``.

References: Page, Brin, Motwani, Winograd 1999; Zhang, Gao, Gao, Wang, "Maiter", IEEE
TPDS 25(8), 2014; networkx ``pagerank`` (``_pagerank_scipy``).
"""
from __future__ import annotations

import numpy as np

from asapgraph.programs._util import normalized, vertex_vector
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
    #: this exact class (not a subclass) runs on PageRank's own BSP/ASAP solvers on MPI ranks
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
        if not 0 <= alpha < 1:
            raise ValueError(f"alpha must be in [0, 1), got {alpha}")
        self.alpha = float(alpha)
        self.personalization = personalization
        self.dangling = dangling

    def setup(self, ctx):
        out = ctx.out_weight if ctx.weighted else ctx.out_degree
        out = np.asarray(out, dtype=np.float64)
        self.is_dangling = out == 0
        with np.errstate(divide="ignore"):
            self._coef = np.where(self.is_dangling, 0.0, self.alpha / np.where(out == 0, 1.0, out))
        n = ctx.n
        if self.personalization is None:
            self.p = np.full(ctx.n_local, 1.0 / max(n, 1))
        else:
            p = np.asarray(self.personalization, dtype=np.float64)
            self.p = p / ctx.allreduce(float(p.sum()))
        if self.dangling is None:
            self.q = self.p
        else:
            q = np.asarray(self.dangling, dtype=np.float64)
            self.q = q / ctx.allreduce(float(q.sum()))
        # uniform dangling distribution (the default): add a scalar, no vector pass
        self.q_scalar = 1.0 / n if (self.dangling is None and self.personalization is None) else None
        self.dangling_idx = np.flatnonzero(self.is_dangling)

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
    graph : Graph
    alpha : float
    personalization, dangling : dict ``{original id: weight}``, array over dense ids, or None
    tol : float
        Stop when the pending L1 change is ``<= tol`` (absolute, as
        :func:`asapgraph.programs.pagerank.pagerank`; networkx's ``tol`` times ``n``).
    max_iter : int
        Rounds (BSP) or sweeps (ASAP).  The delta form starts from 0, so it needs about
        ``log(tol) / log(alpha)`` rounds (about 140 at the defaults), hence 1000.
    mode : {"bsp", "asap"}
    threads : int, optional
        Cap on the kernels' OpenMP threads (see :func:`asapgraph.programs.run`).

    Returns
    -------
    ProgramResult
        ``values`` are the ranks (sum 1 up to the tolerance).
    """
    p = vertex_vector(graph, personalization, "personalization")
    q = vertex_vector(graph, dangling, "dangling")
    p = None if p is None else normalized(p, "personalization")
    q = None if q is None else normalized(q, "dangling")
    prog = PageRankProgram(alpha, p, q)
    return run(prog, graph, mode=mode, max_iter=max_iter, tol=tol, comm=comm,
               progress=progress, threads=threads)
