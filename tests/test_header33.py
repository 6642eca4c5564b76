"""``--header`` (Python: ``header=True``): a text edge list whose first line that is neither
blank nor a comment is a header (``source,target,weight`` of pandas' ``to_csv(index=False)``,
``from<TAB>to``) is read without editing the file; the header line is skipped whatever it
holds, the other lines keep their physical numbers; inputs that are no text edge list
(.mtx, .asg, .npy, .parquet, generator specs) refuse it; ``--json`` says ``"header"``."""
from __future__ import annotations

import bz2
import gzip
import json
import lzma
import subprocess
import sys

import numpy as np
import pytest

from asapgraph.errors import InputError

#: a small weighted graph with sparse ids: (src, dst, weight); weights > 0
_rng = np.random.default_rng(33)
_IDS = np.array([3, 7, 10, 11, 20, 31, 42, 57, 60, 99, 100, 123])
EDGES = [(int(a), int(b), float(w)) for a, b, w in
         zip(_rng.choice(_IDS, 70), _rng.choice(_IDS, 70), _rng.integers(1, 9, 70) / 4)]
COMP = {"": lambda b: b, ".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}


def _body(sep=",", eol="\n", weights=True, extra=False):
    rows = []
    for a, b, w in EDGES:
        cols = [str(a), str(b)] + ([f"{w:g}"] if weights else []) + (["x9"] if extra else [])
        rows.append(sep.join(cols) + eol)
    return "".join(rows)


def _cli(args, cwd, stdin=None, env=None):
    return subprocess.run([sys.executable, "-m", "asapgraph", *args], cwd=cwd,
                          capture_output=True, timeout=240, input=stdin, env=env)


def _vector(path):
    a = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return a[:, 0], a[:, 1]


def _same_result(tmp_path, with_header, without, opts, command="pagerank", stdin=None):
    """The full result vectors of ``with_header`` read with ``--header`` and of ``without``
    (the same file without its header line) read without it."""
    r1 = _cli([command, with_header, "--header", "-q", "-o", "a.csv", *opts], tmp_path,
              stdin=stdin)
    assert r1.returncode == 0, r1.stderr.decode()
    r2 = _cli([command, without, "-q", "-o", "b.csv", *opts], tmp_path)
    assert r2.returncode == 0, r2.stderr.decode()
    (ia, va), (ib, vb) = _vector(tmp_path / "a.csv"), _vector(tmp_path / "b.csv")
    assert np.array_equal(ia, ib)
    assert np.abs(va - vb).sum() <= 1e-12, np.abs(va - vb).sum()


@pytest.mark.parametrize("sep,head", [(",", "source,target,weight"), ("\t", "from\tto\tw"),
                                      (" ", "src dst weight")])
@pytest.mark.parametrize("ext", ["", ".gz", ".bz2", ".xz"])
def test_header_line_skipped(tmp_path, sep, head, ext):
    """csv, tsv and space-separated files with a header line, plain and compressed: the
    result is that of the same file without the header line (PageRank, weighted)."""
    (tmp_path / ("h.txt" + ext)).write_bytes(COMP[ext]((head + "\n" + _body(sep)).encode()))
    (tmp_path / "n.txt").write_text(_body(sep))
    _same_result(tmp_path, "h.txt" + ext, "n.txt", ["--weighted"])


def test_unweighted_and_programs(tmp_path):
    (tmp_path / "h.csv").write_text("source,target,weight\n" + _body())
    (tmp_path / "n.csv").write_text(_body())
    _same_result(tmp_path, "h.csv", "n.csv", [])
    _same_result(tmp_path, "h.csv", "n.csv", ["--undirected"])
    _same_result(tmp_path, "h.csv", "n.csv", ["--weighted", "--source", "3"], command="sssp")
    _same_result(tmp_path, "h.csv", "n.csv", [], command="wcc")


@pytest.mark.parametrize("ext", ["", ".gz"])
def test_stdin(tmp_path, ext):
    (tmp_path / "n.csv").write_text(_body())
    data = COMP[ext](("source,target,weight\n" + _body()).encode())
    _same_result(tmp_path, "-", "n.csv", ["--weighted"], stdin=data)


@pytest.mark.parametrize("text", [
    "source,target,weight\r\n" + _body(eol="\r\n"),                   # CRLF
    "\ufeffsource,target,weight\n" + _body(),                          # a byte order mark
    "\ufeff# exported\n\n  \n% by pandas\n,,\nsource,target,weight\n" + _body(),  # before it
    "# c\n" * 3000 + "source,target,weight\n" + _body(),              # past the first block
    "# c\n" + "h" * 9000 + "\n" + _body(),                            # a header longer than it
    "9 9 9\n" + _body(),                                              # whatever it holds
    "source,target,weight\n" + _body().rstrip("\n"),                  # no newline at the end
], ids=["crlf", "bom", "comments", "long-comments", "long-header", "numeric", "no-eol"])
@pytest.mark.parametrize("ext", ["", ".gz"])
def test_messy_files(tmp_path, text, ext):
    """The lines before the header (a BOM, comments, blank lines), CRLF, a header past the
    reader's first block (chunk_bytes 4096), a numeric header: as the file without it."""
    from asapgraph.graph.io import iter_edge_chunks, load_graph, read_edges

    f = tmp_path / ("h.txt" + ext)
    f.write_bytes(COMP[ext](text.encode()))
    (tmp_path / "n.csv").write_text(_body())
    ref = load_graph(tmp_path / "n.csv", weighted=True)
    for cb in (4096, 1 << 25):
        g = load_graph(f, header=True, weighted=True, chunk_bytes=cb)
        assert np.array_equal(g.ids, ref.ids) and np.array_equal(g.indptr, ref.indptr)
        assert np.array_equal(g.indices, ref.indices)
        assert np.array_equal(g.weights, ref.weights)
        el = read_edges(f, header=True, weighted=True, chunk_bytes=cb)
        assert [(int(a), int(b), float(w)) for a, b, w in zip(el.src, el.dst, el.weights)] == \
            EDGES
    pieces = list(iter_edge_chunks(f, 4096, header=True))
    assert sum(p.m for p in pieces) == len(EDGES)
    gl = load_graph(f, header=True, weighted=True, labels=True)   # --labels alike
    assert gl.m == len(EDGES) and sorted(map(int, gl.labels)) == sorted(map(int, ref.ids))
    if ext == "":
        _same_result(tmp_path, f.name, "n.csv", ["--weighted"])


def test_byte_ranges_compose(tmp_path):
    """Byte ranges (the ranks' reading): only the range that holds the header line's first
    byte skips it, wherever the comments before it put it."""
    from asapgraph.graph.io import parse_byte_range

    for n_comments in (0, 5, 60):
        f = tmp_path / f"h{n_comments}.csv"
        f.write_text("# " + "c" * 50 + "\n" * 1 + ("# c\n" * n_comments)
                     + "source,target,weight\n" + _body())
        size = f.stat().st_size
        for k in (1, 2, 3, 4, 7, 40):
            got = [parse_byte_range(f, size * r // k, size * (r + 1) // k, weighted=True,
                                    header=True) for r in range(k)]
            src = np.concatenate([g.src for g in got])
            assert src.tolist() == [e[0] for e in EDGES], (n_comments, k)


def test_labels(tmp_path):
    names = {i: f"v{i}" for i in _IDS}
    body = "".join(f"{names[a]},{names[b]},{w:g}\n" for a, b, w in EDGES)
    (tmp_path / "h.csv").write_text("source,target,weight\n" + body)
    (tmp_path / "n.csv").write_text(body)
    for opts in ([], ["--weighted"]):
        r1 = _cli(["pagerank", "h.csv", "--header", "--labels", "-q", "-o", "a.csv", *opts],
                  tmp_path)
        r2 = _cli(["pagerank", "n.csv", "--labels", "-q", "-o", "b.csv", *opts], tmp_path)
        assert r1.returncode == r2.returncode == 0, (r1.stderr, r2.stderr)
        assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
    r = _cli(["pagerank", "h.csv", "--labels", "-q"], tmp_path)   # (refused without it)
    assert r.returncode == 2 and b"pass --header" in r.stderr, r.stderr


def test_weight_col(tmp_path):
    (tmp_path / "h.tsv").write_text("a\tb\tc\td\n" + _body("\t", extra=True).replace(
        "\tx9", "\t1"))
    (tmp_path / "n.tsv").write_text(_body("\t"))
    r1 = _cli(["pagerank", "h.tsv", "--header", "--weight-col", "3", "-q", "-o", "a.csv"],
              tmp_path)
    r2 = _cli(["pagerank", "n.tsv", "--weighted", "-q", "-o", "b.csv"], tmp_path)
    assert r1.returncode == r2.returncode == 0, (r1.stderr, r2.stderr)
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()


@pytest.mark.parametrize("how", ["plain", "gz", "stdin", "labels"])
def test_later_bad_line_named_by_its_physical_line(tmp_path, how):
    text = "# exported\n\nsource,target\n1,2\n2,3\n4\n"      # line 6: one column
    data = text.encode()
    args, stdin, name = ["wcc", "h.csv", "--header", "-q"], None, "h.csv"
    if how == "gz":
        data = gzip.compress(data)
    if how == "stdin":
        args, stdin, name = ["wcc", "-", "--header", "-q"], data, "<stdin>"
    if how == "labels":
        args.append("--labels")
    (tmp_path / "h.csv").write_bytes(data)
    r = _cli(args, tmp_path, stdin=stdin)
    assert r.returncode == 2
    assert r.stderr.decode().strip() == f"{name}:6: missing column 2 (line has 1 column)"


def test_bare_cr_header_refused(tmp_path):
    """Old Mac line endings: the 'header' would be the whole file; refused at its line as
    the parser refuses a bare CR."""
    (tmp_path / "h.csv").write_bytes(b"# c\nsource,target\r1,2\r2,3\r")
    for extra in ([], ["--labels"]):
        r = _cli(["wcc", "h.csv", "--header", "-q", *extra], tmp_path)
        assert r.returncode == 2
        assert r.stderr.decode().startswith("h.csv:2: line ends with a bare CR"), r.stderr


@pytest.mark.parametrize("extra", [[], ["--labels"]])
def test_header_only_file_is_an_empty_edge_list(tmp_path, extra):
    (tmp_path / "h.csv").write_text("# c\n\nsource,target,weight\n\n")
    (tmp_path / "e.csv").write_text("# c\n\n\n\n")
    r1 = _cli(["pagerank", "h.csv", "--header", "-q", *extra], tmp_path)
    r2 = _cli(["pagerank", "e.csv", "-q", *extra], tmp_path)
    assert (r1.returncode, r2.returncode) == (2, 2)
    assert r1.stderr.decode().replace("h.csv", "e.csv") == r2.stderr.decode()
    assert r1.stderr.decode().strip() == "h.csv: no edges found"


def test_hint_names_header(tmp_path):
    (tmp_path / "h.csv").write_text("source,target,weight\n1,2,3\n")
    r = _cli(["pagerank", "h.csv", "-q"], tmp_path)
    assert r.returncode == 2
    assert r.stderr.decode().strip() == (
        "h.csv:1: expected an integer vertex id in column 1, got 'source' (a header line? "
        "pass --header, or start it with '#'; vertex names? pass --labels)")


def test_negative_weight_line_skips_the_header(tmp_path):
    """PageRank's refusal of a negative weight names its line; a numeric header line with a
    negative 'weight' is no edge (it named line 1)."""
    (tmp_path / "h.txt").write_text("9 9 -1\n1 2 1\n2 3 -2\n")
    r = _cli(["pagerank", "h.txt", "--header", "--weighted", "-q"], tmp_path)
    assert r.returncode == 2
    assert r.stderr.decode().startswith("h.txt:3: negative edge weight '-2'"), r.stderr


def _refusal(name, what):
    return (f"{name}: --header applies to text edge lists, and this is {what}: drop --header "
            "(Python: header=False)")


@pytest.fixture
def other_inputs(tmp_path):
    (tmp_path / "n.csv").write_text(_body())
    (tmp_path / "g.mtx").write_text("%%MatrixMarket matrix coordinate real general\n"
                                    "3 3 2\n1 2 1\n2 3 1\n")
    np.save(tmp_path / "g.npy", np.array([[1, 2], [2, 3]]))
    (tmp_path / "g.parquet").write_bytes(b"PAR1")
    from asapgraph.graph.io import load_graph, save_binary

    save_binary(load_graph(tmp_path / "n.csv"), tmp_path / "g.asg")
    return {"g.mtx": "a Matrix Market file (its banner and size line are its header)",
            "g.asg": "an asapgraph binary graph (.asg)",
            "g.npy": "a .npy edge array",
            "g.parquet": "a Parquet table (its columns are named in its schema)",
            "rmat:5": "a generator spec, which has no header line"}


@pytest.mark.parametrize("command", ["pagerank", "wcc", "info", "convert"])
def test_refused_where_it_cannot_apply(tmp_path, other_inputs, command):
    for name, what in other_inputs.items():
        args = [command, name, "--header", "-q"] + (["o.asg"] if command == "convert" else [])
        r = _cli(args, tmp_path)
        assert r.returncode == 2, (name, r.stderr)
        assert r.stderr.decode().strip() == _refusal(name, what), r.stderr
        assert not (tmp_path / "o.asg").exists()


def test_python_refusals(tmp_path, other_inputs):
    import networkx as nx

    from asapgraph.graph.io import load_graph, read_edges

    for name, what in other_inputs.items():
        path = name if name.startswith("rmat") else tmp_path / name
        with pytest.raises(InputError) as ei:
            load_graph(path, header=True)
        assert str(ei.value) == _refusal(str(path), what)
        if name.endswith((".mtx", ".asg", ".npy")):
            with pytest.raises(InputError) as ei:
                read_edges(path, header=True)
            assert str(ei.value) == _refusal(str(path), what)
    with pytest.raises(InputError, match="--header applies to text edge lists"):
        load_graph(nx.path_graph(3), header=True)
    for bad in ("yes", 2, 0.5):   # the loaders' bool switches' check
        with pytest.raises(TypeError, match="header must be True or False"):
            load_graph(tmp_path / "n.csv", header=bad)
        with pytest.raises(TypeError, match="header must be True or False"):
            read_edges(tmp_path / "n.csv", header=bad)
    assert load_graph(tmp_path / "n.csv", header=False).m == len(EDGES)


def test_python_api(tmp_path):
    import asapgraph
    from asapgraph.graph.io import first_negative_weight

    (tmp_path / "h.csv").write_text("source,target,weight\n" + _body())
    (tmp_path / "n.csv").write_text(_body())
    g = asapgraph.load_graph(tmp_path / "h.csv", header=True, weighted=True)
    ref = asapgraph.load_graph(tmp_path / "n.csv", weighted=True)
    assert np.array_equal(g.indices, ref.indices) and np.array_equal(g.weights, ref.weights)
    a, b = asapgraph.pagerank(g), asapgraph.pagerank(ref)
    assert np.array_equal(a.ids, b.ids) and np.array_equal(a.ranks, b.ranks)
    el = asapgraph.read_edges(tmp_path / "h.csv", header=True)
    assert el.src.tolist() == [e[0] for e in EDGES]
    with pytest.raises(InputError, match=r"h.csv:1: expected an integer vertex id"):
        asapgraph.load_graph(tmp_path / "h.csv")
    (tmp_path / "neg.txt").write_text("1 2 -5\n1 2 1\n2 3 -2\n")
    assert first_negative_weight(tmp_path / "neg.txt") == (1, "-5")
    assert first_negative_weight(tmp_path / "neg.txt", header=True) == (3, "-2")


@pytest.mark.parametrize("command", ["pagerank", "wcc", "info",
                                     "run asapgraph.programs:WCCProgram"])
def test_json_field(tmp_path, command):
    (tmp_path / "h.csv").write_text("source,target,weight\n" + _body())
    (tmp_path / "n.csv").write_text(_body())
    r = _cli([*command.split(), "h.csv", "--header", "--json", "-q"], tmp_path)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["header"] is True and j["edges"] == len(EDGES)
    r = _cli([*command.split(), "n.csv", "--json", "-q"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["header"] is False


def test_help_and_launcher(tmp_path):
    from asapgraph.comm.launch import _OPTIONS, rebuild_argv

    assert ("header", "--header", "flag") in _OPTIONS
    import argparse

    args = argparse.Namespace(header=True, input="h.csv")
    assert "--header" in rebuild_argv(args)
    r = subprocess.run([sys.executable, "-m", "asapgraph", "pagerank", "--help"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "--header" in r.stdout
