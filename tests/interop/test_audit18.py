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
