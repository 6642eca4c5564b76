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
