"""Audit 24b: the convenience functions that take a graph and a source vertex (sssp, bfs)
or per-vertex vectors (katz's beta, pagerank_program's personalization/dangling) looked
them up before converting the input, so an edge array, a networkx graph, a scipy matrix or
a DataFrame failed with ``AttributeError: ... has no attribute 'ids'`` where ``run(...)``
took it; and the ASAP experiment knobs in the environment (``ASAPGRAPH_EXTRAPOLATE=yes``)
were refused by the Python API in ASAP mode on ranks only, though BSP reads some of them
too."""
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import asapgraph
from asapgraph.errors import InputError
from asapgraph.graph.convert import as_graph
from asapgraph.options import ASAP_ENV, SWITCH
from asapgraph.programs import (BFSProgram, KatzProgram, PageRankProgram, SSSPProgram, WCCProgram,
                                bfs, katz, pagerank_program, run, sssp, wcc)
from asapgraph.programs._util import dense_id

pd = pytest.importorskip("pandas")

# ------------------------------------------------------------- 1. every input kind
N, M = 40, 70


def _random_edges(seed=7):
    """A small random directed graph: unique edges, no self-loop, positive weights, every
    vertex of 0..n-1 on some edge (so a scipy matrix has the same vertices), a few weakly
    connected components."""
    rng = np.random.default_rng(seed)
    pairs = set()
    while len(pairs) < M:   # two blocks of vertices (0..29, 30..39): components apart
        lo, hi = (0, 30) if len(pairs) < M - 15 else (30, N)
        u, v = (int(x) for x in rng.integers(lo, hi, 2))
        if u != v:
            pairs.add((u, v))
    pairs = np.array(sorted(pairs), dtype=np.int64)
    used, dense = np.unique(pairs, return_inverse=True)
    pairs = dense.reshape(pairs.shape)
    w = np.round(rng.uniform(0.5, 9.5, len(pairs)), 3)
    return pairs[:, 0], pairs[:, 1], w, len(used)


S, D, W, NV = _random_edges()
ID = 3   # vertex i of the non-matrix kinds is named 3 * i + 5 (ids not 0..n-1)


def _name(i):
    return 3 * int(i) + 5


def _inputs():
    """(kind, input, the vertex naming dense vertex i, weighted) of each input kind."""
    s, d = S * ID + 5, D * ID + 5
    g = nx.DiGraph()
    g.add_weighted_edges_from((f"v{a}", f"v{b}", c) for a, b, c in zip(S, D, W))
    return [
        ("ndarray", np.column_stack([s, d, W]), _name, True),
        ("ndarray-int", np.column_stack([s, d]), _name, False),
        ("Graph", asapgraph.Graph.from_edges(S, D, n=NV, weights=W), int, True),
        ("networkx", g, lambda i: f"v{int(i)}", True),
        ("scipy", sp.csr_array((W, (S, D)), shape=(NV, NV)), int, True),
        ("DataFrame", pd.DataFrame({"source": s, "target": d, "weight": W}), _name, True),
    ]


INPUTS = _inputs()
KINDS = [k[0] for k in INPUTS]


def _reference_graph(name, weighted):
    g = nx.DiGraph()
    g.add_nodes_from(name(i) for i in range(NV))
    for a, b, c in zip(S, D, W):
        g.add_edge(name(a), name(b), **({"weight": c} if weighted else {}))
    return g


def _by_vertex(res):
    return dict(zip(np.asarray(res.vertices()).tolist(), np.asarray(res.values).tolist()))


@pytest.mark.parametrize("mode", ["bsp", "asap"])
@pytest.mark.parametrize("kind", KINDS)
def test_sssp_every_input_kind_matches_networkx(kind, mode):
    _, obj, name, weighted = INPUTS[KINDS.index(kind)]
    ref = _reference_graph(name, weighted)
    for src in (0, 7):
        got = _by_vertex(sssp(obj, name(src), mode=mode))
        want = (nx.single_source_dijkstra_path_length(ref, name(src)) if weighted
                else nx.single_source_shortest_path_length(ref, name(src)))
        assert set(got) == set(ref.nodes)
        assert {v for v, x in got.items() if np.isfinite(x)} == set(want)
        for v, x in want.items():
            assert got[v] == pytest.approx(x, rel=1e-12)


@pytest.mark.parametrize("mode", ["bsp", "asap"])
@pytest.mark.parametrize("kind", KINDS)
def test_bfs_every_input_kind_matches_networkx(kind, mode):
    _, obj, name, weighted = INPUTS[KINDS.index(kind)]
    ref = _reference_graph(name, weighted)
    for src in (0, 7):
        got = _by_vertex(bfs(obj, name(src), mode=mode))
        want = nx.single_source_shortest_path_length(ref, name(src))
        assert got == {v: want.get(v, -1) for v in ref.nodes}


@pytest.mark.parametrize("mode", ["bsp", "asap"])
@pytest.mark.parametrize("kind", KINDS)
def test_wcc_every_input_kind_matches_networkx(kind, mode):
    _, obj, name, weighted = INPUTS[KINDS.index(kind)]
    ref = _reference_graph(name, weighted)
    got = _by_vertex(wcc(obj, mode=mode))
    comps = {}
    for v, label in got.items():
        comps.setdefault(label, set()).add(v)
    want = list(nx.weakly_connected_components(ref))
    assert len(want) > 1   # (the graph has several: the labels are tested)
    assert sorted(map(sorted, comps.values())) == sorted(map(sorted, want))


@pytest.mark.parametrize("mode", ["bsp", "asap"])
@pytest.mark.parametrize("kind", KINDS)
def test_same_values_as_run(kind, mode):
    """The convenience functions give exactly what ``run(Program(dense id), input)`` does."""
    _, obj, name, _ = INPUTS[KINDS.index(kind)]
    g = as_graph(obj)
    src = dense_id(g, name(3))
    for conv, prog in ((sssp(obj, name(3), mode=mode), SSSPProgram(src)),
                       (bfs(obj, name(3), mode=mode), BFSProgram(src)),
                       (wcc(obj, mode=mode), WCCProgram())):
        ref = run(prog, obj, mode=mode)
        np.testing.assert_array_equal(conv.values, ref.values)
        np.testing.assert_array_equal(np.asarray(conv.vertices()), np.asarray(ref.vertices()))


@pytest.mark.parametrize("kind", KINDS)
def test_vertex_vectors_every_input_kind(kind):
    """katz's ``beta`` and pagerank_program's personalization as dicts by vertex: looked
    up in the converted graph (it failed on ``graph.n`` of an array), same values as run
    and, for PageRank, as :func:`asapgraph.pagerank`."""
    _, obj, name, _ = INPUTS[KINDS.index(kind)]
    g = as_graph(obj)
    beta = {name(i): 1.0 + i % 3 for i in range(NV)}
    b = np.array([beta[v] for v in np.asarray(g.labels if g.labels is not None
                                              else g.original_ids()).tolist()])
    got = katz(obj, alpha=0.05, beta=beta)
    np.testing.assert_array_equal(got.values, run(KatzProgram(0.05, b), obj, tol=1e-10,
                                                  max_iter=1000).values)
    pers = {name(0): 1.0, name(5): 3.0}
    pr = pagerank_program(obj, personalization=pers, tol=1e-12)
    ref = asapgraph.pagerank(obj, personalization=pers, tol=1e-12)
    np.testing.assert_allclose(pr.values, ref.ranks, atol=1e-10)
    p = np.zeros(g.n)
    p[[dense_id(g, name(0)), dense_id(g, name(5))]] = [0.25, 0.75]
    np.testing.assert_array_equal(pr.values, run(PageRankProgram(0.85, p, p), obj, tol=1e-12,
                                                 max_iter=1000).values)


@pytest.mark.parametrize("fn", [sssp, bfs])
@pytest.mark.parametrize("kind", KINDS)
def test_missing_source_refused_in_one_line(kind, fn):
    _, obj, name, _ = INPUTS[KINDS.index(kind)]
    missing = name(NV + 10)
    with pytest.raises(InputError) as e:
        fn(obj, missing)
    msg = str(e.value)
    assert "\n" not in msg and msg.endswith(f"source vertex {missing!r} is not in the graph"
                                            if kind == "networkx" else
                                            f"source vertex {missing} is not in the graph")


@pytest.mark.parametrize("cmd, fn", [("sssp", sssp), ("bfs", bfs)])
def test_missing_source_same_line_as_cli(tmp_path, capsys, cmd, fn):
    """The command line's refusal of a source that is not a vertex, and the API's on the
    same edges (an array names itself ``<ndarray>`` where the CLI names the file)."""
    from asapgraph.cli import main

    path = tmp_path / "g.txt"
    path.write_text("".join(f"{_name(a)} {_name(b)}\n" for a, b in zip(S, D)))
    missing = _name(NV + 10)
    assert main([cmd, str(path), "--source", str(missing), "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"{path}: source vertex {missing} is not in the graph"
    with pytest.raises(InputError) as e:
        fn(np.column_stack([S * ID + 5, D * ID + 5]), missing)
    assert str(e.value) == f"<ndarray>: source vertex {missing} is not in the graph"
    assert err.split(": ", 1)[1] == str(e.value).split(": ", 1)[1]


# ------------------------------------------------------- 2. the environment knobs
SWITCHES = [name for name, kind in ASAP_ENV.items() if kind is SWITCH]
EDGES = np.array([[0, 1], [1, 2], [2, 0], [3, 4], [4, 0], [2, 4]])


def _calls(mode):
    """Every Python API entry that runs an engine, in ``mode`` where it has modes."""
    import asapgraph.engine as E

    return {
        "run(Katz)": lambda: run(KatzProgram(0.1), EDGES, mode=mode),
        "katz": lambda: katz(EDGES, mode=mode),
        "pagerank_program": lambda: pagerank_program(EDGES, mode=mode),
        "sssp": lambda: sssp(EDGES, 0, mode=mode),
        "wcc": lambda: wcc(EDGES, mode=mode),
        "engine.pagerank": lambda: E.pagerank("rmat:6", mode=mode),
        "asapgraph.pagerank": lambda: asapgraph.pagerank(EDGES),
    }


@pytest.mark.parametrize("mode", ["bsp", "asap"])
@pytest.mark.parametrize("name, value", [("ASAPGRAPH_EXTRAPOLATE", "yes"),
                                         ("ASAPGRAPH_SPIN_WAITS", "off"),
                                         ("ASAPGRAPH_REBALANCE_FORCE", "x"),
                                         ("ASAPGRAPH_ASAP_ANSWER_HOLD", "")])
def test_api_refuses_bad_knob_in_both_modes(monkeypatch, mode, name, value):
    """``ASAPGRAPH_EXTRAPOLATE=yes`` was read as on by BSP (the sum programs' rounds on
    ranks, and both modes on one process) and refused only by ASAP's solver on ranks; now
    every entry refuses it, with the one line of the CLI and the solver."""
    from asapgraph.options import check_env

    with pytest.raises(InputError) as e:
        check_env({name: value})
    want = str(e.value)
    monkeypatch.setenv(name, value)
    for what, call in _calls(mode).items():
        with pytest.raises(InputError) as e:
            call()
        assert str(e.value) == want, what


def test_asap_and_bsp_refusals_identical(monkeypatch, capsys):
    """The distributed API's two modes and the CLI say the same line."""
    import asapgraph.engine as E
    from asapgraph.cli import main

    monkeypatch.setenv("ASAPGRAPH_EXTRAPOLATE", "yes")
    lines = []
    for mode in ("asap", "bsp"):
        with pytest.raises(InputError) as e:
            E.pagerank("rmat:6", mode=mode)
        lines.append(str(e.value))
        assert main(["katz", "rmat:6", "--mode", mode, "-q"]) == 2
        lines.append(capsys.readouterr().err.strip())
    assert lines == ["asapgraph: ASAPGRAPH_EXTRAPOLATE='yes': expected one of 0, 1"] * 4


@pytest.mark.parametrize("value", ["0", "1"])
def test_api_accepts_good_switch_values(monkeypatch, value):
    monkeypatch.setenv("ASAPGRAPH_EXTRAPOLATE", value)
    for mode in ("bsp", "asap"):
        for what, call in _calls(mode).items():
            call()


def test_debug_variables_not_checked():
    """Tracing and debugging variables (any non-empty value: on; a path) stay out of it."""
    from asapgraph.options import check_env

    debug = {"ASAPGRAPH_TRACE_ASAP", "ASAPGRAPH_TRACE_VCLOCK", "ASAPGRAPH_DEBUG_ASAP",
             "ASAPGRAPH_STRICT_ASAP", "ASAPGRAPH_EVTRACE", "ASAPGRAPH_DEBUG"}
    assert not debug & set(ASAP_ENV)
    check_env({name: "yes" for name in debug})


RANKS_SCRIPT = '''
import sys
import numpy as np
from mpi4py import MPI
from asapgraph.engine import pagerank
from asapgraph.errors import InputError
from asapgraph.programs import KatzProgram, run
e = np.array([[0, 1], [1, 2], [2, 0], [3, 4], [4, 0], [2, 4]])
me = MPI.COMM_WORLD.Get_rank()
out = []
for mode in ("bsp", "asap"):
    for what, call in (("engine.pagerank", lambda: pagerank("rmat:6", mode=mode)),
                       ("run", lambda: run(KatzProgram(0.1), e, mode=mode, comm=MPI.COMM_WORLD))):
        try:
            call()
            out.append(f"{me} {mode} {what} ran")
        except InputError as x:
            out.append(f"{me} {mode} {what} {x}")
# one writer: two ranks printing to mpiexec's stdout at once can interleave their lines
got = MPI.COMM_WORLD.gather(out, root=0)
if me == 0:
    sys.stdout.write("".join(line + chr(10) for lines in got for line in lines))
    sys.stdout.flush()
'''


def test_ranks_refuse_alike_in_both_modes(tmp_path):
    """On 2 ranks, BSP (the sum programs' rounds read ASAPGRAPH_EXTRAPOLATE) ran with
    "yes" read as on while ASAP refused it: now every rank refuses in both modes."""
    import os
    import subprocess
    import sys

    exe = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if not os.access(exe, os.X_OK):
        pytest.skip("no mpiexec in the environment")
    (tmp_path / "s.py").write_text(RANKS_SCRIPT)
    env = dict(os.environ, ASAPGRAPH_EXTRAPOLATE="yes")
    r = subprocess.run([exe, "-n", "2", sys.executable, "s.py"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    lines = sorted(r.stdout.splitlines())
    line = "asapgraph: ASAPGRAPH_EXTRAPOLATE='yes': expected one of 0, 1"
    assert lines == sorted(f"{me} {mode} {what} {line}" for me in (0, 1)
                           for mode in ("bsp", "asap") for what in ("engine.pagerank", "run"))
