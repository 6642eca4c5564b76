"""Audit 32b on K ranks (one process: tests/test_audit32b.py): the same input is
refused the same way, and an option is applied (in ``--json``) or refused, on 1 and K
ranks, BSP and ASAP.

* ``pagerank --np K -- -g.txt``: the launcher put ``INPUT`` before the options of the
  ranks' command line, which then read ``-g.txt`` as an option and refused the command
  ("the following arguments are required: INPUT"); one process and the program
  commands (which pass the command line on as typed) ran it.
* ``mpiexec -n K asapgraph ... --mpiexec PATH``: accepted and never used; refused.
* ``run PROG --weighted`` for a program with ``use_weights = False``: refused alike.
* ``--top 0 --json``: ``"top": []`` on K ranks too.
"""
import json

import pytest

pytestmark = pytest.mark.mpi

def _one_process_module():
    """tests/test_audit32b.py (the same graphs and program text on one process)."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "test_audit32b.py"
    spec = importlib.util.spec_from_file_location("_audit32b_one_process", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_ONE = _one_process_module()
EDGES, WEDGES, PROGRAM = _ONE.EDGES, _ONE.WEDGES, _ONE.PROGRAM
CONFIGS = [[], ["--np", "2", "--mode", "bsp"], ["--np", "3", "--mode", "asap"],
           ["--np", "2", "--mode", "asap"], ["--np", "4", "--mode", "bsp"]]


_line = _ONE._one_line  # (a refusal: exit 2, one line, no traceback)


@pytest.fixture
def files(tmp_path):
    _ONE.write_files(tmp_path)  # g.txt, w.txt, progs.py
    (tmp_path / "-g.txt").write_text(EDGES)
    return tmp_path


def test_input_named_like_an_option(cli, files):
    tops = []
    for cfg in CONFIGS[:3]:
        for cmd in ("pagerank", "wcc"):
            r = cli([cmd, "-q", "--json", "--top", "3", *cfg, "--", "-g.txt"], files,
                    timeout=240)
            assert r.returncode == 0 and r.stderr == "", (cmd, cfg, r.stderr)
            j = json.loads(r.stdout)
            assert j["input"] == "-g.txt" and j["vertices"] == 11, (cmd, cfg)
            tops.append((cmd, [row[0] for row in j["top"]]))
    assert len(set(map(str, tops))) == 2, tops   # one ranking per command


def test_mpiexec_option_under_the_users_mpiexec(mpirun, cli, files):
    import sys

    for cmd in (["pagerank", "g.txt"], ["wcc", "g.txt", "--mode", "bsp"],
                ["sssp", "g.txt", "--source", "1"]):
        r = mpirun(2, [sys.executable, "-m", "asapgraph", *cmd, "-q", "--mpiexec", "mpiexec",
                       "-o", "x.csv"], timeout=240)
        assert _line(r) == ("asapgraph: --mpiexec does not apply under your own mpiexec: "
                            "this command already runs on 2 MPI ranks (--mpiexec names the "
                            "mpiexec that --np K starts): drop --mpiexec"), cmd
        assert not (files / "x.csv").exists()
    # --np K launches: it applies (the launch uses it), as before
    import os
    import shutil

    exe = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    exe = exe if os.access(exe, os.X_OK) else shutil.which("mpiexec")
    r = cli(["pagerank", "g.txt", "-q", "--np", "2", "--mpiexec", exe, "--top", "1"], files)
    assert r.returncode == 0 and r.stdout.split()[3:5] == ["1", "4"], r.stderr


def test_run_weighted_for_an_unweighted_program(cli, files):
    seen = set()
    for cfg in CONFIGS[:3]:
        r = cli(["run", "progs.py:Plain", "w.txt", "--weighted", "-q", "-o", "x.csv", *cfg],
                files, timeout=240)
        seen.add(_line(r))
        assert not (files / "x.csv").exists()
    assert seen == {"progs.py:Plain: --weighted does not apply to program plain: it "
                    "declares use_weights = False, so every edge counts 1 whatever its "
                    "weight (declare use_weights = True for its edge operator to read them, or "
                    "reads_weights = True if it reads ctx.out_weight)"}


@pytest.mark.parametrize("cmd", [["pagerank", "g.txt"], ["katz", "g.txt"],
                                 ["wcc", "g.txt"], ["bfs", "g.txt", "--source", "1"]])
def test_top_zero_json_on_k_ranks(cli, files, cmd):
    for cfg in CONFIGS[1:3]:
        r = cli([*cmd, "--top", "0", "--json", "-q", *cfg], files, timeout=240)
        assert r.returncode == 0 and r.stderr == "", (cfg, r.stderr)
        assert json.loads(r.stdout)["top"] == [], cfg


@pytest.mark.parametrize("cmd", [["pagerank", "g.txt"], ["katz", "g.txt"],
                                 ["wcc", "g.txt"], ["sssp", "g.txt", "--source", "1"]])
def test_largest_window_runs(cli, files, cmd):
    """``--window 2147483647`` (the largest value the option takes): the ranks made one send
    buffer per window position and peer up front, and were killed out of memory (exit 4,
    "rank 0 of 3 ... was killed by SIGKILL"); the buffers are now made when needed."""
    one = cli([*cmd, "--json", "-q", "--top", "11"], files)
    assert one.returncode == 0, one.stderr
    r = cli([*cmd, "--json", "-q", "--top", "11", "--np", "3", "--mode", "asap",
             "--window", "2147483647"], files, timeout=240)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    j, ref = json.loads(r.stdout), json.loads(one.stdout)
    assert j["window"] == 2147483647 and j["converged"] is True
    assert [row[0] for row in j["top"]] == [row[0] for row in ref["top"]]
    for a, b in zip(j["top"], ref["top"]):
        assert a[1:] == pytest.approx(b[1:], rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("spec,why", [
    ("er:99999999999999999999:1", "N must be <= 2**40 (the vertices of rmat:40), got "
                                  "99999999999999999999"),
    ("er:5:99999999999999999999", "M must be <= 2**50, got 99999999999999999999"),
    ("rmat:8:99999999999999999999", "EDGE_FACTOR x 2**SCALE must be <= 2**50 edges, got "
                                    "99999999999999999999 x 2**8"),
])
def test_generator_spec_sizes_on_k_ranks(cli, tmp_path, spec, why):
    """K ranks said "error on rank 0: OverflowError: Python int too large to convert to C
    long" (exit 1); now the line one process gives, exit 2."""
    for cmd in (["pagerank", spec], ["sssp", spec, "--source", "0"]):
        for cfg in CONFIGS[1:3]:
            r = cli([*cmd, "-q", "-o", "x.csv", *cfg], tmp_path, timeout=240)
            assert _line(r) == f"{spec}: {why}", (cmd, cfg)
            assert not (tmp_path / "x.csv").exists()
