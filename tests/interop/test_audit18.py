"""Audit 18: the networkx backend against networkx itself (values and their types)."""
import warnings

import pytest

nx = pytest.importorskip("networkx")

warnings.filterwarnings("ignore", message=".*conversions to backend graphs are saved")


def _dijkstra_alike(G, **kw):
    want = nx.single_source_dijkstra_path_length(G, 0, **kw)
    got = nx.single_source_dijkstra_path_length(G, 0, backend="asapgraph", **kw)
    assert got == want
    assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in want.items()}


@pytest.mark.parametrize("cls", [nx.DiGraph, nx.Graph, nx.MultiDiGraph])
def test_dijkstra_float_weights_give_floats(cls):
    """Float weights with integral values (2.0, 1.0): networkx sums floats, the backend
    returned ints (it judged integrality by value, not type); the source is the int 0
    (the backend gave 0.0 with non-integral weights)."""
    G = cls()
    G.add_edge(0, 1, weight=2.0)
    G.add_edge(1, 2, weight=1.0)
    G.add_edge(0, 3, weight=1.5)
    _dijkstra_alike(G)
    _dijkstra_alike(G, cutoff=2.5)
    H = cls()
    H.add_edge(0, 1, weight=2)
    H.add_edge(1, 2)
    _dijkstra_alike(H)


@pytest.mark.parametrize("cutoff", [0, -1, -0.5])
def test_dijkstra_cutoff_below_zero_keeps_the_source(cutoff):
    """networkx lists the source whatever the cutoff; the backend returned {} for a
    negative cutoff and {0: 0.0} for cutoff 0 with float weights."""
    G = nx.DiGraph()
    G.add_edge(0, 1, weight=2.5)
    _dijkstra_alike(G, cutoff=cutoff)


# ---------------------------------------------------------------- arrays and scipy
def test_uint64_ids_past_int64_are_labels():
    """uint64 ids >= 2^63 were cast to negative int64 and refused as 'vertex ids must be
    >= 0, got -9223372036854775803' (a number the user never wrote); now labels, as
    networkx keys past int64 are, with networkx's ranks."""
    import numpy as np
    import asapgraph

    big = 2**63 + 5
    r = asapgraph.pagerank(np.array([[0, big], [big, 1]], dtype=np.uint64), tol=1e-13)
    G = nx.DiGraph([(0, big), (big, 1)])
    want = nx.pagerank(G, tol=1e-14, max_iter=1000)
    got = dict(zip(r.vertices().tolist(), r.ranks.tolist()))
    assert got.keys() == want.keys()
    assert all(abs(got[k] - want[k]) < 1e-9 for k in want)


def test_float_ids_past_int64_refused():
    """A float edge array with an id >= 2^63 was cast to int64 as -2^63 (another vertex:
    a wrong answer, exit without error); now a ValueError naming the id."""
    import numpy as np
    import asapgraph

    with pytest.raises(ValueError, match=r"vertex id 1e\+19 \(row 0\) does not fit in int64"):
        asapgraph.pagerank(np.array([[0, 1e19], [1e19, 2]]))


def test_complex_weights_refused():
    """Complex weights (scipy matrix, edge array, DataFrame) kept their real part with only
    a ComplexWarning (weight 1j became 0: a wrong answer); now refused."""
    import numpy as np
    import scipy.sparse as sp
    import asapgraph

    with pytest.raises(ValueError, match="complex"):
        asapgraph.pagerank(sp.csr_matrix(np.array([[0, 1j], [1, 0]])))
    with pytest.raises(ValueError, match="complex"):
        asapgraph.pagerank(np.array([[0, 1, 1j], [1, 0, 1]]))
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="complex"):
        asapgraph.pagerank(pd.DataFrame({"source": [0, 1], "target": [1, 0],
                                         "weight": [1j, 1]}))
