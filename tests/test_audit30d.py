"""Audit 30d: the documentation checked against the program (README, --help, benchmarks/).

* ``asapgraph bench --grid`` with a combination the engine refuses -- ``--partition hash
  --rebalance start|dynamic``, or an ASAP mode with ``--tol 0`` (or below ASAP PageRank's
  floor, 1e-15) -- started every run, each of which failed with the engine's ValueError
  and a traceback in its record, and exited 1 ("some run failed").  The refusals are
  :func:`asapgraph.options.rebalance_refusal` and :func:`asapgraph.options.asap_tol_refusal`,
  which the CLI and :func:`asapgraph.engine.pagerank` already share: now the bench asks
  them for every planned run before any run, one line, exit status 2.
* ``asapgraph bench --scenario S --ranks K`` with a rank count the scenario has not kept
  nothing of it: ``--scenario rq5 --ranks 7`` ran no run at all and exited 0 (an empty
  JSON), ``--scenario rq3 --ranks 4,7`` ran the 4-rank runs and dropped the 7 silently,
  where ``--graphs G`` with a graph the scenario has not is refused.  Now refused alike,
  naming the scenario's rank counts.
* ``--help`` of wcc, labelprop, sssp, bfs and hits said ``--top K``: "print the K vertices
  with the highest component / label / distance / level / hub,authority", where the
  command lists the K largest components / communities (``component|label, size``), the K
  farthest *reachable* vertices (unreachable ones never listed) and the K best hubs (README
  and each command's description said so).  Each ``--top`` help now says what it lists;
  README's "``wcc``, ``labelprop``: ``label,size``" is ``component,size`` for wcc.
* ``--straggler 1:inf`` was accepted by every command and by ``asapgraph bench``: the rank's
  every sweep lasted forever, and the run never ended (``pagerank rmat:8 --np 2
  --straggler 1:inf`` ran until killed); bench also took ``1:nan`` (``nan < 1`` is False in
  :func:`asapgraph.engine.emulation.parse_straggler`).  A rank given twice (``1:3,1:2``, or
  ``--straggler 1:3 --straggler 1:2`` on a command) kept the last factor silently.  Now a
  factor must be a finite number >= 1 and each rank is given once: one line, exit 2, on
  the command line (the ranks' side: tests/mpi/test_audit30d_mpi.py) and in bench; bench's
  repeated ``--straggler`` stays what it is, one grid setting each.
* ``python benchmarks/bench_load_dist.py FILE ...`` (README, "Ranks against one process")
  runs its commands in ``/``, so a relative FILE failed every run, printed as ``FAILED``
  without a reason: an existing path is made absolute, and a failed run says why on stderr.
* ``asapgraph run prog.py:P G --mode asap`` for a program that is not accumulative (README:
  exit status 2) said ``cannot load the program: ValueError: P cannot run in ASAP mode``:
  the program loaded; its declarations do not allow the mode.  Now the reason alone; a
  program that cannot be loaded still says so.
* ``ASAPGRAPH_BENCH_GAP=abc asapgraph bench ...`` (benchmarks/README: ``ASAPGRAPH_BENCH_GAP=S``)
  failed every run with a ValueError traceback in its record, exit 1: refused before any
  run now, one line, exit 2.
"""
import json
import subprocess
import sys

import pytest


def _asapgraph(args, cwd, timeout=120):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def _one_line_refusal(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("extra, needles", [
    (["--partition", "hash", "--rebalance", "start"], ["--rebalance start needs --partition range"]),
    (["--partition", "range,hash", "--rebalance", "dynamic", "--modes", "bsp"],
     ["--rebalance dynamic needs --partition range"]),
    (["--tol", "0"], ["--tol 0 cannot be certified", "asap"]),
    (["--modes", "asap", "--tol", "1e-16"], ["below what ASAP PageRank can certify"]),
])
def test_bench_grid_refuses_engine_refusals_before_any_run(tmp_path, extra, needles):
    out = tmp_path / "res" / "g.json"
    r = _asapgraph(["bench", "--grid", "--graphs", "rmat:8", "--ranks", "2", "--repeat", "1",
                    "--no-peers", "-q", "--json-out", out, "--outdir", tmp_path / "rep",
                    *extra], tmp_path)
    line = _one_line_refusal(r, *needles)
    assert line.startswith("asapgraph bench: ")
    assert not out.exists()   # refused before any run: no JSON of failed runs


def test_bench_grid_bsp_tol_0_still_runs(tmp_path):
    """BSP certifies tol 0 (a superstep that changes nothing): not refused."""
    out = tmp_path / "g.json"
    r = _asapgraph(["bench", "--grid", "--graphs", "rmat:8", "--ranks", "2", "--modes", "bsp",
                    "--tol", "0", "--repeat", "1", "--no-peers", "-q", "--json-out", out,
                    "--outdir", tmp_path / "rep"], tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    recs = json.loads(out.read_text())["records"]
    assert [(x["mode"], x["tol"], x["ok"]) for x in recs] == [("bsp", 0.0, True)]


@pytest.mark.parametrize("scenario, ranks, graphs, needle", [
    ("rq5", "7", None, "scenario rq5 has no run on 7 ranks (its rank counts: 4)"),
    ("rq3", "4,7", None, "scenario rq3 has no run on 7 ranks (its rank counts: 4,6)"),
    ("scale", "8", "cnr-2000", "scenario scale has no run on 8 ranks (its rank counts for "
                               "cnr-2000: 4,16,64)"),
])
def test_bench_scenario_refuses_rank_counts_it_has_not(tmp_path, scenario, ranks, graphs, needle):
    out = tmp_path / "s.json"
    r = _asapgraph(["bench", "--scenario", scenario, "--ranks", ranks,
                    *(["--graphs", graphs] if graphs else []), "--no-peers", "--budget", "0",
                    "-q", "--json-out", out, "--outdir", tmp_path / "rep"], tmp_path)
    _one_line_refusal(r, needle)
    assert not out.exists()


def test_bench_scenario_ranks_it_has_still_filter(tmp_path):
    """``--ranks`` of counts the scenario has keeps exactly those (--budget 0: every run is
    skipped, so nothing is started; the plan is in the JSON)."""
    out = tmp_path / "s.json"
    r = _asapgraph(["bench", "--scenario", "rq3", "--ranks", "6", "--no-peers", "--budget", "0",
                    "-q", "--json-out", out, "--outdir", tmp_path / "rep"], tmp_path)
    assert r.returncode == 1, r.stderr   # every run skipped by the budget
    recs = json.loads(out.read_text())["records"]
    assert recs and {x["ranks"] for x in recs} == {6}


def _top_help(cmd, tmp_path):
    r = _asapgraph([cmd, "--help"], tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    i = next(j for j, x in enumerate(lines) if x.lstrip().startswith("--top K"))
    out = [lines[i]]
    for x in lines[i + 1:]:
        if x.lstrip().startswith("-"):
            break
        out.append(x)
    return " ".join(" ".join(out).split())


@pytest.mark.parametrize("cmd, args, says", [
    ("wcc", [], "the K largest components"),
    ("labelprop", ["--allow-unconverged"], "the K largest communities"),
    ("sssp", ["--source", "0"], "the K farthest reachable vertices"),
    ("bfs", ["--source", "0"], "the K farthest reachable vertices"),
    ("hits", [], "the K best hubs"),
])
def test_top_help_says_what_top_lists(tmp_path, cmd, args, says):
    h = _top_help(cmd, tmp_path)
    assert says in h, h
    # and the listing is that: groups as (label, size), reachable only, sorted by hub
    g = tmp_path / "g.txt"
    g.write_text("0 1\n1 2\n2 0\n3 4\n5 5\n7 0\n")
    r = _asapgraph([cmd, g, *args, "--top", "10", "--json", "-q"], tmp_path)
    assert r.returncode == 0, r.stderr
    top = json.loads(r.stdout)["top"]
    if "largest" in says:   # (label, size), largest first, every vertex in one group
        sizes = [size for _, size in top]
        assert sizes == sorted(sizes, reverse=True) and sum(sizes) == 7, top
        if cmd == "wcc":
            assert top == [[0, 4], [3, 2], [5, 1]]
    elif "reachable" in says:
        assert {v for v, _ in top} == {0, 1, 2} and top[0] == [2, 2]   # 3, 4, 5, 7: unreachable
    else:
        hubs = [row[1] for row in top]
        assert hubs == sorted(hubs, reverse=True)


@pytest.mark.parametrize("text, ok", [
    ("1:3", {1: 3.0}), ("1:3,2:1.5", {1: 3.0, 2: 1.5}), ("0:1", {0: 1.0}),
    ("1:inf", None), ("1:nan", None), ("1:0.5", None), ("1:3,1:2", None), ("-1:3", None),
    ("x:3", None), ("1:y", None),
])
def test_parse_straggler_finite_factors_each_rank_once(text, ok):
    from asapgraph.engine.emulation import parse_straggler

    if ok is None:
        with pytest.raises(ValueError):
            parse_straggler(text)
    else:
        assert parse_straggler(text) == ok


@pytest.mark.parametrize("args, needle", [
    (["--straggler", "1:inf"], "FACTOR a finite number >= 1"),
    (["--straggler", "1:nan"], "FACTOR a finite number >= 1"),
    (["--straggler", "1:3,1:2"], "each rank once"),
    (["--straggler", "1:3", "--straggler", "1:2"],
     "--straggler 1:2: rank 1 already has a factor (--straggler 1:3)"),
])
@pytest.mark.parametrize("cmd", [["pagerank", "rmat:8"], ["sssp", "rmat:8", "--source", "0"]])
def test_cli_straggler_refusals(tmp_path, cmd, args, needle):
    r = _asapgraph([*cmd, "--np", "2", *args, "-q"], tmp_path, timeout=60)
    _one_line_refusal(r, needle)


@pytest.mark.parametrize("spec, needle", [
    ("1:inf", "straggler factor must be a finite number >= 1, got inf"),
    ("1:nan", "straggler factor must be a finite number >= 1, got nan"),
    ("1:3,1:2", "rank 1 is given twice in '1:3,1:2'"),
])
def test_bench_straggler_refusals(tmp_path, spec, needle):
    out = tmp_path / "g.json"
    r = _asapgraph(["bench", "--grid", "--graphs", "rmat:8", "--ranks", "2", "--straggler", spec,
                    "--repeat", "1", "--no-peers", "-q", "--json-out", out, "--outdir",
                    tmp_path / "rep"], tmp_path)
    _one_line_refusal(r, needle)
    assert not out.exists()


def test_cli_straggler_two_ranks_still_run(tmp_path):
    r = _asapgraph(["pagerank", "rmat:8", "--np", "3", "--straggler", "1:3", "--straggler",
                    "2:2", "--json", "-q"], tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout)["emulation"]["straggler"] == {"1": 3.0, "2": 2.0}


def test_bench_load_dist_relative_file(tmp_path):
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_load_dist.py"
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "g.txt").write_text("0 1\n1 2\n2 0\n2 3\n")
    r = subprocess.run([sys.executable, str(script), "d/g.txt", "nosuch.txt", "--np", "1",
                        "--repeat", "1"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=240, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    rows = {ln.split()[0]: ln for ln in r.stdout.splitlines() if ln.endswith(("FAILED", " ")) or
            ln.startswith(("d/g.txt", "nosuch.txt"))}
    assert "FAILED" not in rows["d/g.txt"], r.stdout
    assert "FAILED" in rows["nosuch.txt"], r.stdout
    assert "nosuch.txt (np 1): nosuch.txt: file not found" in r.stderr, r.stderr


NOT_ACCUMULATIVE = """
import numpy as np
from asapgraph.programs import VertexProgram


class NA(VertexProgram):
    name = "hops"
    value_dtype = np.float64
    combiner = "min"
    direction = "out"
    edge_op = "add_one"
    use_weights = False
    accumulative = False

    def init(self, ctx):
        d = np.full(ctx.n_local, np.inf)
        d[ctx.ids == 0] = 0
        return d
"""


def test_run_asap_not_accumulative_is_not_a_load_failure(tmp_path):
    (tmp_path / "na.py").write_text(NOT_ACCUMULATIVE)
    r = _asapgraph(["run", "./na.py:NA", "rmat:6", "--mode", "asap", "-q"], tmp_path)
    line = _one_line_refusal(r, "./na.py:NA: hops cannot run in ASAP mode",
                             "does not declare accumulative = True")
    assert "cannot load" not in line
    r = _asapgraph(["run", "./na.py:Nope", "rmat:6", "-q"], tmp_path)
    _one_line_refusal(r, "./na.py:Nope: cannot load the program")


@pytest.mark.parametrize("gap", ["abc", "-1", "inf", "nan"])
def test_bench_gap_env_refused(tmp_path, gap):
    import os

    out = tmp_path / "g.json"
    env = dict(os.environ, ASAPGRAPH_BENCH_GAP=gap)
    r = subprocess.run([sys.executable, "-m", "asapgraph", "bench", "--grid", "--graphs", "rmat:8",
                        "--ranks", "2", "--modes", "bsp", "--no-peers", "-q", "--json-out", str(out),
                        "--outdir", str(tmp_path / "rep")], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    _one_line_refusal(r, f"ASAPGRAPH_BENCH_GAP={gap!r}")
    assert not out.exists()
