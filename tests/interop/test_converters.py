"""Every converter against networkx on awkward graphs: string and tuple node keys, isolated
nodes, self-loops, multigraph parallel edges (weights add), missing weights, empty graphs.

Tolerances: PageRank and Katz full vectors by max abs difference <= 1e-12 (the backend runs
networkx's own stop rule, so the iterates agree to rounding); HITS by max abs <= 1e-8
(ARPACK); components and path lengths exactly.
"""
import numpy as np
import pytest

nx = pytest.importorskip("networkx")
sp = pytest.importorskip("scipy.sparse")

import asapgraph
from asapgraph import Graph
from asapgraph.interop import from_networkx
from asapgraph.programs import wcc

ATOL = 1e-12
pytestmark = pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs")


def _awkward(kind, keys):
    """A graph of class ``kind`` with the given node keys: parallel edges (multigraphs),
    self-loops, an isolated node, a missing weight, a dangling node."""
    G = kind()
    a, b, c, d, e, f = keys
    G.add_node(f)                       # isolated
    G.add_edge(a, b, weight=2.0)
    G.add_edge(b, c, weight=0.5)
    G.add_edge(c, a)                    # missing weight -> 1
    G.add_edge(c, c, weight=3.0)        # self-loop
    G.add_edge(a, d, weight=1.5)
    G.add_edge(d, e, weight=1.0)        # e dangling in directed graphs
    if G.is_multigraph():
        G.add_edge(a, b, weight=4.0)    # parallel: weights add (2 + 4)
        G.add_edge(c, c, weight=1.0)
    return G


KEYS = {
    "str": ["a", "b", "c", "d", "e", "f"],
    "tuple": [(0, "x"), (1, "y"), (2, "x"), (3, 3), (4,), ("f", 5)],
    "mixed": [1, "b", (2, 2), 3.5, frozenset({1}), b"raw"],
}
KINDS = [nx.DiGraph, nx.MultiDiGraph, nx.Graph, nx.MultiGraph]


def _close(d1, d2, atol=ATOL):
    assert d1.keys() == d2.keys()
    diff = max((abs(d1[k] - d2[k]) for k in d1), default=0.0)
    assert diff <= atol, diff


def test_backend_keeps_networkx_stop_rule_at_default_tol():
    """At networkx's default tol (1e-6, L1 change < n * tol) the iterates are far from the
    fixed point: the backend must stop at the same sweep, not at asapgraph's tighter bound."""
    G = nx.gnp_random_graph(300, 0.03, directed=True, seed=7)
    ref = nx.pagerank(G)
    exact = nx.pagerank(G, tol=1e-14, max_iter=1000)
    assert max(abs(ref[k] - exact[k]) for k in ref) > 1e-9  # the stop rule matters here
    _close(ref, nx.pagerank(G, backend="asapgraph"))


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("keys", KEYS, ids=str)
def test_backend_matches_networkx(kind, keys):
    G = _awkward(kind, KEYS[keys])
    for weight in ("weight", None):
        _close(nx.pagerank(G, weight=weight, tol=1e-12),
               nx.pagerank(G, weight=weight, tol=1e-12, backend="asapgraph"))
    pers = {KEYS[keys][0]: 1.0, KEYS[keys][3]: 2.0}
    _close(nx.pagerank(G, personalization=pers, nstart=pers, dangling=pers),
           nx.pagerank(G, personalization=pers, nstart=pers, dangling=pers,
                       backend="asapgraph"))
    if not G.is_multigraph():
        _close(nx.katz_centrality(G, alpha=0.05, weight="weight"),
               nx.katz_centrality(G, alpha=0.05, weight="weight", backend="asapgraph"))
        h1, a1 = nx.hits(G, tol=1e-12)
        for method in ("auto", "svds", "power"):
            nx.config.backends.asapgraph.hits_method = method
            try:
                h2, a2 = nx.hits(G, tol=1e-12, backend="asapgraph")
            finally:
                nx.config.backends.asapgraph.hits_method = "auto"
            _close(h1, h2, 1e-8)
            _close(a1, a2, 1e-8)
    comps = (nx.weakly_connected_components if G.is_directed() else nx.connected_components)
    assert sorted(map(sorted, map(lambda s: map(repr, s), comps(G)))) == sorted(
        map(sorted, map(lambda s: map(repr, s), comps(G, backend="asapgraph"))))
    src = KEYS[keys][0]
    assert (nx.single_source_shortest_path_length(G, src)
            == nx.single_source_shortest_path_length(G, src, backend="asapgraph"))
    d1 = nx.single_source_dijkstra_path_length(G, src)
    d2 = nx.single_source_dijkstra_path_length(G, src, backend="asapgraph")
    _close(d1, d2, 0.0)


def test_hits_auto_falls_back_to_arpack():
    """Two out-stars with 50 and 51 leaves: sigma2^2 / sigma1^2 = 50/51, so the power
    iteration needs ~700 steps for tol 1e-8; with max_iter 100 'power' gives up, 'auto'
    hands over to networkx's ARPACK call and returns networkx's answer."""
    G = nx.DiGraph()
    G.add_edges_from(("a", f"a{i}") for i in range(50))
    G.add_edges_from(("b", f"b{i}") for i in range(51))
    h1, a1 = nx.hits(G)
    assert nx.config.backends.asapgraph.hits_method == "auto"
    h2, a2 = nx.hits(G, backend="asapgraph")
    _close(h1, h2, 1e-8)
    _close(a1, a2, 1e-8)
    nx.config.backends.asapgraph.hits_method = "power"
    try:
        with pytest.raises(nx.PowerIterationFailedConvergence):
            nx.hits(G, backend="asapgraph")
        nx.config.backends.asapgraph.hits_method = "bogus"
        with pytest.raises(ValueError, match="hits_method"):
            nx.hits(G, backend="asapgraph")
    finally:
        nx.config.backends.asapgraph.hits_method = "auto"


@pytest.mark.parametrize("weight", [None, 0.0])
def test_hits_zero_adjacency_is_declined(weight):
    """No edge (or only edges of weight 0): HITS is undefined.  The backend used to return
    NaN for every node (0 / 0 in the normalisation); it declines (NotImplementedError when
    named, networkx's own code and error otherwise), never a NaN answer."""
    G = nx.DiGraph()
    G.add_nodes_from(["p", "q", "r"])
    if weight is not None:
        G.add_edge("p", "q", weight=weight)
    with pytest.raises(NotImplementedError):
        nx.hits(G, backend="asapgraph")
    with pytest.raises(Exception) as ref:
        nx.hits(G)
    assert not isinstance(ref.value, NotImplementedError)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_from_networkx_reused_and_round_trip(kind):
    G = _awkward(kind, KEYS["tuple"])
    A = from_networkx(G)
    assert len(A) == len(G) and A.number_of_edges() == G.number_of_edges()
    # networkx functions dispatch on the converted object directly
    _close(nx.pagerank(G), nx.pagerank(A))
    back = A.to_networkx()
    assert set(back.nodes) == set(G.nodes)
    assert back.number_of_edges() == G.number_of_edges()
    assert type(back) is type(G)
    _close(nx.pagerank(G), nx.pagerank(back))


def test_empty_and_errors():
    for kind in KINDS:
        E = kind()
        assert nx.pagerank(E, backend="asapgraph") == {}
        assert nx.hits(E, backend="asapgraph") == ({}, {})
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(nx.path_graph(5, create_using=nx.DiGraph), max_iter=1, backend="asapgraph")
    with pytest.raises(nx.NodeNotFound):
        nx.single_source_shortest_path_length(nx.path_graph(3), 7, backend="asapgraph")
    with pytest.raises(ZeroDivisionError):
        nx.pagerank(nx.path_graph(3), personalization={0: 0}, backend="asapgraph")


def test_config_threads():
    G = nx.gnp_random_graph(200, 0.05, directed=True, seed=3)
    ref = nx.pagerank(G, tol=1e-12)
    nx.config.backends.asapgraph.threads = 1
    try:
        _close(ref, nx.pagerank(G, tol=1e-12, backend="asapgraph"))
    finally:
        nx.config.backends.asapgraph.threads = None
    info = nx.utils.backends.backend_info["asapgraph"]
    assert "pagerank" in info["functions"]


# ---------------------------------------------------------------------- scipy / pandas / arrow
def _nx_pagerank_vec(G, nodes, weight="weight"):
    pr = nx.pagerank(G, weight=weight, tol=1e-14, max_iter=1000)
    return np.array([pr[v] for v in nodes])


def _mdg(edges, nodes=()):
    G = nx.MultiDiGraph()
    G.add_nodes_from(nodes)
    G.add_weighted_edges_from(edges)
    return G


@pytest.mark.parametrize("fmt", ["csr_array", "csc_array", "coo_array", "csr_matrix",
                                 "coo_matrix"])
def test_from_scipy(fmt):
    rng = np.random.default_rng(5)
    n, m = 60, 300
    r, c = rng.integers(0, n - 2, m), rng.integers(0, n - 2, m)   # n-2, n-1 isolated
    r[:5] = c[:5] = 7                                                 # self-loops
    w = rng.random(m) + 0.1
    A = getattr(sp, fmt)((w, (r, c)), shape=(n, n))                   # duplicates summed
    g = Graph.from_scipy(A)
    assert g.n == n
    res = asapgraph.pagerank(g, tol=1e-14)
    ref = _nx_pagerank_vec(_mdg(zip(r.tolist(), c.tolist(), w.tolist()), range(n)), range(n))
    assert np.abs(res.ranks - ref).max() <= 1e-12
    np.testing.assert_allclose(g.to_scipy().toarray(), A.toarray(), rtol=1e-15)
    u = Graph.from_scipy(getattr(sp, fmt)((np.ones(3), ([0, 1, 2], [1, 2, 0])), shape=(4, 4)))
    assert u.weights is None and u.n == 4
    assert Graph.from_scipy(sp.csr_array((0, 0))).n == 0
    with pytest.raises(ValueError, match="square"):
        Graph.from_scipy(sp.csr_array((2, 3)))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64])
def test_from_scipy_csr_keeps_every_entry(weighted, idx_dtype):
    """A non-canonical CSR (duplicate and unsorted entries in a row): every stored entry is
    one edge; the in-CSR equals the one scipy's own transposition gives."""
    rng = np.random.default_rng(11)
    n, m = 50, 400
    rows = np.sort(rng.integers(0, n - 1, m))               # vertex n-1: no out-edge
    cols = rng.integers(0, n, m).astype(idx_dtype)
    cols[:6] = cols[0]                                      # repeated entries in one row
    indptr = np.zeros(n + 1, dtype=idx_dtype)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    data = rng.random(m) + 0.5 if weighted else np.ones(m)
    A = sp.csr_array((data, cols, indptr), shape=(n, n))
    g = Graph.from_scipy(A)
    assert g.m == m and g.n == n
    assert (g.weights is not None) == weighted
    np.testing.assert_array_equal(g.out_degree, np.diff(indptr))
    C = A.tocsc()                                           # scipy keeps duplicates here
    np.testing.assert_array_equal(g.indptr, C.indptr)
    for v in range(n):                                      # same multiset per column
        a, b = g.indptr[v], g.indptr[v + 1]
        got = sorted(zip(g.indices[a:b].tolist(),
                         (g.weights[a:b] if weighted else np.ones(b - a)).tolist()))
        want = sorted(zip(C.indices[a:b].tolist(), C.data[a:b].tolist()))
        assert got == want
    ref = Graph.from_scipy(C)
    np.testing.assert_allclose(asapgraph.pagerank(g, tol=1e-13).ranks,
                               asapgraph.pagerank(ref, tol=1e-13).ranks, atol=1e-13)


def test_from_scipy_csr_threaded_transpose_equals_scipy():
    """Above 2**20 entries the transposition runs on several threads (rows of the result
    split between them); the result is scipy's stable transposition, entry for entry."""
    from asapgraph.kernels import _graph

    rng = np.random.default_rng(3)
    n, m = 5000, 2_500_000
    rows = np.sort(rng.integers(0, n, m))
    cols = (rng.zipf(1.3, m) % n).astype(np.int32)          # skewed columns, like graphs
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    data = rng.random(m) + 0.5
    A = sp.csr_array((data, cols, indptr), shape=(n, n))
    C = A.tocsc()
    g = Graph.from_scipy(A)
    np.testing.assert_array_equal(g.indptr, C.indptr)
    np.testing.assert_array_equal(g.indices, C.indices)
    np.testing.assert_array_equal(g.weights, C.data)
    out = np.empty(m, dtype=np.int32)                         # 1 thread: the same output
    _graph.transpose_csr_par(indptr, cols, np.asarray(C.indptr, dtype=np.int64), out,
                             threads=1)
    np.testing.assert_array_equal(out, C.indices)


def test_from_scipy_refuses_out_of_range_indices():
    A = sp.csr_array((np.ones(3), np.array([0, 5, 1], dtype=np.int32), np.array([0, 1, 2, 3])),
                     shape=(3, 3))
    with pytest.raises(ValueError, match="out of range"):
        Graph.from_scipy(A)


EDGES = [("a", "b", 2.0), ("b", "c", 0.5), ("c", "a", 1.0), ("c", "c", 3.0), ("a", "b", 4.0),
         ("a", "d", 1.5)]


def test_from_pandas_strings_and_ints():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(EDGES, columns=["source", "target", "w"])
    g = Graph.from_pandas(df, weight="w")
    res = asapgraph.pagerank(g, tol=1e-14)
    ref = _nx_pagerank_vec(_mdg(EDGES), list(g.labels))
    assert np.abs(res.ranks - ref).max() <= 1e-12
    out = res.to_pandas()
    assert list(out.columns) == ["node", "rank"] and set(out["node"]) == {"a", "b", "c", "d"}
    assert res.to_dict()["a"] == pytest.approx(dict(zip(g.labels, ref))["a"], abs=1e-12)
    # integer ids keep their values; no weight column: unweighted
    di = pd.DataFrame({"s": [10, 20, 20], "t": [20, 30, 10]})
    gi = Graph.from_pandas(di, source="s", target="t")
    assert gi.labels is None and gi.original_ids().tolist() == [10, 20, 30]
    # tuples as labels
    dt = pd.DataFrame({"source": [(1, 2), (3, 4)], "target": [(3, 4), (1, 2)]})
    gt = Graph.from_pandas(dt)
    assert set(asapgraph.pagerank(gt).to_dict()) == {(1, 2), (3, 4)}
    assert Graph.from_pandas(pd.DataFrame({"source": [], "target": []})).n == 0
    with pytest.raises(KeyError, match="weight column 'x'"):
        Graph.from_pandas(df, weight="x")


def test_from_arrow_and_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    s, d, w = zip(*EDGES)
    t = pa.table({"source": list(s), "target": list(d), "weight": list(w)})
    g = Graph.from_arrow(t, weight="weight")
    ref = _nx_pagerank_vec(_mdg(EDGES), list(g.labels))
    assert np.abs(asapgraph.pagerank(g, tol=1e-14).ranks - ref).max() <= 1e-12
    ti = pa.table({"a": np.array([0, 1, 2, 2], dtype=np.int64), "b": np.array([1, 2, 0, 3])})
    gi = Graph.from_arrow(ti)
    assert gi.n == 4 and gi.labels is None
    path = tmp_path / "edges.parquet"
    pq.write_table(t, path)
    gp = asapgraph.load_graph(str(path), weighted=True)
    assert np.abs(asapgraph.pagerank(gp, tol=1e-14).ranks - ref).max() <= 1e-12
    gu = asapgraph.load_graph(str(path))
    assert gu.weights is None and gu.m == len(EDGES)


def test_labelled_text(tmp_path):
    p = tmp_path / "e.txt"
    p.write_text("# comment\n" + "".join(f"{u}\t{v}\t{w}\n" for u, v, w in EDGES))
    g = asapgraph.load_graph(str(p), labels=True, weighted=True)
    ref = _nx_pagerank_vec(_mdg(EDGES), list(g.labels))
    assert np.abs(asapgraph.pagerank(g, tol=1e-14).ranks - ref).max() <= 1e-12
    bad = tmp_path / "bad.txt"
    bad.write_text("a b 1\nc\n")
    with pytest.raises(asapgraph.InputError, match=r"bad.txt:2:"):
        asapgraph.load_graph(str(bad), labels=True)


def test_program_results_carry_labels():
    g = Graph.from_labels(["x", "y", "z", "w"], ["y", "z", "x", "w"])
    r = wcc(g)   # component label: the smallest dense id of the component
    assert r.to_dict() == {"w": 0, "x": 1, "y": 1, "z": 1}
    from asapgraph.programs import bfs
    assert bfs(g, "y").to_dict() == {"w": -1, "x": 2, "y": 0, "z": 1}
    pytest.importorskip("pandas")
    assert set(r.to_pandas()["node"]) == {"w", "x", "y", "z"}


@pytest.mark.parametrize("obj", ["nx", "scipy", "ndarray", "pandas", "arrow", "list"])
def test_first_contact(obj):
    """A foreign object either works or raises one line naming the converter."""
    G = nx.DiGraph([(0, 1), (1, 2), (2, 0)])
    make = {"nx": lambda: G, "scipy": lambda: nx.to_scipy_sparse_array(G),
            "ndarray": lambda: np.array([[0, 1], [1, 2], [2, 0]]),
            "pandas": lambda: pytest.importorskip("pandas").DataFrame(
                {"source": [0, 1, 2], "target": [1, 2, 0]}),
            "arrow": lambda: pytest.importorskip("pyarrow").table(
                {"source": [0, 1, 2], "target": [1, 2, 0]}),
            "list": lambda: [(0, 1), (1, 2)]}
    o = make[obj]()
    if obj == "list":
        with pytest.raises(TypeError) as e:
            asapgraph.pagerank(o)
        assert "\n" not in str(e.value) and "from_" in str(e.value)
        return
    g = asapgraph.load_graph(o)
    assert g.n == 3
    r = asapgraph.pagerank(o, tol=1e-14)
    assert np.allclose(r.ranks, 1 / 3)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_graph_views(kind):
    """Subgraph and reverse views (FilterAtlas/FilterAdjacency, not dicts) convert too."""
    G = _awkward(kind, KEYS["str"])
    for V in ([G.subgraph(["a", "b", "c", "f"])]
              + ([G.reverse(copy=False)] if G.is_directed() else [])):
        _close(nx.pagerank(V, tol=1e-12), nx.pagerank(V, tol=1e-12, backend="asapgraph"))


class _Adj(dict):
    """A dict subclass as networkx's inner adjacency factory: forces the generic
    (np.fromiter) reading path instead of the C loops of kernels/_nxread."""


@pytest.mark.parametrize("keys", [list(range(6)), KEYS["str"], KEYS["mixed"]], ids=str)
@pytest.mark.parametrize("directed", [True, False])
def test_c_reader_equals_generic_path(keys, directed):
    from asapgraph.graph.nxcsr import read_networkx

    base = nx.DiGraph if directed else nx.Graph

    class Custom(base):
        adjlist_inner_dict_factory = _Adj

    G1, G2 = _awkward(base, keys), _awkward(Custom, keys)
    G1.add_edge(keys[4], keys[1], other=7)      # an edge with data but no weight
    G2.add_edge(keys[4], keys[1], other=7)
    for kw in ({"weight": None}, {"weight": "weight"}, {"edge_attrs": True},
               {"edge_attrs": {"weight": None, "other": 0.0}}):
        a, b = read_networkx(G1, **kw), read_networkx(G2, **kw)
        assert a.nodes == b.nodes
        np.testing.assert_array_equal(a.indptr, b.indptr)
        np.testing.assert_array_equal(a.indices, b.indices)
        assert a.edge_data.keys() == b.edge_data.keys()
        for k, w in a.edge_data.items():
            if w is None:
                assert b.edge_data[k] is None
            else:
                np.testing.assert_array_equal(w, b.edge_data[k])   # NaN == NaN here
    # the dense ids are right, not merely equal on both paths
    a = read_networkx(G1, weight="weight")
    idx = {v: i for i, v in enumerate(a.nodes)}
    pred = G1.pred if directed else G1.adj
    for v in a.nodes:
        row = a.indices[a.indptr[idx[v]]:a.indptr[idx[v] + 1]].tolist()
        assert row == [idx[u] for u in pred[v]]
        want = [pred[v][u].get("weight", 1.0) for u in pred[v]]
        got = a.edge_data["weight"]
        assert (want == [1.0] * len(want) if got is None
                else got[a.indptr[idx[v]]:a.indptr[idx[v] + 1]].tolist() == want)


def test_c_reader_non_numeric_weight():
    from asapgraph.graph.nxcsr import read_networkx

    G = nx.DiGraph()
    G.add_edge(0, 1, weight="heavy")
    with pytest.raises(NotImplementedError, match="weight"):
        read_networkx(G, weight="weight")


def test_pagerank_weighted_on_unit_or_no_weights():
    """``weighted=True`` on a networkx graph whose weights are all 1 (the converter drops
    them as unit weights) or that has no edge: networkx's answer (a missing weight counts
    1), not "weighted=True but the graph has no edge weights" (found by a soak of the
    Python API).  A native Graph without weights is still refused."""
    G = nx.DiGraph()
    G.add_edge("a", "b", weight=1.0)
    G.add_edge("b", "c", weight=1.0)
    G.add_node("d")
    ref = nx.pagerank(G, weight="weight", tol=1e-14, max_iter=10000)
    got = asapgraph.pagerank(G, weighted=True, tol=1e-13)
    _close(ref, dict(zip(got.vertices(), got.ranks)), 1e-11)
    E = nx.Graph()
    E.add_nodes_from([1, 2, 3])
    assert np.allclose(asapgraph.pagerank(E, weighted=True).ranks, 1 / 3, atol=1e-15)
    with pytest.raises(ValueError, match="no edge weights"):
        asapgraph.pagerank(Graph.from_edges(np.array([0]), np.array([1]), n=2), weighted=True)


def test_node_keys_past_int64():
    """networkx node keys are any Python int: a key past int64 (2**70) made the backend's
    conversion raise OverflowError (the "are the nodes 0..n-1" probe converted every key to
    int64); and ``asapgraph.pagerank(G, personalization={2**70: 1})`` raised OverflowError
    instead of naming the id that is not a vertex."""
    G = nx.DiGraph([(2**70, 1), (1, -5), (-5, 2**70), (1, 2**70)])
    for kw in ({}, {"personalization": {2**70: 1.0}}, {"personalization": {-5: 1.0}}):
        _close(nx.pagerank(G, **kw), nx.pagerank(G, backend="asapgraph", **kw))
        _close(nx.pagerank(G, tol=1e-14, max_iter=1000, **kw),
               asapgraph.pagerank(G, tol=1e-13, **kw).to_dict(), 1e-11)
    P = nx.DiGraph([(0, 1), (1, 2), (2, 0)])
    with pytest.raises(asapgraph.InputError, match=r"not in the graph, e.g. \[%d\]" % 2**70):
        asapgraph.pagerank(P, personalization={0: 1.0, 2**70: 1.0})


def test_python_api_vectors_by_label(tmp_path):
    """A graph whose vertices are named (networkx keys, ``load_graph(labels=True)``) takes
    personalization / dangling / nstart dicts keyed by those names, as its results are
    (``to_dict``); they were refused with "vertex ids must be integers"."""
    G = nx.DiGraph([("a", "b"), ("b", "a"), ("b", "c"), (("t", 1), "a")])
    for kw in ({"personalization": {("t", 1): 1.0}}, {"dangling": {"a": 2.0, "b": 1.0}},
               {"personalization": {"b": 1.0}, "nstart": {"c": 1.0}}):
        want = nx.pagerank(G, tol=1e-14, max_iter=1000, **kw)
        _close(want, asapgraph.pagerank(G, tol=1e-13, **kw).to_dict(), 1e-11)
    with pytest.raises(asapgraph.InputError, match=r"1 vertex id\(s\) not in the graph, e.g. \['zz'\]"):
        asapgraph.pagerank(G, personalization={"a": 1.0, "zz": 1.0})
    p = tmp_path / "names.txt"
    p.write_text("v1 v2\nv2 v3\nv3 v1\nv3 v4\n")
    g = asapgraph.load_graph(p, labels=True)
    got = asapgraph.pagerank(g, personalization={"v1": 1.0}, tol=1e-13).to_dict()
    H = nx.read_edgelist(p, create_using=nx.DiGraph)
    _close(nx.pagerank(H, personalization={"v1": 1.0}, tol=1e-14, max_iter=1000), got, 1e-11)


@pytest.mark.parametrize("kind", [nx.DiGraph, nx.MultiDiGraph, nx.Graph])
def test_hits_unnormalized_has_networkx_scale(kind):
    """``nx.hits(G, normalized=False)``: networkx returns the unit (L2) singular vector as
    authorities and ``h = A a`` as hubs; the backend's power iteration returned its
    max-normalised iterates (hubs off by 2x-5x).  networkx's sign is ARPACK's (either);
    the backend's is positive."""
    G = kind()
    G.add_weighted_edges_from([(1, 2, 0.5), (1, 3, 2.0), (2, 3, 1.0), (3, 1, 1.0), (3, 4, 1.0)])
    G.add_node(7)
    if kind is nx.MultiDiGraph:
        G.add_edge(1, 2, weight=5.0)
    h1, a1 = nx.hits(G, normalized=False)
    h2, a2 = nx.hits(G, normalized=False, backend="asapgraph")
    _close({k: abs(v) for k, v in h1.items()}, h2, 1e-7)
    _close({k: abs(v) for k, v in a1.items()}, a2, 1e-7)


@pytest.mark.parametrize("path", ["edges.txt.gz", "rmat:8"])
def test_path_to_pagerank_names_load_graph(path):
    """``asapgraph.pagerank("edges.txt.gz")`` (the CLI's form, in Python) listed the
    converters but not the reader the user needs: the message names load_graph."""
    import pathlib

    for p in (path, pathlib.Path(path)):
        with pytest.raises(TypeError) as e:
            asapgraph.pagerank(p)
        assert "\n" not in str(e.value) and f"got the path or spec {str(p)!r}" in str(e.value)
        assert "asapgraph.load_graph(path)" in str(e.value)


@pytest.mark.parametrize("method", ["auto", "svds"])
def test_hits_nstart_keys_checked_and_read_by_node(method):
    """nstart with an extra key or a missing node: networkx raises ValueError (its start
    vector has the wrong shape); the backend's power iteration ignored the extra key and
    started the missing node at 0.  A dict in another order than G's nodes: the ARPACK
    path passed the values in dict order (by position, not by node)."""
    G = nx.DiGraph()
    G.add_weighted_edges_from([(0, 1, 2), (1, 2, 3), (0, 2, 7), (2, 0, 1)])
    nx.config.backends.asapgraph.hits_method = method
    try:
        for bad in ({0: 1.0, 1: 1.0, 2: 1.0, 9: 1.0}, {0: 1.0, 1: 1.0}):
            with pytest.raises(ValueError):
                nx.hits(G, nstart=bad, backend="networkx")
            with pytest.raises(ValueError, match="nstart"):
                nx.hits(G, nstart=bad, backend="asapgraph")
        h1, a1 = nx.hits(G, nstart={0: 1.0, 1: 1.0, 2: 1.0}, backend="networkx")
        h2, a2 = nx.hits(G, nstart={2: 1.0, 0: 1.0, 1: 1.0}, backend="asapgraph")
        _close(h1, h2, 1e-8)
        _close(a1, a2, 1e-8)
    finally:
        nx.config.backends.asapgraph.hits_method = "auto"
