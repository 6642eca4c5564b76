"""asapgraph.pagerank against networkx.pagerank (MultiDiGraph) and a scipy power iteration.

Every comparison is on the FULL rank vector, matched by original vertex id, with the L1
tolerance of ``L1_TOL["pagerank"]`` (1e-8).  The networkx side reads the shared files with
its own small numpy reader (independent of ``asapgraph.graph.io``).
"""
import gzip

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from asapgraph.errors import InputError
from asapgraph.graph.core import Graph
from asapgraph.programs.pagerank import METHODS, pagerank

L1 = 1e-8  # == conftest.L1_TOL["pagerank"]

# file -> (weighted, big).  big: networkx is too slow, compare with the scipy reference.
SHARED_DIRECTED = {
    "foodweb-baydry.txt": (True, False),
    "email-Eu-core.txt": (False, False),
    "p2p-Gnutella08.txt": (False, False),
    "soc-sign-bitcoinotc.csv.gz": (False, False),
    "CollegeMsg.txt.gz": (False, False),
    "wordassociation-2011.txt": (False, False),
    "wiki-Vote.txt.gz": (False, False),
    "p2p-Gnutella31.txt.gz": (False, False),
    "law-enron.txt.gz": (False, False),
    "cit-HepTh.txt.gz": (False, False),
    "cit-HepPh.txt.gz": (False, False),
    "soc-Epinions1.txt.gz": (False, False),
    "soc-Slashdot0902.txt.gz": (False, True),
    "web-NotreDame.txt.gz": (False, True),
    "cnr-2000.txt.gz": (False, True),
}


# ----------------------------------------------------------------------------- helpers
def _read_edges(path, weighted):
    """Private reference reader: (src, dst, weights or None) with original ids."""
    name = str(path)
    opener = gzip.open if name.endswith(".gz") else open
    delim = "," if ".csv" in name else None
    cols = (0, 1, 2) if weighted else (0, 1)
    with opener(name, "rt") as f:
        a = np.loadtxt(f, comments=("#", "%"), delimiter=delim, usecols=cols, ndmin=2)
    src = a[:, 0].astype(np.int64)
    dst = a[:, 1].astype(np.int64)
    return src, dst, (a[:, 2].copy() if weighted else None)


def _nx_pagerank(src, dst, w=None, nodes=None, **kw):
    """networkx.pagerank on a MultiDiGraph (parallel edges count) to a tight tolerance."""
    g = nx.MultiDiGraph()
    if nodes is not None:
        g.add_nodes_from(nodes)
    if w is None:
        g.add_edges_from(zip(src.tolist(), dst.tolist()))
    else:
        g.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), w.tolist()))
    n = max(g.number_of_nodes(), 1)
    # networkx stops at L1 change < n * tol: ask for an L1 change below 1e-11.
    return nx.pagerank(g, tol=1e-11 / n, max_iter=100000, weight="weight" if w is not None
                       else None, **kw)


def _by_id(res, ref):
    """L1 distance between a PageRankResult and a {id: rank} dict over the same ids."""
    assert len(ref) == res.ranks.shape[0]
    want = np.array([ref[i] for i in res.ids.tolist()])
    return float(np.abs(res.ranks - want).sum())


def _scipy_pagerank(graph, alpha=0.85, tol=1e-13):
    """Plain CSR power iteration with networkx semantics (uniform teleport/dangling)."""
    a = graph.to_scipy()  # A[u, v] = number of u->v edges
    n = graph.n
    s = np.asarray(a.sum(axis=1)).ravel()
    inv = np.zeros(n)
    np.divide(1.0, s, out=inv, where=s != 0)
    qt = (sp.diags(inv) @ a).T.tocsr()
    dangling = s == 0
    x = np.full(n, 1.0 / n)
    for _ in range(10000):
        xn = alpha * (qt @ x + x[dangling].sum() / n) + (1 - alpha) / n
        if np.abs(xn - x).sum() <= tol:
            return xn
        x = xn
    raise AssertionError("scipy reference did not converge")


def _random_multigraph(rng, n, m, dangling_frac=0.3, loops=True):
    """Edges with duplicates, self-loops and a share of vertices with no out-edge."""
    n_src = max(1, int(n * (1 - dangling_frac)))
    src = rng.integers(0, n_src, m)
    dst = rng.integers(0, n, m)
    if loops:
        k = max(1, m // 20)
        dst[:k] = src[:k]
    dup = rng.integers(0, m, m // 10)
    src = np.concatenate([src, src[dup]])
    dst = np.concatenate([dst, dst[dup]])
    return src, dst


# ----------------------------------------------------------------------------- shared graphs
def _load(shared, name, weighted):
    from asapgraph.graph.io import load_graph

    return load_graph(str(shared(name)), weighted=weighted)


@pytest.mark.shared
@pytest.mark.parametrize("name", [k for k, v in SHARED_DIRECTED.items() if not v[1]])
def test_matches_networkx_on_shared(shared, name):
    weighted, _ = SHARED_DIRECTED[name]
    path = shared(name)
    g = _load(shared, name, weighted)
    src, dst, w = _read_edges(path, weighted)
    ref = _nx_pagerank(src, dst, w)
    res = pagerank(g)
    assert res.converged
    assert abs(res.ranks.sum() - 1) < 1e-12
    assert _by_id(res, ref) <= L1


@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.parametrize("name", [k for k, v in SHARED_DIRECTED.items() if v[1]])
def test_matches_scipy_on_big_shared(shared, name):
    g = _load(shared, name, False)
    ref = _scipy_pagerank(g)
    for method in METHODS:
        res = pagerank(g, method=method)
        assert res.converged
        assert np.abs(res.ranks - ref).sum() <= L1, method


# ----------------------------------------------------------------------------- generated graphs
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("reorder", [False, True])
def test_generated_dangling_loops_duplicates(rng, method, reorder):
    n = 300
    src, dst = _random_multigraph(rng, n, 2000)
    g = Graph.from_edges(src, dst, n=n)
    assert (g.out_degree == 0).sum() > 50 and (src == dst).any()
    ref = _nx_pagerank(src, dst, nodes=range(n))
    res = pagerank(g, method=method, reorder=reorder)
    assert res.converged and res.method == method
    assert _by_id(res, ref) <= L1


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("reorder", [False, True])
def test_personalization_and_dangling_dicts(rng, method, reorder):
    n = 250
    src, dst = _random_multigraph(rng, n, 1500, dangling_frac=0.4)
    ids = np.sort(rng.choice(10**9, n, replace=False))  # sparse original ids
    g = Graph.from_edges(src, dst, n=n, ids=ids)
    osrc, odst = ids[src], ids[dst]
    pers = {int(ids[i]): float(rng.random()) for i in rng.choice(n, 60, replace=False)}
    dang = {int(ids[i]): float(rng.random()) + 0.1 for i in rng.choice(n, 20, replace=False)}
    for kw in ({"personalization": pers}, {"dangling": dang},
               {"personalization": pers, "dangling": dang}, {"alpha": 0.5, "dangling": dang}):
        ref = _nx_pagerank(osrc, odst, nodes=ids.tolist(), **kw)
        res = pagerank(g, method=method, reorder=reorder, **kw)
        assert res.converged
        assert _by_id(res, ref) <= L1, kw


def test_personalization_array_equals_dict(rng):
    n = 100
    src, dst = _random_multigraph(rng, n, 600)
    g = Graph.from_edges(src, dst, n=n)
    p = rng.random(n)
    p[::3] = 0
    a = pagerank(g, personalization=p, dangling=p[::-1].copy())
    b = pagerank(g, personalization=dict(enumerate(p)), dangling=dict(enumerate(p[::-1])))
    assert np.abs(a.ranks - b.ranks).sum() <= 1e-14


@pytest.mark.parametrize("method", METHODS)
def test_weighted(rng, method):
    n = 200
    src, dst = _random_multigraph(rng, n, 1500)
    w = rng.random(src.size) * 10
    w[:7] = 0.0  # zero weights: such edges carry nothing
    zero_src = src[0]
    w[src == zero_src] = 0.0  # a vertex with out-edges but out-weight 0 is dangling
    g = Graph.from_edges(src, dst, n=n, weights=w)
    ref = _nx_pagerank(src, dst, w, nodes=range(n))
    res = pagerank(g, method=method)
    assert _by_id(res, ref) <= L1
    unweighted = pagerank(g, weighted=False, method=method)
    ref_u = _nx_pagerank(src, dst, nodes=range(n))
    assert _by_id(unweighted, ref_u) <= L1


def test_rmat_with_reorder_matches_networkx():
    from asapgraph.graph.generators import rmat

    src, dst = rmat(11, 8, seed=3)
    n = 1 << 11
    g = Graph.from_edges(src, dst, n=n)
    ref = _nx_pagerank(src, dst, nodes=range(n))
    for reorder in (False, True):
        assert _by_id(pagerank(g, reorder=reorder), ref) <= L1


def test_all_dangling_graph():
    g = Graph.from_edges(np.zeros(0, np.int64), np.zeros(0, np.int64), n=5)
    res = pagerank(g)
    np.testing.assert_allclose(res.ranks, np.full(5, 0.2), rtol=0, atol=1e-15)
    p = np.array([1.0, 0, 0, 3.0, 0])
    ref = nx.pagerank(nx.empty_graph(5, create_using=nx.MultiDiGraph),
                      personalization=dict(enumerate(p)), tol=1e-14)
    assert _by_id(pagerank(g, personalization=p), ref) <= L1


def test_single_vertex():
    for src in ([], [0], [0, 0]):
        s = np.array(src, dtype=np.int64)
        g = Graph.from_edges(s, s, n=1)
        res = pagerank(g)
        assert res.ranks.tolist() == [1.0] and res.converged


def test_empty_graph():
    g = Graph.from_edges(np.zeros(0, np.int64), np.zeros(0, np.int64), n=0)
    res = pagerank(g)
    assert res.ranks.shape == (0,) and res.converged and res.top(3) == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, 25),
    edges=st.lists(st.tuples(st.integers(0, 24), st.integers(0, 24)), max_size=80),
    alpha=st.floats(0.0, 0.95),
    pers=st.one_of(st.none(), st.lists(st.floats(0.0, 5.0), min_size=25, max_size=25)),
    method=st.sampled_from(METHODS),
)
@example(n=3, edges=[(0, 1)], alpha=0.9375, pers=None, method="gauss-seidel")  # sum was 1-1e-9
def test_property_matches_networkx(n, edges, alpha, pers, method):
    e = np.array([(u % n, v % n) for u, v in edges], dtype=np.int64).reshape(-1, 2)
    g = Graph.from_edges(e[:, 0], e[:, 1], n=n)
    kw = {"alpha": alpha}
    if pers is not None:
        p = np.array(pers[:n])
        if p.sum() <= 0:
            p[0] = 1.0
        kw["personalization"] = dict(enumerate(p.tolist()))
    ref = _nx_pagerank(e[:, 0], e[:, 1], nodes=range(n), **kw)
    res = pagerank(g, method=method, max_iter=10000, **kw)
    assert res.converged
    assert _by_id(res, ref) <= L1
    assert abs(res.ranks.sum() - 1.0) <= 1e-9  # <= the L1 error bound 5.67 * tol


# ----------------------------------------------------------------------------- threads, stop rule
@pytest.mark.parametrize("reorder", [False, True])
def test_threads_1_and_2_agree(rng, reorder):
    n = 20000
    src, dst = _random_multigraph(rng, n, 200000)
    g = Graph.from_edges(src, dst, n=n)
    a = pagerank(g, threads=1, method="jacobi", reorder=reorder)
    b = pagerank(g, threads=2, method="jacobi", reorder=reorder)
    assert a.threads == 1 and b.threads == 2
    assert a.iterations == b.iterations
    # Jacobi: each rank is the same sequential sum; only the dangling-mass reduction order
    # differs between thread counts.
    assert np.abs(a.ranks - b.ranks).sum() <= 1e-13
    c = pagerank(g, threads=2, method="gauss-seidel", reorder=reorder)
    assert np.abs(a.ranks - c.ranks).sum() <= L1


def test_unconverged_reports_false(rng):
    n = 500
    src, dst = _random_multigraph(rng, n, 3000)
    g = Graph.from_edges(src, dst, n=n)
    res = pagerank(g, max_iter=2)
    assert res.converged is False and res.iterations == 2 and res.residual > res.tol
    assert len(res.iteration_seconds) == 2


def test_error_bound_of_stop_rule(rng):
    """Stopping at L1 change <= tol leaves an L1 error <= alpha/(1-alpha) * tol."""
    n = 3000
    src, dst = _random_multigraph(rng, n, 30000)
    g = Graph.from_edges(src, dst, n=n)
    exact = _scipy_pagerank(g, tol=1e-15)
    for tol in (1e-4, 1e-6, 1e-8):
        for method in METHODS:
            res = pagerank(g, tol=tol, method=method)
            assert res.converged and res.residual <= tol
            assert np.abs(res.ranks - exact).sum() <= 0.85 / 0.15 * tol, (tol, method)


def test_progress_called_per_iteration(rng):
    calls = []

    class P:
        def iteration(self, it, residual, force=False, **kw):
            calls.append((it, residual))

    g = Graph.from_edges(*_random_multigraph(rng, 100, 500), n=100)
    res = pagerank(g, progress=P())
    assert [c[0] for c in calls] == list(range(1, res.iterations + 1))
    assert calls[-1][1] == res.residual


# ----------------------------------------------------------------------------- result object
def test_result_helpers():
    src = np.array([0, 1, 2, 2, 3], dtype=np.int64)
    dst = np.array([1, 2, 0, 1, 2], dtype=np.int64)
    ids = np.array([10, 20, 30, 40], dtype=np.int64)
    g = Graph.from_edges(src, dst, n=4, ids=ids)
    res = pagerank(g)
    d = res.to_dict()
    assert set(d) == {10, 20, 30, 40}
    ref = _nx_pagerank(ids[src], ids[dst])
    assert sum(abs(d[k] - ref[k]) for k in d) <= L1
    top = res.top(2)
    order = sorted(d, key=lambda k: (-d[k], k))
    assert [t[0] for t in top] == order[:2]
    assert res.top(10) == [(k, d[k]) for k in order]
    js = res.as_json(top=3)
    assert js["n"] == 4 and js["converged"] is True and len(js["top"]) == 3
    import json

    json.dumps(js)


def test_top_breaks_ties_by_id():
    g = Graph.from_edges(np.zeros(0, np.int64), np.zeros(0, np.int64), n=6,
                         ids=np.array([5, 3, 9, 1, 7, 2]))
    assert [i for i, _ in pagerank(g).top(3)] == [1, 2, 3]


# ----------------------------------------------------------------------------- validation
@pytest.fixture
def small():
    src = np.array([0, 1, 2], dtype=np.int64)
    dst = np.array([1, 2, 0], dtype=np.int64)
    return Graph.from_edges(src, dst, n=3, ids=np.array([7, 8, 9]))


@pytest.mark.parametrize("kw, msg", [
    ({"personalization": {7: -1.0, 8: 2.0}}, ">= 0"),
    ({"personalization": {7: 0.0}}, "sum to 0"),
    ({"personalization": {99: 1.0}}, "not in the graph"),
    ({"dangling": {7: float("nan")}}, "finite"),
    ({"personalization": [1.0, 2.0]}, "one value per vertex"),
    ({"personalization": {7: "x"}}, "numbers"),
])
def test_bad_vectors_raise_input_error(small, kw, msg):
    with pytest.raises(InputError, match=msg):
        pagerank(small, **kw)


@pytest.mark.parametrize("kw", [{"alpha": 1.0}, {"alpha": -0.1}, {"tol": -1}, {"max_iter": -1},
                                {"threads": 0}, {"method": "magic"}, {"weighted": True}])
def test_bad_parameters_raise_value_error(small, kw):
    with pytest.raises(ValueError):
        pagerank(small, **kw)


def test_negative_weights_rejected():
    g = Graph.from_edges(np.array([0, 1]), np.array([1, 0]), n=2, weights=np.array([1.0, -2.0]))
    with pytest.raises(InputError, match="non-negative"):
        pagerank(g)


# ----------------------------------------------------------------------------- kernel twins
def test_degree_order_is_stable_log2_bucket_sort(rng):
    from asapgraph.kernels import _pagerank as K

    deg = rng.integers(0, 3000, 5000) * (rng.random(5000) < 0.7)
    deg[:5] = [0, 1, 2**40, 3, 7]
    for dt in (np.int32, np.int64):
        out = K.degree_order(deg.astype(np.int64), np.empty(deg.size, dtype=dt))
        key = -np.floor(np.log2(deg + 1.0)).astype(np.int64)
        assert np.array_equal(out, np.argsort(key, kind="stable"))


@pytest.mark.parametrize("dt", [np.int32, np.int64])
@pytest.mark.parametrize("nloc,nslots,m", [(0, 0, 0), (1, 0, 0), (50, 20, 0), (700, 300, 9000)])
def test_owned_degree_key_and_relabel_maps_match_numpy(rng, dt, nloc, nslots, m):
    """The push layout's key (out-degree + edges into each owned vertex, slots not
    counted) and its maps / relabelled per-vertex arrays, against numpy."""
    from asapgraph.kernels import _pagerank as K

    src = np.sort(rng.integers(0, max(nloc, 1), m))
    tgt = rng.integers(0, nloc + nslots, m).astype(dt) if nloc + nslots else np.zeros(m, dt)
    indptr = np.searchsorted(src, np.arange(nloc + 1)).astype(np.int64)
    key = K.owned_degree_key(indptr, tgt, np.full(nloc, -5, dtype=np.int64))
    want = np.bincount(tgt[tgt < nloc].astype(np.int64), minlength=nloc)[:nloc] + np.diff(indptr)
    assert np.array_equal(key, want)
    new2old = rng.permutation(nloc).astype(dt)
    old2new = np.full(nloc + nslots, -1, dtype=dt)
    n2o, o2n = np.empty(nloc, np.int64), np.empty(nloc, np.int64)
    vin, din = rng.random(nloc), (rng.random(nloc) < 0.3).astype(np.uint8)
    vout, dout = np.empty(nloc), np.empty(nloc, np.uint8)
    K.relabel_maps(new2old, old2new, n2o, o2n, vin, vout, din, dout)
    ref = np.arange(nloc + nslots)
    ref[new2old] = np.arange(nloc)
    assert np.array_equal(old2new, ref) and old2new.dtype == dt
    assert np.array_equal(n2o, new2old) and np.array_equal(o2n, ref[:nloc])
    assert np.array_equal(vout, vin[new2old]) and np.array_equal(dout, din[new2old])
    if nloc:
        with pytest.raises(ValueError):
            K.relabel_maps(new2old, old2new[:nloc - 1], n2o, o2n, vin, vout, din, dout)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_permute_csr_matches_numpy(rng, threads, weighted):
    from asapgraph.kernels import _pagerank as K

    n = 700
    src, dst = _random_multigraph(rng, n, 6000)
    w = rng.random(src.size) if weighted else None
    g = Graph.from_edges(src, dst, n=n, weights=w)
    new2old = rng.permutation(n).astype(g.indices.dtype)
    old2new = np.empty_like(new2old)
    old2new[new2old] = np.arange(n, dtype=new2old.dtype)
    nptr = np.empty(n + 1, np.int64)
    nind = np.full(g.m + 40, -7, dtype=g.indices.dtype)
    nw = np.empty(g.m if weighted else 0)
    K.permute_csr(g.indptr, g.indices, g.weights if weighted else np.empty(0), new2old, old2new,
                  nptr, nind, nw, threads)
    # reference: relabel edges, stable sort by new destination
    s, d, ww = g.edges()
    ns, nd = old2new[s], old2new[d]
    order = np.argsort(nd, kind="stable")
    # stable in-row order = old in-row order, because old rows are contiguous in g.edges()
    assert np.array_equal(nptr, np.concatenate([[0], np.cumsum(np.bincount(nd, minlength=n))]))
    assert np.array_equal(nind[:g.m], ns[order]) and np.all(nind[g.m:] == 0)
    if weighted:
        assert np.array_equal(nw, ww[order])


def test_sweep_prefetch_and_threads_are_bitwise_equal(rng):
    """Prefetch is only a hint; Jacobi rows are the same sums for any block split."""
    from asapgraph.kernels import _pagerank as K

    n = 3000
    src, dst = _random_multigraph(rng, n, 40000)
    g = Graph.from_edges(src, dst, n=n)
    ind = np.concatenate([g.indices, np.zeros(64, g.indices.dtype)])
    inv = np.zeros(n)
    np.divide(1.0, g.out_degree, out=inv, where=g.out_degree != 0)
    c = rng.random(n)
    e = np.empty(0)
    outs = []
    for nb, pf in ((1, False), (1, True), (2, True), (3, False)):
        x = np.full(n, 1.0 / n)
        cout = np.empty(n)
        st = np.zeros((nb, K.NSTATS))
        K.sweep(g.indptr, ind, e, inv, x, c, cout, e, e, 0.85, 0.3, K.balanced_bounds(g.indptr, nb),
                st, pf)
        outs.append((x, cout, st[:, K.STAT_CHANGE].sum()))
    # reference: scipy in-CSR matvec
    at = sp.csr_matrix((np.ones(g.m), g.indices, g.indptr), shape=(n, n))
    want = 0.85 * (at @ c + 0.3 / n) + 0.15 / n
    for x, cout, ch in outs:
        np.testing.assert_allclose(x, want, rtol=1e-13, atol=0)
        assert np.array_equal(x, outs[0][0]) and np.array_equal(cout, x * inv)
        ref_change = np.abs(want - 1.0 / n).sum()
        assert abs(ch - ref_change) <= 1e-13 * ref_change


def test_small_graphs_run_single_threaded_by_default(rng):
    import sys

    PR = sys.modules["asapgraph.programs.pagerank"]
    g = Graph.from_edges(*_random_multigraph(rng, 200, 1000), n=200)
    assert g.m < PR.PARALLEL_MIN_EDGES
    assert pagerank(g).threads == 1
    assert pagerank(g, threads=2).threads == 2  # an explicit request is honoured


@pytest.mark.parametrize("method", METHODS)
def test_weighted_with_reorder(rng, method):
    n = 300
    src, dst = _random_multigraph(rng, n, 2500)
    w = rng.random(src.size) * 3
    g = Graph.from_edges(src, dst, n=n, weights=w)
    ref = _nx_pagerank(src, dst, w, nodes=range(n))
    for th in (1, 2):
        assert _by_id(pagerank(g, method=method, reorder=True, threads=th), ref) <= L1


def test_overflowing_sums_api(tmp_path):
    """Out-weight sums past the largest double, subnormal out-weights and personalization
    sums that overflow: asapgraph.pagerank normalises by the largest value first (the
    networkx answer for the same ratios); the program form agrees on the personalization
    and refuses the weights in one InputError (tests/mpi/test_messy_input.py: the CLI)."""
    import warnings

    import networkx as nx

    import asapgraph as ag
    from asapgraph.errors import InputError
    from asapgraph.programs import pagerank_program

    def ref(edges, **kw):
        G = nx.MultiDiGraph()
        G.add_weighted_edges_from(edges)
        r = nx.pagerank(G, tol=1e-15, max_iter=10000, **kw)
        return np.array([r[k] for k in sorted(r)])

    p = tmp_path / "ovf.txt"
    p.write_text("0 1 1\n1 2 1\n2 0 1\n2 1 1e308\n2 3 1e308\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = ag.load_graph(str(p), weighted=True)
        want = ref([(0, 1, 1), (1, 2, 1), (2, 0, 1e-308), (2, 1, 1), (2, 3, 1)])
        assert np.abs(ag.pagerank(g, tol=1e-13).ranks - want).sum() < 1e-10
        with pytest.raises(InputError, match="sum past the largest double"):
            pagerank_program(g)
        p.write_text("0 1 1\n1 2 1\n2 0 5e-324\n2 1 1e-323\n")
        g = ag.load_graph(str(p), weighted=True)
        want = ref([(0, 1, 1), (1, 2, 1), (2, 0, 1), (2, 1, 2)])
        assert np.abs(ag.pagerank(g, tol=1e-13).ranks - want).sum() < 1e-10
        p.write_text("0 1\n1 2\n2 0\n2 3\n")
        g = ag.load_graph(str(p))
        want = ref([(0, 1, 1), (1, 2, 1), (2, 0, 1), (2, 3, 1)], personalization={0: 1, 3: 1})
        big = {0: 1e308, 3: 1e308}
        assert np.abs(ag.pagerank(g, personalization=big, tol=1e-13).ranks - want).sum() < 1e-10
        for mode in ("bsp", "asap"):
            r = pagerank_program(g, personalization=big, mode=mode, tol=1e-12)
            assert np.abs(np.asarray(r.values) - want).sum() < 1e-9


def test_api_source_id_messages_are_plain():
    """A float source that is not integral is refused (0.5 ran from vertex 0), with the
    number as written, not ``np.float64(0.5)``."""
    import asapgraph as ag
    from asapgraph.programs import sssp

    g = ag.from_edges([(0, 1), (1, 2), (2, 0)]) if hasattr(ag, "from_edges") else None
    if g is None:
        g = Graph.from_edges(np.array([0, 1, 2]), np.array([1, 2, 0]), n=3)
    for bad in (np.float64(0.5), 0.5, float("nan")):
        with pytest.raises(InputError, match=r"source vertex id must be an integer, got (0\.5|nan)$"):
            sssp(g, bad)
    assert list(sssp(g, np.float64(1.0)).values) == [2.0, 0.0, 1.0]


@pytest.mark.parametrize("bad", [float("inf"), float("nan")])
def test_nonfinite_weights_refused_from_objects(bad):
    """``asapgraph.pagerank`` of a scipy matrix / networkx graph / edge array with an inf or
    NaN weight ran max_iter sweeps and returned NaN ranks (converged False, no error); a
    file's weights were always refused at their line.  Now one InputError naming it."""
    import scipy.sparse as sp

    import asapgraph
    from asapgraph.errors import InputError

    A = sp.csr_array((np.array([bad, 1.0, 1.0]), (np.array([0, 0, 2]), np.array([1, 2, 0]))),
                     shape=(3, 3))
    objs = [A, np.array([[1, 2, bad], [1, 3, 1.0], [3, 1, 1.0]])]
    nx = pytest.importorskip("networkx")
    G = nx.DiGraph()
    G.add_weighted_edges_from([(1, 2, bad), (1, 3, 1.0), (3, 1, 1.0)])
    objs.append(G)
    for obj in objs:
        if isinstance(obj, np.ndarray) and bad != bad:
            continue   # (an array's NaN is refused as a missing value when converted)
        with pytest.raises(InputError, match=f"edge weight {bad!r} is not a finite number"):
            asapgraph.pagerank(obj)
