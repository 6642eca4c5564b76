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
Scaled unit: the engines solve for ``x / s`` from ``beta / s``, ``s`` the power of two
with ``max |beta| / s`` in [1, 2) (exact; ``result`` multiplies back, or normalises, which
does not depend on ``s``), so no sum of the pending mass over- or underflows for any beta
(ASAP's termination waves overflowed at beta 1e308 on ranks) and every beta runs the same
iterations.  Unnormalised values beyond float64 are refused (``InputError``, collective).

Termination: ``tol`` bounds the L1 error of the unnormalised values in units of beta
(the error over ``max |beta|``; :meth:`KatzProgram.error_units`); ``stats["error_bound"]``
is the absolute bound (the values' unit), ``stats["relative_error_bound"]`` the one
``tol`` bounds.  Before the run,
``setup`` computes a certified upper bound ``B`` of ``lambda_max(A)`` (matrix norms and
Collatz-Wielandt bounds, :func:`asapgraph.options.spectral_radius_bound`, a few edge
passes) and refuses ``alpha >= 1 / B`` (the series may diverge) with the bound in the
message; ``B`` also gives the factor ``F`` with ``L1 error <= F * pending L1 mass``, and
the engines stop at pending mass ``<= tol / F``, the same rule in every mode and on every
rank count.  networkx stops when the L1 change is below ``n * tol``.

References: L. Katz, "A new status index derived from sociometric analysis",
Psychometrika 18, 1953; Maiter (Zhang et al., TPDS 2014); networkx ``katz_centrality``.
"""
from __future__ import annotations

import math

import numpy as np

from asapgraph.errors import InputError
from asapgraph.options import DEFAULTS, check_katz_alpha, check_katz_bound, spectral_radius_bound
from asapgraph.graph.convert import as_engine_graph
from asapgraph.programs._util import unit_l2, vertex_vector
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
    default_tol, default_max_iter = DEFAULTS["katz"]
    #: :meth:`error_units` (set by ``setup``; a subclass whose ``setup`` does not call
    #: ours solves in beta's own unit)
    _scale = _unit = 1.0

    def __init__(self, alpha=0.1, beta=1.0, normalized=True, weighted=False):
        self.alpha = check_katz_alpha(alpha)
        self.beta = beta
        self.normalized = normalized
        self.use_weights = bool(weighted)

    def setup(self, ctx):
        self.spectral_bound, self._factor = _spectral_bound(ctx, self.alpha, self.use_weights)
        check_katz_bound(self.alpha, self.spectral_bound, self._factor,
                         getattr(ctx.graph, "source", None))
        self._scale, self._unit = _beta_units(ctx, self.beta)

    def error_factor(self, ctx):
        """``L1 error <= factor * pending L1 mass`` (set by ``setup``; in the engine's
        unit, see :meth:`error_units`)."""
        return self._factor

    def error_units(self, ctx):
        """``(scale, unit)``: the engines solve for ``x / scale`` (``beta / scale``, the
        power of two ``scale`` that brings ``max |beta|`` into [1, 2): exact, and no sum
        over- or underflows for any beta), and ``tol`` bounds the L1 error in units of
        ``unit = max |beta|`` (see :func:`_beta_units`)."""
        return self._scale, self._unit

    def init_delta(self, ctx):
        beta = np.broadcast_to(np.asarray(self.beta, dtype=np.float64), (ctx.n_local,))
        return np.zeros(ctx.n_local), beta / self._scale

    def coef(self, ctx):
        return np.full(ctx.n_local, self.alpha)

    def result(self, ctx, values):
        if self.normalized:  # scale-invariant (a power of two: the same bits)
            return unit_l2(values, ctx.allreduce)
        out = values * self._scale
        # collective: the same decision and message on every rank
        big = float(ctx.allreduce(float(np.max(np.abs(values), initial=0.0)), "max"))
        if not np.isfinite(big * self._scale):
            raise InputError("asapgraph", None,
                             f"katz overflowed: the unnormalised values exceed the largest "
                             f"float64 ({np.finfo(np.float64).max:.4g}): the largest is "
                             f"{big * (self._scale / self._unit):.6g} x beta "
                             f"(beta {self._unit:g}); use a smaller --beta or --normalized")
        return out


def _beta_units(ctx, beta):
    """``(scale, unit)`` of :meth:`KatzProgram.error_units`: ``unit = max |beta|`` over
    all vertices (collective on ranks) and ``scale`` the power of two with ``unit /
    scale`` in [1, 2); ``(1, 1)`` for a beta of 0 or not finite (nothing to scale)."""
    b = np.abs(np.asarray(beta, dtype=np.float64))
    unit = float(np.max(b, initial=0.0)) if b.size else 0.0
    if ctx.size > 1:
        unit = float(ctx.allreduce(unit, "max"))
    if not (0.0 < unit < math.inf):
        return 1.0, 1.0
    return math.ldexp(1.0, math.frexp(unit)[1] - 1), unit


def _spectral_bound(ctx, alpha, use_weights):
    """:func:`spectral_radius_bound` of the graph's adjacency on 1 or K ranks (collective)."""
    g = ctx.graph
    n = ctx.n
    w = getattr(g, "weights", None)
    w = np.abs(w) if (use_weights and w is not None) else None
    if hasattr(g, "indptr"):   # one process, in-CSR: row v lists the sources of v's in-edges
        import scipy.sparse as sp

        m = int(g.indptr[-1])
        M = sp.csr_matrix((np.ones(m) if w is None else w, g.indices, g.indptr), shape=(n, n))
        matvec = M.dot
        src, wl = g.indices, w
        dst_w = np.diff(g.indptr).astype(np.float64) if w is None else M.sum(axis=1).A1
    else:                # this rank's edges (dense global ids); sums over ranks
        src, dst, wl = g.src, g.dst, w

        def matvec(x):
            y = np.bincount(dst, weights=x[src] if wl is None else x[src] * wl, minlength=n)
            # float64 on every rank: bincount of no edges is int64 whatever the weights,
            # and a rank without edges would reduce a different MPI type
            return ctx.allreduce(y.astype(np.float64, copy=False), "sum")

        dst_w = ctx.allreduce(np.bincount(dst, weights=wl, minlength=n).astype(np.float64), "sum")
    out_w = np.bincount(src, weights=wl, minlength=n).astype(np.float64)
    out_w = ctx.allreduce(out_w, "sum") if ctx.size > 1 else out_w
    return spectral_radius_bound(float(dst_w.max(initial=0.0)), float(out_w.max(initial=0.0)),
                                 matvec, n, alpha)


def katz(graph, alpha=0.1, beta=1.0, tol=1e-10, max_iter=1000, normalized=True, weighted=False,
         mode="bsp", comm=None, progress=None):
    """Katz centrality (networkx semantics; L2-normalised when ``normalized``).

    Parameters
    ----------
    graph : Graph, or anything :func:`run` converts (edge array, networkx, scipy, DataFrame)
    alpha : float
        Attenuation; must be below ``1 / lambda_max`` for convergence.
    beta : float, array over dense ids, or dict ``{original id: value}``
    tol : float
        Bound on the L1 error of the unnormalised values in units of beta (the error
        over ``max |beta|``; see the module doc; networkx stops when the L1 change is
        below ``n * tol``, absolute).  ``stats["error_bound"]``: the absolute bound
        reached; ``stats["relative_error_bound"]``: over ``max |beta|`` (``<= tol``).
    max_iter : int
    normalized : bool
    weighted : bool
        Use edge weights (networkx ``weight="weight"``); default: every edge counts 1.
    mode : {"bsp", "asap"}

    Returns
    -------
    ProgramResult
    """
    graph = as_engine_graph(graph)
    b = vertex_vector(graph, beta, "beta") if not np.isscalar(beta) else float(beta)
    prog = KatzProgram(alpha, b, normalized, weighted)
    return run(prog, graph, mode=mode, max_iter=max_iter, tol=tol, comm=comm,
               progress=progress)
