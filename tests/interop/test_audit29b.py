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
