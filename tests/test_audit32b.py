"""Audit 32b: the CLI's options across commands, modes and rank counts (one process; the
same on K ranks: tests/mpi/test_audit32b_mpi.py).

* ``--top 0 --json`` left ``top`` out of the JSON (``if args.top:``), as if the option
  had not been given; now ``"top": []`` (without ``--json``, ``--top 0`` already printed
  an empty table instead of the default summary).
* ``run PROG --weighted`` (or ``--weight-col``) for a program declaring ``use_weights =
  False``: the weights were read, ``--json`` said ``"weighted": true``, and the result was
  the unweighted one -- an option ignored, where ``wcc``/``bfs``/``labelprop`` refuse it.
  Now refused in one line, exit status 2.
* ``--mpiexec PATH`` under the user's own ``mpiexec`` (no ``--np`` launch): accepted and
  never used; now refused (one process already refused it: "distributed runs only").
* the ``--np`` launcher of ``pagerank`` rebuilt the ranks' command line with ``INPUT``
  right after the command, so an input named ``-g.txt`` (given after ``--``) was read by
  the ranks as an option: "the following arguments are required: INPUT" on K ranks, a
  result on one process.  ``INPUT`` now comes last, after ``--``.
"""
import json
import os
import subprocess
import sys

import pytest

EDGES = "1 2\n2 3\n3 1\n3 3\n1 2\n4 5\n5 6\n6 4\n7 1\n8 9\n10 10\n2 11\n"
WEDGES = "1 2 0.5\n2 3 2\n3 1 1\n3 4 0.25\n4 4 1\n1 2 0.5\n"

PROGRAM = '''import numpy as np
from asapgraph.programs import VertexProgram


class Plain(VertexProgram):
    """A PageRank-like sum program that counts every edge 1 (use_weights = False)."""
    name = "plain"
    combiner = "sum"
    edge_op = "mul"
    use_weights = False
    accumulative = True

    def init_delta(self, ctx):
        return np.zeros(ctx.n_local), np.full(ctx.n_local, 0.15 / ctx.n)

    def coef(self, ctx):
        deg = np.asarray(ctx.out_degree, dtype=np.float64)
        return np.where(deg > 0, 0.85 / np.maximum(deg, 1.0), 0.0)


class Weighted(Plain):
    """The same with the weights read by its edge operator (mul)."""
    name = "weighted"
    use_weights = True


class OutWeight(Plain):
    """Every edge counts 1 in its operator, but coef reads ctx.out_weight: it declares so."""
    name = "outweight"
    reads_weights = True

    def coef(self, ctx):
        if ctx.out_weight is None:
            return super().coef(ctx)
        ow = np.asarray(ctx.out_weight, dtype=np.float64)
        return np.where(ow > 0, 0.85 / np.maximum(ow, 1.0), 0.0)
'''


def _cli(args, cwd, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120, env=e)


def _one_line(r):
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    return lines[0]


def write_files(tmp_path):
    """g.txt, w.txt and progs.py in ``tmp_path`` (tests/mpi/test_audit32b_mpi.py too)."""
    (tmp_path / "g.txt").write_text(EDGES)
    (tmp_path / "w.txt").write_text(WEDGES)
    (tmp_path / "progs.py").write_text(PROGRAM)
    return tmp_path


@pytest.fixture
def files(tmp_path):
    return write_files(tmp_path)


@pytest.mark.parametrize("cmd", [["pagerank", "g.txt"], ["katz", "g.txt"],
                                 ["wcc", "g.txt"], ["sssp", "g.txt", "--source", "1"],
                                 ["hits", "g.txt"]])
def test_top_zero_is_in_the_json(files, cmd):
    r = _cli([*cmd, "--top", "0", "--json", "-q"], files)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert json.loads(r.stdout)["top"] == []
    r = _cli([*cmd, "--top", "1", "--json", "-q"], files)
    assert len(json.loads(r.stdout)["top"]) == 1
    r = _cli([*cmd, "--json", "-q"], files)   # not given: no "top"
    assert "top" not in json.loads(r.stdout)


@pytest.mark.parametrize("opt", [["--weighted"], ["--weight-col", "3"]])
def test_run_refuses_weights_a_program_does_not_read(files, opt):
    line = _one_line(_cli(["run", "progs.py:Plain", "w.txt", *opt, "-q", "-o", "x.csv"],
                          files))
    assert line == (f"progs.py:Plain: {opt[0]} does not apply to program plain: it declares "
                    "use_weights = False, so every edge counts 1 whatever its weight "
                    "(declare use_weights = True for its edge operator to read them, or "
                    "reads_weights = True if it reads ctx.out_weight)")
    assert not (files / "x.csv").exists()
    # the program that reads them: applied (a different result, "weighted": true)
    w = json.loads(_cli(["run", "progs.py:Weighted", "w.txt", *opt, "--json", "-q",
                         "--top", "4"], files).stdout)
    u = json.loads(_cli(["run", "progs.py:Plain", "w.txt", "--json", "-q", "--top", "4"],
                        files).stdout)
    assert w["weighted"] is True and u["weighted"] is False
    assert w["top"] != u["top"]
    # a program reading the weights outside its operator declares reads_weights: applied
    o = json.loads(_cli(["run", "progs.py:OutWeight", "w.txt", *opt, "--json", "-q",
                         "--top", "4", "--max-iter", "1000"], files).stdout)
    assert o["weighted"] is True and o["top"] != u["top"]


def test_mpiexec_refused_under_the_users_mpiexec(files):
    """Under mpiexec (the launcher's environment, here announced by PMI_SIZE/PMI_RANK:
    the refusal comes before MPI starts) --mpiexec names nothing that runs."""
    env = {"PMI_SIZE": "2", "PMI_RANK": "0"}
    for cmd in (["pagerank", "g.txt"], ["wcc", "g.txt"]):
        line = _one_line(_cli([*cmd, "-q", "--mpiexec", "/no/such/mpiexec"], files, env))
        assert line == ("asapgraph: --mpiexec does not apply under your own mpiexec: this "
                        "command already runs on 2 MPI ranks (--mpiexec names the mpiexec "
                        "that --np K starts): drop --mpiexec")
    # one process: refused as before (distributed runs only)
    line = _one_line(_cli(["pagerank", "g.txt", "-q", "--mpiexec", "x"], files))
    assert "--mpiexec applies to distributed runs only" in line


def test_rebuilt_argv_keeps_an_input_named_like_an_option():
    from asapgraph.cli import build_parser
    from asapgraph.comm.launch import rebuild_argv

    args = build_parser("pagerank").parse_args(
        ["pagerank", "--np", "2", "--mode", "asap", "--top", "3", "-q", "--", "-g.txt"])
    argv = rebuild_argv(args)
    assert argv[-2:] == ["--", "-g.txt"]
    again = build_parser("pagerank").parse_args(argv)
    assert again.input == "-g.txt" and again.mode == "asap" and again.top == 3
    assert again.quiet and again.np == 1
    # standard input, '-', as before
    args = build_parser("pagerank").parse_args(["pagerank", "-", "--np", "2", "--labels"])
    assert build_parser("pagerank").parse_args(rebuild_argv(args)).input == "-"


def test_dash_named_input_on_one_process(files):
    (files / "-g.txt").write_text(EDGES)
    r = _cli(["pagerank", "-q", "--top", "2", "--", "-g.txt"], files)
    assert r.returncode == 0 and r.stdout.split()[3:5] == ["1", "4"], (r.stdout, r.stderr)


@pytest.mark.parametrize("value", ["limit+1", "100000", "2147483647"])
def test_threads_beyond_the_host_are_usage_errors(files, value):
    """``--threads 100000`` crashed one process (SIGSEGV, exit 139, nothing on stderr),
    ``--threads 2147483647`` ended in libgomp's out-of-memory line (exit 1); K ranks of
    the same small graph exited 0.  Now one usage line (exit 2) on 1 and K ranks, at the
    bound ``--np`` has (64 per core, at least 256)."""
    from asapgraph.comm.launch import max_local_ranks

    limit = max_local_ranks()
    v = str(limit + 1) if value == "limit+1" else value
    lines = {_one_line(_cli(["pagerank", "g.txt", "-q", "--threads", v, *cfg], files))
             for cfg in ([], ["--np", "2"], ["--np", "2", "--mode", "bsp", "-o", "x.csv"])}
    assert lines == {f"asapgraph pagerank: error: argument --threads: at most {limit} "
                     f"threads on this host (64 per core, at least 256), got '{v}' (see "
                     "asapgraph pagerank --help)"}
    assert not (files / "x.csv").exists()


def test_threads_at_the_bound_run(files):
    from asapgraph.comm.launch import max_local_ranks

    r = _cli(["pagerank", "g.txt", "-q", "--json", "--threads", str(max_local_ranks())],
             files)
    assert r.returncode == 0 and json.loads(r.stdout)["threads"] == max_local_ranks(), r.stderr


SPECS = [  # (spec, its refusal): sizes beyond the int64 shapes were "internal error", exit 1
    ("er:99999999999999999999:1", "N must be <= 2**40 (the vertices of rmat:40), got "
                                  "99999999999999999999"),
    ("er:9223372036854775807:1", "N must be <= 2**40 (the vertices of rmat:40), got "
                                 "9223372036854775807"),
    ("er:5:99999999999999999999", "M must be <= 2**50, got 99999999999999999999"),
    ("er:5:1125899906842625", "M must be <= 2**50, got 1125899906842625"),
    ("rmat:8:99999999999999999999", "EDGE_FACTOR x 2**SCALE must be <= 2**50 edges, got "
                                    "99999999999999999999 x 2**8"),
    ("rmat:40:1025", "EDGE_FACTOR x 2**SCALE must be <= 2**50 edges, got 1025 x 2**40"),
]


@pytest.mark.parametrize("spec,why", SPECS)
def test_generator_spec_sizes_are_bad_input(tmp_path, spec, why):
    from asapgraph.errors import InputError
    from asapgraph.graph.generators import parse_spec

    with pytest.raises(InputError) as e:
        parse_spec(spec)
    assert str(e.value) == f"{spec}: {why}"
    for cmd in (["pagerank", spec], ["wcc", spec], ["info", spec]):
        assert _one_line(_cli([*cmd, "-q"], tmp_path)) == f"{spec}: {why}"


def test_generator_spec_sizes_at_the_bounds_parse():
    from asapgraph.graph.generators import parse_spec

    assert parse_spec("er:1099511627776:1125899906842624")[1]["m"] == 2**50
    assert parse_spec("rmat:40:1024")[1]["m"] == 2**50
