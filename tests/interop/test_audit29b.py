"""Audit 29b: the networkx backend against networkx's own semantics (cutoffs, int
distances, argument errors)."""
import math

import numpy as np
import pytest

nx = pytest.importorskip("networkx")

pytestmark = pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs")


@pytest.mark.parametrize("cutoff", [0.5, 1.5, np.float64(2.5), 2.0, 0, -0.5, math.nan])
@pytest.mark.parametrize("directed", [True, False])
def test_bfs_fractional_cutoff_is_networkx_level_rule(cutoff, directed):
    """networkx expands level L + 1 while ``cutoff > L``, so cutoff 1.5 lists the nodes at
    distance 2 (and 0.5 those at 1); the backend kept ``distance <= cutoff`` and dropped
    them ({0: 0, 1: 1} for networkx's {0: 0, 1: 1, 2: 2})."""
    G = nx.path_graph(6, create_using=nx.DiGraph if directed else nx.Graph)
    want = nx.single_source_shortest_path_length(G, 0, cutoff=cutoff)
    got = nx.single_source_shortest_path_length(G, 0, cutoff=cutoff, backend="asapgraph")
    assert got == want


@pytest.mark.parametrize("w", [2**53 - 1, 2**53, 2**60 + 1])
def test_dijkstra_int_distances_past_2_53_declined(w):
    """int weights: networkx adds Python ints exactly; the engine's doubles rounded
    2**60 + 1 to 2**60 and returned the int 1152921504606846976 for networkx's ...977
    (a wrong answer).  Distances of 2**53 or more are declined: NotImplementedError when
    the backend is named, networkx's exact ints when it is chosen by priority."""
    G = nx.DiGraph()
    G.add_edge(0, 1, weight=w)
    G.add_edge(1, 2, weight=1)
    G.add_edge(0, 3, weight=2)
    want = nx.single_source_dijkstra_path_length(G, 0)
    with pytest.raises(NotImplementedError):
        nx.single_source_dijkstra_path_length(G, 0, backend="asapgraph")
    prio = list(nx.config.backend_priority.algos)
    nx.config.backend_priority.algos = ["asapgraph"]
    try:
        got = nx.single_source_dijkstra_path_length(G, 0)
    finally:
        nx.config.backend_priority.algos = prio
    assert got == want and got[2] == w + 1


def test_dijkstra_int_distances_below_2_53_still_run():
    G = nx.DiGraph()
    G.add_edge(0, 1, weight=2**53 - 3)
    G.add_edge(1, 2, weight=1)
    G.add_edge(0, 3, weight=2.5)   # mixed int and float weights
    want = nx.single_source_dijkstra_path_length(G, 0)
    got = nx.single_source_dijkstra_path_length(G, 0, backend="asapgraph")
    assert got == want
    assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in want.items()}


def test_pagerank_max_iter_as_networkx():
    """networkx loops over ``range(max_iter)``: a negative count never converges
    (PowerIterationFailedConvergence; the backend raised the engine's ValueError) and a
    float is a TypeError (the backend ran 50.0 sweeps)."""
    G = nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, 3)])
    for kw in ({}, {"backend": "asapgraph"}):
        with pytest.raises(nx.PowerIterationFailedConvergence):
            nx.pagerank(G, max_iter=-1, **kw)
        with pytest.raises(TypeError):
            nx.pagerank(G, max_iter=50.0, **kw)
    want = nx.pagerank(G, max_iter=np.int64(200), tol=1e-10)
    got = nx.pagerank(G, max_iter=np.int64(200), tol=1e-10, backend="asapgraph")
    assert sum(abs(want[k] - got[k]) for k in want) <= 1e-9


def test_katz_nstart_key_not_a_node():
    """networkx reads ``G[key]`` for every key of ``nstart``: a key that is not a node is a
    KeyError; the backend read ``nstart`` by node and ignored it."""
    G = nx.DiGraph([(0, 1), (1, 2), (2, 0)])
    nstart = {0: 1.0, 1: 1.0, 2: 1.0, "z": 1.0}
    for kw in ({}, {"backend": "asapgraph"}):
        with pytest.raises(KeyError):
            nx.katz_centrality(G, alpha=0.1, nstart=nstart, **kw)
    want = nx.katz_centrality(G, alpha=0.1, nstart={0: 1.0, 1: 2.0, 2: 3.0})
    got = nx.katz_centrality(G, alpha=0.1, nstart={0: 1.0, 1: 2.0, 2: 3.0},
                             backend="asapgraph")
    assert max(abs(want[k] - got[k]) for k in want) <= 1e-12


# ---------------------------------------------------------------- the Python API
def test_save_binary_keeps_or_refuses_vertex_names(tmp_path):
    """save_binary wrote a named graph's dense numbers and dropped the names without a
    word: 'a'..'d' came back as 0..3, and networkx nodes 10, 3, 7 as 0, 1, 2 (other
    vertices' names).  Integer names are now saved as the format's original ids; other
    names are refused (as ``convert --labels`` is).  A networkx graph is converted first
    (it was an AttributeError: 'DiGraph' object has no attribute 'indices')."""
    import asapgraph
    from asapgraph.interop import as_graph

    path = tmp_path / "g.asg"
    G = nx.DiGraph([(10, 3), (3, 7), (7, 10), (7, 2**63 - 1)])
    want = asapgraph.pagerank(G).to_dict()
    for obj in (G, as_graph(G)):
        asapgraph.save_binary(obj, path)
        assert asapgraph.pagerank(asapgraph.load_binary(path)).to_dict() == want
    for bad in (nx.DiGraph([("a", "b")]), nx.DiGraph([(-1, 1)]), nx.DiGraph([(2**63, 1)])):
        path.unlink(missing_ok=True)
        with pytest.raises(ValueError, match="binary format stores vertex ids"):
            asapgraph.save_binary(bad, path)
        with pytest.raises(ValueError, match="binary format stores vertex ids"):
            asapgraph.save_binary(as_graph(bad), path)
        assert not path.exists()
    H = nx.DiGraph([(0, 1), (1, 2)])
    asapgraph.save_binary(H, path)
    assert asapgraph.load_binary(path).ids is None


@pytest.mark.parametrize("indptr, indices, what", [
    ([0, 1, 3], [1, 0], "end at len"),              # was a segmentation fault
    ([0, 2, 1, 2], [1, 0], "non-decreasing"),
    ([0, 1], [5], r"in \[0, 1\), got 5"),           # was a broadcast error inside pagerank
    ([0, 1, 2], [1, -1], "got -1"),
    ([0, 1, 2], [1.0, 0.0], "integer array"),
])
def test_graph_from_raw_arrays_checked(tmp_path, indptr, indices, what):
    """``asapgraph.Graph(indptr, indices)`` took any arrays, and the kernels index with
    them unchecked: a CSR whose indptr ends past the indices crashed the interpreter in
    pagerank (SIGSEGV).  Now a ValueError at construction (in a child process, so that
    a crash fails this test and not the run)."""
    import subprocess
    import sys

    code = ("import asapgraph\n"
            "try:\n"
            f"    g = asapgraph.Graph({indptr!r}, {indices!r})\n"
            "except ValueError as e:\n"
            "    print('ValueError', e)\n"
            "else:\n"
            "    print('accepted', asapgraph.pagerank(g).ranks)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path)  # (not the checkout: the installed package)
    assert r.returncode == 0, (r.returncode, r.stderr[-500:])
    assert r.stdout.startswith("ValueError Graph:"), r.stdout
    assert __import__("re").search(what, r.stdout), r.stdout


def test_graph_from_raw_arrays_still_built():
    import asapgraph

    g = asapgraph.Graph(np.array([0, 1, 2]), np.array([1, 0], dtype=np.int32), [2.0, 3.0])
    assert (g.n, g.m) == (2, 2) and g.out_degree.tolist() == [1, 1]
    assert asapgraph.Graph([0], []).n == 0   # np.asarray([]) is float64: still no edge
    assert asapgraph.pagerank(g).ranks.tolist() == pytest.approx([0.5, 0.5])


@pytest.mark.parametrize("bad", [{1: 2}, None, [(0, 1)]])
def test_from_networkx_refuses_other_objects(bad):
    """from_networkx({1: 2}) was "AttributeError: 'dict' object has no attribute
    'is_directed'" and from_networkx(None) "TypeError: 'NoneType' object is not
    iterable", from inside the reader; now one TypeError saying what is expected."""
    import asapgraph

    with pytest.raises(TypeError, match="from_networkx: expected a networkx graph"):
        asapgraph.from_networkx(bad)
    view = nx.subgraph_view(nx.path_graph(4), filter_node=lambda v: v < 3)
    assert asapgraph.from_networkx(view).number_of_edges() == 2


@pytest.mark.parametrize("threads", [1.5, "x", "2", True, 0])
def test_threads_must_be_a_positive_integer(threads):
    """asapgraph.pagerank and run took int(threads): 1.5 and True ran on one thread
    without a word, 'x' was "invalid literal for int() with base 10: 'x'"."""
    import asapgraph
    from asapgraph.programs import PageRankProgram

    G = nx.DiGraph([(0, 1), (1, 2), (2, 0)])
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        asapgraph.pagerank(G, threads=threads)
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        asapgraph.run(PageRankProgram(), G, threads=threads)
    for ok in (1, 2.0, np.int64(2)):
        assert asapgraph.pagerank(G, threads=ok).converged


@pytest.mark.parametrize("kw", [{"weight_col": 4.5}, {"dst_col": 4.9}, {"src_col": 1.5},
                                {"weight_col": "x"}, {"src_col": "x"}, {"weight_col": True}])
def test_column_numbers_must_be_integers(tmp_path, kw):
    """load_graph / read_edges took int(column): weight_col=4.5 read column 4, dst_col=4.9
    read column 4 as the destination (ids 7, 8, 9: another graph), without a word;
    src_col='x' was "'>' not supported between instances of 'int' and 'str'"."""
    import asapgraph

    p = tmp_path / "g.txt"
    p.write_text("0 1 2.5 7\n1 2 1 8\n2 0 3 9\n")
    name = next(iter(kw))
    with pytest.raises(ValueError, match=f"{name} is 1-based"):
        asapgraph.load_graph(str(p), **kw)
    with pytest.raises(ValueError, match=f"{name} is 1-based"):
        asapgraph.read_edges(str(p), **kw)
    g = asapgraph.load_graph(str(p), weight_col=np.int64(4), dst_col=np.int32(2))
    assert sorted(g.weights.tolist()) == [7.0, 8.0, 9.0]
