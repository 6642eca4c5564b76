"""Thirty-fourth session (lead): ``--source`` and the Python ``source=`` read a vertex id
as an edge list's id column does -- plain ASCII digits.  ``int()`` took ``+1`` (a file
refuses the sign), ``1_0`` as vertex 10 ("source vertex 10 is not in the graph") and other
scripts' digits ('١' as vertex 1)."""
import subprocess
import sys

import pytest

import asapgraph as ag
from asapgraph.errors import InputError
from asapgraph.programs import bfs, sssp


def _cli(args, cwd):
    return subprocess.run([sys.executable, "-m", "asapgraph", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "g.txt"
    p.write_text("1 2\n2 3\n")
    return p


@pytest.mark.parametrize("command", ["bfs", "sssp"])
@pytest.mark.parametrize("given,why", [
    ("+1", "--source: vertex id '+1' has a sign (ids are plain digits)"),
    ("-1", "--source: vertex id '-1' has a sign (ids are plain digits)"),
    ("1_0", "--source: expected an integer vertex id, got '1_0'"),
    ("\u0661", "--source: expected an integer vertex id, got '\u0661'"),
    ("", "--source: expected an integer vertex id, got ''"),
])
def test_source_text_not_plain_digits_refused(tmp_path, path, command, given, why):
    out = tmp_path / "out.csv"
    r = _cli([command, str(path), "--source", given, "-o", str(out)], tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines == [f"asapgraph {command}: {why}" + (
        " (vertices named by text need --labels)" if "expected" in why else "")]
    assert not out.exists()


@pytest.mark.parametrize("given", ["1", "01", " 1"])
def test_plain_digits_still_read(tmp_path, path, given):
    r = _cli(["bfs", str(path), "--source", given, "--json"], tmp_path)
    assert r.returncode == 0, r.stderr
    import json

    assert json.loads(r.stdout)["source"] == 1


def test_labels_source_is_a_name(tmp_path):
    p = tmp_path / "l.txt"
    p.write_text("+1 b\nb c\n")
    r = _cli(["bfs", str(p), "--labels", "--source", "+1", "--json"], tmp_path)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("fn", [bfs, sssp])
def test_python_source_strings(path, fn):
    g = ag.load_graph(str(path))
    assert list(fn(g, "2").values[1:]) == [0, 1]
    assert list(fn(g, 2).values[1:]) == [0, 1]
    for bad, msg in [("+1", "source vertex id '+1' has a sign (ids are plain digits)"),
                     ("1_0", "source vertex id must be an integer, got '1_0'"),
                     ("\u0661", "source vertex id must be an integer, got '\u0661'")]:
        with pytest.raises(InputError) as e:
            fn(g, bad)
        assert str(e.value) == f"{path}: {msg}"


# --- A KONECT first line on standard input -------------------------------------------------
# ``% sym`` (each undirected edge listed once) without --undirected and ``% bip`` were
# refused for a file and read as a directed graph from stdin (a different graph).  Now stdin's
# head is looked at, not read, so the reader still gets every byte.

SYM = "% sym unweighted\n% 5 5 5\n1 2\n2 3\n3 1\n3 4\n4 5\n"


def _compressed(kind, data):
    import bz2
    import gzip
    import lzma

    return {"plain": lambda b: b, "gz": gzip.compress, "bz2": bz2.compress,
            "xz": lzma.compress}[kind](data)


def _stdin(args, data, cwd):
    return subprocess.run([sys.executable, "-m", "asapgraph", *args], cwd=cwd, input=data,
                          capture_output=True, timeout=120)


@pytest.mark.parametrize("kind", ["plain", "gz", "bz2", "xz"])
@pytest.mark.parametrize("command", [["pagerank"], ["wcc"], ["info"], ["pagerank", "--labels"]])
def test_konect_sym_on_stdin_refused_as_for_a_file(tmp_path, kind, command):
    data = _compressed(kind, SYM.encode())
    f = tmp_path / "k.txt"
    f.write_bytes(data)
    by_file = _cli([command[0], str(f), *command[1:]], tmp_path)
    by_stdin = _stdin([command[0], "-", *command[1:]], data, tmp_path)
    assert by_file.returncode == by_stdin.returncode == 2
    why = ("a KONECT undirected network ('% sym unweighted': every edge is listed once): "
           "pass --undirected (Python: undirected=True), or remove that line to read the "
           "edges as directed")
    assert by_file.stderr.strip().splitlines() == [f"{f}:1: {why}"]
    assert by_stdin.stderr.decode().strip().splitlines() == [f"<stdin>:1: {why}"]


@pytest.mark.parametrize("kind", ["plain", "gz", "bz2", "xz"])
def test_konect_sym_on_stdin_with_undirected_reads_every_edge(tmp_path, kind):
    """The head looked at is given back to the reader: the answer is the file's (here a
    graph much longer than the look, so a lost head would show)."""
    import json

    lines = [f"{i} {(i * 7 + 3) % 5000}" for i in range(20000)]
    data = _compressed(kind, ("% sym\n" + "\n".join(lines) + "\n").encode())
    f = tmp_path / "k.txt"
    f.write_bytes(data)
    a = _cli(["pagerank", str(f), "--undirected", "--json", "--tol", "1e-12",
              "-o", str(tmp_path / "a.csv")], tmp_path)
    b = _stdin(["pagerank", "-", "--undirected", "--json", "--tol", "1e-12",
                "-o", str(tmp_path / "b.csv")], data, tmp_path)
    assert a.returncode == b.returncode == 0, (a.stderr, b.stderr)
    ja, jb = json.loads(a.stdout), json.loads(b.stdout)
    assert (ja["vertices"], ja["edges"]) == (jb["vertices"], jb["edges"])
    assert ja["vertices"] == 20000 and ja["edges"] > 39000
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()


def test_konect_bip_on_stdin_refused_and_asym_read(tmp_path):
    r = _stdin(["wcc", "-"], b"% bip unweighted\n1 2\n", tmp_path)
    assert r.returncode == 2
    assert r.stderr.decode().strip() == (
        "<stdin>:1: a KONECT bipartite network ('% bip unweighted'): its two columns number "
        "two different vertex sets, which one graph would merge; renumber one side and "
        "remove that line")
    r = _stdin(["pagerank", "-", "--json"], b"% asym unweighted\n1 2\n2 3\n", tmp_path)
    assert r.returncode == 0, r.stderr
    import json

    assert json.loads(r.stdout)["edges"] == 2


@pytest.mark.parametrize("chunk", [0, -1, 1.5, True, "10"])
def test_iter_edge_chunks_checks_chunk_bytes(path, chunk):
    """As read_edges and load_graph check it (0 and 1.5 were taken without a word)."""
    from asapgraph.graph.io import iter_edge_chunks

    with pytest.raises(ValueError, match="chunk_bytes must be a positive integer"):
        next(iter_edge_chunks(str(path), chunk))
    assert sum(len(e.src) for e in iter_edge_chunks(str(path), 1)) == 2
    with pytest.raises(TypeError, match="weighted must be True or False"):
        next(iter_edge_chunks(str(path), weighted="no"))


# --- --labels with a Parquet table ---------------------------------------------------------
# One process ignored --labels for a Parquet input (its column types decide), K ranks read
# the file as text ("binary data, not a text edge list"): refused alike now, as for .mtx.

PARQUET_WHY = ("--labels applies to text edge lists, and this is a Parquet table (its column "
               "types say whether vertices are named: strings are names already): drop "
               "--labels")


@pytest.mark.parametrize("names", [False, True])
def test_labels_with_parquet_refused(tmp_path, names):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    f = tmp_path / "g.parquet"
    ids = ["a", "b", "c"] if names else [1, 2, 3]
    pd.DataFrame({"s": ids[:2], "t": ids[1:]}).to_parquet(f)
    for cmd in (["pagerank"], ["wcc"], ["info"]):
        r = _cli([*cmd, str(f), "--labels", "-o", str(tmp_path / "o.csv")]
                 if cmd != ["info"] else [*cmd, str(f), "--labels"], tmp_path)
        assert r.returncode == 2, r.stderr
        assert r.stderr.strip().splitlines() == [f"{f}: {PARQUET_WHY}"]
        assert not (tmp_path / "o.csv").exists()
    with pytest.raises(InputError) as e:
        ag.load_graph(str(f), labels=True)
    assert str(e.value) == f"{f}: {PARQUET_WHY}"
    r = _cli(["pagerank", str(f), "--json"], tmp_path)   # without it: read as before
    assert r.returncode == 0, r.stderr
