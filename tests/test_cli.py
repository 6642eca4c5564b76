"""The command line: results against networkx, output formats, exit codes, error lines.

Most cases call ``asapgraph.cli.main([...])`` in-process (fast); a handful run
``python -m asapgraph`` in a subprocess with ``cwd=tmp_path`` so the installed package
(not the source tree) is what runs.
"""
import gzip
import importlib.util
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from asapgraph import cli

from asapgraph.graph import generators
from asapgraph.errors import InputError

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "rmat-12.txt.gz"
TINY = REPO / "datasets" / "tiny"

_spec = importlib.util.spec_from_file_location("_asap_conftest_tables",
                                               Path(__file__).with_name("conftest.py"))
_conf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_conf)
L1 = _conf.L1_TOL["pagerank"]


# ----------------------------------------------------------------------------- helpers


def run_main(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_sub(tmp_path, *argv, timeout=120, **kw):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, argv)], cwd=tmp_path,
                          env=dict(os.environ), capture_output=True, text=True,
                          timeout=timeout, **kw)


def read_csv(path):
    with open(path) as f:
        head = f.readline().strip().split(",")
        data = [ln.split(",") for ln in f.read().splitlines()]
    ids = np.array([int(r[0]) for r in data], dtype=np.int64)
    vals = np.array([float(r[1]) for r in data])
    return head, ids, vals


def edges_numpy(path):
    """Independent reader (numpy.loadtxt) of a SNAP text edge list: int64 (m, 2) array."""
    return np.loadtxt(path, dtype=np.int64, comments="#", usecols=(0, 1), ndmin=2)


def nx_pagerank(edges, weights=None, undirected=False, **kw):
    import networkx as nx

    G = nx.MultiGraph() if undirected else nx.MultiDiGraph()
    if weights is None:
        G.add_edges_from(edges.tolist())
    else:
        G.add_weighted_edges_from((int(u), int(v), float(w)) for (u, v), w in zip(edges, weights))
    n = G.number_of_nodes()
    kw.setdefault("tol", 1e-13 / n * 10)  # networkx stops at L1 change < n * tol
    return nx.pagerank(G, weight="weight" if weights is not None else None, max_iter=10000, **kw)


def as_vector(d, ids):
    return np.array([d[int(i)] for i in ids])


@pytest.fixture(scope="module")
def rmat12_nx():
    e = edges_numpy(DATASET)
    return e, nx_pagerank(e)


def one_error_line(err, prefix):
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(prefix), err
    assert "Traceback" not in err
    return lines[0]


# ----------------------------------------------------------------------------- subprocess


def test_help_and_version(tmp_path):
    r = run_sub(tmp_path, "--help")
    assert r.returncode == 0
    for word in ("pagerank", "info", "convert", "generate", "examples:"):
        assert word in r.stdout
    r = run_sub(tmp_path, "--version")
    assert r.returncode == 0
    from asapgraph import __version__

    assert r.stdout.strip() == f"asapgraph {__version__}"


def test_subprocess_pagerank_bundled_dataset(tmp_path, rmat12_nx):
    """The README's first command (plus -o/--json) in a real process, outside the tree."""
    r = run_sub(tmp_path, "pagerank", DATASET, "-o", "ranks.csv", "--json")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)  # the whole stdout is one JSON object
    assert "reading" in r.stderr and "converged after" in r.stderr  # progress without --quiet
    head, ids, ranks = read_csv(tmp_path / "ranks.csv")
    assert head == ["node", "rank"]
    _, ref = rmat12_nx
    assert len(ids) == len(ref) == rec["vertices"]
    assert np.abs(ranks - as_vector(ref, ids)).sum() <= L1
    assert rec["edges"] == 65536 and rec["converged"] is True and rec["ranks"] == 1


def test_subprocess_bad_input_one_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("# header\n1 2\n2 x3\n")
    out = tmp_path / "out.csv"
    out.write_text("precious\n")
    r = run_sub(tmp_path, "pagerank", "bad.txt", "-o", "out.csv", "--quiet")
    assert r.returncode == 2
    one_error_line(r.stderr, "bad.txt:3: ")
    assert r.stdout == ""
    assert out.read_text() == "precious\n"
    assert sorted(os.listdir(tmp_path)) == ["bad.txt", "out.csv"]


def test_subprocess_broken_pipe_is_quiet(tmp_path):
    """stdout's reader is gone (as with '| head' after its lines): no traceback, status 141."""
    r, w = os.pipe()
    os.close(r)  # the reader has gone before the table is written: EPIPE on the first write
    try:
        p = subprocess.run([sys.executable, "-m", "asapgraph", "pagerank", str(DATASET), "-q",
                            "--top", "20"], cwd=tmp_path, env=dict(os.environ), stdout=w,
                           stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(w)
    assert p.stderr == b""
    assert p.returncode == cli.EXIT_PIPE


# ----------------------------------------------------------------------------- pagerank


def test_pagerank_output_formats_round_trip(tmp_path, capsys):
    names = ["r.csv", "r.tsv", "r.csv.gz", "r.npy"]
    try:
        import pyarrow.parquet  # noqa: F401

        names.append("r.parquet")
    except ImportError:
        pass
    got = {}
    for name in names:
        code, out, err = run_main(capsys, "pagerank", DATASET, "-o", tmp_path / name, "-q")
        assert code == 0 and out == "" and err == ""
    rec = np.load(tmp_path / "r.npy")
    for name in names:
        p = tmp_path / name
        if name.endswith(".npy"):
            continue
        if name.endswith(".parquet"):
            import pyarrow.parquet as pq

            t = pq.read_table(p)
            got[name] = (t["node"].to_numpy(), t["rank"].to_numpy())
        else:
            sep = "\t" if ".tsv" in name else ","
            op = gzip.open if name.endswith(".gz") else open
            with op(p, "rt") as f:
                assert f.readline().strip().split(sep) == ["node", "rank"]
                a = np.loadtxt(f, delimiter=sep, dtype=np.float64, ndmin=2)
            got[name] = (a[:, 0].astype(np.int64), a[:, 1])
        np.testing.assert_array_equal(got[name][0], rec["node"])
        np.testing.assert_array_equal(got[name][1], rec["rank"])  # bit-exact round trip


def test_pagerank_top_and_default_summary(capsys, rmat12_nx):
    _, ref = rmat12_nx
    code, out, err = run_main(capsys, "pagerank", DATASET, "--top", 7, "-q")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["rank", "node", "score"]
    best = sorted(ref, key=lambda k: (-ref[k], k))[:7]
    assert [int(ln.split()[1]) for ln in lines[1:]] == best
    np.testing.assert_allclose([float(ln.split()[2]) for ln in lines[1:]],
                               [ref[k] for k in best], rtol=1e-8)
    code, out, err = run_main(capsys, "pagerank", DATASET, "-q")
    assert code == 0
    assert "vertices: 3319" in out and "converged: True" in out
    assert [int(ln.split()[1]) for ln in out.splitlines()[-10:]] == \
        sorted(ref, key=lambda k: (-ref[k], k))[:10]


def test_pagerank_json_keys(capsys, tmp_path):
    code, out, err = run_main(capsys, "pagerank", DATASET, "--json", "--top", 3, "-q",
                              "-o", tmp_path / "r.npy", "--alpha", 0.9, "--tol", 1e-9)
    assert code == 0 and err == ""
    assert len(out.splitlines()) == 1
    rec = json.loads(out)
    for k in ("vertices", "edges", "iterations", "converged", "residual", "load_seconds",
              "compute_seconds", "mode", "ranks", "peak_rss_bytes", "alpha", "tol", "method",
              "threads", "input", "output", "top"):
        assert k in rec, k
    assert rec["alpha"] == 0.9 and rec["tol"] == 1e-9 and rec["residual"] <= 1e-9
    assert rec["peak_rss_bytes"] > 10_000_000
    npy = np.load(tmp_path / "r.npy")
    best = np.lexsort((npy["node"], -npy["rank"]))[:3]
    assert rec["top"] == [[int(npy["node"][i]), float(npy["rank"][i])] for i in best]


def test_pagerank_quiet_and_progress(capsys):
    code, out, err = run_main(capsys, "pagerank", DATASET, "--top", 1, "--quiet")
    assert code == 0 and err == ""
    code, out, err = run_main(capsys, "pagerank", DATASET, "--top", 1)
    assert code == 0
    assert "reading" in err and "converged after" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("fname", ["graph.txt", "graph.csv", "graph.mtx"])
@pytest.mark.parametrize("weighted", [False, True])
def test_pagerank_tiny_formats_vs_networkx(tmp_path, capsys, fname, weighted):
    E = edges_numpy(TINY / "graph.txt")
    W = np.loadtxt(TINY / "graph.txt", comments="#", usecols=2)
    ref = nx_pagerank(E, W if weighted else None)
    expected = json.loads((TINY / "expected.json").read_text())["weighted" if weighted else "unweighted"]
    # the checked-in expectations agree with a fresh networkx run
    assert np.abs(as_vector(ref, range(1, 6)) - np.array([expected[str(i)] for i in range(1, 6)])).sum() <= L1
    args = ["pagerank", TINY / fname, "-o", tmp_path / "r.csv", "-q"] + (["--weighted"] if weighted else [])
    code, out, err = run_main(capsys, *args)
    assert code == 0, err
    _, ids, ranks = read_csv(tmp_path / "r.csv")
    assert sorted(ids.tolist()) == [1, 2, 3, 4, 5]
    assert np.abs(ranks - as_vector(ref, ids)).sum() <= L1


def test_pagerank_npy_input(tmp_path, capsys):
    E = edges_numpy(TINY / "graph.txt")
    np.save(tmp_path / "g.npy", E)
    code, out, err = run_main(capsys, "pagerank", tmp_path / "g.npy", "-o", tmp_path / "r.csv", "-q")
    assert code == 0, err
    _, ids, ranks = read_csv(tmp_path / "r.csv")
    assert np.abs(ranks - as_vector(nx_pagerank(E), ids)).sum() <= L1


def test_personalization_and_dangling_files(tmp_path, capsys):
    E = edges_numpy(TINY / "graph.txt")
    pers = {1: 1.0, 4: 3.0}
    dang = {2: 1.0, 5: 1.0}
    (tmp_path / "d.csv").write_text("# node,value\n2,1\n5,1.0\n")
    code, out, err = run_main(capsys, "pagerank", TINY / "graph.txt", "-o", tmp_path / "p.csv", "-q",
                              "--personalization", TINY / "personalization.txt")
    assert code == 0, err
    _, ids, ranks = read_csv(tmp_path / "p.csv")
    assert np.abs(ranks - as_vector(nx_pagerank(E, personalization=pers), ids)).sum() <= L1
    expected = json.loads((TINY / "expected.json").read_text())["personalized_unweighted"]
    assert np.abs(ranks - np.array([expected[str(i)] for i in ids])).sum() <= L1
    code, out, err = run_main(capsys, "pagerank", TINY / "graph.txt", "-o", tmp_path / "q.csv", "-q",
                              "--personalization", TINY / "personalization.txt",
                              "--dangling", tmp_path / "d.csv")
    assert code == 0, err
    _, ids, ranks = read_csv(tmp_path / "q.csv")
    ref = nx_pagerank(E, personalization=pers, dangling=dang)
    assert np.abs(ranks - as_vector(ref, ids)).sum() <= L1


def test_personalization_on_bundled_dataset(tmp_path, capsys, rmat12_nx, rng):
    E, _ = rmat12_nx
    nodes = np.unique(E)
    pick = rng.choice(nodes, 50, replace=False)
    vals = rng.random(50) + 0.01
    (tmp_path / "p.txt").write_text("".join(f"{i}\t{v!r}\n" for i, v in zip(pick.tolist(), vals.tolist())))
    code, out, err = run_main(capsys, "pagerank", DATASET, "-o", tmp_path / "r.npy", "-q",
                              "--personalization", tmp_path / "p.txt")
    assert code == 0, err
    rec = np.load(tmp_path / "r.npy")
    ref = nx_pagerank(E, personalization=dict(zip(pick.tolist(), vals.tolist())))
    assert np.abs(rec["rank"] - as_vector(ref, rec["node"])).sum() <= L1


def test_undirected_karate(shared, tmp_path, capsys):
    p = shared("karate.txt")
    E = edges_numpy(p)
    code, out, err = run_main(capsys, "pagerank", p, "--undirected", "-o", tmp_path / "r.csv", "-q")
    assert code == 0, err
    _, ids, ranks = read_csv(tmp_path / "r.csv")
    assert np.abs(ranks - as_vector(nx_pagerank(E, undirected=True), ids)).sum() <= L1


def test_unconverged_exit_code(tmp_path, capsys):
    out_p = tmp_path / "r.csv"
    code, out, err = run_main(capsys, "pagerank", DATASET, "--max-iter", 3, "-q", "-o", out_p)
    assert code == cli.EXIT_UNCONVERGED == 3
    line = one_error_line(err, "asapgraph: ")
    assert "did not converge" in line and "--allow-unconverged" in line
    assert not out_p.exists() and out == ""
    code, out, err = run_main(capsys, "pagerank", DATASET, "--max-iter", 3, "-q", "-o", out_p,
                              "--allow-unconverged", "--json")
    assert code == 0 and json.loads(out)["converged"] is False and json.loads(out)["iterations"] == 3
    assert json.loads(out)["allow_unconverged"] is True  # (applied, so in --json)
    assert out_p.exists()
    code, out, _ = run_main(capsys, "pagerank", DATASET, "-q", "--top", 0, "--json")
    assert code == 0 and json.loads(out)["allow_unconverged"] is False


# ----------------------------------------------------------------------------- bad input


def _bad_cases(tmp_path):
    t = tmp_path
    (t / "tok.txt").write_text("# c\n1 2\n2 3\n3 x\n")
    (t / "one.txt").write_text("1 2\n5\n")
    (t / "empty.txt").write_text("# only a comment\n")
    (t / "pv.txt").write_text("1 1.0\n2 -3\n")
    (t / "pnode.txt").write_text("1 1.0\n\n# c\n99 1\n")
    (t / "pdup.txt").write_text("1 1\n2 1\n1 2\n")
    (t / "pfields.txt").write_text("1 1\n2\n")
    (t / "ptok.txt").write_text("1 1\nabc 2\n")
    (t / "pzero.txt").write_text("1 0\n")
    g = str(TINY / "graph.txt")
    return [
        (["pagerank", t / "tok.txt"], f"{t / 'tok.txt'}:4: "),
        (["pagerank", t / "one.txt"], f"{t / 'one.txt'}:2: "),
        (["pagerank", t / "empty.txt"], f"{t / 'empty.txt'}: "),
        (["pagerank", t / "missing.txt"], f"{t / 'missing.txt'}: "),
        (["pagerank", g, "--personalization", t / "pv.txt"], f"{t / 'pv.txt'}:2: "),
        (["pagerank", g, "--personalization", t / "pnode.txt"], f"{t / 'pnode.txt'}:4: "),
        (["pagerank", g, "--personalization", t / "pdup.txt"], f"{t / 'pdup.txt'}:3: "),
        (["pagerank", g, "--personalization", t / "pfields.txt"], f"{t / 'pfields.txt'}:2: "),
        (["pagerank", g, "--dangling", t / "ptok.txt"], f"{t / 'ptok.txt'}:2: "),
        (["pagerank", g, "--personalization", t / "pzero.txt"], f"{t / 'pzero.txt'}: "),
        (["pagerank", g, "--personalization", t / "nope.txt"], f"{t / 'nope.txt'}: "),
        (["info", t / "tok.txt"], f"{t / 'tok.txt'}:4: "),
        (["convert", t / "tok.txt", t / "x.asg"], f"{t / 'tok.txt'}:4: "),
    ]


def test_bad_input_one_line_exit_2_no_output(tmp_path, capsys):
    out_p = tmp_path / "out.csv"
    for argv, prefix in _bad_cases(tmp_path):
        out_p.write_text("precious\n")
        before = sorted(os.listdir(tmp_path))
        extra = ["-o", out_p] if argv[0] == "pagerank" else []
        code, out, err = run_main(capsys, *argv, *extra, "-q")
        assert code == 2, (argv, err)
        one_error_line(err, prefix)
        assert out == ""
        assert out_p.read_text() == "precious\n"
        assert sorted(os.listdir(tmp_path)) == before, argv  # nothing new, no temp files


def test_bad_input_without_quiet_ends_with_the_error(tmp_path, capsys):
    (tmp_path / "tok.txt").write_text("1 2\n3 x\n")
    code, out, err = run_main(capsys, "pagerank", tmp_path / "tok.txt")
    assert code == 2
    assert err.splitlines()[-1].startswith(f"{tmp_path / 'tok.txt'}:2: ")
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [
    ["pagerank", "x.txt", "-o", "{t}/r.xyz"],
    ["pagerank", "x.txt", "-o", "{t}/r.npy.gz"],
    ["pagerank", "x.txt", "-o", "{t}/no/such/dir/r.csv"],
    ["convert", "x.txt", "{t}/g.bin"],
    ["generate", "rmat", "--scale", "4", "-o", "{t}/g.dat"],
])
def test_bad_output_paths(tmp_path, capsys, argv):
    (tmp_path / "x.txt").write_text("1 2\n")
    argv = [a.format(t=tmp_path) if "{t}" in a else (str(tmp_path / a) if a == "x.txt" else a)
            for a in argv]
    code, out, err = run_main(capsys, *argv, "-q")
    assert code == 2
    line = one_error_line(err, str(tmp_path))
    target = argv[argv.index("-o") + 1] if "-o" in argv else argv[-1]
    assert line.split(": ")[0] == target
    assert sorted(os.listdir(tmp_path)) == ["x.txt"]


@pytest.mark.parametrize("argv", [
    ["pagerank", "g", "--alpha", "1.0"],
    ["pagerank", "g", "--alpha", "x"],
    ["pagerank", "g", "--tol", "-1"],
    ["pagerank", "g", "--max-iter", "-2"],
    ["pagerank", "g", "--np", "0"],
    ["pagerank", "g", "--straggler", "1"],
    ["pagerank", "g", "--straggler", "1:0.5"],
    ["pagerank", "g", "--bandwidth", "fast"],
    ["pagerank"],
    ["frobnicate"],
    [],
])
def test_usage_errors_exit_2(capsys, argv):
    code, out, err = run_main(capsys, *argv)
    assert code == 2
    # one line naming the (sub)command, not argparse's usage block
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "usage:" not in err and "Traceback" not in err, err
    prog = "asapgraph pagerank" if argv[:1] == ["pagerank"] else "asapgraph"
    assert lines[0].startswith(f"{prog}: error: ") and lines[0].endswith(f"(see {prog} --help)")


@pytest.mark.parametrize("argv", [
    ["pagerank", "g", "--top", "-5"], ["katz", "g", "--alpha", "0"], ["hits", "g", "--tol", "x"],
    ["wcc", "g", "--np", "0"], ["sssp", "g"], ["bfs", "g", "--source"], ["labelprop"],
    ["info"], ["convert", "g"], ["generate"], ["run"], ["bench", "--frob"],
])
def test_usage_errors_one_line_every_command(capsys, argv):
    code, out, err = run_main(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and ": error: " in lines[0], err


@pytest.mark.parametrize("opt,value", [
    ("--weight-col", "99999999999999999999"), ("--max-iter", "99999999999999999999"),
    ("--top", "99999999999999999999"), ("--threads", "99999999999999999999"),
    ("--threads", "4294967296"), ("--np", "99999999999999999999"), ("--weight-col", "2147483648"),
])
def test_huge_integer_options_are_usage_errors(capsys, opt, value):
    code, out, err = run_main(capsys, "pagerank", "g", opt, value)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"asapgraph pagerank: error: argument {opt}: expected an integer <= ")


def test_internal_error_and_interrupt(capsys, monkeypatch):
    def bug(graph):
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(cli.graphs, "graph_stats", bug)
    monkeypatch.delenv("ASAPGRAPH_DEBUG", raising=False)
    code, out, err = run_main(capsys, "info", TINY / "graph.txt", "-q")
    assert code == 1
    line = one_error_line(err, "asapgraph: internal error: ")
    assert "ZeroDivisionError: oops" in line and "ASAPGRAPH_DEBUG=1" in line
    monkeypatch.setenv("ASAPGRAPH_DEBUG", "1")
    code, out, err = run_main(capsys, "info", TINY / "graph.txt", "-q")
    assert code == 1 and "Traceback" in err

    def interrupted(graph):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.graphs, "graph_stats", interrupted)
    code, out, err = run_main(capsys, "info", TINY / "graph.txt", "-q")
    assert code == 130 and "Traceback" not in err


# ----------------------------------------------------------------------------- info


def test_info_matches_numpy(capsys, rmat12_nx):
    E, _ = rmat12_nx
    code, out, err = run_main(capsys, "info", DATASET, "--json", "-q")
    assert code == 0 and err == ""
    rec = json.loads(out)
    src, dst = E[:, 0], E[:, 1]
    nodes = np.unique(E)
    pairs = np.unique(E, axis=0)
    outdeg = np.array([np.count_nonzero(src == v) for v in nodes[:50]])  # naive spot check
    out_all = np.searchsorted(np.sort(src), nodes, "right") - np.searchsorted(np.sort(src), nodes, "left")
    in_all = np.searchsorted(np.sort(dst), nodes, "right") - np.searchsorted(np.sort(dst), nodes, "left")
    assert np.array_equal(out_all[:50], outdeg)
    assert rec["vertices"] == nodes.size
    assert rec["edges"] == len(E)
    assert rec["self_loops"] == int(np.count_nonzero(src == dst))
    assert rec["duplicate_edges"] == len(E) - len(pairs)
    assert rec["dangling"] == int(np.count_nonzero(out_all == 0))
    for key, d in (("out_degree", out_all), ("in_degree", in_all)):
        assert rec[key] == {"min": int(d.min()), "median": float(np.median(d)), "max": int(d.max())}
    assert rec["weighted"] is False
    code, out, err = run_main(capsys, "info", DATASET, "-q")
    assert code == 0 and f"duplicate edges:  {len(E) - len(pairs):,}" in out


def test_info_tiny_weighted(capsys):
    code, out, err = run_main(capsys, "info", TINY / "graph.txt", "--weighted", "--json", "-q")
    rec = json.loads(out)
    assert (rec["vertices"], rec["edges"], rec["self_loops"], rec["duplicate_edges"],
            rec["dangling"], rec["weighted"]) == (5, 8, 1, 1, 1, True)


# ----------------------------------------------------------------------------- convert, generate


def test_convert_then_pagerank_equal(tmp_path, capsys):
    code, out, err = run_main(capsys, "convert", DATASET, tmp_path / "g.asg", "-q")
    assert code == 0 and out == "" and err == ""
    assert sorted(os.listdir(tmp_path)) == ["g.asg"]
    for src, name in ((DATASET, "a.npy"), (tmp_path / "g.asg", "b.npy")):
        assert run_main(capsys, "pagerank", src, "-o", tmp_path / name, "-q")[0] == 0
    a, b = np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy")
    np.testing.assert_array_equal(a["node"], b["node"])
    assert np.abs(a["rank"] - b["rank"]).sum() <= 1e-14


@pytest.mark.parametrize("ext", [".txt", ".el.gz", ".tsv.bz2", ".txt.xz"])
def test_generate_rmat_text(tmp_path, capsys, ext):
    p = tmp_path / f"g{ext}"
    code, out, err = run_main(capsys, "generate", "rmat", "--scale", 8, "--edge-factor", 4,
                              "--seed", 3, "-o", p, "-q")
    assert code == 0 and err == ""
    import bz2
    import lzma

    op = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(p.suffix, open)
    with op(p, "rt") as f:
        text = f.read()
    assert "asapgraph generate rmat --scale 8 --edge-factor 4 --seed 3" in text.splitlines()[1]
    e = np.loadtxt(text.splitlines(), dtype=np.int64, comments="#", ndmin=2)
    s, d = generators.rmat(8, 4, 3)
    np.testing.assert_array_equal(e[:, 0], s)
    np.testing.assert_array_equal(e[:, 1], d)


def test_generate_bad_parameters(tmp_path, capsys):
    code, out, err = run_main(capsys, "generate", "rmat", "--scale", 50, "-o", tmp_path / "g.txt")
    assert code == 2
    one_error_line(err, "generate rmat: ")
    assert os.listdir(tmp_path) == []


def test_generate_er_binary_and_bundled_dataset_reproducible(tmp_path, capsys):
    code, out, err = run_main(capsys, "generate", "er", "--vertices", 100, "--edges", 700,
                              "-o", tmp_path / "er.asg", "-q")
    assert code == 0, err
    from asapgraph.graph.io import load_graph

    g = load_graph(str(tmp_path / "er.asg"))
    assert (g.n, g.m) == (100, 700)
    s, d = generators.erdos_renyi(100, 700, 0)
    src, dst, _ = g.edges()
    ids = g.original_ids()
    assert sorted(zip(ids[src].tolist(), ids[dst].tolist())) == sorted(zip(s.tolist(), d.tolist()))
    # the bundled dataset is exactly what its header command produces
    with gzip.open(DATASET, "rt") as f:
        header = [next(f) for _ in range(2)]
    cmd = header[1].split(": ", 1)[1].split()
    assert cmd[:3] == ["asapgraph", "generate", "rmat"]
    cmd[cmd.index("-o") + 1] = str(tmp_path / "again.txt.gz")
    assert run_main(capsys, *cmd[1:], "-q")[0] == 0
    with gzip.open(DATASET, "rb") as a, gzip.open(tmp_path / "again.txt.gz", "rb") as b:
        body_a, body_b = a.read().split(b"\n", 4)[4], b.read().split(b"\n", 4)[4]
    assert body_a == body_b


# ----------------------------------------------------------------------------- distributed dispatch


def test_mpi_env_detection():
    assert cli.mpi_world_size_from_env({}) is None
    assert cli.mpi_world_size_from_env({"PMI_SIZE": "4", "PMI_RANK": "0"}) == 4
    assert cli.mpi_world_size_from_env({"OMPI_COMM_WORLD_SIZE": "2"}) == 2
    assert cli.mpi_world_size_from_env({"PMIX_RANK": "0"}) == 1
    ns = types.SimpleNamespace(np=1)
    assert not cli.wants_distributed(ns, {})
    assert not cli.wants_distributed(ns, {"PMI_SIZE": "1"})
    assert cli.wants_distributed(ns, {"PMI_SIZE": "3"})
    assert cli.wants_distributed(types.SimpleNamespace(np=2), {})


def test_np_dispatches_to_run_distributed(capsys, monkeypatch):
    seen = {}

    def fake(args):
        seen.update(vars(args))
        return 0

    mod = types.ModuleType("asapgraph.cli.distributed")
    mod.run_distributed = fake
    monkeypatch.setitem(sys.modules, "asapgraph.cli.distributed", mod)
    import asapgraph.engine as dist_pkg

    monkeypatch.setattr(dist_pkg, "cli", mod, raising=False)
    code, out, err = run_main(capsys, "pagerank", "rmat:10", "--np", 4, "--mode", "asap",
                              "--partition", "hash", "--fanout", 2, "--window", 2, "--approx",
                              1e-9, "--seed", 5, "--latency", 1e-5, "--bandwidth", "1.25G",
                              "--jitter", 1e-6, "--straggler", "1:2.5", "--straggler", "3:4,2:1.5",
                              "--emulate-seed", 7, "--mpiexec", "/usr/bin/mpiexec")
    assert code == 0
    assert seen["np"] == 4 and seen["mode"] == "asap" and seen["partition"] == "hash"
    assert (seen["fanout"], seen["window"], seen["approx"], seen["seed"]) == (2, 2, 1e-9, 5)
    assert (seen["latency"], seen["bandwidth"], seen["jitter"]) == (1e-5, 1.25e9, 1e-6)
    assert seen["straggler"] == ["1:2.5", "3:4,2:1.5"] and seen["emulate_seed"] == 7
    assert seen["mpiexec"] == "/usr/bin/mpiexec" and seen["input"] == "rmat:10"
    monkeypatch.setenv("PMI_SIZE", "2")
    seen.clear()
    assert run_main(capsys, "pagerank", "rmat:10")[0] == 0 and seen["np"] == 1


def test_read_vertex_values_unit(tmp_path):
    p = tmp_path / "v.txt"
    p.write_text("% c\n10, 0.5\n\n3\t2\n7 1e-3  \n")
    ids, vals, lines = cli.read_vertex_values(p)
    assert ids.tolist() == [10, 3, 7] and vals.tolist() == [0.5, 2.0, 1e-3]
    assert lines.tolist() == [2, 4, 5]
    p.write_text("1 nan\n")
    with pytest.raises(InputError, match=":1: "):
        cli.read_vertex_values(p)


def test_threads_caps_the_loading_too(capsys, tmp_path):
    """``--threads N`` is the process's OpenMP threads: the parse and CSR build run on N
    threads (``load_threads`` in --json), and ``main`` restores the caller's default."""
    from asapgraph.kernels import _graph

    before = _graph.max_threads()
    code, out, _ = run_main(capsys, "pagerank", DATASET, "--json", "-q", "--threads", 1)
    assert code == 0
    rec = json.loads(out)
    assert rec["threads"] == 1 and rec["load_threads"] == 1
    assert _graph.max_threads() == before
    code, out, _ = run_main(capsys, "pagerank", DATASET, "--json", "-q")
    assert code == 0 and json.loads(out)["load_threads"] == before
    # the answer does not depend on it
    r1 = np.load(_write(capsys, tmp_path / "a.npy", "--threads", "1"))
    r2 = np.load(_write(capsys, tmp_path / "b.npy", "--threads", "2"))
    assert np.array_equal(r1["node"], r2["node"])
    np.testing.assert_allclose(r1["rank"], r2["rank"], rtol=0, atol=1e-12)


def _write(capsys, path, *extra):
    code, _, _ = run_main(capsys, "pagerank", DATASET, "-q", "-o", path, *extra)
    assert code == 0
    return path


def test_process_threads_restores_on_error():
    from asapgraph.kernels import _graph
    from asapgraph.kernels.tuning import omp_threads as process_threads

    before = _graph.max_threads()
    with pytest.raises(RuntimeError):
        with process_threads(1):
            assert _graph.max_threads() == 1
            raise RuntimeError("boom")
    assert _graph.max_threads() == before
    with process_threads(None):
        assert _graph.max_threads() == before
    with pytest.raises(ValueError):
        _graph.set_max_threads(0)


def test_launcher_path_does_not_import_numpy(tmp_path):
    """``asapgraph pagerank ... --np K`` starts mpiexec without loading numpy or a kernel
    (their import is the launcher's share of every distributed run's start-up); the options
    and ``-o`` are still checked first, and bad ones refused the same way."""
    code = (
        "import sys\n"
        "from asapgraph.cli import main\n"
        "rc = main(['pagerank', 'rmat:10', '--np', '2', '-q', '-o', sys.argv[1], "
        "'--mpiexec', '/bin/true'])\n"
        "assert rc == 4, rc\n"  # /bin/true runs no rank: refused (exit 4), no numpy either
        "bad = main(['pagerank', 'rmat:10', '--np', '2', '-o', sys.argv[1] + '.xyz', "
        "'--mpiexec', '/bin/true'])\n"
        "assert bad == 2, bad\n"
        "heavy = sorted(m for m in sys.modules if m == 'numpy' or m.startswith('asapgraph.kernels.')"
        " or m.startswith('asapgraph.engine'))\n"
        "assert not heavy, heavy\n"
        "import asapgraph\n"
        "assert asapgraph.Graph.__name__ == 'Graph' and asapgraph.generators.rmat\n"
    )
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "out.npy")],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "unknown output format '.xyz'" in r.stderr
    assert "mpiexec /bin/true exited with status 0 but started no rank" in r.stderr


@pytest.mark.parametrize("command", ["pagerank", "katz", "hits", "labelprop"])
def test_max_iter_0_is_a_usage_error(capsys, command):
    """--max-iter 0 ran no iteration and BSP / ASAP reported different error bounds (inf,
    the start-up waves' bound): refused by the parser, so 1 and K ranks and both modes
    say the same line (tests/mpi/test_options_mpi.py launches the ranks)."""
    for extra in ([], ["--mode", "asap"], ["--np", "2"]):
        code, out, err = run_main(capsys, command, "g", "--max-iter", "0", *extra)
        assert code == 2 and err == (f"asapgraph {command}: error: argument --max-iter: expected "
                                     f"a positive integer, got '0' (see asapgraph {command} "
                                     f"--help)\n"), err
