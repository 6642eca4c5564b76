"""Messy inputs (an adversarial audit): the same answer, or the same one-line refusal
(exit 2), on one process and on K ranks in both modes.

* weights whose per-vertex out-weight sum overflows (``1e308 + 1e308``) or is subnormal
  (``1 / sum`` overflows): each such vertex's weights are divided by its largest first,
  so every configuration gives networkx's answer for the same ratios;
* personalization values whose sum overflows: scaled by the largest first;
* --weight-col on an id column, sssp's negative weight (FILE:LINE), .npy rows, bare CR
  line ends, sssp distances past the largest double, HITS score sums that overflow,
  non-finite weights of a binary graph: one line, exit 2, identical everywhere.
"""
import csv
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(600)]

CONFIGS = [[], ["--np", "2"], ["--np", "3", "--mode", "asap"], ["--np", "2", "--mode", "asap"]]


def _cli(args, cwd, timeout=180):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def _scores(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return {r[0]: float(r[1]) for r in rows[1:]}


def _same_everywhere(tmp_path, args, want, tol=1e-8):
    for i, extra in enumerate(CONFIGS):
        out = tmp_path / f"o{i}.csv"
        r = _cli([*args, "-o", out, "-q", *extra], tmp_path)
        assert r.returncode == 0 and not r.stderr.strip(), (extra, r.stderr[-2000:])
        got = _scores(out)
        assert got.keys() == want.keys(), (extra, got)
        for v in want:
            assert abs(got[v] - want[v]) <= tol, (extra, v, got[v], want[v])


def _nx(edges, **kw):
    nx = pytest.importorskip("networkx")
    G = nx.MultiDiGraph()
    G.add_weighted_edges_from(edges)
    return {str(k): v for k, v in nx.pagerank(G, tol=1e-15, max_iter=10000, **kw).items()}


def test_out_weight_sum_overflow_is_exact(tmp_path):
    (tmp_path / "ovf.txt").write_text("0 1 1\n1 2 1\n2 0 1\n2 1 1e308\n2 3 1e308\n")
    # the same ratios without overflow: 1e-308 : 1 : 1 out of vertex 2
    want = _nx([(0, 1, 1), (1, 2, 1), (2, 0, 1e-308), (2, 1, 1), (2, 3, 1)])
    _same_everywhere(tmp_path, ["pagerank", "ovf.txt", "--weighted", "--tol", "1e-12"], want)


def test_subnormal_weights_are_exact(tmp_path):
    (tmp_path / "den.txt").write_text("0 1 1\n1 2 1\n2 0 5e-324\n2 1 1e-323\n")
    want = _nx([(0, 1, 1), (1, 2, 1), (2, 0, 1), (2, 1, 2)])
    _same_everywhere(tmp_path, ["pagerank", "den.txt", "--weighted", "--tol", "1e-12"], want)


def test_personalization_sum_overflow(tmp_path):
    (tmp_path / "g.txt").write_text("0 1\n1 2\n2 0\n2 3\n")
    (tmp_path / "p.txt").write_text("0 1e308\n3 1e308\n")
    want = _nx([(0, 1, 1), (1, 2, 1), (2, 0, 1), (2, 3, 1)], personalization={0: 1, 3: 1})
    assert abs(want["0"] - 0.28) < 0.01
    _same_everywhere(tmp_path, ["pagerank", "g.txt", "--personalization", "p.txt",
                                "--tol", "1e-12"], want)
    _same_everywhere(tmp_path, ["pagerank", "g.txt", "--personalization", "p.txt",
                                "--dangling", "p.txt", "--tol", "1e-12"], want)


@pytest.mark.parametrize("col", ["1", "2"])
def test_weight_col_on_an_id_column(tmp_path, col, refused_alike):
    (tmp_path / "w.txt").write_text("0 1 1\n1 2 1\n2 0 2\n")
    line = refused_alike(tmp_path, ["pagerank", "w.txt", "--weight-col", col],
                         configs=CONFIGS)
    assert line == (f"w.txt: bad column choice: source 1, destination 2, weight {col} "
                    f"(1-based, all different)")


@pytest.mark.parametrize("args,text,want", [
    (["--weighted"], "0 1 1\n1 2 -1\n2 0 1\n",
     "neg.txt:2: negative edge weight '-1': sssp needs non-negative edge weights"),
    (["--weight-col", "4"], "0 1 1 5\n1 2 -1 7\n2 0 1 -3\n",
     "neg.txt:3: negative edge weight '-3': sssp needs non-negative edge weights"),
])
def test_sssp_negative_weight_names_the_line(tmp_path, args, text, want, refused_alike):
    (tmp_path / "neg.txt").write_text(text)
    assert refused_alike(tmp_path, ["sssp", "neg.txt", "--source", "0", *args],
                         configs=CONFIGS) == want


NPY = {
    "float_id": ([[0, 1], [1, 2.5]], None, "row 1: vertex id 2.5 is not an integer"),
    "uint64": ([[0, 1], [1, 2**64 - 1]], "uint64",
               "row 1: vertex id 18446744073709551615 does not fit in int64"),
    "nan_weight": ([[0, 1, 1], [1, 2, float("nan")], [2, 0, 1]], None,
                   "row 1: weight nan is not a finite number"),
    "late_row": ([[0, 1], [1, 2], [2, 3], [3, 0.5], [1.5, 0]], None,
                 "row 3: vertex id 0.5 is not an integer"),
}


@pytest.mark.parametrize("case", sorted(NPY))
def test_npy_refused_alike(tmp_path, case, refused_alike):
    np = pytest.importorskip("numpy")
    rows, dtype, want = NPY[case]
    np.save(tmp_path / "e.npy", np.array(rows, dtype=dtype))
    args = ["pagerank", "e.npy"] + (["--weighted"] if case == "nan_weight" else [])
    assert refused_alike(tmp_path, args, configs=CONFIGS + [["--np", "4"]]) == f"e.npy: {want}"


SSSP_CONFIGS = CONFIGS + [["--mode", "asap"]]


def test_sssp_distance_overflow_refused(tmp_path, refused_alike):
    (tmp_path / "big.txt").write_text("0 1 1e308\n1 2 1e308\n0 3 1\n")
    line = refused_alike(tmp_path, ["sssp", "big.txt", "--weighted", "--source", "0"],
                         configs=SSSP_CONFIGS)
    assert line.startswith("big.txt: sssp: a shortest-path distance exceeds the largest double")


def test_sssp_overflow_on_a_longer_path_only_is_fine(tmp_path):
    (tmp_path / "big2.txt").write_text("0 1 1e308\n1 2 1e308\n0 2 1\n")
    for i, extra in enumerate(SSSP_CONFIGS):
        out = tmp_path / f"d{i}.csv"
        r = _cli(["sssp", "big2.txt", "--weighted", "--source", "0", "-q", "-o", out, *extra],
                 tmp_path)
        assert r.returncode == 0 and not r.stderr, (extra, r.stderr)
        assert out.read_text().split() == ["node,distance", "0,0", "1,1e+308", "2,1"]


@pytest.mark.parametrize("where", ["first", "late"])
def test_bare_cr_refused_alike(tmp_path, where, refused_alike):
    """Old Mac line ends: the same FILE:LINE on 1 and K ranks (byte ranges: the bare CR
    lies in the last rank's range for ``late``), plain and gzip; CRLF still reads."""
    body = "".join(f"{i} {i + 1}\r\n" for i in range(300))
    text = "0 1\r1 2\r2 0\r" if where == "first" else body + "7 8\r9 10\n11 12\n"
    line = 1 if where == "first" else 301
    (tmp_path / "cr.txt").write_text(text, newline="")
    want = (f"cr.txt:{line}: line ends with a bare CR (old Mac line endings): convert "
            "with `tr '\\r' '\\n'`")
    assert refused_alike(tmp_path, ["pagerank", "cr.txt"], configs=CONFIGS) == want
    import gzip

    (tmp_path / "cr.txt.gz").write_bytes(gzip.compress(text.encode()))
    assert refused_alike(tmp_path, ["pagerank", "cr.txt.gz"],
                         configs=[[], ["--np", "2"]]) == want.replace("cr.txt", "cr.txt.gz")
    (tmp_path / "crlf.txt").write_text(body, newline="")
    for extra in ([], ["--np", "3"]):
        r = _cli(["info", "crlf.txt", *extra], tmp_path) if not extra else \
            _cli(["pagerank", "crlf.txt", "-q", "-o", "x.csv", *extra], tmp_path)
        assert r.returncode == 0, r.stderr


def test_hits_score_sums_that_overflow(tmp_path):
    """HITS normalises by the largest score first when the sum overflows (it wrote all
    zeros, "converged"): the same answer on 1 and K ranks."""
    (tmp_path / "ovf.txt").write_text("0 1 1\n1 2 1\n2 0 1\n2 1 1e308\n2 3 1e308\n")
    rows = set()
    for k in ("1", "2", "3"):
        out = tmp_path / f"h{k}.csv"
        r = _cli(["hits", "ovf.txt", "--weighted", "-q", "-o", out, "--np", k], tmp_path)
        assert r.returncode == 0 and not r.stderr, r.stderr
        got = {a: (float(h), float(au)) for a, h, au in
               (line.split(",") for line in out.read_text().split()[1:])}
        assert got["2"] == (1.0, 0.0) and got["1"][1] == got["3"][1] == 0.5, got
        rows.add(tuple(sorted(got.items())))
    assert len(rows) == 1


@pytest.mark.parametrize("bad", ["nan", "inf"])
def test_binary_graph_nonfinite_weight_refused_alike(tmp_path, bad, refused_alike):
    """A .asg whose weights hold NaN / inf (np1 ran to exit 3, ranks wrote results): the
    file is corrupt (``load_binary`` checks its contents), weighted run or not."""
    np = pytest.importorskip("numpy")
    import asapgraph as ag
    from asapgraph.graph.core import Graph

    g = Graph.from_edges(np.array([0, 1, 2, 2]), np.array([1, 2, 0, 1]), n=3,
                         weights=np.array([1.0, 2.0, float(bad), 1.0]))
    ag.save_binary(g, str(tmp_path / "gw.asg"))
    want = "gw.asg: corrupt asapgraph binary graph: non-finite edge weight (edge 0)"
    assert refused_alike(tmp_path, ["pagerank", "gw.asg", "--weighted"],
                         configs=CONFIGS + [["--np", "4"]]) == want
    assert refused_alike(tmp_path, ["pagerank", "gw.asg"], configs=CONFIGS) == want


@pytest.mark.parametrize("labels", [[], ["--labels"]])
def test_zstd_input_named_alike(tmp_path, labels):
    """A .zst edge list (zstd is not read): one line naming the format and the command that
    unpacks it, exit 2, the same on one process and on K ranks."""
    p = tmp_path / "e.txt.zst"
    p.write_bytes(b"\x28\xb5\x2f\xfd\x24\x1d\xe9\x00" + b"1 2\n2 3\n" * 8)
    lines = set()
    for extra in CONFIGS[:3]:
        r = _cli(["pagerank", p, "-q", *labels, *extra], tmp_path)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, (extra, r.stderr)
        lines.add(r.stderr.strip())
    assert lines == {f"{p}: zstd-compressed, which asapgraph does not read (gzip, bzip2 and "
                     "xz are read): unpack it first (zstd -d)"}, lines


MTX = ("%%MatrixMarket matrix coordinate integer general\n5 5 7\n"
       "1 2 1\n2 3 2\n3 1 3\n3 4 4\n4 1 5\n2 4 6\n5 1 7\n")


@pytest.mark.parametrize("labels", [[], ["--labels"]])
def test_matrix_market_in_disguise_read_alike(tmp_path, labels):
    """A gzip-compressed Matrix Market file named ``g.gz`` (and any .mtx with --labels) was
    read as a text edge list on every configuration: the size line '5 5 7' became an edge
    5 -> 5, exit 0.  Now: every configuration reads it as Matrix Market (K ranks: rank 0
    reads it and scatters it), or refuses --labels in one line, exit 2."""
    import gzip

    p = tmp_path / "g.gz"
    p.write_bytes(gzip.compress(MTX.encode()))
    for extra in CONFIGS[:3]:
        r = _cli(["pagerank", p, "-q", "-o", tmp_path / "o.csv", *labels, *extra], tmp_path)
        if not labels:   # Matrix Market, 7 edges, no 5 -> 5
            assert r.returncode == 0, r.stderr
            got = _scores(tmp_path / "o.csv")
            want = _nx([(1, 2, 1), (2, 3, 1), (3, 1, 1), (3, 4, 1), (4, 1, 1), (2, 4, 1), (5, 1, 1)])
            assert all(abs(got[k] - want[k]) < 1e-8 for k in want), (got, want)
            (tmp_path / "o.csv").unlink()
            continue
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, (extra, r.stderr)
        assert lines[0].startswith(f"{p}: ") and ("Matrix Market" in lines[0]), lines
        assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("tok", ["nan", "inf"])
def test_labels_nonfinite_weight_refused_alike(tmp_path, tok):
    """``--labels --weighted`` with a NaN / inf weight: one process exited 1 ("internal
    error") or 3 (1000 iterations), K ranks exited 0 with an answer.  Now the integer
    reader's line, exit 2, on every configuration."""
    p = tmp_path / "w.txt"
    p.write_text(f"a b {tok}\na c 1\nc a 1\n")
    for extra in CONFIGS[:3]:
        r = _cli(["pagerank", p, "--labels", "--weighted", "-q", "-o", tmp_path / "o.csv",
                  *extra], tmp_path)
        assert r.returncode == 2 and r.stderr.strip() == \
            f"{p}:1: weight '{tok}' is not a finite number", (extra, r.stderr)
        assert not (tmp_path / "o.csv").exists()


def test_konect_sym_refused_alike(tmp_path):
    """A KONECT '% sym' file without --undirected: refused at line 1 on one process and on
    K ranks (it was read as directed everywhere); with --undirected the same answer."""
    p = tmp_path / "out.k"
    p.write_text("% sym unweighted\n% 4 4 4\n1 2\n2 3\n3 1\n3 4\n")
    for extra in CONFIGS[:3]:
        r = _cli(["pagerank", p, "-q", *extra], tmp_path)
        assert r.returncode == 2 and r.stderr.strip().startswith(
            f"{p}:1: a KONECT undirected network ('% sym unweighted'"), (extra, r.stderr)
    nx = pytest.importorskip("networkx")
    G = nx.MultiDiGraph()
    for a, b in [(1, 2), (2, 3), (3, 1), (3, 4)]:
        G.add_edge(a, b)
        G.add_edge(b, a)
    want = {str(k): v for k, v in nx.pagerank(G, tol=1e-15, max_iter=10000).items()}
    _same_everywhere(tmp_path, ["pagerank", p, "--undirected"], want)
