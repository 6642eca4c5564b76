"""The lead's fixes of the thirty-third session."""
import io
import json

import pytest

from asapgraph.progress import Progress


class _Writes(io.StringIO):
    """A stream that records each ``write`` call."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def write(self, s):
        self.calls.append(s)
        return super().write(s)


def test_progress_writes_each_line_in_one_call():
    """A progress line reaches the stream in one write, newline included.  print() wrote
    the text and the newline apart: a Ctrl-C between the two left the text in the
    stream's buffer, the interrupted rank's exit flushed it, and the job's one line was
    glued to it ("asapgraph: wave 12, bound 1.2e-03asapgraph: interrupted"; CI failed
    on it once, tests/mpi/test_audit29_mpi.py)."""
    s = _Writes()
    p = Progress(stream=s, interval=0.0)
    p.stage("loading g.txt")
    p.iteration(3, 1.5e-3, what=("wave", "bound"), sent="1 MB")
    p.bytes(10_000_000, 20_000_000, edges=5)
    p.done("converged after 3 iterations")
    assert len(s.calls) == 4, s.calls
    assert all(c.endswith("\n") and c.count("\n") == 1 for c in s.calls), s.calls
    assert s.calls[1] == "asapgraph: wave 3, bound 1.500e-03, sent 1 MB\n"


REACH = '''import numpy as np
from asapgraph.programs import VertexProgram


class Reach(VertexProgram):
    """Hops from vertex 0 (min, add_one; use_weights left at its default, True)."""
    name = "reach"
    value_dtype = np.int64
    combiner = "min"
    edge_op = "add_one"
    accumulative = True

    def init_delta(self, ctx):
        big = np.iinfo(np.int64).max
        v = np.full(ctx.n_local, big, dtype=np.int64)
        d = v.copy()
        d[ctx.vertices == 0] = 0
        return v, d


class Copy(Reach):
    """The smallest id that reaches a vertex (min, copy)."""
    name = "copy"
    edge_op = "copy"

    def init_delta(self, ctx):
        big = np.iinfo(np.int64).max
        return np.full(ctx.n_local, big, dtype=np.int64), ctx.vertices.astype(np.int64)


class Dist(Reach):
    """Weighted distance from vertex 0 (min, add: reads the weights)."""
    name = "dist"
    value_dtype = np.float64
    edge_op = "add"

    def init_delta(self, ctx):
        v = np.full(ctx.n_local, np.inf)
        d = v.copy()
        d[ctx.vertices == 0] = 0.0
        return v, d
'''


def _run_cli(tmp_path, *args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def progs(tmp_path):
    (tmp_path / "progs.py").write_text(REACH)
    (tmp_path / "w.txt").write_text("0 1 0.5\n1 2 2\n2 0 1\n2 3 0.25\n0 3 4\n")
    return tmp_path


@pytest.mark.parametrize("cls, op", [("Reach", "add_one"), ("Copy", "copy")])
@pytest.mark.parametrize("opt", [["--weighted"], ["--weight-col", "3"]])
def test_run_refuses_weights_an_edge_op_does_not_read(progs, cls, op, opt):
    """``run P --weighted`` for a program whose edge_op is copy or add_one (use_weights
    left True, no reads_weights): the weights were read, ``"weighted": true`` said so in
    --json and the result was the unweighted one.  Refused in one line, status 2, as a
    program declaring use_weights = False is (audit 32b); nothing written."""
    r = _run_cli(progs, "run", f"progs.py:{cls}", "w.txt", *opt, "-q", "-o", "x.csv")
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.splitlines() == [
        f"progs.py:{cls}: {opt[0]} does not apply to program {cls.lower()}: its edge_op "
        f"'{op}' reads no weight, so every edge counts 1 whatever its weight (use edge_op "
        "'mul' or 'add', or None with a message() that reads them; or declare reads_weights "
        "= True if it reads ctx.out_weight)"], r.stderr
    assert not (progs / "x.csv").exists()
    # without the option: runs (the unweighted answer)
    r = _run_cli(progs, "run", f"progs.py:{cls}", "w.txt", "-q", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["weighted"] is False


def test_run_applies_weights_an_edge_op_reads(progs):
    """edge_op 'add' reads the weights: --weighted is applied (weighted distances)."""
    r = _run_cli(progs, "run", "progs.py:Dist", "w.txt", "--weighted", "-q", "--json",
                 "--top", "4")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["weighted"] is True
    got = {v: d for v, d in out["top"]}
    assert got == {0: 0.0, 1: 0.5, 2: 2.5, 3: 2.75}, got


def test_finite_weights_checked_only_where_they_are_read():
    """A graph with an infinite weight: refused for a program whose edge_op reads it
    (add), run for one whose edge_op cannot (add_one): the weights change nothing there."""
    import numpy as np

    import asapgraph
    from asapgraph.errors import InputError

    ns = {}
    exec(REACH, ns)
    g = asapgraph.Graph.from_edges(np.array([0, 1, 2]), np.array([1, 2, 3]), n=4,
                                   weights=np.array([1.0, np.inf, 2.0]))
    with pytest.raises(InputError, match="edge weight inf is not a finite number"):
        asapgraph.run(ns["Dist"](), g)
    res = asapgraph.run(ns["Reach"](), g)
    assert res.values.tolist() == [0, 1, 2, 3]


def test_to_networkx_gives_back_int_weights():
    """``NxGraph.to_networkx()`` (networkx's way back from the backend's graph, e.g. for a
    function the backend does not implement) returned integer weights as floats: a
    networkx function run on it answered 5.0 where the original graph answers 5.  Ints
    come back as ints (per edge where ints and floats mix), floats as floats."""
    nx = pytest.importorskip("networkx")
    from asapgraph.interop.nxgraph import from_networkx

    G = nx.DiGraph()
    G.add_edge("a", "b", weight=2)
    G.add_edge("b", "c", weight=3)
    G.add_edge("c", "a", weight=7)
    back = from_networkx(G).to_networkx()
    assert sorted(back.edges(data=True)) == sorted(G.edges(data=True))
    assert {type(d["weight"]) for *_, d in back.edges(data=True)} == {int}
    got = nx.dijkstra_path_length(from_networkx(G), "a", "c", backend="networkx")
    assert repr(got) == repr(nx.dijkstra_path_length(G, "a", "c")) == "5"
    # mixed: each edge keeps its own type; a multigraph's parallel edges too
    M = nx.MultiGraph()
    M.add_edge(0, 1, weight=2)
    M.add_edge(0, 1, weight=2.5)
    M.add_edge(1, 2, weight=float("inf"))
    M.add_edge(2, 3, weight=4)
    back = from_networkx(M).to_networkx()
    want = sorted((min(u, v), max(u, v), repr(d["weight"])) for u, v, d in M.edges(data=True))
    got = sorted((min(u, v), max(u, v), repr(d["weight"])) for u, v, d in back.edges(data=True))
    assert got == want, got


_SNAP = "# Directed graph\n# FromNodeId\tToNodeId\n1\t2\n2\t3\n3\t1\n"


@pytest.mark.parametrize("name, text, line", [
    ("snap.txt", _SNAP, 3),
    ("pct.txt", "% a comment\n\n7 8 0.5\n8 7 1\n", 3),
    ("w.csv", "# made by hand\n1,2,-0.5e3\n2,1,1\n", 2),
])
def test_header_of_numbers_after_comments_refused(tmp_path, name, text, line):
    """``--header`` on a file whose comment lines are its header (SNAP's ``# FromNodeId
    ToNodeId``): the first edge was skipped as the header line, silently (2 of 3 edges).
    A line of numbers after comment lines is refused at its line; the Python loader
    alike."""
    import asapgraph
    from asapgraph.errors import InputError

    (tmp_path / name).write_text(text)
    r = _run_cli(tmp_path, "pagerank", name, "--header", "-q", "-o", "x.csv")
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith(f"{name}:{line}: --header would skip this line"), r.stderr
    assert r.stderr.rstrip().endswith("not column names (drop --header)"), r.stderr
    assert not (tmp_path / "x.csv").exists()
    with pytest.raises(InputError, match="holds only numbers"):
        asapgraph.load_graph(str(tmp_path / name), header=True)
    # without --header: read as it is (every edge)
    r = _run_cli(tmp_path, "pagerank", name, "-q", "--json")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("text, edges", [
    ("3 3\n1 2\n2 3\n3 1\n", 3),          # a count line at the top: a header --header skips
    ("source,target\n# c\n1,2\n2,3\n", 2),
    ("# c\nsrc dst\n1 2\n2 3\n", 2),      # names after comments: the header
])
def test_header_still_skipped(tmp_path, text, edges):
    (tmp_path / "g.txt").write_text(text)
    r = _run_cli(tmp_path, "pagerank", "g.txt", "--header", "-q", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["edges"] == edges and out["header"] is True


def test_header_labels_takes_any_line(tmp_path):
    """With ``--labels`` every line holds names: numbers after comments are a header
    line of names as any other (nothing to tell them from an edge)."""
    (tmp_path / "g.txt").write_text(_SNAP)
    r = _run_cli(tmp_path, "pagerank", "g.txt", "--header", "--labels", "-q", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["edges"] == 2
