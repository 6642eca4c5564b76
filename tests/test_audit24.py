"""Audit 24: the ASAP environment knobs read outside the up-front check (the answer rule's
fraction took a negative value, the on/off switches any word), negative edge weights of
in-memory graphs refused without naming the edge, and negative vertex ids of integer edge
arrays taken as labels where a text edge list refuses them."""
import re
from pathlib import Path

import numpy as np
import pytest

from asapgraph.errors import InputError
from asapgraph.options import ASAP_ENV, SWITCH, check_env

SWITCHES = [name for name, kind in ASAP_ENV.items() if kind is SWITCH]
ANSWER_WHY = ("is not a number from 0 to 1 \\(the answer rule's fraction of the rank's "
              "sweep; 0: off\\)")


# ---------------------------------------------------------------- 1. the environment knobs
@pytest.mark.parametrize("value", ["-0.5", "-1", "-0", "1.5", "2", "nan", "inf", "-inf",
                                   "x", "", "0.4.1"])
def test_answer_fraction_out_of_range_refused(value):
    """``ASAPGRAPH_ASAP_ANSWER`` negative acted as off and showed in ``--json`` as given;
    above 1 it counted peers slower than the rank as fast ones; NaN was taken too."""
    if value == "-0":   # (float: -0.0 == 0, off: a spelling of 0, accepted)
        check_env({"ASAPGRAPH_ASAP_ANSWER": value})
        return
    with pytest.raises(InputError, match=f"ASAPGRAPH_ASAP_ANSWER={value!r} {ANSWER_WHY}"):
        check_env({"ASAPGRAPH_ASAP_ANSWER": value})


@pytest.mark.parametrize("value", ["0", "0.0", "0.25", "0.4", "1", "1.0", "1e-3"])
def test_answer_fraction_accepted(value):
    check_env({"ASAPGRAPH_ASAP_ANSWER": value})


def test_switches_take_0_or_1_only():
    """The on/off switches compared the value with "0" (or "1"): "yes" / "off" / "" were
    read silently as on or off (``ASAPGRAPH_ASAP_REORDER=yes``: off, ``..._GS=off``: on)."""
    assert {"ASAPGRAPH_ASAP_ANSWER_HOLD", "ASAPGRAPH_ASAP_GS", "ASAPGRAPH_ASAP_REORDER",
            "ASAPGRAPH_ASAP_QUANT_OUT", "ASAPGRAPH_EXTRAPOLATE",
            "ASAPGRAPH_SPIN_WAITS"} <= set(SWITCHES)
    for name in SWITCHES:
        check_env({name: "0"})
        check_env({name: "1"})
        for bad in ("yes", "off", "", "2", " 1"):
            with pytest.raises(InputError, match=re.escape(f"{name}={bad!r}: expected one "
                                                           "of 0, 1")):
                check_env({name: bad})


def test_rebalancer_knobs_checked_up_front():
    check_env({"ASAPGRAPH_ASAP_PEER_COST": "0.01", "ASAPGRAPH_REBALANCE_FORCE": "3"})
    check_env({"ASAPGRAPH_ASAP_FIXED_COST": "0", "ASAPGRAPH_ASAP_PEER_COST": "1"})
    for name in ("ASAPGRAPH_ASAP_PEER_COST", "ASAPGRAPH_ASAP_FIXED_COST"):
        for bad in ("cheap", "-0.01", "1.5", "nan"):
            with pytest.raises(InputError, match=re.escape(f"{name}={bad!r} is not a "
                                                           "number from 0 to 1")):
                check_env({name: bad})
    with pytest.raises(InputError, match="ASAPGRAPH_REBALANCE_FORCE='1.5' is not an integer"):
        check_env({"ASAPGRAPH_REBALANCE_FORCE": "1.5"})


#: read by the engine for tracing and debugging only (any non-empty value: on; a path)
DEBUG_ENV = {"ASAPGRAPH_TRACE_ASAP", "ASAPGRAPH_TRACE_VCLOCK", "ASAPGRAPH_DEBUG_ASAP",
             "ASAPGRAPH_STRICT_ASAP", "ASAPGRAPH_EVTRACE"}


def test_every_engine_knob_is_in_the_table():
    """Every ``ASAPGRAPH_*`` variable the engine reads (but the debug ones) is checked."""
    import asapgraph.engine as eng
    from asapgraph.engine.rebalance import FORCE_ENV

    read = {FORCE_ENV}
    for path in Path(eng.__file__).parent.glob("*.py"):
        read |= set(re.findall(r'environ\.get\(\s*"(ASAPGRAPH_[A-Z_]+)"', path.read_text()))
    assert "ASAPGRAPH_ASAP_ANSWER_HOLD" in read and "ASAPGRAPH_ASAP_QUANT_OUT" in read
    assert read - DEBUG_ENV <= set(ASAP_ENV), sorted(read - DEBUG_ENV - set(ASAP_ENV))


@pytest.mark.parametrize("name, value, why", [
    ("ASAPGRAPH_ASAP_ANSWER", "-0.5", ANSWER_WHY.replace("\\", "")),
    ("ASAPGRAPH_ASAP_ANSWER", "nan", ANSWER_WHY.replace("\\", "")),
    ("ASAPGRAPH_ASAP_ANSWER_HOLD", "yes", None),
])
def test_cli_refuses_in_one_line(monkeypatch, capsys, name, value, why):
    from asapgraph.cli import main

    monkeypatch.setenv(name, value)
    assert main(["pagerank", "rmat:6", "--mode", "asap", "-q"]) == 2
    err = capsys.readouterr().err.strip()
    want = (f"asapgraph: {name}={value!r} {why}" if why is not None
            else f"asapgraph: {name}={value!r}: expected one of 0, 1")
    assert err == want


def test_python_api_solver_refuses(monkeypatch):
    """The ASAP solver checks again for the Python API (no CLI in front of it)."""
    import asapgraph.engine as E

    monkeypatch.setenv("ASAPGRAPH_ASAP_ANSWER", "-0.5")
    with pytest.raises(InputError, match="ASAPGRAPH_ASAP_ANSWER='-0.5'"):
        E.pagerank("rmat:6", mode="asap")


# ------------------------------------------------ 2. negative weights of in-memory graphs
PR_WHY = "PageRank needs non-negative edge weights (use it unweighted, or transform the weights)"
EDGES = np.array([[0, 1], [1, 2], [2, 0], [3, 9], [9, 3], [1, 9]])
W = np.array([1.0, 1.0, 1.0, -0.5, 1.0, -2.0])


def _refusal(call, *args):
    with pytest.raises(InputError) as e:   # (the class as before: InputError, a ValueError)
        call(*args)
    return str(e.value)


def test_edge_array_negative_weight_names_its_row_and_edge():
    """An array's refusal said only '<ndarray>: PageRank needs non-negative edge weights';
    a text file's names its line.  Now the first one in the array's order: its row, its
    endpoints and the value."""
    import asapgraph

    want = f"<ndarray>: row 3 (edge 3 -> 9): negative edge weight -0.5: {PR_WHY}"
    assert _refusal(asapgraph.pagerank, np.column_stack([EDGES, W])) == want
    ints = np.column_stack([EDGES, [1, 1, 1, 1, -4, 1]])   # (an integer weight column)
    assert _refusal(asapgraph.pagerank, ints) == (
        f"<ndarray>: row 4 (edge 9 -> 3): negative edge weight -4: {PR_WHY}")


def test_tables_negative_weight_names_row_and_labels():
    import asapgraph

    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"source": EDGES[:, 0], "target": EDGES[:, 1], "weight": W})
    assert _refusal(asapgraph.pagerank, df) == (
        f"<DataFrame>: row 3 (edge 3 -> 9): negative edge weight -0.5: {PR_WHY}")
    named = pd.DataFrame({"u": list("abcdjb"), "v": list("bcajdj"), "weight": W})
    assert _refusal(asapgraph.pagerank, named) == (
        f"<DataFrame>: row 3 (edge 'd' -> 'j'): negative edge weight -0.5: {PR_WHY}")
    pa = pytest.importorskip("pyarrow")
    t = pa.table({"source": EDGES[:, 0], "target": EDGES[:, 1], "weight": W})
    assert _refusal(asapgraph.pagerank, t) == (
        f"<arrow>: row 3 (edge 3 -> 9): negative edge weight -0.5: {PR_WHY}")


def test_graphs_negative_weight_names_the_edge():
    """A Graph keeps no input order (its edges are sorted by destination), a networkx
    graph and a matrix have none: the edge is named by its endpoints (original ids or
    labels), the first in the graph's edge order."""
    import asapgraph
    from asapgraph.graph.core import Graph

    for g in (Graph.from_edges(EDGES[:, 0], EDGES[:, 1], weights=W),
              Graph.from_labels(EDGES[:, 0] + 100, EDGES[:, 1] + 100, W)):
        off = 100 if g.ids is not None else 0
        assert _refusal(asapgraph.pagerank, g) == (
            f"<graph>: edge {3 + off} -> {9 + off}: negative edge weight -0.5: {PR_WHY}")
    g = Graph.from_labels(np.array(list("abcdjb")), np.array(list("bcajdj")), W)
    assert _refusal(asapgraph.pagerank, g) == (
        f"<graph>: edge 'd' -> 'j': negative edge weight -0.5: {PR_WHY}")
    nx = pytest.importorskip("networkx")
    G = nx.DiGraph()
    G.add_weighted_edges_from((int(u), int(v), float(x)) for (u, v), x in zip(EDGES, W))
    msg = _refusal(asapgraph.pagerank, G)
    assert msg.startswith("<networkx>: edge ") and "-> 9: negative edge weight" in msg, msg
    sp = pytest.importorskip("scipy.sparse")
    A = sp.csr_matrix((W, (EDGES[:, 0], EDGES[:, 1])), shape=(10, 10))
    msg = _refusal(asapgraph.pagerank, A)
    assert msg.startswith("<scipy>: edge ") and "negative edge weight" in msg, msg


def test_graph_read_from_a_file_names_its_line(tmp_path):
    """A Graph loaded from a text edge list and given to asapgraph.pagerank: the line, as
    the command line names it (it said only 'FILE: PageRank needs ...')."""
    import asapgraph

    p = tmp_path / "e.txt"
    p.write_text("0 1 1\n1 2 1\n2 0 -0.5\n")
    g = asapgraph.load_graph(str(p), weighted=True)
    assert _refusal(asapgraph.pagerank, g) == (
        f"{p}:3: negative edge weight '-0.5': {PR_WHY}")


def test_programs_name_the_edge_on_one_process():
    from asapgraph.graph.core import Graph
    from asapgraph.programs import PageRankProgram, run, sssp

    g = Graph.from_edges(EDGES[:, 0], EDGES[:, 1], weights=W)
    for mode in ("bsp", "asap"):
        assert _refusal(run, PageRankProgram(), g, mode) == (
            f"<graph>: edge 3 -> 9: negative edge weight -0.5: {PR_WHY}")
    assert _refusal(sssp, g, 0) == ("<graph>: edge 3 -> 9: negative edge weight -0.5: sssp "
                                    "needs non-negative edge weights")


# ---------------------------------------------------------- 3. negative ids of edge arrays
NEG_ID = "(ids must be >= 0; Graph.from_labels takes any labels)"


@pytest.mark.parametrize("a, row, col, v", [
    (np.array([[0, 1], [1, -2], [-2, 0]]), 1, 1, -2),
    (np.array([[0, 1], [-7, -2]], dtype=np.int32), 1, 0, -7),
    (np.array([[0, 1, 0.5], [1, 2, 1.0], [-3.0, 1, 1.0]]), 2, 0, -3),   # float ids
    (np.array([[5, 4], [4, 5], [5, -1]], dtype=np.int8), 2, 1, -1),
])
def test_negative_ids_of_an_edge_array_refused(a, row, col, v):
    """A text edge list and a .npy file refuse a negative vertex id; an in-memory edge
    array took it as a label (a graph with vertex -2, whose ranks were reported under
    dense ids 0..n-1)."""
    import asapgraph

    want = f"<ndarray>: row {row}: negative vertex id {v} in column {col} {NEG_ID}"
    for call in (asapgraph.pagerank, asapgraph.load_graph):
        with pytest.raises(InputError) as e:
            call(a)
        assert str(e.value) == want
        assert isinstance(e.value, ValueError)   # (as every other edge-array refusal)


def test_edge_arrays_without_negative_ids_unchanged():
    import asapgraph

    a = np.array([[0, 1], [1, 2], [2, 0], [2, 7]])
    r = asapgraph.pagerank(a)
    assert list(r.ids) == [0, 1, 2, 7] and r.ranks.sum() == pytest.approx(1.0)
    big = np.iinfo(np.uint64).max   # uint64 past int64: labels, as before (audit 18)
    assert asapgraph.pagerank(np.array([[0, big], [big, 1]], dtype=np.uint64)).ranks.size == 3
    assert asapgraph.pagerank(np.zeros((0, 2), dtype=np.int64)).ranks.size == 0


def test_negative_labels_elsewhere_still_labels():
    """Labels given as labels stay labels: Graph.from_labels, a DataFrame, networkx."""
    import asapgraph
    from asapgraph.graph.core import Graph

    g = Graph.from_labels(np.array([-1, -2, -3]), np.array([-2, -3, -1]))
    assert sorted(g.labels.tolist()) == [-3, -2, -1]
    assert asapgraph.pagerank(g).ranks == pytest.approx([1 / 3] * 3)
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"source": [-1, -2, -3], "target": [-2, -3, -1]})
    assert asapgraph.pagerank(df).ranks == pytest.approx([1 / 3] * 3)


def test_networkx_backend_negative_node_labels():
    nx = pytest.importorskip("networkx")
    import asapgraph

    G = nx.DiGraph([(-1, -2), (-2, -3), (-3, -1), (-3, 5), (5, -1)])
    got, ref = nx.pagerank(G, backend="asapgraph"), nx.pagerank(G)
    assert set(got) == set(ref)
    assert all(abs(got[k] - ref[k]) < 1e-9 for k in ref), (got, ref)
    r = asapgraph.pagerank(G)
    # (networkx stops at its own tol 1e-6: its answer is that far from the fixed point)
    assert dict(zip(r.labels.tolist(), r.ranks)) == pytest.approx(ref, abs=1e-5)
