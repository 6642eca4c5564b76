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

from asapgraph.engine.program import VertexProgram
from asapgraph.engine.single import run

__all__ = ["HITSProgram", "hits"]


class HITSProgram(VertexProgram):
    """HITS; result ``{"hub": h, "authority": a}``, each summing to 1."""

    name = "hits"
    value_dtype = np.float64
    combiner = "sum"
    direction = "out"
    edge_op = "mul"
    default_tol = 1e-8
    default_max_iter = 200   # supersteps: two per HITS iteration

    def direction_at(self, ctx):
        return "out" if ctx.superstep % 2 == 0 else "in"

    def init(self, ctx):
        return {"hub": np.full(ctx.n_local, 1.0 / max(ctx.n, 1)), "auth": np.zeros(ctx.n_local)}

    def scatter(self, ctx, state):
        return state["hub"] if ctx.superstep % 2 == 0 else state["auth"]

    @staticmethod
    def _normalise(ctx, x):
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


def hits(graph, tol=1e-8, max_iter=100, comm=None, progress=None):
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
        ``values = {"hub": ..., "authority": ...}``.
    """
    return run(HITSProgram(), graph, mode="bsp", max_iter=2 * max_iter, tol=tol, comm=comm,
               progress=progress)
