"""Label propagation communities (synchronous BSP, deterministic ties).

Rationale
---------
Algorithm: Raghavan, Albert, Kumara's label propagation, synchronous variant: every
vertex starts with its original id as label; in each superstep every vertex takes the
most frequent label among its neighbours in the undirected view (each edge ``u -> v``
gives ``v`` the label of ``u`` and ``u`` the label of ``v``; parallel edges count
multiply, a self-loop counts twice), ties broken by the **smallest** label.  Vertices with
no neighbours keep their label.  Stops when no label changes or at ``max_iter``
(synchronous LPA may oscillate, e.g. on bipartite pieces; then ``converged`` is False).

Variant: value form with the ``collect`` combiner: the engine hands ``apply`` every
label received, grouped per vertex, and the mode is computed in the Cython kernel
``segment_mode`` (sort each group, longest run, smallest on ties).  Not accumulative (the
mode is not a monotone or linear combine), so BSP only.

Invariant: labels are always original ids of vertices of the same weakly connected
component; the computation is deterministic.

References: U. N. Raghavan, R. Albert, S. Kumara, "Near linear time algorithm to detect
community structures in large-scale networks", Phys. Rev. E 76, 2007; Cordasco &
Gargano (synchronous LPA oscillation), 2010.
"""
from __future__ import annotations

import numpy as np

from asapgraph.kernels import _programs as K
from asapgraph.engine.program import VertexProgram
from asapgraph.engine.single import run

__all__ = ["LabelPropProgram", "labelprop"]


class LabelPropProgram(VertexProgram):
    """Synchronous label propagation (see module docstring)."""

    name = "label"
    value_dtype = np.int64
    combiner = "collect"
    direction = "both"
    edge_op = "copy"
    use_weights = False
    default_tol = 0.0
    default_max_iter = 100

    def init(self, ctx):
        return np.asarray(ctx.ids, dtype=np.int64).copy()

    def apply(self, ctx, labels, combined, has_msg):
        indptr, msgs = combined
        msgs = np.ascontiguousarray(msgs, dtype=np.int64)
        new = labels.copy()
        has = np.zeros(ctx.n_local, dtype=np.uint8)
        K.segment_mode(np.ascontiguousarray(indptr, dtype=np.int64), msgs, new, has)
        return new

    def residual(self, ctx, old, new):
        return float(np.count_nonzero(old != new))


def labelprop(graph, max_iter=100, comm=None, progress=None):
    """Label propagation communities (BSP).

    Returns
    -------
    ProgramResult
        ``values``: the community label (an original vertex id) of every vertex;
        ``converged`` is False when labels still changed at ``max_iter``.
    """
    return run(LabelPropProgram(), graph, mode="bsp", max_iter=max_iter, tol=0.0, comm=comm,
               progress=progress)
