"""The virtual clock (asapgraph.engine.vclock): closed-form arrival times on its windows,
independence from the host's scheduling, and PageRank on it (answers, not timings)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from asapgraph.engine import emulation as emulation_module
from asapgraph.engine.emulation import Emulation, Emulator
from asapgraph.engine.exchange import HEADER

pytestmark = pytest.mark.mpi

L, BW, NB, C = 1e-3, 1e6, 1000, 2e-3  # latency, bytes/s, message bytes, compute per step


def _entry(mpirun, k, *args, timeout=120):
    r = mpirun(k, [sys.executable, "-m", "asapgraph.engine.vclock", *map(str, args)],
               timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return {int(q): v for q, v in json.loads(r.stdout.strip().splitlines()[-1])["arrivals"].items()}


def _pingpong_expected(count):
    # each half trip: compute, serialisation, latency (the ACK on the reverse link is 8
    # bytes and done before the reply leaves: C > 8 / BW)
    step = C + NB / BW + L
    return {0: [2 * k * step for k in range(1, count + 1)],
            1: [(2 * k - 1) * step for k in range(1, count + 1)]}


def _chain_expected(count):
    # rank 0 computes once then sends back to back (serialised on its link); rank 1
    # forwards each after C (C > NB / BW: its compute is the bottleneck)
    return {1: [C + i * NB / BW + L for i in range(1, count + 1)],
            2: [(i + 1) * C + 2 * (NB / BW + L) for i in range(1, count + 1)]}


def _close(got, want):
    for r, times in want.items():
        arr = np.array([a for a, _ in got[r]])
        assert len(arr) == len(times), (r, got[r])
        assert np.abs(arr - np.array(times)).max() <= 1e-9, (r, got[r], times)
        # an idle rank's clock jumps to the arrival (it delivers at the arrival time)
        assert all(d >= a - 1e-15 for a, d in got[r])


def test_pingpong_two_ranks_closed_form(mpirun):
    got = _entry(mpirun, 2, "pingpong", "--latency", L, "--bandwidth", BW, "--bytes", NB,
                 "--compute", C, "--count", 6)
    _close(got, _pingpong_expected(6))
    assert [d for _, d in got[0]] == [a for a, _ in got[0]]


def test_chain_three_ranks_closed_form(mpirun):
    got = _entry(mpirun, 3, "chain", "--latency", L, "--bandwidth", BW, "--bytes", NB,
                 "--compute", C, "--count", 5)
    _close(got, _chain_expected(5))
    assert got[0] == []


def test_descheduled_rank_changes_no_virtual_time(mpirun, tmp_path):
    """SIGSTOP one rank for 0.5 s mid-run: the virtual times are the undisturbed ones."""
    exe = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if not os.access(exe, os.X_OK):
        exe = shutil.which("mpiexec") or pytest.skip("no mpiexec available")
    count = 12
    args = [exe, "-n", "3", sys.executable, "-m", "asapgraph.engine.vclock", "chain",
            "--latency", str(L), "--bandwidth", str(BW), "--bytes", str(NB), "--compute",
            str(C), "--count", str(count), "--sleep", "0.08", "--pid-dir", str(tmp_path)]
    p = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        pidf = tmp_path / "rank1.pid"
        t0 = time.time()
        while not (pidf.exists() and pidf.read_text().strip()) and time.time() - t0 < 60:
            time.sleep(0.02)
        pid = int(pidf.read_text())
        time.sleep(0.3)
        os.kill(pid, signal.SIGSTOP)
        time.sleep(0.5)
        os.kill(pid, signal.SIGCONT)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err[-3000:]
    got = {int(q): v for q, v in json.loads(out.strip().splitlines()[-1])["arrivals"].items()}
    _close(got, _chain_expected(count))


def test_emulator_virtual_clock_unit(monkeypatch):
    with pytest.raises(ValueError, match="latency > 0"):
        Emulation(clock="virtual")
    with pytest.raises(ValueError, match="clock"):
        Emulation(latency=1e-3, clock="cpu")
    e = Emulator({"latency": 1e-3, "bandwidth": 1e6, "clock": "virtual",
                  "straggler": {0: 3.0}}, 0, 4)
    slept = []

    def no_sleep(seconds):
        slept.append(seconds)
        raise AssertionError(f"time.sleep({seconds}) on the virtual clock")

    monkeypatch.setattr(emulation_module.time, "sleep", no_sleep)
    e.after_compute(0.5)  # no sleep: 0.5 s of CPU at 3x -> 1.5 virtual seconds
    assert slept == [] and e.vt == pytest.approx(1.5)
    a1, a2 = e.stamp(1, 1000), e.stamp(1, 1000)  # serialised on the link
    assert a1 == pytest.approx(1.5 + 1e-3 + 1e-3) and a2 == pytest.approx(a1 + 1e-3)
    assert e.stamp(2, 1000) == pytest.approx(a1)  # another link is free
    e.wait_until(a2)  # advances the clock, no sleep either
    assert e.vt == a2 and slept == []
    assert e.collective_cost(8) == pytest.approx(2 * 1e-3 + 8e-6)  # ceil(log2 4) L + b/bw
    assert e.cfg.as_dict()["clock"] == "virtual" and HEADER >= 1


# above pyproject's 300 s: one launch of up to 400 s, plus 60 s
@pytest.mark.timeout(460)
@pytest.mark.parametrize("k", [2, 3, 4])
def test_pagerank_virtual_clock_reaches_reference(k, run_cases, tmp_path):
    # a latency of a few sweeps: with sweeps far shorter than the latency ASAP spends its
    # --max-iter budget sweeping stale input (benchmarks/REPORT.md, issue 15)
    emu = {"latency": 5e-5, "bandwidth": 1e9, "straggler": {"1": 3.0}, "clock": "virtual"}
    runs = [{"mode": "bsp", "partition": "hash", "tol": 1e-13, "emulation": emu,
             "max_iter": 2000},
            {"mode": "asap", "partition": "range", "tol": 1e-11, "emulation": emu,
             "max_iter": 100000},
            {"mode": "asap", "partition": "hash", "tol": 1e-11, "emulation": emu,
             "window": 2, "max_iter": 100000}]
    if k == 3:
        runs.append({"mode": "asap", "asap_form": "push", "partition": "hash", "tol": 1e-11,
                     "emulation": emu, "max_iter": 100000})
    cases = [{"name": "rmat9", "source": "rmat:9:8:2", "runs": runs}]
    recs = run_cases(k, cases, timeout=400)
    assert len(recs) == len(runs)
    for r in recs:
        assert r["same_ids"] and r["converged"] and r["l1"] <= 1e-8, r
        assert r["clock"] == "virtual"
        if r["nx_l1"] is not None:
            assert r["nx_l1"] <= 1e-10, r


HOOKPR = """from asapgraph.programs import PageRankProgram


class HookPR(PageRankProgram):  # a hook of its own: the general engine
    def post_delta(self, ctx, deltas):
        return super().post_delta(ctx, deltas)
"""


def test_cli_clock_applied_or_refused(tmp_path, cli, refused):
    g = "rmat:8"
    refused(cli(["pagerank", g, "--np", "2", "--clock", "virtual"], tmp_path),
             "--clock virtual needs --latency > 0")
    refused(cli(["pagerank", g, "--clock", "virtual", "--latency", "1e-3"], tmp_path),
             "--clock", "distributed runs only")
    # a program with hooks runs ASAP on the general engine, on the virtual clock too: the
    # same answer as BSP, and with the compute model the same virtual time twice
    (tmp_path / "hookpr.py").write_text(HOOKPR)
    runs = {}
    for key, extra in (("bsp", ["--mode", "bsp"]), ("asap1", []), ("asap2", [])):
        out = tmp_path / f"{key}.csv"
        r = cli(["run", "hookpr.py:HookPR", g, "--np", "2", "--mode", "asap", *extra,
                 "--clock", "virtual", "--latency", "1e-3", "--compute", "model",
                 "--tol", "1e-9", "--json", "-q", "-o", out], tmp_path)
        assert r.returncode == 0, r.stderr
        d = json.loads(r.stdout)
        assert d["clock"] == "virtual" and d["converged"] and d["virtual_seconds"] > 0, d
        vals = [line.split(",") for line in out.read_text().splitlines()[1:]]
        runs[key] = (d["virtual_seconds"], {int(v): float(x) for v, x in vals})
    assert runs["asap1"][0] == runs["asap2"][0]
    ref = runs["bsp"][1]
    for key in ("asap1", "asap2"):
        got = runs[key][1]
        assert sorted(got) == sorted(ref)
        assert sum(abs(got[v] - ref[v]) for v in ref) <= 1e-8
    for mode in ("bsp", "asap"):
        # (answers are the other tests': here only what --json shows)
        r = cli(["pagerank", g, "--np", "2", "--mode", mode, "--clock", "virtual",
                  "--latency", "5e-4", "--straggler", "1:2", "--tol", "1e-6",
                  "--allow-unconverged", "--json", "-q"], tmp_path)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["clock"] == "virtual" and out["emulation"]["clock"] == "virtual"
        assert out["compute_seconds"] == out["virtual_seconds"] > 0 and out["wall_seconds"] > 0
        assert all(p["virtual_seconds"] == out["virtual_seconds"] for p in out["per_rank"])
        r = cli(["pagerank", g, "--np", "2", "--mode", mode, "--latency", "5e-4", "--tol",
                  "1e-6", "--allow-unconverged", "--json", "-q"], tmp_path)
        assert r.returncode == 0 and json.loads(r.stdout)["clock"] == "wall", r.stderr
    r = cli(["wcc", g, "--np", "2", "--mode", "asap", "--clock", "virtual", "--latency",
              "5e-4", "--json", "-q"], tmp_path)
    assert r.returncode == 0 and json.loads(r.stdout)["clock"] == "virtual", r.stderr
    r = cli(["bench", "--grid", "--graphs", g, "--ranks", "2", "--clock", "virtual",
              "--results-dir", tmp_path, "--outdir", tmp_path, "--no-peers"], tmp_path)
    refused(r, "--clock virtual needs a latency > 0")
