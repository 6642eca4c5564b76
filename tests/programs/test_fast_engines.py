"""The one-call engines of min/max programs (union-find, worklist fixed point, BSP loop).

Each is checked against scipy.sparse.csgraph on full result vectors, against the older
per-sweep engine (still used when ``max_iter`` caps the sweeps), and with the threaded
paths forced on small graphs.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import asapgraph.programs as P
from asapgraph import Graph
from asapgraph.kernels import _programs as K
from asapgraph.engine.program import VertexProgram


def _graph(rng, n, m, weights=False, ids=False):
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    w = rng.integers(1, 20, m).astype(np.float64) if weights else None
    if ids:   # original ids that are not 0..n-1 (labels are original ids)
        perm = rng.permutation(10 * n)[:n] + 7
        return Graph.from_original_ids(perm[src], perm[dst], weights=w), perm, src, dst, w
    return Graph.from_edges(src, dst, n=n, weights=w), None, src, dst, w


def _scipy_components(g):
    A = sp.csr_matrix((np.ones(g.m), g.indices, g.indptr), shape=(g.n, g.n))
    return csgraph.connected_components(A, directed=True, connection="weak")


def _expected_wcc(g, op=np.minimum):
    nc, lab = _scipy_components(g)
    ids = g.original_ids()
    best = np.full(nc, ids.max() if op is np.minimum else ids.min(), dtype=np.int64)
    op.at(best, lab, ids)
    return best[lab]


def _dijkstra(g, s, unit=False):
    """scipy reference over the in-CSR (row v: sources); the lightest parallel edge counts."""
    rows = np.repeat(np.arange(g.n), np.diff(g.indptr))
    cols = g.indices.astype(np.int64)
    w = np.ones(g.m) if (unit or g.weights is None) else g.weights
    o = np.lexsort((w, rows, cols))
    keep = np.ones(o.size, bool)
    keep[1:] = (cols[o][1:] != cols[o][:-1]) | (rows[o][1:] != rows[o][:-1])
    k = o[keep]
    A = sp.csr_matrix((w[k], (cols[k], rows[k])), shape=(g.n, g.n))
    return csgraph.dijkstra(A, indices=s)


class _MaxLabel(VertexProgram):
    """Components labelled by their largest original id (max combiner)."""
    name = "maxlabel"
    value_dtype = np.int64
    combiner = "max"
    direction = "both"
    edge_op = "copy"
    use_weights = False
    accumulative = True
    default_max_iter = 1 << 30

    def init(self, ctx):
        return np.asarray(ctx.ids, dtype=np.int64).copy()


class _Capped(VertexProgram):
    """Min-plus distances where some vertices start with a finite value (not the identity):
    the union-find shortcut must not be taken and values block worse offers."""
    name = "capped"
    value_dtype = np.float64
    combiner = "min"
    direction = "both"
    edge_op = "copy"
    accumulative = True
    default_max_iter = 1 << 30

    def __init__(self, values, deltas):
        self.v, self.d = values, deltas

    def init_delta(self, ctx):
        return self.v.copy(), self.d.copy()


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    old = K.set_parallel_threshold(0)       # threaded paths even on small graphs
    yield request.param
    K.set_parallel_threshold(old)


@pytest.mark.parametrize("n,m", [(5, 2), (50, 30), (400, 300), (2000, 6000)])
def test_wcc_union_find_and_bsp_match_scipy(rng, threads, n, m):
    g, *_ = _graph(rng, n, m, ids=True)
    ref = _expected_wcc(g)
    for mode in ("asap", "bsp"):
        r = P.wcc(g, mode=mode, threads=threads)
        assert np.array_equal(r.values, ref), mode
        assert r.converged
    assert P.wcc(g).stats["mode"] == "asap"           # the default mode
    r = P.run(_MaxLabel(), g, mode="asap", threads=threads)
    assert np.array_equal(r.values, _expected_wcc(g, np.maximum))
    r = P.run(_MaxLabel(), g, mode="bsp", threads=threads)
    assert np.array_equal(r.values, _expected_wcc(g, np.maximum))


@pytest.mark.parametrize("weights", [False, True])
def test_sssp_bfs_match_scipy_both_modes(rng, threads, weights):
    g, _, src, dst, w = _graph(rng, 3000, 12000, weights=weights)
    for s in (int(src[0]), int(np.argmax(g.out_degree))):
        ref = _dijkstra(g, s)
        lv = _dijkstra(g, s, unit=True)
        lv = np.where(np.isinf(lv), -1, lv).astype(np.int64)
        for mode in ("asap", "bsp"):
            r = P.sssp(g, s, mode=mode, threads=threads)
            assert np.array_equal(r.values, ref), (mode, s)
            b = P.bfs(g, s, mode=mode, threads=threads)
            assert np.array_equal(b.values, lv), (mode, s)
            assert r.stats["threads"] == threads


def test_new_engines_agree_with_per_sweep_engine(rng):
    """``max_iter <= n`` keeps the older per-sweep / per-superstep Python loops; the fixed
    point must not depend on the engine (non-identity starting values included)."""
    g, *_ = _graph(rng, 500, 1500, weights=True)
    n = g.n
    values = np.full(n, np.inf)
    values[rng.choice(n, 50, replace=False)] = rng.random(50)          # blockers
    deltas = np.full(n, np.inf)
    pick = rng.choice(n, 30, replace=False)
    deltas[pick] = rng.random(30) * 2
    for prog in (P.SSSPProgram(0), _Capped(values, deltas)):
        fast = P.run(prog, g, mode="asap")
        slow = P.run(prog, g, mode="asap", max_iter=n)      # per-sweep engine
        bsp = P.run(prog, g, mode="bsp")
        assert fast.converged and slow.converged and bsp.converged
        assert np.array_equal(fast.values, slow.values)
        assert np.array_equal(fast.values, bsp.values)


def test_bsp_max_iter_caps_supersteps(rng):
    # a path 0 -> 1 -> ... -> 9: BFS needs 10 supersteps; capped at 3 it stops early
    g = Graph.from_edges(np.arange(9), np.arange(1, 10), n=10)
    full = P.bfs(g, 0, mode="bsp")
    assert np.array_equal(full.values, np.arange(10)) and full.converged
    assert full.iterations == 10 and len(full.stats["iteration_seconds"]) == 10
    r = P.run(P.BFSProgram(0), g, mode="bsp", max_iter=3)
    assert r.iterations == 3 and not r.converged
    # superstep k applies the level-k frontier; level 3 is still a pending delta
    assert np.array_equal(r.values[:3], [0, 1, 2]) and np.all(r.values[3:] == -1)
    slow = P.run(P.BFSProgram(0), g, mode="asap", max_iter=3)   # per-sweep engine, capped
    assert not slow.converged


@pytest.mark.parametrize("priority", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_async_fixpoint_kernel_directly(rng, priority, dtype):
    g, *_ = _graph(rng, 800, 3000, weights=True)
    optr, oind, ow = g.out_csr()
    inf = np.inf if dtype is np.float64 else np.iinfo(np.int64).max
    values = np.full(g.n, inf, dtype=dtype)
    deltas = values.copy()
    deltas[3] = 0
    ow = ow.astype(np.float64)
    nproc, scanned, pops, quiet = K.async_fixpoint_minmax(optr, oind, ow, 2, 1, values, deltas, priority)
    ref = _dijkstra(g, 3)
    if dtype is np.int64:
        fin = np.isfinite(ref)
        ref_i = np.full(g.n, inf, dtype=np.int64)
        ref_i[fin] = ref[fin].astype(np.int64)
        ref = ref_i
    assert quiet == 1 and np.array_equal(values, ref)
    assert nproc == np.count_nonzero(values != inf) or not priority
    # max_pops stops early and a second call continues to the same fixed point
    v2 = np.full(g.n, inf, dtype=dtype)
    d2 = v2.copy()
    d2[3] = 0
    _, _, p1, q1 = K.async_fixpoint_minmax(optr, oind, ow, 2, 1, v2, d2, priority, 5)
    assert p1 == 5 and q1 == 0
    K.async_fixpoint_minmax(optr, oind, ow, 2, 1, v2, d2, priority)
    assert np.array_equal(v2, values)


def test_threads_argument_validated_and_restored(rng):
    g, *_ = _graph(rng, 100, 300)
    before = K.num_threads()
    with pytest.raises(ValueError):
        P.wcc(g, threads=0)
    P.wcc(g, threads=1)
    assert K.num_threads() == before
