"""Audit 19: regressions of defects found by a user-level audit, each checked alike on
one process and on K ranks in both modes where the defect could differ."""
import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(600)]

CONFIGS = [[], ["--np", "2"], ["--np", "3", "--mode", "asap"]]


SKEW = ("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n"
        "2 1 0.5\n3 2 1.5\n")


@pytest.mark.parametrize("cmd,what", [(["pagerank"], "PageRank needs non-negative edge weights"),
                                      (["sssp", "--source", "1"],
                                       "sssp needs non-negative edge weights")])
def test_skew_symmetric_weighted_refused_alike(tmp_path, cmd, what, refused_alike):
    """A skew-symmetric .mtx with --weighted (its mirrored entries are negated, so it has
    negative weights): one process said 'PageRank needs non-negative edge weights' with no
    line, K ranks 'Matrix Market input is not split across ranks'.  Now the header's line
    and the reason, on every configuration."""
    (tmp_path / "s.mtx").write_text(SKEW)
    line = refused_alike(tmp_path, [cmd[0], "s.mtx", "--weighted", *cmd[1:]], configs=CONFIGS,
                         output="refused.csv")
    assert line.startswith("s.mtx:1: a skew-symmetric Matrix Market matrix has negative edge "
                           "weights (the mirror of each entry is its negation): " + what), line


def test_bad_matrix_market_refused_alike(tmp_path, refused_alike, cli):
    """A .mtx that one process refuses (a negative weight at its line, an entry out of
    range, a wrong entry count) was refused on K ranks only as 'not split across ranks';
    now the same line as one process everywhere.  A good .mtx runs on ranks too (rank 0
    reads it and scatters it: tests/mpi/test_whole_file_ranks.py)."""
    (tmp_path / "neg.mtx").write_text("%%MatrixMarket matrix coordinate real general\n3 3 3\n"
                                      "1 2 0.5\n2 3 -1.5\n3 1 1\n")
    line = refused_alike(tmp_path, ["pagerank", "neg.mtx", "--weighted"], configs=CONFIGS)
    assert line.startswith("neg.mtx:4: negative edge weight '-1.5'"), line
    (tmp_path / "oor.mtx").write_text("%%MatrixMarket matrix coordinate pattern general\n"
                                      "3 3 2\n1 2\n2 5\n")
    line = refused_alike(tmp_path, ["wcc", "oor.mtx"], configs=CONFIGS)
    assert line == "oor.mtx:4: Matrix Market entry (2, 5) is out of range (rows 1..3, columns 1..3)"
    (tmp_path / "few.mtx").write_text("%%MatrixMarket matrix coordinate pattern general\n"
                                      "3 3 3\n1 2\n2 3\n")
    line = refused_alike(tmp_path, ["pagerank", "few.mtx"], configs=CONFIGS)
    assert line == "few.mtx: Matrix Market size line announces 3 entries, found 2"
    (tmp_path / "ok.mtx").write_text("%%MatrixMarket matrix coordinate pattern general\n"
                                     "3 3 2\n1 2\n2 3\n")
    for extra in CONFIGS[1:]:
        r = cli(["pagerank", "ok.mtx", "-q", "--top", "3", *extra], tmp_path)
        assert r.returncode == 0 and not r.stderr, r.stderr
        assert [ln.split()[1] for ln in r.stdout.splitlines()[1:]] == ["3", "2", "1"], r.stdout


@pytest.mark.parametrize("labels", [[], ["--labels"]])
@pytest.mark.parametrize("text", ["1,2\t0,5\n2,3\t1\n3,1\t2\n", "1, 2, 0,5\n2, 3, 1\n3, 1, 2\n"])
def test_decimal_comma_after_comma_ids_refused(tmp_path, text, labels, refused_alike):
    """``1,2<TAB>0,5`` (comma-separated ids, the weight after a tab, with a decimal comma)
    and ``1, 2, 0,5``: a comma earlier on the line made the weight's comma a separator, so
    the edge had weight 0 (exit 0, a wrong answer).  Now refused at its line everywhere."""
    (tmp_path / "g.txt").write_text(text)
    line = refused_alike(tmp_path, ["pagerank", "g.txt", "--weighted", *labels],
                         configs=CONFIGS, output="refused.csv")
    assert line == ("g.txt:1: expected a number for the weight in column 3, got '0,5' "
                    "(a decimal comma? write the weight with a point, '0.5')")


def test_comma_csv_with_fourth_column_still_read(tmp_path, cli, scores):
    """The comma CSV ``1,2,0,5`` keeps its reading (weight 0, a fourth column 5) on every
    configuration, with and without --labels."""
    (tmp_path / "g.csv").write_text("1,2,3,5\n2,3,1,7\n3,1,1,0\n")
    want = None
    for labels in ([], ["--labels"]):
        for extra in CONFIGS:
            r = cli(["pagerank", "g.csv", "--weighted", "-q", "-o", "o.csv", *labels, *extra],
                     tmp_path)
            assert r.returncode == 0, r.stderr
            got = scores(tmp_path / "o.csv")
            want = want or got
            assert got.keys() == want.keys()
            assert all(abs(got[k] - want[k]) < 1e-9 for k in want), (extra, got, want)


def test_output_directory_refused_alike(tmp_path, refused_alike):
    """``-o /tmp`` (a directory): "unknown output format '(no extension)'"; now one line
    saying it is a directory, on every configuration."""
    (tmp_path / "g.txt").write_text("1 2\n2 3\n3 1\n")
    (tmp_path / "outdir").mkdir()
    line = refused_alike(tmp_path, ["pagerank", "g.txt", "-o", "outdir"], configs=CONFIGS)
    assert line == ("outdir: is a directory, not an output file: give a file name, such as "
                    "outdir/out.csv")
    line = refused_alike(tmp_path, ["wcc", "g.txt", "-o", "newdir/"], configs=CONFIGS)
    assert line.startswith("newdir/: names a directory, not an output file"), line


@pytest.mark.parametrize("args", [["wcc", "g.txt"], ["bfs", "g.txt", "--source", "1"],
                                  ["sssp", "g.txt", "--source", "1"], ["labelprop", "g.txt"],
                                  ["run", "asapgraph.programs:WCCProgram", "g.txt"]])
def test_json_tol_alike(tmp_path, args, cli):
    """``--json``'s ``tol`` for commands without --tol (wcc, bfs, sssp, labelprop) was null
    on one process and 1e-10 (labelprop 0.0) on K ranks; ``run`` without --tol said null on
    one process and the program's default_tol on ranks.  Now the same everywhere: null, or
    the tol the engines apply."""
    import json

    (tmp_path / "g.txt").write_text("1 2\n2 3\n3 1\n")
    seen = set()
    for extra in [[], ["--np", "2"], ["--np", "3", "--mode", "bsp"]]:
        r = cli([*args, "-q", "--json", *extra], tmp_path)
        assert r.returncode == 0, (extra, r.stderr)
        seen.add(json.loads(r.stdout)["tol"])
    assert seen == ({1e-10} if args[0] == "run" else {None}), seen


@pytest.mark.parametrize("cmd", ["pagerank", "wcc", "katz"])
def test_out_of_memory_alike(tmp_path, cmd, cli):
    """A generated graph far too big for memory (rmat:40:64, 2^46 edges): one process said
    'asapgraph: out of memory', K ranks 'error on rank 0: MemoryError: Unable to allocate
    ...'.  Now the same line (exit 1) everywhere."""
    for extra in CONFIGS:
        r = cli([cmd, "rmat:40:64", "-q", *extra], tmp_path)
        assert r.returncode == 1, (extra, r.stderr)
        assert r.stderr.strip().splitlines() == ["asapgraph: out of memory"], (extra, r.stderr)


def test_undirected_symmetric_mtx_refused_alike(tmp_path, refused_alike):
    """--undirected on a symmetric .mtx: a wrong answer on one process (each mirrored edge
    twice, the diagonal once), 'not split across ranks' on K ranks; now one line
    everywhere."""
    (tmp_path / "s.mtx").write_text("%%MatrixMarket matrix coordinate pattern symmetric\n"
                                    "3 3 3\n1 1\n2 1\n3 2\n")
    line = refused_alike(tmp_path, ["pagerank", "s.mtx", "--undirected"], configs=CONFIGS,
                         output="refused.csv")
    assert line.startswith("s.mtx:1: a symmetric Matrix Market matrix is read in both "
                           "directions already"), line


@pytest.mark.parametrize("cmd,what", [(["pagerank"], "PageRank needs non-negative edge weights"),
                                      (["sssp", "--source", "1"],
                                       "sssp needs non-negative edge weights")])
def test_npy_negative_weight_names_its_row(tmp_path, cmd, what, refused_alike):
    """A .npy edge array with a negative weight: 'w.npy: PageRank needs non-negative edge
    weights' (no row; sssp '(found -1.5)'), while its NaN weight names its row.  Now the
    row of the first, as the text reader names the line, on every configuration."""
    import numpy as np

    np.save(tmp_path / "w.npy", np.array([[1, 2, 0.5], [2, 3, -1.5], [3, 1, -2.0]]))
    line = refused_alike(tmp_path, [cmd[0], "w.npy", "--weighted", *cmd[1:]], configs=CONFIGS,
                         output="refused.csv")
    assert line.startswith(f"w.npy: row 1: negative edge weight -1.5: {what}"), line


def test_matrix_market_with_bom_read_alike_on_ranks(tmp_path, cli):
    """A BOM'd Matrix Market file named .txt was read as an edge list on K ranks (its
    size line an edge); then refused there; now K ranks read it as one process does (rank
    0 reads it and scatters it): the same three vertices and ranks."""
    (tmp_path / "g.txt").write_bytes(b"\xef\xbb\xbf%%MatrixMarket matrix coordinate pattern "
                                     b"general\n3 3 2\n1 2\n2 3\n")
    want = None
    for extra in [[], *CONFIGS[1:]]:
        r = cli(["pagerank", "g.txt", "-q", "--top", "5", "--tol", "1e-12", *extra], tmp_path)
        assert r.returncode == 0 and not r.stderr, (extra, r.stderr[-2000:])
        got = [(ln.split()[1], round(float(ln.split()[2]), 9)) for ln in r.stdout.splitlines()[1:]]
        want = want or got
        assert got == want and [v for v, _ in got] == ["3", "2", "1"], (extra, got, want)


@pytest.mark.parametrize("fmt", ["mtx", "asg"])
def test_weight_col_on_one_weight_formats_refused_alike(tmp_path, fmt, refused_alike, cli, scores):
    """``--weight-col 4`` on a Matrix Market file or a binary graph (one weight per edge)
    read the one weight anyway and --json said ``"weight_col": 4`` (an option reported,
    not applied); now refused on every configuration.  ``--weight-col 3`` still reads it."""
    (tmp_path / "g.mtx").write_text("%%MatrixMarket matrix coordinate real general\n3 3 4\n"
                                    "1 2 0.5\n2 3 1.5\n3 1 1\n1 3 2\n")
    if fmt == "asg":
        r = cli(["convert", "g.mtx", "g.asg", "--weighted", "-q"], tmp_path)
        assert r.returncode == 0, r.stderr
    kind = "Matrix Market file" if fmt == "mtx" else "binary graph"
    line = refused_alike(tmp_path, ["pagerank", f"g.{fmt}", "--weight-col", "4"],
                         configs=CONFIGS, output="refused.csv")
    assert line == (f"g.{fmt}: a {kind} has one weight per edge: --weight-col 4 does not "
                    "apply (use --weighted; Python: weighted=True)")
    configs = CONFIGS if fmt == "asg" else CONFIGS[:1]
    got = []
    for extra in configs:
        r = cli(["pagerank", f"g.{fmt}", "--weight-col", "3", "-q", "-o", "o.csv", *extra],
                 tmp_path)
        assert r.returncode == 0, r.stderr
        got.append(scores(tmp_path / "o.csv"))
    w = cli(["pagerank", f"g.{fmt}", "--weighted", "-q", "-o", "w.csv"], tmp_path)
    assert w.returncode == 0
    want = scores(tmp_path / "w.csv")
    for g in got:
        assert all(abs(g[k] - want[k]) < 1e-8 for k in want), (g, want)
