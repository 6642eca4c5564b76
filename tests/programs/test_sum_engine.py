"""Accumulative sum programs compiled to the tuned engine on one process (no MPI).

:mod:`asapgraph.engine.sum_program` runs them on PageRank's kernel with the program's
coefficient vector folded in; checked against a direct sparse solve (scipy), including
weighted ``mul`` programs, dangling vertices, self-loops and duplicate edges; programs with
hooks the engine cannot express keep running on the older engine.
"""
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

import asapgraph.programs as P
from asapgraph import Graph
from asapgraph.engine.sum_program import reason_not_compiled

REPO = Path(__file__).resolve().parents[2]


def _user_programs():
    spec = importlib.util.spec_from_file_location("user_programs", REPO / "benchmarks" / "user_programs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class WeightedDecay(P.VertexProgram):
    """x = d0 + A_w^T (c x): per-vertex coefficients and edge weights (edge_op mul)."""

    name = "decay"
    combiner = "sum"
    edge_op = "mul"
    use_weights = True
    accumulative = True

    def init_delta(self, ctx):
        return np.ones(ctx.n_local) * 0.5, (ctx.ids % 3 == 0).astype(np.float64)

    def coef(self, ctx):
        out = np.asarray(ctx.out_weight, dtype=np.float64)
        return np.where(out > 0, 0.7 / np.maximum(out, 1e-300), 0.0)


def _graph(rng, weighted):
    n, m = 400, 1500
    s = rng.integers(0, n, m)
    d = rng.integers(0, n, m)
    s = np.where(s % 5 == 0, (s + 1) % n, s)          # dangling vertices
    s = np.concatenate([s, np.arange(0, n, 13), s[:80]])  # self-loops, duplicates
    d = np.concatenate([d, np.arange(0, n, 13), d[:80]])
    w = rng.uniform(0.5, 3.0, len(s)) if weighted else None
    return Graph.from_edges(s, d, n=n, weights=w)


def _direct(prog, g):
    ctx = P.Context(g)
    prog.setup(ctx)
    v0, d0 = prog.init_delta(ctx)
    c = prog.coef(ctx)
    c = np.ones(g.n) if c is None else np.asarray(c)
    s, d, w = g.edges()
    w = np.ones(len(s)) if (w is None or prog.edge_op == "copy" or not prog.use_weights) else w
    A = sp.csr_matrix((c[s] * w, (s, d)), shape=(g.n, g.n))
    return prog.result(ctx, v0 + spsolve(sp.identity(g.n, format="csc") - A.T.tocsc(), d0))


@pytest.mark.parametrize("mode", ["bsp", "asap"])
@pytest.mark.parametrize("which", ["ppr", "katz", "weighted"])
def test_compiled_programs_match_direct_solve(which, mode, rng):
    g = _graph(rng, weighted=which == "weighted")
    if which == "ppr":
        mk = lambda: _user_programs().PersonalizedPageRank(seeds=[1, 2, 50])  # noqa: E731
    elif which == "katz":
        mk = lambda: P.KatzProgram(alpha=0.05)  # noqa: E731
    else:
        mk = WeightedDecay
    r = P.run(mk(), g, mode=mode, tol=1e-13, max_iter=5000)
    assert r.stats["engine"] == "tuned-sum"
    assert r.converged
    if which == "katz":  # error_factor: tol bounds the L1 error of the values
        assert r.stats["error_bound"] <= 1e-13
    else:  # no error_factor: tol bounds the pending delta mass (the residual), no L1 bound
        assert r.stats["error_bound"] is None and r.stats["residual"] <= 1e-13
    exact = _direct(mk(), g)
    assert np.abs(exact).sum() > 0.1
    assert np.abs(r.values - exact).sum() <= 1e-10


def test_extrapolation_saves_rounds_same_answer(monkeypatch):
    from asapgraph.graph.io import load_graph

    g = load_graph("rmat:12")
    ppr = _user_programs().PersonalizedPageRank
    on = P.run(ppr(seeds=[0, 5]), g, tol=1e-10, max_iter=1000)
    monkeypatch.setenv("ASAPGRAPH_EXTRAPOLATE", "0")
    off = P.run(ppr(seeds=[0, 5]), g, tol=1e-10, max_iter=1000)
    assert on.converged and off.converged
    assert on.stats["extrapolations"] >= 1 and off.stats["extrapolations"] == 0
    assert on.iterations * 3 <= off.iterations, (on.iterations, off.iterations)
    assert np.abs(on.values - off.values).sum() <= 1e-9


def test_hooks_keep_the_older_engine(rng):
    g = _graph(rng, weighted=False)
    pr = P.PageRankProgram()
    assert reason_not_compiled(pr) == "it defines aggregate()"
    from asapgraph.programs.pagerank import pagerank

    ref = pagerank(g, tol=1e-14, max_iter=10000)

    class Hooked(P.PageRankProgram):
        def post_delta(self, ctx, deltas):
            return super().post_delta(ctx, deltas)

    # ASAP on one process, and a hook of its own in BSP: the program's delta form (a plain
    # PageRankProgram in BSP runs on PageRank's solver, as on ranks: audit 22)
    for prog, mode in ((pr, "asap"), (Hooked(), "bsp")):
        r = P.run(prog, g, mode=mode, tol=1e-12, max_iter=1000)
        assert r.stats.get("engine") != "tuned-sum"
        assert np.abs(r.values - np.asarray(getattr(ref, "ranks", ref))).sum() <= 1e-8
    assert reason_not_compiled(P.SSSPProgram(0)) == "not an accumulative sum program"


def test_wrong_shape_names_the_callback(rng):
    class Bad(WeightedDecay):
        def coef(self, ctx):
            return np.ones(3)

    with pytest.raises(ValueError, match=r"Bad\.coef\(\) returned coefficients with (more|fewer) values than expected"):
        P.run(Bad(), _graph(rng, weighted=True))


@pytest.mark.parametrize("direction", ["in", "both"])
def test_other_directions(direction, rng):
    """Messages against the edges (``in``) or both ways (``both``: a self-loop counts twice)."""
    g = _graph(rng, weighted=False)

    class Spread(P.VertexProgram):
        name = "spread"
        combiner = "sum"
        edge_op = "copy"
        accumulative = True

        def init_delta(self, ctx):
            return np.zeros(ctx.n_local), (ctx.ids % 4 == 1).astype(np.float64)

        def coef(self, ctx):
            return np.full(ctx.n_local, 0.3 / 40.0)

    Spread.direction = direction
    r = P.run(Spread(), g, tol=1e-14, max_iter=5000)
    assert r.stats["engine"] == "tuned-sum" and r.converged
    s, d, _ = g.edges()
    if direction == "in":
        s, d = d, s
    else:
        s, d = np.concatenate([s, d]), np.concatenate([d, s])
    A = sp.csr_matrix((np.full(len(s), 0.3 / 40.0), (s, d)), shape=(g.n, g.n))
    d0 = (g.original_ids() % 4 == 1).astype(np.float64)
    exact = spsolve(sp.identity(g.n, format="csc") - A.T.tocsc(), d0)
    assert np.abs(r.values - exact).sum() <= 1e-10


def test_pagerank_subclasses_without_hooks_of_their_own_keep_the_solvers():
    """A subclass of the built-in PageRank program that redefines nothing of it (a name, a
    docstring, an ``__init__``) runs on PageRank's solvers on ranks; one hook of its own
    (even one that calls ``super()``) sends it to the general program engine."""
    from asapgraph.engine.distributed import engine_kind
    from asapgraph.engine.sum_program import is_plain_pagerank

    class Renamed(P.PageRankProgram):
        """Same program."""
        name = "my-pagerank"

        def __init__(self, alpha=0.9):
            super().__init__(alpha=alpha)

    class Hooked(P.PageRankProgram):
        def post_delta(self, ctx, deltas):
            return super().post_delta(ctx, deltas)

    class Tweaked(Renamed):
        edge_op = "copy"

    assert is_plain_pagerank(P.PageRankProgram()) and is_plain_pagerank(Renamed())
    assert engine_kind(Renamed()) == "sum"
    assert not is_plain_pagerank(Hooked()) and not is_plain_pagerank(Tweaked())
    assert engine_kind(Hooked()) == "it defines aggregate()"
    assert not is_plain_pagerank(WeightedDecay())
