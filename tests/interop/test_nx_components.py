"""The networkx backend's components against networkx, and their kernels against scipy.

networkx's ``weakly_connected_components`` / ``connected_components`` yield one set of the
graph's own node objects per component, starting a component at each node not yet seen in
node order.  The backend must give the same list: same sets, same order, the very node
objects (not equal copies), on graphs with string, tuple and mixed node keys, isolated
nodes, self-loops (on an isolated node too), components whose nodes interleave in node
order, and (directed) edges pointing against node order, so that weak connectivity needs
both directions.  Exact comparisons throughout.
"""
import numpy as np
import pytest

nx = pytest.importorskip("networkx")

from asapgraph.interop import from_networkx
from asapgraph.kernels import _components as KC
from asapgraph.kernels import _programs as K

pytestmark = pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs")

KEYS = {
    "str": lambda i: f"n{i}",
    "tuple": lambda i: (i % 3, f"t{i}"),
    "mixed": lambda i: [i, f"s{i}", (i, "x"), frozenset({i, -1}), f"b{i}".encode(),
                        i + 0.5][i % 6],
}
KINDS = [nx.DiGraph, nx.MultiDiGraph, nx.Graph, nx.MultiGraph]
# node positions 0..15; components (by position): {0, 3, 5, 9}, {1, 4}, {2}, {6, 7, 10, 14},
# {8}, {11}, {12, 13}, {15}; 2, 8 and 15 isolated, 8 with a self-loop, 11 a lone self-loop
EDGES = [(3, 0), (5, 3), (0, 9), (9, 9), (4, 1), (14, 6), (10, 14), (6, 7), (7, 10),
         (8, 8), (11, 11), (13, 12), (12, 13), (5, 9)]
N = 16


def _graph(kind, keys):
    key = KEYS[keys]
    G = kind()
    G.add_nodes_from(key(i) for i in range(N))
    G.add_edges_from((key(u), key(v)) for u, v in EDGES)
    if G.is_multigraph():
        G.add_edge(key(3), key(0))          # a parallel edge
    return G


def _same(ref, got, G):
    """Same sets in the same order, made of G's own node objects."""
    assert got == ref
    own = {id(v) for v in G}
    assert all(id(v) in own for s in got for v in s)
    assert all(type(s) is set for s in got)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("keys", KEYS, ids=str)
def test_component_sets_match_networkx(kind, keys):
    G = _graph(kind, keys)
    if G.is_directed():
        comps, number, is_conn = (nx.weakly_connected_components,
                                  nx.number_weakly_connected_components, nx.is_weakly_connected)
    else:
        comps, number, is_conn = (nx.connected_components, nx.number_connected_components,
                                  nx.is_connected)
    ref = list(comps(G))
    assert len(ref) == 8
    reused = from_networkx(G)
    for g in (G, reused):
        kw = {"backend": "asapgraph"} if g is G else {}
        out = comps(g, **kw)
        assert iter(out) is out                 # an iterator, consumed once, as networkx's
        _same(ref, list(out), G)
        assert number(g, **kw) == number(G) == 8
        assert is_conn(g, **kw) is False
    if not G.is_directed():
        for v in G:
            assert (nx.node_connected_component(reused, v)
                    == nx.node_connected_component(G, v))
    # one component once the pieces are joined (against node order in directed graphs)
    key = KEYS[keys]
    H = G.copy()
    H.add_edges_from((key(i + 1), key(i)) for i in range(N - 1))
    assert list(comps(H, backend="asapgraph")) == list(comps(H)) == [set(H)]
    assert is_conn(H, backend="asapgraph") is True


def test_components_of_edgeless_and_null_graphs():
    G = nx.DiGraph()
    assert list(nx.weakly_connected_components(G, backend="asapgraph")) == []
    assert nx.number_weakly_connected_components(G, backend="asapgraph") == 0
    with pytest.raises(nx.NetworkXPointlessConcept):
        nx.is_weakly_connected(G, backend="asapgraph")
    G.add_nodes_from(["z", "a", ("m",)])
    assert (list(nx.weakly_connected_components(G, backend="asapgraph"))
            == list(nx.weakly_connected_components(G)) == [{"z"}, {"a"}, {("m",)}])


def _min_labels(indptr, indices, n):
    """Per vertex, the smallest vertex of its weak component (scipy's labelling)."""
    sp = pytest.importorskip("scipy.sparse")
    csgraph = pytest.importorskip("scipy.sparse.csgraph")
    A = sp.csr_array((np.ones(indices.shape[0]), indices, indptr), shape=(n, n))
    _, lab = csgraph.connected_components(A, directed=True, connection="weak")
    first = np.full(lab.max() + 1 if n else 0, n, dtype=np.int64)
    np.minimum.at(first, lab, np.arange(n))
    return first[lab]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("symmetric", [False, True])
def test_component_labels_kernel_matches_scipy(threads, dtype, symmetric):
    rng = np.random.default_rng(3)
    old_thr, old_nt = K.set_parallel_threshold(0), K.set_num_threads(threads)
    try:
        for n, m in ((1, 0), (7, 3), (2000, 900), (2000, 2500), (30000, 20000)):
            src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
            if symmetric:
                src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
            order = np.argsort(dst, kind="stable")   # in-CSR: row = target
            indices = src[order].astype(dtype)
            indptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.bincount(dst, minlength=n), out=indptr[1:])
            ref = _min_labels(indptr, indices, n)
            labels = np.empty(n, dtype=dtype)
            for sample in (0, 1, 2, 5):          # Afforest's neighbour rounds (default 2)
                labels[:] = -1
                count = KC.component_labels(indptr, indices, labels, symmetric=symmetric,
                                            sample=sample)
                assert np.array_equal(labels, ref), sample
                assert count == np.unique(ref).shape[0]
            nodes = [f"v{i}" for i in range(n)]
            sets = KC.component_sets(labels, nodes)
            assert [min(int(v[1:]) for v in s) for s in sets] == np.unique(ref).tolist()
            assert sum(map(len, sets)) == n
    finally:
        K.set_parallel_threshold(old_thr)
        K.set_num_threads(old_nt)


def test_component_sets_refuses_bad_labels():
    with pytest.raises(ValueError, match="smallest"):
        KC.component_sets(np.array([0, 2, 2], dtype=np.int32), ["a", "b", "c"])
    with pytest.raises(ValueError, match="smallest"):
        KC.component_sets(np.array([0, 0, 1], dtype=np.int64), ["a", "b", "c"])
    with pytest.raises(ValueError, match="length"):
        KC.component_sets(np.array([0, 0], dtype=np.int32), ["a", "b", "c"])
    assert KC.component_sets(np.zeros(0, dtype=np.int32), []) == []


def test_component_sets_untracked_only_when_atomic():
    """Sets of atomic node objects are untracked by the cyclic collector; a set holding
    any other object (which could refer back to it) stays tracked, so a cycle through it
    is still collected."""
    import gc
    import weakref

    class Node:
        pass

    a, b = Node(), Node()
    labels = np.array([0, 0, 2, 2, 4, 4, 6], dtype=np.int32)
    nodes = [1, "s", (1, "t"), a, (2, b), 2.5, b"x"]
    gc.collect()                        # lets the collector untrack (1, "t")
    sets = KC.component_sets(labels, nodes)
    assert sets == [{1, "s"}, {(1, "t"), a}, {(2, b), 2.5}, {b"x"}]
    assert [gc.is_tracked(s) for s in sets] == [False, True, True, False]
    # a cycle through a tracked set (set -> node -> set) is collected
    a.back = sets[1]
    ref = weakref.ref(a)
    del sets, a, nodes
    gc.collect()
    assert ref() is None
