"""Graph construction (counting sort, id remap) against scipy.sparse, the independent peer."""
import numpy as np
import pytest
import scipy.sparse as sp

from asapgraph.graph.core import Graph, remap_ids


def _ref_matrix(src, dst, w, ids, undirected=False):
    pos = {v: i for i, v in enumerate(ids.tolist())}
    s = np.array([pos[x] for x in src.tolist()], dtype=np.int64)
    d = np.array([pos[x] for x in dst.tolist()], dtype=np.int64)
    w = np.ones(len(s)) if w is None else w
    if undirected:
        off = s != d
        s, d, w = np.concatenate([s, d[off]]), np.concatenate([d, s[off]]), np.concatenate([w, w[off]])
    return sp.coo_matrix((w, (s, d)), shape=(len(ids), len(ids))).tocsr()


@pytest.mark.parametrize("hi", [50, 10**6, 2**62])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("undirected", [False, True])
def test_from_original_ids_vs_scipy(rng, hi, weighted, undirected):
    m = 3000
    src = rng.integers(0, hi, m)
    dst = rng.integers(0, hi, m)
    src[:10] = dst[:10]  # self-loops
    src[10:20], dst[10:20] = src[20:30], dst[20:30]  # parallel edges
    w = rng.standard_normal(m) if weighted else None
    g = Graph.from_original_ids(src, dst, weights=w, undirected=undirected)
    ids = np.unique(np.concatenate([src, dst]))
    assert np.array_equal(g.original_ids(), ids)
    A = _ref_matrix(src, dst, w, ids, undirected)
    assert abs(g.to_scipy() - A).max() <= 1e-12 * max(1, abs(A).max())
    loops = int(np.count_nonzero(src == dst))
    assert g.m == (2 * m - loops if undirected else m)
    assert g.indices.dtype == np.int32
    # out-degree counts parallel edges: compare with the edge list itself
    s_dense = np.searchsorted(ids, src)
    d_dense = np.searchsorted(ids, dst)
    od = np.bincount(s_dense, minlength=len(ids))
    if undirected:
        od = od + np.bincount(d_dense[src != dst], minlength=len(ids))
    assert np.array_equal(g.out_degree, od)
    if weighted:
        assert np.allclose(g.out_weight, np.asarray(A.sum(axis=1)).ravel(), atol=1e-12)
    # in-CSR is stable: in-neighbours keep input order
    if not undirected:
        v = int(d_dense[0])
        order = np.flatnonzero(d_dense == v)
        assert np.array_equal(g.indices[g.indptr[v]:g.indptr[v + 1]], s_dense[order])


def test_out_csr_is_transpose(rng):
    s = rng.integers(0, 500, 4000)
    d = rng.integers(0, 500, 4000)
    w = rng.random(4000)
    g = Graph.from_original_ids(s, d, weights=w)
    indptr, indices, ow = g.out_csr()
    B = sp.csr_matrix((ow, indices, indptr), shape=(g.n, g.n))
    assert abs(B - g.to_scipy()).max() < 1e-12
    assert np.array_equal(np.diff(indptr), g.out_degree)


def test_edges_roundtrip(rng):
    s = rng.integers(0, 300, 2000)
    d = rng.integers(0, 300, 2000)
    g = Graph.from_edges(s, d, n=300)
    s2, d2, _ = g.edges()
    assert sorted(zip(s2.tolist(), d2.tolist())) == sorted(zip(s.tolist(), d.tolist()))


def test_dense_ids_unchanged(rng):
    s = np.arange(100, dtype=np.int64)
    d = rng.permutation(100)
    ids, (a, b) = remap_ids(s, d)
    assert ids is None and np.array_equal(a, s) and np.array_equal(b, d)


def test_remap_inplace_int32(rng):
    s = (rng.integers(0, 1000, 500) * 3).astype(np.int32)
    d = (rng.integers(0, 1000, 500) * 3).astype(np.int32)
    s0, d0 = s.copy(), d.copy()
    ids, (a, b) = remap_ids(s, d, inplace=True)
    assert a is s and b is d
    assert np.array_equal(ids[a], s0) and np.array_equal(ids[b], d0)


def test_from_edges_validation():
    with pytest.raises(ValueError):
        Graph.from_edges(np.array([0, 5]), np.array([1, 2]), n=3)
    with pytest.raises(ValueError):
        Graph.from_edges(np.array([0, -1]), np.array([1, 2]))
    g = Graph.from_edges(np.zeros(0, np.int64), np.zeros(0, np.int64), n=4)
    assert (g.n, g.m) == (4, 0) and g.indptr.tolist() == [0] * 5


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_fused_remap_build_equals_unfused(rng, threads, weighted, dtype):
    """The fused remap + counting sort gives the unfused path's arrays exactly (ids, edge
    order within rows, float sums), whatever the number of threads."""
    from asapgraph.graph import core

    m, hi = 300000, 20000
    src = rng.integers(0, hi, m).astype(dtype)
    dst = rng.integers(0, hi, m).astype(dtype)
    dst[::7] = hi - 1  # a heavy in-row, its order spread over the threads' ranges
    src[src % 97 == 3] = 5  # absent ids: dense ids differ from the original ones
    dst[dst % 97 == 3] = 6
    w = rng.standard_normal(m) if weighted else None
    n, indptr, indices, outdeg, ids, outw, wout = core.remap_build(src, dst, hi, threads, w,
                                                                   span=0)
    rids, (s, d) = core.remap_ids(src.copy(), dst.copy())
    ref = Graph.from_edges(s, d, n=len(rids), weights=w, ids=rids)
    _assert_build_equal(ref, n, indptr, indices, outdeg, ids)
    if weighted:
        assert np.array_equal(wout, ref.weights)
        assert np.array_equal(outw[:n], ref.out_weight)  # same order of the float sums
    g = Graph.from_original_ids(src, dst, weights=w)  # the entry point that takes it
    assert np.array_equal(g.indices, ref.indices) and np.array_equal(g.ids, ref.ids)
    assert g.indices.dtype == np.int32 and g.indptr.dtype == np.int64


def _assert_build_equal(ref, n, indptr, indices, outdeg, ids):
    assert n == ref.n
    assert np.array_equal(indptr[:n + 1], ref.indptr)
    assert np.array_equal(indices, ref.indices)
    assert np.array_equal(outdeg[:n], ref.out_degree)
    assert np.array_equal(ids[:n], ref.ids)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("span", [1, 2, 64, 4096, 65536])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_blocked_placement_equals_unfused(rng, threads, span, dtype):
    """The blocked placement (destination blocks counting-sorted in cache) gives the
    unfused path's arrays exactly: blocks of one id and of many, a heavy in-row spread
    over the threads' ranges, absent ids, an id with out-edges only, a last block cut
    short, any number of threads."""
    from asapgraph.graph import core

    m = 200000
    pool = np.concatenate([np.arange(0, 3000), np.arange(70000, 70500),
                           np.arange(200000, 260000, 7)])
    src = pool[rng.integers(0, pool.size, m)].astype(dtype)
    dst = pool[rng.integers(0, pool.size, m)].astype(dtype)
    dst[::5] = 70010
    dst[1::11] = 2999
    src[::13] = 259999  # out-edges only
    dst[dst == 259999] = 3
    N = int(max(src.max(), dst.max())) + 1
    n, indptr, indices, outdeg, ids, _, _ = core.remap_build(src, dst, N, threads, span=span)
    rids, (s, d) = core.remap_ids(src.copy(), dst.copy())
    _assert_build_equal(Graph.from_edges(s, d, n=len(rids), ids=rids), n, indptr, indices,
                        outdeg, ids)


def test_blocked_placement_taken_and_refused(rng, monkeypatch):
    """``Graph.from_original_ids`` takes the blocked placement from BLOCKED_MIN_EDGES
    edges on (the same graph as below it), but not when one block would hold more
    than an eighth of the edges (a huge in-degree: T copies of it); a span that is
    not a power of two is refused."""
    from asapgraph.graph import core
    from asapgraph.kernels import _graph

    m, N = 400000, 50000
    src = rng.integers(0, N, m)
    dst = rng.integers(0, N, m)
    ref = Graph.from_original_ids(src, dst)
    called = []
    real = _graph.remap_place_blocked
    monkeypatch.setattr(_graph, "remap_place_blocked",
                        lambda *a, **k: called.append(1) or real(*a, **k))
    monkeypatch.setattr(core, "BLOCKED_MIN_EDGES", 1000)
    monkeypatch.setattr(core, "BLOCK_EDGES", 4096)  # blocks of 512 ids, ~4K edges
    g = Graph.from_original_ids(src, dst)
    assert called and np.array_equal(g.indices, ref.indices)
    assert np.array_equal(g.indptr, ref.indptr)
    dst[: m // 4] = 7  # one block holds a quarter of the edges: unblocked placement
    called.clear()
    ref = Graph.from_edges(src, dst, n=N)
    g = Graph.from_original_ids(src, dst)
    assert not called and np.array_equal(g.indices, ref.indices)
    with pytest.raises(ValueError, match="power of two"):
        core.remap_build(src, dst, N, 1, span=3)


def test_fused_build_all_ids_present(rng):
    """Every id 0..N-1 present: ``ids`` is None, as from the unfused path."""
    m, N = 100000, 1000
    src = rng.integers(0, N, m)
    dst = rng.integers(0, N, m)
    src[:N] = np.arange(N)
    g = Graph.from_original_ids(src, dst)
    assert g.ids is None and g.n == N
    ref = Graph.from_edges(src, dst, n=N)
    assert np.array_equal(g.indices, ref.indices) and np.array_equal(g.indptr, ref.indptr)


def test_small_page_arrays():
    """``small_page_empty``: a writable array of its own mapping; ``small_page_shrink``
    keeps the first items without a copy (the same memory), and copies any other array."""
    from asapgraph.kernels import _graph

    for dt in (np.int32, np.int64, np.uint16):
        a = _graph.small_page_empty(100000, dt)
        assert a.dtype == dt and a.shape == (100000,) and a.flags.writeable
        a[:] = np.arange(100000) % 1000
        b = _graph.small_page_shrink(a, 4097)
        assert b.shape == (4097,) and b.ctypes.data == a.ctypes.data
        assert np.array_equal(b, np.arange(4097) % 1000)
        del a
        b[-1] = 7  # the kept pages stay mapped
        assert b.sum() == (np.arange(4096) % 1000).sum() + 7
    assert _graph.small_page_empty(0, np.int64).shape == (0,)
    c = np.arange(10)
    d = _graph.small_page_shrink(c, 4)
    assert np.array_equal(d, [0, 1, 2, 3]) and not np.shares_memory(c, d)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_release_build_equals_plain(rng, monkeypatch, threads, dtype):
    """``remap_build(release=True)`` (the parser's arrays handed back page by page while
    they are placed, output in 4 KB pages, larger blocks) gives exactly the arrays of the
    plain build, and it did hand the consumed pages back (they read as zeros)."""
    from asapgraph.graph import core
    from asapgraph.kernels import _graph

    monkeypatch.setattr(core, "BLOCKED_MIN_EDGES", 1000)
    monkeypatch.setattr(core, "BLOCK_EDGES_SMALL_PAGES", 8192)
    monkeypatch.setattr(core, "RELEASE_EDGES", 5000)  # many steps per thread
    m, N = 600000, 90000
    src = rng.integers(1, N, m).astype(dtype)
    dst = rng.integers(1, N, m).astype(dtype)
    dst[::60] = 77  # a heavy in-row spread over the threads' ranges
    src[src % 89 == 5] = 3  # absent ids
    ref = core.remap_build(src, dst, N, threads)
    s = _graph.small_page_empty(m, dtype)  # page-aligned, in pages of its own
    d = _graph.small_page_empty(m, dtype)
    s[:] = src
    d[:] = dst
    got = core.remap_build(s, d, N, threads, release=True)
    assert got[0] == ref[0]
    n = ref[0]
    for a, b, k in zip(got[1:5], ref[1:5], (n + 1, m, n, n)):
        assert np.array_equal(a[:k], b[:k])
    # every whole page of a thread's range was handed back (no page left at the steps)
    assert not s[4096: m - 4096].any() if threads == 1 else not s[m // 2 - 5000].any()
    assert not d[4096: m - 4096].any() if threads == 1 else not d[m // 3 - 5000].any()
    g = Graph.from_original_ids(src.copy(), dst.copy(), inplace=True, _consume=True)
    h = Graph.from_original_ids(src, dst)
    for a, b in ((g.indptr, h.indptr), (g.indices, h.indices), (g.out_degree, h.out_degree),
                 (g.ids, h.ids)):
        assert np.array_equal(a, b) and a.dtype == b.dtype
