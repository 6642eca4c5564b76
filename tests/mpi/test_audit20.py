"""Audit 20: regressions of defects found by a user-level audit, each checked alike on
one process and on K ranks in both modes where the defect could differ."""
import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(600)]

CONFIGS = [[], ["--np", "2"], ["--np", "3", "--mode", "asap"]]

DENSE_MTX = ("%%MatrixMarket matrix coordinate pattern general\n3 3 6\n"
             "1 2\n2 3\n3 1\n2 1\n3 2\n1 3\n")

BOOM = '''
from asapgraph.programs import WCCProgram
class Boom(WCCProgram):
    def setup(self, ctx):
        raise RuntimeError("boom in setup")
'''


@pytest.mark.parametrize("args,want", [
    (["katz", "d.mtx", "--alpha", "0.9"], "d.mtx: Katz alpha 0.9 is not below 1/B = 0.5"),
    (["run", "asapgraph.programs:KatzProgram", "d.mtx", "--param", "alpha=0.9"],
     "d.mtx: Katz alpha 0.9 is not below 1/B = 0.5"),
    (["bfs", "d.mtx", "--source", "7"], "d.mtx: source vertex 7 is not in the graph"),
    (["sssp", "d.mtx", "--source", "7"], "d.mtx: source vertex 7 is not in the graph"),
    (["pagerank", "d.mtx", "--personalization", "p9.txt"],
     "p9.txt:1: node 9 is not a vertex of the graph"),
    (["pagerank", "d.mtx", "--dangling", "p9.txt"],
     "p9.txt:1: node 9 is not a vertex of the graph"),
])
def test_matrix_market_refused_as_one_process(tmp_path, args, want, refused_alike):
    """A .mtx that one process refuses (Katz's alpha above 1/B, a --source or a
    personalization/dangling vertex that is not in the graph) was refused on K ranks with
    the generic 'Matrix Market input is not split across ranks'; now the one-process line
    everywhere."""
    (tmp_path / "d.mtx").write_text(DENSE_MTX)
    (tmp_path / "p9.txt").write_text("9 1\n")
    line = refused_alike(tmp_path, args, configs=CONFIGS, output="refused.csv")
    assert line.startswith(want), line


@pytest.mark.parametrize("steps", [[], ["--steps", "2"]])
def test_matrix_market_user_program_error_as_one_process(tmp_path, steps, cli):
    """A user program that raises in setup, on a .mtx: K ranks said 'not split across
    ranks' (or 'error on rank 0: UserProgramError: ...'); now one process's line, exit 1."""
    (tmp_path / "d.mtx").write_text(DENSE_MTX)
    (tmp_path / "boom.py").write_text(BOOM)
    want = ("asapgraph run: ./boom.py:Boom raised RuntimeError: boom in setup "
            "(ASAPGRAPH_DEBUG=1 for the traceback)")
    for extra in CONFIGS[:2]:
        r = cli(["run", "./boom.py:Boom", "d.mtx", "-q", *steps, *extra], tmp_path)
        assert r.returncode == 1 and r.stderr.strip() == want, (extra, r.stderr)


@pytest.mark.parametrize("steps", ["1", "3"])
def test_pagerank_program_steps_alike(tmp_path, steps, cli, scores):
    """``run asapgraph.programs:PageRankProgram --steps K`` wrote the delta form's partial
    sums after K supersteps on one process (karate, K=1: 0.00529 for vertex 1) but
    PageRank's own solver's iterates on K ranks (0.0103: another form, same limit); now
    the same K supersteps everywhere."""
    lines = [f"{u} {v}\n" for u, v in [(1, 2), (2, 3), (3, 1), (3, 4), (4, 5), (5, 3),
                                        (6, 1), (2, 6), (7, 7), (4, 8)]]
    (tmp_path / "g.txt").write_text("".join(lines))
    want = None
    for extra in [[], ["--np", "2"], ["--np", "3"]]:
        r = cli(["run", "asapgraph.programs:PageRankProgram", "g.txt", "--steps", steps, "-q",
                 "-o", "o.csv", *extra], tmp_path)
        assert r.returncode == 0, (extra, r.stderr)
        got = scores(tmp_path / "o.csv")
        want = want or got
        assert got.keys() == want.keys()
        assert all(abs(got[k] - want[k]) < 1e-12 for k in want), (extra, got, want)


def test_labels_source_is_the_name_as_written_alike(tmp_path, cli, scores):
    """``--labels --source 01``: the run started from the vertex named '1' on every
    configuration; now from '01', the same distances on 1 and K ranks."""
    (tmp_path / "g.txt").write_text("alice bob 1\nbob carol 2\n01 1 3\ncarol alice 0.5\n"
                                    "1 alice 1\n")
    for extra in CONFIGS:
        r = cli(["sssp", "g.txt", "--labels", "--weighted", "--source", "01", "-q",
                 "-o", "o.csv", *extra], tmp_path)
        assert r.returncode == 0, (extra, r.stderr)
        assert scores(tmp_path / "o.csv") == {"01": 0.0, "1": 3.0, "alice": 4.0, "bob": 5.0,
                                              "carol": 7.0}, extra
    (tmp_path / "ids.txt").write_text("1 2\n2 3\n")
    for extra in CONFIGS[:2]:   # without --labels the ids are integers: 01 is the id 1
        r = cli(["bfs", "ids.txt", "--source", "01", "-q", "-o", "o.csv", *extra], tmp_path)
        assert r.returncode == 0, (extra, r.stderr)
        assert scores(tmp_path / "o.csv") == {"1": 0.0, "2": 1.0, "3": 2.0}, extra


@pytest.mark.parametrize("cmd", [["wcc"], ["bfs", "--source", "1"], ["labelprop"]])
@pytest.mark.parametrize("opt", [["--weighted"], ["--weight-col", "3"]])
def test_weights_refused_where_never_read(tmp_path, cmd, opt, refused_alike):
    """wcc, bfs and labelprop with --weighted/--weight-col read the weights, reported
    ``weighted: true, weight_col: 3`` in --json and never used them (an option reported,
    not applied); now refused in one line on every configuration."""
    (tmp_path / "w.txt").write_text("1 2 0.5\n2 3 2\n3 1 1.5\n")
    line = refused_alike(tmp_path, [cmd[0], "w.txt", *cmd[1:], *opt],
                         configs=[[], ["--np", "2"]], output="refused.csv")
    assert line.startswith(f"asapgraph {cmd[0]}: {opt[0]} does not apply to {cmd[0]}: "), line
