"""Audit 19 (one process): regressions of defects found by a user-level audit; the MPI
halves are in tests/mpi/test_audit19.py."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

from asapgraph.errors import InputError


def _cli(args, cwd):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("text", ["1,2\t0,5\n", "1, 2, 0,5\n", "1,2 0,5\n", "1,\t2,\t0,5\n"])
@pytest.mark.parametrize("labels", [False, True])
def test_decimal_comma_after_comma_refused(tmp_path, text, labels):
    """A comma earlier on the line made '0,5' read as weight 0 (a wrong answer); only a
    bare-comma separator before the weight makes its comma a column separator."""
    from asapgraph import load_graph

    p = tmp_path / "g.txt"
    p.write_text("3 1 1\n" + text)
    with pytest.raises(InputError) as e:
        load_graph(str(p), weighted=True, labels=labels)
    assert str(e.value) == (f"{p}:2: expected a number for the weight in column 3, got "
                            "'0,5' (a decimal comma? write the weight with a point, '0.5')")


@pytest.mark.parametrize("labels", [False, True])
def test_comma_csv_weight_still_read(tmp_path, labels):
    from asapgraph import load_graph

    p = tmp_path / "g.csv"
    p.write_text("1,2,0,5\n2,3,1.5,7\n1,3,,2,9\n")
    g = load_graph(str(p), weighted=True, labels=labels)
    assert sorted(g.weights.tolist()) == [0.0, 1.5, 2.0]


def test_personalization_decimal_comma_after_comma(tmp_path):
    from asapgraph.options import read_vertex_values

    (tmp_path / "p.txt").write_text("1,\t0,5\n")
    with pytest.raises(InputError, match=r"p.txt:1: expected a number for the value, got '0,5'"):
        read_vertex_values(str(tmp_path / "p.txt"))
    (tmp_path / "q.txt").write_text("1,0,5\n2,1\n")   # comma CSV: value 0, a third column
    ids, vals, _ = read_vertex_values(str(tmp_path / "q.txt"))
    assert vals.tolist() == [0.0, 1.0]


def test_output_directory_named(tmp_path, monkeypatch):
    """-o DIR said "unknown output format '(no extension)'"."""
    from asapgraph import write_values
    from asapgraph.graph.io.atomic import check_output_dir, output_format

    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    for f in (output_format, check_output_dir,
              lambda p: write_values(p, np.arange(2), {"rank": np.ones(2)})):
        with pytest.raises(InputError) as e:
            f("d")
        assert str(e.value) == ("d: is a directory, not an output file: give a file name, "
                                "such as d/out.csv")
        with pytest.raises(InputError, match="^new/: names a directory, not an output file"):
            f("new/")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_skew_symmetric_weighted_pagerank_names_the_header(tmp_path):
    """One process refused it with no line; the negative weights are the mirrors."""
    (tmp_path / "s.mtx").write_text("%%MatrixMarket matrix coordinate real skew-symmetric\n"
                                    "3 3 2\n2 1 0.5\n3 2 1.5\n")
    r = _cli(["pagerank", "s.mtx", "--weighted", "-q"], tmp_path)
    assert r.returncode == 2 and r.stderr.strip() == (
        "s.mtx:1: a skew-symmetric Matrix Market matrix has negative edge weights (the mirror "
        "of each entry is its negation): PageRank needs non-negative edge weights (use it "
        "unweighted, or transform the weights)")
    r = _cli(["pagerank", "s.mtx", "-q", "--top", "1"], tmp_path)   # unweighted: fine
    assert r.returncode == 0, r.stderr


def test_nx_hits_negative_weight_declined():
    """nx.hits with a negative edge weight returned inf and NaN authorities from the
    backend; it is declined (networkx's code decides), as pagerank's are."""
    nx = pytest.importorskip("networkx")
    import asapgraph

    warnings.filterwarnings("ignore", message=".*conversions to backend graphs are saved")
    G = nx.DiGraph([(1, 2)])
    G.add_edge(2, 3, weight=-1.0)
    with pytest.raises(NotImplementedError):
        nx.hits(G, backend="asapgraph")
    with pytest.raises(NotImplementedError):
        nx.hits(asapgraph.from_networkx(G))
    H = nx.DiGraph([(1, 2), (2, 3), (3, 1), (1, 3)])   # non-negative: still the backend's
    h, a = nx.hits(H, backend="asapgraph")
    wh, wa = nx.hits(H)
    assert all(abs(h[k] - wh[k]) < 1e-6 and abs(a[k] - wa[k]) < 1e-6 for k in H)


@pytest.mark.parametrize("args,example", [(["convert", "g.txt", "{d}"], "out.asg"),
                                          (["generate", "rmat", "--scale", "3", "-o", "{d}"],
                                           "out.txt")])
def test_convert_generate_output_directory_named(tmp_path, args, example):
    """``convert g.txt /tmp`` said "the binary format needs the extension .asg",
    ``generate ... -o /tmp`` "unknown output format"."""
    (tmp_path / "g.txt").write_text("1 2\n2 1\n")
    (tmp_path / "d").mkdir()
    r = _cli([a.format(d="d") for a in args] + ["-q"], tmp_path)
    assert r.returncode == 2 and r.stderr.strip() == (
        f"d: is a directory, not an output file: give a file name, such as d/{example}")
    assert list((tmp_path / "d").iterdir()) == []


@pytest.mark.parametrize("sym", ["symmetric", "skew-symmetric"])
def test_undirected_symmetric_mtx_refused(tmp_path, sym):
    """--undirected on a symmetric .mtx mirrored every off-diagonal entry a second time but
    the diagonal once: PageRank 0.436/0.328/0.235 instead of networkx's undirected answer
    0.399/0.382/0.219 (exit 0, a wrong answer).  Now refused at the banner; a general
    file with --undirected is networkx's undirected graph."""
    nx = pytest.importorskip("networkx")
    from asapgraph import load_graph, pagerank

    p = tmp_path / "s.mtx"
    p.write_text(f"%%MatrixMarket matrix coordinate pattern {sym}\n3 3 3\n1 1\n2 1\n3 2\n")
    with pytest.raises(InputError) as e:
        load_graph(str(p), undirected=True)
    assert str(e.value).startswith(f"{p}:1: a {sym} Matrix Market matrix is read in both "
                                   "directions already"), str(e.value)
    q = tmp_path / "g.mtx"
    q.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 1\n2 1\n3 2\n")
    want = nx.pagerank(nx.Graph([(1, 1), (2, 1), (3, 2)]), tol=1e-14, max_iter=1000)
    graphs = [load_graph(str(q), undirected=True)]
    if sym == "symmetric":   # the symmetric file read as it is: the same undirected graph
        graphs.append(load_graph(str(p)))
    for g in graphs:
        r = pagerank(g, tol=1e-13)
        got = dict(r.top(3))
        assert all(abs(got[k] - want[k]) < 1e-9 for k in want), (got, want)


@pytest.mark.parametrize("name", ["g.mtx", "g.txt", "g.txt.gz"])
def test_matrix_market_with_bom(tmp_path, name):
    """A Matrix Market file starting with a UTF-8 byte order mark (CRLF lines, as Windows
    editors save it): named .mtx it was refused as 'not a Matrix Market file'; named .txt
    (or .gz) it was read as an edge list, its size line '3 3 2' an edge 3 -> 3 (exit 0,
    a wrong answer).  Now read as Matrix Market."""
    import gzip

    from asapgraph import load_graph

    data = (b"\xef\xbb\xbf%%MatrixMarket matrix coordinate pattern general\r\n3 3 2\r\n"
            b"1 2\r\n2 3\r\n")
    p = tmp_path / name
    p.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    g = load_graph(str(p))
    assert (g.n, g.m) == (3, 2)
    s, d, _ = g.edges()
    ids = g.original_ids()
    assert sorted(zip(ids[s].tolist(), ids[d].tolist())) == [(1, 2), (2, 3)]


def test_weight_col_on_one_weight_formats_python(tmp_path):
    from asapgraph import load_graph, save_binary

    p = tmp_path / "g.mtx"
    p.write_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 0.5\n2 1 2\n")
    with pytest.raises(InputError, match="a Matrix Market file has one weight per edge"):
        load_graph(str(p), weight_col=4)
    assert load_graph(str(p), weight_col=3).weights is not None
    save_binary(load_graph(str(p), weighted=True), str(tmp_path / "g.asg"))
    with pytest.raises(InputError, match="a binary graph has one weight per edge"):
        load_graph(str(tmp_path / "g.asg"), weight_col=5)
