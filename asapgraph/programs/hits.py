"""HITS hubs and authorities as a vertex program (alternating power iteration).

Rationale
---------
Algorithm: Kleinberg's HITS: authorities ``a = A^T h``, hubs ``h = A a``, each normalised
to sum 1 (networkx ``hits`` semantics and normalisation; networkx computes the leading
singular vectors with ``svds``, which this power iteration converges to when the top
singular value is simple).  Edge weights are used (networkx's adjacency matrix uses the
``weight`` attribute; parallel edges add up).

Variant: value form, two supersteps per iteration: even supersteps send hub scores along
the edges (``direction = "out"``) into authorities, odd supersteps send authority scores
against the edges (``"in"``) into hubs; ``direction_at`` picks the direction.  Sums for the
normalisation are global reductions (``ctx.allreduce``).  Not accumulative (the
normalisation is not a linear, order-free combine), so BSP only.

Invariant: after each odd superstep ``sum(h) = 1``; the residual is the L1 change of ``h``.

References: J. Kleinberg, "Authoritative sources in a hyperlinked environment",
J. ACM 46(5), 1999; networkx ``hits``.
"""
from __future__ import annotations

import numpy as np

from asapgraph.errors import InputError
from asapgraph.options import DEFAULTS, check_max_iter, check_tol
from asapgraph.engine.program import VertexProgram
from asapgraph.engine.single import run
from asapgraph.programs._util import check_nonnegative_weights

__all__ = ["HITSProgram", "hits"]


class HITSProgram(VertexProgram):
    """HITS; result ``{"hub": h, "authority": a}``, each summing to 1."""

    name = "hits"
    value_dtype = np.float64
    combiner = "sum"
    direction = "out"
    edge_op = "mul"
    default_tol = DEFAULTS["hits"][0]
    default_max_iter = 2 * DEFAULTS["hits"][1]   # supersteps: two per HITS iteration
    #: supersteps per HITS iteration: ``max_iter`` of :func:`hits` and of the ``hits``
    #: command counts HITS iterations on one process and on K ranks alike
    supersteps_per_iteration = 2

    def direction_at(self, ctx):
        return "out" if ctx.superstep % 2 == 0 else "in"

    def setup(self, ctx):
        # a negative weight: the scores' sums could be negative or 0 and the vectors were
        # left unnormalised (authorities summing to -2); refused as sssp refuses them,
        # naming the line of the first (networkx's backend declines such a graph too)
        w = getattr(ctx.graph, "weights", None)
        # collective first (every rank, before a rank may raise): weights at all, the largest
        has, top = ctx.allreduce(np.array([float(w is not None and w.size > 0),
                                           float(w.max()) if w is not None and w.size else
                                           -np.inf]), "max")
        check_nonnegative_weights(ctx.graph, "hits", ctx.allreduce)
        if has and not top > 0:  # every weight 0: A = 0, the scores are undefined (they
            # came out all 0, not summing to 1; networkx's svds fails on it)
            raise InputError(getattr(ctx.graph, "source", None) or "<graph>", None,
                             "hits: every edge weight is 0 (the hub and authority scores "
                             "are undefined)")

    def init(self, ctx):
        return {"hub": np.full(ctx.n_local, 1.0 / max(ctx.n, 1)), "auth": np.zeros(ctx.n_local)}

    def scatter(self, ctx, state):
        return state["hub"] if ctx.superstep % 2 == 0 else state["auth"]

    @staticmethod
    def _normalise(ctx, x):
        with np.errstate(over="ignore"):
            s = ctx.allreduce(float(x.sum()))
        if not np.isfinite(s):  # huge weights: 1e308 + 1e308 (the same decision everywhere)
            mx = ctx.allreduce(float(x.max(initial=0.0)), "max")
            if not np.isfinite(mx):
                from asapgraph.errors import InputError

                raise InputError(getattr(ctx.graph, "source", None) or "<graph>", None,
                                 "hits: a score exceeds the largest double (the edge weights "
                                 "are too large); scale the weights down")
            x = x / mx
            s = ctx.allreduce(float(x.sum()))
        return x / s if s > 0 else x

    def apply(self, ctx, state, combined, has_msg):
        if ctx.superstep % 2 == 0:
            return {"hub": state["hub"], "auth": self._normalise(ctx, combined)}
        return {"hub": self._normalise(ctx, combined), "auth": state["auth"]}

    def residual(self, ctx, old, new):
        if ctx.superstep % 2 == 0:
            return None
        return float(np.abs(new["hub"] - old["hub"]).sum())

    def result(self, ctx, state):
        return {"hub": state["hub"], "authority": state["auth"]}


def hits_iterations(res):
    """``res`` (a run of :class:`HITSProgram`) with ``iterations`` in HITS iterations."""
    res.iterations = (res.iterations + 1) // HITSProgram.supersteps_per_iteration
    return res


def hits(graph, tol=DEFAULTS["hits"][0], max_iter=DEFAULTS["hits"][1], comm=None, progress=None):
    """HITS hub and authority scores (networkx semantics, each vector sums to 1).

    Parameters
    ----------
    tol : float
        Stop when the L1 change of the hub vector is below ``tol``.
    max_iter : int
        HITS iterations (each is two supersteps).

    Returns
    -------
    ProgramResult
        ``values = {"hub": ..., "authority": ...}``; ``iterations`` in HITS iterations.
    """
    k = HITSProgram.supersteps_per_iteration
    res = run(HITSProgram(), graph, mode="bsp", max_iter=k * check_max_iter(max_iter),
              tol=check_tol(tol), comm=comm, progress=progress)
    return hits_iterations(res)
