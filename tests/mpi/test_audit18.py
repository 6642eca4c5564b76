"""Audit 18: regressions of defects found by a user-level audit, each checked alike on
one process and on K ranks in both modes where the defect could differ."""
import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(600)]

CONFIGS = [[], ["--np", "2"], ["--np", "3", "--mode", "asap"]]


@pytest.mark.parametrize("labels", [[], ["--labels"]])
@pytest.mark.parametrize("cmd", [["pagerank", "--weighted"], ["sssp", "--weighted",
                                                              "--source", "1"]])
def test_decimal_comma_weight_refused(tmp_path, labels, cmd, refused_alike):
    """``1<TAB>2<TAB>0,5`` read --weighted: the comma split the weight into columns '0'
    and '5', so the edge had weight 0 (exit 0, a wrong answer); now refused at its line,
    the same on 1 and K ranks, with and without --labels."""
    (tmp_path / "g.tsv").write_text("1\t2\t1.5\n2\t3\t0,5\n3\t1\t2\n")
    line = refused_alike(tmp_path, [cmd[0], "g.tsv", *cmd[1:], *labels],
                         configs=CONFIGS, output="refused.csv")
    assert line == ("g.tsv:2: expected a number for the weight in column 3, got '0,5' "
                    "(a decimal comma? write the weight with a point, '0.5')")


def test_comma_separated_columns_still_read(tmp_path, cli, scores):
    """A comma CSV with a fourth column ('1,2,0,5'): commas separate every column of the
    line, so the weight is column 3 (0) as before -- not a decimal comma."""
    (tmp_path / "g.csv").write_text("1,2,3,5\n2,3,1,7\n3,1,1,0\n")
    for extra in CONFIGS[:2]:
        r = cli(["pagerank", "g.csv", "--weighted", "-q", "-o", "o.csv", *extra], tmp_path)
        assert r.returncode == 0, r.stderr
        assert len(scores(tmp_path / "o.csv")) == 3


def test_decimal_comma_personalization_refused(tmp_path, refused_alike):
    """A personalization file ``7<TAB>0,5`` gave vertex 7 the value 0 (the comma read as a
    separator); refused at its line."""
    (tmp_path / "g.txt").write_text("1 2\n2 3\n3 1\n")
    (tmp_path / "p.txt").write_text("1\t0.5\n2\t0,5\n")
    line = refused_alike(tmp_path, ["pagerank", "g.txt", "--personalization", "p.txt"],
                         configs=CONFIGS, output="refused.csv")
    assert line == ("p.txt:2: expected a number for the value, got '0,5' (a decimal comma? "
                    "write it with a point, '0.5')")


def test_fifo_input_refused(tmp_path, refused_alike, cli):
    """A named pipe as INPUT (``<(zcat g.gz)``, a piped ``/dev/stdin``): the input is
    opened more than once, and the second open of the drained pipe waited for a writer
    forever (1 and K ranks hung).  Now one line before anything opens it."""
    import os

    os.mkfifo(tmp_path / "pipe")
    for args in (["pagerank"], ["wcc", "--labels"]):
        line = refused_alike(tmp_path, [args[0], "pipe", *args[1:]],
                             configs=CONFIGS, output="refused.csv")
        assert line.startswith("pipe: a pipe, not a regular file"), line
    r = cli(["info", "pipe"], tmp_path, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("pipe: a pipe, not a regular file")
    from asapgraph.errors import InputError
    import asapgraph

    with pytest.raises(InputError, match="a pipe, not a regular file"):
        asapgraph.load_graph(str(tmp_path / "pipe"))


def test_compressed_personalization_read(tmp_path, refused_alike, cli, scores):
    """A gzip personalization file was refused as 'FILE:1: not UTF-8 text' (edge lists
    are read through any compression); now read, the same ranks as the plain file on 1
    and K ranks; a truncated one is 'corrupt or truncated gzip data'."""
    import gzip

    (tmp_path / "g.txt").write_text("1 2\n2 3\n3 1\n3 4\n")
    (tmp_path / "p.txt").write_text("1 0.25\n4 0.75\n")
    blob = gzip.compress(b"1 0.25\n4 0.75\n")
    (tmp_path / "p.txt.gz").write_bytes(blob)
    (tmp_path / "t.txt.gz").write_bytes(blob[:15])
    want = None
    for extra in CONFIGS:
        for p in ("p.txt", "p.txt.gz"):
            r = cli(["pagerank", "g.txt", "--personalization", p, "--tol", "1e-12", "-q",
                      "-o", "o.csv", *extra], tmp_path)
            assert r.returncode == 0, (extra, p, r.stderr)
            got = scores(tmp_path / "o.csv")
            want = want or got
            assert all(abs(got[k] - want[k]) < 1e-9 for k in want), (extra, p, got)
    line = refused_alike(tmp_path, ["pagerank", "g.txt", "--personalization", "t.txt.gz"],
                         configs=CONFIGS, output="refused.csv")
    assert line == "t.txt.gz: corrupt or truncated gzip data"
