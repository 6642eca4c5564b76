"""Katz centrality as a vertex program (Maiter delta form).

Rationale
---------
Algorithm: ``x = alpha A^T x + beta`` (networkx ``katz_centrality``: ``x_v = alpha *
sum_{u -> v} w_uv x_u + beta_v``), then, when ``normalized``, ``x / ||x||_2``.  Parallel
edges add up (multigraph semantics of :class:`asapgraph.Graph`; compare with networkx on
a DiGraph whose edge weight is the multiplicity).  Converges when ``alpha`` is below
``1 / lambda_max(A)``.

Variant: delta-accumulative: values 0, deltas ``beta``; a vertex sends
``alpha * delta_u * w_uv`` along its out-edges (coef ``alpha``, edge op ``mul``).  BSP is
the Jacobi power series, ASAP the Gauss-Seidel order; both reach the same fixed point.
Termination: pending L1 mass ``<= tol`` (absolute; networkx's rule is ``n * tol``).

References: L. Katz, "A new status index derived from sociometric analysis",
Psychometrika 18, 1953; Maiter (Zhang et al., TPDS 2014); networkx ``katz_centrality``.
"""
from __future__ import annotations

import numpy as np

from asapgraph.programs._util import vertex_vector
from asapgraph.engine.program import VertexProgram
from asapgraph.engine.single import run

__all__ = ["KatzProgram", "katz"]


class KatzProgram(VertexProgram):
    """Katz centrality (unnormalised values unless ``normalized``)."""

    name = "katz"
    value_dtype = np.float64
    combiner = "sum"
    direction = "out"
    edge_op = "mul"
    accumulative = True
    default_max_iter = 1000

    def __init__(self, alpha=0.1, beta=1.0, normalized=True, weighted=False):
        self.alpha = float(alpha)
        self.beta = beta
        self.normalized = normalized
        self.use_weights = bool(weighted)

    def init_delta(self, ctx):
        beta = np.broadcast_to(np.asarray(self.beta, dtype=np.float64), (ctx.n_local,)).copy()
        return np.zeros(ctx.n_local), beta

    def coef(self, ctx):
        return np.full(ctx.n_local, self.alpha)

    def result(self, ctx, values):
        if not self.normalized:
            return values
        norm = np.sqrt(ctx.allreduce(float(np.dot(values, values))))
        return values / norm if norm > 0 else values


def katz(graph, alpha=0.1, beta=1.0, tol=1e-10, max_iter=1000, normalized=True, weighted=False,
         mode="bsp", comm=None, progress=None):
    """Katz centrality (networkx semantics; L2-normalised when ``normalized``).

    Parameters
    ----------
    graph : Graph
    alpha : float
        Attenuation; must be below ``1 / lambda_max`` for convergence.
    beta : float, array over dense ids, or dict ``{original id: value}``
    tol : float
        Stop when the pending L1 change (of the unnormalised values) is ``<= tol``
        (absolute; networkx stops at ``n * tol``).
    max_iter : int
    normalized : bool
    weighted : bool
        Use edge weights (networkx ``weight="weight"``); default: every edge counts 1.
    mode : {"bsp", "asap"}

    Returns
    -------
    ProgramResult
    """
    b = vertex_vector(graph, beta, "beta") if not np.isscalar(beta) else float(beta)
    prog = KatzProgram(alpha, b, normalized, weighted)
    return run(prog, graph, mode=mode, max_iter=max_iter, tol=tol, comm=comm,
               progress=progress)
