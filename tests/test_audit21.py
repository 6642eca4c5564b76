"""Audit 21 (one process): regressions of defects found by a user-level audit; the MPI
halves are in tests/mpi/test_audit21.py."""
import subprocess
import sys

import pytest

PR = "asapgraph.programs:PageRankProgram"


def _cli(args, cwd, **kw):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120, **kw)


@pytest.mark.parametrize("steps,why", [("-1", "expected an integer >= 0, got '-1'"),
                                       (str(2**63), "expected an integer <= 9223372036854775807")])
def test_run_steps_refused_as_a_usage_error(tmp_path, steps, why):
    """``run PROGRAM --steps -1`` loaded the graph first and then said 'pagerank: steps
    must be a whole number >= 0, not -1' (the program's name, not the option); a count
    past int64 was taken (and ran until interrupted).  Now argparse's usage line naming
    --steps, before any work, exit 2."""
    (tmp_path / "g.txt").write_text("1 2\n2 3\n3 1\n")
    r = _cli(["run", PR, "g.txt", "--steps", steps, "-o", "out.csv"], tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "argument --steps" in lines[0] and why in lines[0], lines
    assert not (tmp_path / "out.csv").exists()
    r = _cli(["run", PR, "g.txt", "--steps", "0", "--json", "-q"], tmp_path)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("args", [["pagerank", "g.txt", "-o", ""], ["pagerank", ""],
                                  ["convert", "g.txt", ""], ["wcc", "g.txt", "-o", ""]])
def test_empty_path_named(tmp_path, args):
    """An empty path (``-o ''``, an unset shell variable) was refused with a line that
    began with ': ' -- no file named; now "'' (an empty path): ..." , exit 2."""
    (tmp_path / "g.txt").write_text("1 2\n2 3\n3 1\n")
    r = _cli([*args, "-q"], tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith("'' (an empty path): "), lines
