"""User vertex programs written as a user would (docs/tutorial.md style), outside the package.

Used by ``benchmarks/bench_programs.py`` (user program vs built-in rows) and by the MPI
tests (``tests/mpi/test_sum_programs.py``), which load this file by path.
"""
import numpy as np

from asapgraph.programs import VertexProgram


class PersonalizedPageRank(VertexProgram):
    """Accumulative personalised PageRank from seed vertices (original ids).

    ``x = (1 - alpha) s + alpha P^T x`` with ``s`` uniform over the seeds and ``P`` the
    out-degree-normalised adjacency; a walk that reaches a dangling vertex stops there
    (its mass is absorbed: no global term, so no ``aggregate``/``post_delta``).
    """

    name = "ppr"
    value_dtype = np.float64
    combiner = "sum"           # messages into a vertex add up
    direction = "out"          # along the edges u -> v
    edge_op = "copy"           # message = coef_u * delta_u
    use_weights = False
    accumulative = True        # linear edge function + sum: BSP and ASAP
    default_max_iter = 1000
    default_tol = 1e-6

    def __init__(self, seeds=(0,), alpha=0.85):
        self.seeds = np.asarray(seeds, dtype=np.int64)
        self.alpha = float(alpha)

    def init_delta(self, ctx):
        hit = np.isin(ctx.ids, self.seeds).astype(np.float64)
        nseeds = ctx.allreduce(float(hit.sum()))
        return np.zeros(ctx.n_local), (1.0 - self.alpha) * hit / max(nseeds, 1.0)

    def coef(self, ctx):
        deg = np.asarray(ctx.out_degree, dtype=np.float64)
        return np.where(deg > 0, self.alpha / np.maximum(deg, 1.0), 0.0)


class UniformPageRank(PersonalizedPageRank):
    """The same program with the teleport spread over every vertex (``s = 1/n``)."""

    name = "upr"

    def __init__(self, alpha=0.85):
        super().__init__((), alpha)

    def init_delta(self, ctx):
        return np.zeros(ctx.n_local), np.full(ctx.n_local, (1.0 - self.alpha) / ctx.n)
