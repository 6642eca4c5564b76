"""The bench's host counters (:mod:`asapgraph.bench.hostcount`) and the paired K = 2
script's report of them (``benchmarks/bench_clocks_k2_paired.py``): a wall run whose ranks
waited on the run queue measured the host's load, and the report says which pairs did."""
import importlib.util
import mmap
import os
import sys
import time
import types

import pytest

from asapgraph.bench import hostcount

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_delta_arithmetic():
    a = {"cpu_ns": 1_000_000_000, "run_delay_ns": 5_000_000, "minflt": 10, "majflt": 0,
         "nivcsw": 3, "steal_ticks": 100, "psi_some_us": 1_000_000}
    b = {"cpu_ns": 1_250_000_000, "run_delay_ns": 45_000_000, "minflt": 1034, "majflt": 1,
         "nivcsw": 7, "steal_ticks": 102, "psi_some_us": 1_300_000}
    d = hostcount.delta(a, b)
    assert d["cpu_s"] == pytest.approx(0.25)
    assert d["run_delay_s"] == pytest.approx(0.04)
    assert (d["minflt"], d["majflt"], d["nivcsw"]) == (1024, 1, 4)
    assert d["steal_s"] == pytest.approx(2 / hostcount._HZ)
    assert d["psi_cpu_some_s"] == pytest.approx(0.3)
    assert hostcount.delta({}, {}) == {}  # not Linux: nothing, no error


@pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"), reason="needs Linux schedstat")
def test_snapshot_sees_this_process_compute_and_fault():
    a = hostcount.snapshot()
    t = time.thread_time()
    while time.thread_time() - t < 0.05:  # 50 ms of CPU
        pass
    # 8 MB of a fresh anonymous mapping, touched: page faults (a bytearray may reuse heap
    # pages this process faulted in already, e.g. after the suite freed large arrays)
    buf = mmap.mmap(-1, 8 << 20)
    for i in range(0, len(buf), 4096):
        buf[i] = 1
    d = hostcount.delta(a, hostcount.snapshot())
    assert d["cpu_s"] >= 0.045
    assert d["run_delay_s"] >= 0.0
    assert d["minflt"] >= 1
    assert d["nivcsw"] >= 0 and d.get("steal_s", 0.0) >= 0.0
    buf.close()


def _paired():
    path = os.path.join(ROOT, "benchmarks", "bench_clocks_k2_paired.py")
    spec = importlib.util.spec_from_file_location("_k2_paired", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rec(clock, rep, t, rq):
    return {"graph": "g", "mode": "bsp", "clock": clock, "repeat": rep, "wall": 1.0,
            "time_to_error": {"1e-06": t}, "within_tolerance": True,
            "host": [{"run_delay_s": rq, "minflt": 0}, {"run_delay_s": 0.0, "minflt": 0}]}


def test_paired_report_flags_disturbed_pairs(capsys):
    mod = _paired()
    recs = []
    # pairs 0-2 quiet, ratio 0.9; pair 3's wall run waited 0.3 s of its 1 s on the run
    # queue (ratio 0.5): the undisturbed median keeps 3 pairs at 0.90
    for i, (w, c, rq) in enumerate([(1.0, 0.9, 0.0), (1.0, 0.9, 0.01), (1.0, 0.9, 0.0),
                                    (1.8, 0.9, 0.3)]):
        recs += [_rec("wall", i, w, rq), _rec("virtual", i, c, 0.0)]
    mod.report(recs, ("g",), ("bsp",))
    line = capsys.readouterr().out.splitlines()[1]
    assert "3, 0.90" in line  # 3 undisturbed pairs, their median ratio
    assert "300.0" in line  # the worst wall run's run-queue wait, ms
    assert line.rstrip().endswith("True")


def test_paired_report_ignores_the_cpu_clock_runs_run_queue(capsys):
    # a CPU-clock run descheduled by the host keeps its virtual times: not a disturbance
    mod = _paired()
    recs = []
    for i in range(3):
        recs += [_rec("wall", i, 1.0, 0.0), _rec("virtual", i, 0.9, 0.5)]
    mod.report(recs, ("g",), ("bsp",))
    assert "3, 0.90" in capsys.readouterr().out.splitlines()[1]


def test_paired_grid_alternates_the_clocks_order(monkeypatch, tmp_path):
    mod = _paired()
    seen = []

    def fake_run_specs(specs, outdir):
        seen.extend((s.repeat, s.mode, s.clock) for s in specs)
        return [{"graph": s.graph, "mode": s.mode, "clock": s.clock, "repeat": s.repeat,
                 "wall": 1.0, "time_to_error": {"1e-06": 1.0}, "within_tolerance": True}
                for s in specs]

    import asapgraph.bench.runner as runner
    monkeypatch.setattr(runner, "run_specs", fake_run_specs)
    monkeypatch.setenv("_K2_PAIRED_LOCKED", "1")
    monkeypatch.setenv("K2_GRAPHS", "rmat:10")
    monkeypatch.setattr(sys, "argv", ["x", ROOT, str(tmp_path / "o.json"), "3"])
    mod.main()
    bsp = [(r, c) for r, m, c in seen if m == "bsp"]
    w = mod.WARMUP
    assert bsp == [(w, "virtual"), (w, "wall"), (0, "wall"), (0, "virtual"),
                   (1, "virtual"), (1, "wall"), (2, "wall"), (2, "virtual")]


def test_paired_report_leaves_the_warm_up_out(capsys):
    mod = _paired()
    recs = [_rec("wall", mod.WARMUP, 5.0, 0.0), _rec("virtual", mod.WARMUP, 0.1, 0.0)]
    for i in range(3):
        recs += [_rec("wall", i, 1.0, 0.0), _rec("virtual", i, 0.9, 0.0)]
    mod.report(recs, ("g",), ("bsp",))
    line = capsys.readouterr().out.splitlines()[1]
    assert "0.90 [0.90-0.90]" in line and "3, 0.90" in line


@pytest.mark.parametrize("rt", [False, True])
def test_paired_script_takes_the_lock_and_with_k2_rt_a_real_time_policy(monkeypatch, rt):
    mod = _paired()
    seen = {}

    def fake_run(cmd, env=None, **kw):
        seen["cmd"], seen["env"] = cmd, env
        return types.SimpleNamespace(returncode=0)

    monkeypatch.setattr(mod.subprocess, "run", fake_run)
    monkeypatch.delenv("_K2_PAIRED_LOCKED", raising=False)
    monkeypatch.delenv("ASAPGRAPH_BENCH_GAP", raising=False)
    if rt:
        monkeypatch.setenv("K2_RT", "1")
    else:
        monkeypatch.delenv("K2_RT", raising=False)
    monkeypatch.setattr(sys, "argv", ["x", "TREE", "o.json", "3"])
    with pytest.raises(SystemExit):
        mod.main()
    cmd = seen["cmd"]
    i = cmd.index("flock")
    assert cmd[i + 1] == mod.LOCK
    assert seen["env"]["_K2_PAIRED_LOCKED"] == "1" and seen["env"]["PYTHONPATH"] == "TREE"
    if rt:  # SCHED_RR for the whole job, and the pause against real-time throttling
        assert cmd[:3] == ["chrt", "-r", "1"] and i == 3
        assert seen["env"]["ASAPGRAPH_BENCH_GAP"] == "0.4"
    else:
        assert i == 0 and "ASAPGRAPH_BENCH_GAP" not in seen["env"]
