"""Audit 20 (one process): regressions of defects found by a user-level audit; the MPI
halves are in tests/mpi/test_audit20.py."""
import subprocess
import sys
import warnings

import numpy as np
import pytest



def _cli(args, cwd, **kw):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120, **kw)


def _types(d):
    return {k: "int" if isinstance(v, (int, np.integer)) else type(v).__name__.rstrip("0123456789")
            for k, v in d.items()}


@pytest.mark.parametrize("cls", ["DiGraph", "MultiDiGraph", "Graph", "MultiGraph"])
def test_nx_dijkstra_mixed_int_float_weights(cls):
    """single_source_dijkstra_path_length with int and float weights (or an absent weight,
    networkx's int 1) returned every distance as a float where networkx returns ints along
    int-weighted paths; now networkx's types (an int where a path of ints is shortest).
    All 1.0 weights gave ints (the engine saw unit weights) where networkx gives floats."""
    nx = pytest.importorskip("networkx")
    import asapgraph

    warnings.filterwarnings("ignore", message=".*conversions to backend graphs are saved")
    cls = getattr(nx, cls)
    cases = [[(1, 2, 1), (2, 3, 2.5), (1, 4, 3), (4, 5, 2), (3, 5, 0.25)],
             [(1, 2, None), (2, 3, 2.5), (3, 6, None)],
             [(1, 2, np.int64(2)), (2, 3, np.float32(0.5)), (1, 3, 7)]]
    cases += [[(1, 2, w), (2, 3, w), (1, 4, w)] for w in (1.0, 2.5, 3, True)]
    for edges in cases:
        G = cls()
        for u, v, w in edges:
            G.add_edge(u, v, **({} if w is None else {"weight": w}))
        want = nx.single_source_dijkstra_path_length(G, 1)
        for got in (nx.single_source_dijkstra_path_length(G, 1, backend="asapgraph"),
                    nx.single_source_dijkstra_path_length(asapgraph.from_networkx(G), 1)):
            assert got == want and _types(got) == _types(want), (edges, got, want)


@pytest.mark.parametrize("method", ["auto", "power"])
def test_nx_hits_nstart_with_zeros_gives_the_principal_vectors(method):
    """nx.hits with an nstart that has zero entries (here the indicator of vertex 1, an
    eigenvector of A A^T for a smaller eigenvalue): the backend's power iteration stayed
    on it and returned hubs {1: 1} and authorities {2: 1} where networkx (ARPACK, whose
    answer does not depend on nstart) gives hubs {3: 1} and authorities {1: .5, 4: .5}."""
    nx = pytest.importorskip("networkx")

    warnings.filterwarnings("ignore", message=".*conversions to backend graphs are saved")
    G = nx.DiGraph([(1, 2), (2, 3), (3, 1), (3, 4)])
    nstart = {1: 1.0, 2: 0.0, 3: 0.0, 4: 0.0}
    want_h, want_a = nx.hits(G, nstart=nstart)
    nx.config.backends.asapgraph.hits_method = method
    try:
        h, a = nx.hits(G, nstart=nstart, backend="asapgraph")
    finally:
        nx.config.backends.asapgraph.hits_method = "auto"
    assert all(abs(h[k] - want_h[k]) < 1e-8 and abs(a[k] - want_a[k]) < 1e-8 for k in G), (
        h, a, want_h, want_a)
    h2, a2 = nx.hits(G, nstart={k: 1.0 + k for k in G}, backend="asapgraph")  # positive
    assert all(abs(h2[k] - want_h[k]) < 1e-8 and abs(a2[k] - want_a[k]) < 1e-8 for k in G)


@pytest.mark.parametrize("cmd", ["sssp", "bfs"])
def test_labels_source_is_the_name_as_written(tmp_path, cmd):
    """``--labels --source 01`` read the source as the int 1 and ran from the vertex
    named '1' (exit 0, the distances of another source); now the vertex named '01'."""
    (tmp_path / "g.txt").write_text("alice bob\nbob carol\n01 1\ncarol alice\n1 alice\n")
    r = _cli([cmd, "g.txt", "--labels", "--source", "01", "-q", "-o", "o.csv", "--json"],
             tmp_path)
    assert r.returncode == 0, r.stderr
    import json

    assert json.loads(r.stdout)["source"] == "01"
    rows = dict(ln.split(",") for ln in (tmp_path / "o.csv").read_text().split()[1:])
    assert rows["01"] == "0" and rows["1"] != "0", rows
    r = _cli([cmd, "g.txt", "--source", "01", "-q"], tmp_path)   # ids: 01 is the id 1
    assert r.returncode == 2 and "expected an integer vertex id in column 1" in r.stderr
