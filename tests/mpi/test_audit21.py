"""Audit 21: regressions of defects found by a user-level audit, each checked alike on
one process and on K ranks in both modes where the defect could differ."""
import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(600)]


def _lines(r):
    return [ln for ln in r.stderr.strip().splitlines() if ln]


@pytest.mark.parametrize("cmd", [["katz"], ["wcc", "--mode", "asap"], ["bfs", "--source", "0"],
                                 ["run asapgraph.programs:PageRankProgram"]])
def test_program_progress_on_ranks_as_one_process(tmp_path, cmd, cli):
    """The program commands on K ranks printed one progress line ('distributed katz on 2
    ranks ...') and nothing of the loading or the end of the run, where one process and
    ``pagerank --np K`` report the loading and end with 'NAME: N iterations, S s, MODE';
    now the loading phases and that last line on ranks too; --quiet stays silent."""
    (tmp_path / "g.txt").write_text("0 1\n1 2\n2 0\n2 3\n")
    name, *rest = cmd
    name = name.split()   # the command and, for run, its program
    one = cli([*name, "g.txt", *rest, "-o", "one.csv"], tmp_path, timeout=180)
    assert one.returncode == 0, one.stderr
    last = _lines(one)[-1].split(":")[1]   # the program's name ('katz', 'component' ...)
    for k in ("2", "3"):
        r = cli([*name, "g.txt", *rest, "--np", k, "-o", f"k{k}.csv"], tmp_path, timeout=240)
        assert r.returncode == 0, r.stderr
        lines = _lines(r)
        assert any(f"loading g.txt on {k} ranks" in ln for ln in lines), lines
        assert any("mapped ids: 4 vertices" in ln for ln in lines), lines
        assert lines[-1].split(":")[1] == last and lines[-1].endswith(f"{k} ranks"), lines
        assert (tmp_path / f"k{k}.csv").read_text() != ""
        q = cli([*name, "g.txt", *rest, "--np", k, "-q", "-o", f"q{k}.csv"], tmp_path,
                timeout=240)
        assert q.returncode == 0 and q.stderr == "", q.stderr


@pytest.mark.parametrize("args", [
    ["run", "asapgraph.programs.components:WCCProgram", "g.txt", "--mode", "asap",
     "--schedule", "sweep"],
    ["run", "nomod:X", "g.txt"],
    ["run", "asapgraph.programs:PageRankProgram", "g.txt", "--steps", "2", "--tol", "1e-3"]])
def test_run_refused_before_loading_on_ranks(tmp_path, args, cli):
    """``run`` on K ranks checks its program and the options it refuses (an engine option
    the program's engine does not use, a module that does not load, --steps with --tol)
    before loading the graph, as one process does: without --quiet the refusal is the one
    stderr line, no loading progress before it (found with the progress fix above, which
    would otherwise print the loading phases first)."""
    (tmp_path / "g.txt").write_text("0 1\n1 2\n2 0\n2 3\n")
    for extra in (["--np", "2"], ["--np", "3"]):
        r = cli([*args, *extra, "-o", "x.csv"], tmp_path, timeout=240)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, (extra, r.stderr)
        assert not (tmp_path / "x.csv").exists()
