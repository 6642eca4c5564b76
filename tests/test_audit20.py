"""Audit 20 (one process): regressions of defects found by a user-level audit; the MPI
halves are in tests/mpi/test_audit20.py."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

from asapgraph.errors import InputError


def _cli(args, cwd, **kw):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120, **kw)


def _types(d):
    return {k: type(v).__name__ for k, v in d.items()}


@pytest.mark.parametrize("multi", [False, True])
def test_nx_dijkstra_mixed_int_float_weights(multi):
    """single_source_dijkstra_path_length with int and float weights (or an absent weight,
    networkx's int 1) returned every distance as a float where networkx returns ints along
    int-weighted paths; now declined (networkx's own code runs).  All 1.0 weights gave ints
    (the engine saw unit weights) where networkx gives floats."""
    nx = pytest.importorskip("networkx")
    import asapgraph

    warnings.filterwarnings("ignore", message=".*conversions to backend graphs are saved")
    cls = nx.MultiDiGraph if multi else nx.DiGraph
    for edges in ([(1, 2, 1), (2, 3, 2.5), (1, 4, 3)], [(1, 2, None), (2, 3, 2.5)],
                  [(1, 2, np.int64(2)), (2, 3, np.float32(0.5))]):
        G = cls()
        for u, v, w in edges:
            G.add_edge(u, v, **({} if w is None else {"weight": w}))
        with pytest.raises(NotImplementedError):
            nx.single_source_dijkstra_path_length(G, 1, backend="asapgraph")
        with pytest.raises(NotImplementedError):
            nx.single_source_dijkstra_path_length(asapgraph.from_networkx(G), 1)
    for w in (1.0, 2.5, 3, True):   # one kind: still the backend's, with networkx's types
        G = cls([(1, 2), (2, 3), (1, 4)])
        for u, v, d in G.edges(data=True):
            d["weight"] = w
        want = nx.single_source_dijkstra_path_length(G, 1)
        got = nx.single_source_dijkstra_path_length(G, 1, backend="asapgraph")
        assert got == want and _types(got) == _types(want), (w, got, want)
