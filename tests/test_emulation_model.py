"""The emulation's transient stragglers and compute model (asapgraph.engine.emulation),
the straggler/scale scenarios of ``asapgraph bench`` and their Markdown (no MPI)."""
import subprocess
import sys
import time

import pytest

from asapgraph.bench import report_scenarios, scenarios
from asapgraph.engine import emulation as emulation_module
from asapgraph.engine.emulation import (KERNELS, LAYOUTS, MODEL_LAYOUT_NS, MODEL_NS, Emulation,
                                        Emulator)


def _pauses(emu, steps, compute=1e-3):
    out = []
    for _ in range(steps):
        before = emu.pause_s
        emu.after_compute(compute)
        if emu.pause_s > before:
            out.append((round(emu.vt, 12), emu.pause_s - before))
    return out


def forbid_sleep(monkeypatch):
    """Make ``time.sleep`` of :mod:`asapgraph.engine.emulation` raise; returns the list of
    the calls attempted (a raise swallowed on the way would still be seen there)."""
    calls = []

    def no_sleep(seconds):
        calls.append(seconds)
        raise AssertionError(f"time.sleep({seconds}) on the virtual clock")

    monkeypatch.setattr(emulation_module.time, "sleep", no_sleep)
    return calls


def test_transient_pauses_seeded_in_range_virtual(monkeypatch):
    cfg = {"latency": 1e-3, "clock": "virtual", "pause_every": 0.01, "pause_seconds": 0.002,
           "pause_max": 0.005, "seed": 7}
    a, b = Emulator(cfg, 1, 4), Emulator(cfg, 1, 4)
    a.start(), b.start()
    slept = forbid_sleep(monkeypatch)
    pa = _pauses(a, 500)
    assert slept == []  # the virtual clock jumps, nothing sleeps
    assert pa == _pauses(b, 500)  # seeded: the same pauses at the same virtual times
    assert len(pa) >= 10 and all(0.002 <= d <= 0.005 for _, d in pa)
    assert a.vt == pytest.approx(0.5 + a.pause_s) and a.sleep_s == pytest.approx(a.pause_s)
    c = Emulator({**cfg, "seed": 8}, 1, 4)
    c.start()
    assert _pauses(c, 500) != pa  # another seed, other pauses
    other_rank = Emulator(cfg, 2, 4)
    other_rank.start()
    assert _pauses(other_rank, 500) != pa  # ranks pause independently
    assert slept == []


def test_transient_pauses_wall_clock_sleep():
    e = Emulator({"pause_every": 0.001, "pause_seconds": 0.003, "pause_max": 0.003}, 0, 2)
    e.start()
    time.sleep(0.005)  # the first pause is due
    t = time.time()
    slept = e.after_compute(0.0)
    assert slept == pytest.approx(0.003) and time.time() - t >= 0.0025
    assert e.pauses == 1 and e.cfg.active


def test_wall_clock_collective_sleeps_its_emulated_cost():
    """On the host's clock with an emulated network, a blocking collective costs what it
    costs on the virtual clock (ceil(log2 K) x latency + bytes / bandwidth), slept after
    the real one; without a network it costs nothing."""

    class Comm:  # the wall clock never calls the communicator
        pass

    e = Emulator({"latency": 0.004, "bandwidth": 1e6}, 0, 4)
    t = time.time()
    e.collective(Comm(), 1000)
    assert e.collective_cost(1000) == pytest.approx(2 * 0.004 + 0.001)
    assert e.delay_s == pytest.approx(0.009) and time.time() - t >= 0.0085
    e = Emulator({}, 0, 4)
    e.collective(Comm(), 1000)
    assert e.delay_s == 0.0


def test_emulation_validation():
    with pytest.raises(ValueError, match="compute"):
        Emulation(compute="gpu")
    with pytest.raises(ValueError, match="pause_max"):
        Emulation(pause_every=0.1, pause_seconds=0.05, pause_max=0.01)
    with pytest.raises(ValueError, match="ns_per_edge"):
        Emulation(compute="model", ns_per_edge={"pull": -1.0})
    with pytest.raises(ValueError, match="ns_per_round > 0"):  # rounds at one instant
        Emulation(compute="model", ns_per_round=0.0)
    with pytest.raises(ValueError, match="ns_per_round > 0"):
        Emulation(compute="model", ns_per_byte=-1.0)
    d = Emulation(latency=1e-3, compute="model", pause_every=0.2).as_dict()
    assert d["compute"] == "model" and d["pause_every"] == 0.2
    assert d["ns_per_edge"] == {k: MODEL_NS[k][0] for k in KERNELS}
    assert set(KERNELS) == {"pull", "push", "pull_r", "push_r"}
    with pytest.raises(ValueError, match="ns_per_vertex"):  # an unknown kernel
        Emulation(compute="model", ns_per_vertex={"gather": 1.0})
    # a partial dict keeps the other kernels' defaults
    d = Emulation(latency=1e-3, compute="model", ns_per_edge={"push_r": 0.5}).as_dict()
    assert d["ns_per_edge"] == {**{k: MODEL_NS[k][0] for k in KERNELS}, "push_r": 0.5}
    assert "ns_per_edge" not in Emulation(latency=1e-3).as_dict()  # cpu: no constants


def test_compute_model_charges_work_not_cpu():
    cfg = {"latency": 1e-3, "clock": "virtual", "compute": "model", "straggler": {1: 3.0},
           "ns_per_edge": {"pull": 2.0, "push": 5.0}, "ns_per_vertex": {"pull": 1.0,
                                                                     "push": 3.0},
           "ns_per_round": 1000.0, "ns_per_message": 100.0, "ns_per_pass": 0.5}
    e = Emulator(cfg, 1, 4)
    e.start()
    e.after_compute(123.0, edges=1000, vertices=100, kernel="pull")  # CPU time ignored
    assert e.vt == pytest.approx(3 * (2000 + 100) * 1e-9)
    e.after_compute(0.5, edges=10, vertices=10, kernel="push")
    assert e.vt == pytest.approx(3 * (2100 + 80) * 1e-9)
    assert e.round_cost(9.0, messages=3, vertices=200) == pytest.approx(1400e-9)
    assert e.round_cost(9.0, messages=1, nbytes=1000) == pytest.approx(1100e-9 + 1000e-9
                                                                       * MODEL_NS["byte"])
    cal = e.calibration()  # the CPU time measured, per kernel
    assert cal["pull"]["cpu_seconds"] == 123.0 and cal["pull"]["edges"] == 1000
    assert cal["push"]["sweeps"] == 1 and cal["push"]["vertices"] == 10
    # the rounds' measured CPU time and work (what benchmarks/fit_compute_model.py fits)
    assert cal["round"] == {"rounds": 2, "cpu_seconds": 18.0, "messages": 4, "bytes": 1000,
                            "vertices": 200, "coded_sent": 0, "coded_applied": 0,
                            "bytecoded_sent": 0, "bytecoded_applied": 0,
                            "us_per_round": 9e6}
    # coded 16-bit values (Exp-Golomb, byte-coded): charged per value on top of their bytes
    # each end its own constant: the sender's encodes, the receiver's decodes
    for key, kw in (("coded", "coded"), ("bytecoded", "bcoded")):
        enc, dec = MODEL_NS[key]
        assert e.round_cost(0.0, **{kw: (1000, 0)}) - e.round_cost(0.0) == pytest.approx(
            1000e-9 * enc)
        assert e.round_cost(0.0, **{kw: (0, 300)}) - e.round_cost(0.0) == pytest.approx(
            300e-9 * dec)
    cal = e.calibration()["round"]
    assert (cal["coded_sent"], cal["coded_applied"], cal["bytecoded_sent"],
            cal["bytecoded_applied"]) == (1000, 300, 1000, 300)
    # BSP's packing: charged per value gathered, times the straggler factor, and recorded
    t = e.vt
    e.pack(7.0, 1000)
    assert e.vt == pytest.approx(t + 3 * 1000 * MODEL_NS["gather"] * 1e-9)
    assert e.calibration()["pack"] == {"messages": 1, "cpu_seconds": 7.0, "values": 1000,
                                       "ns_per_value": 7e6}
    # BSP's posting (Irecv / Isend and stamp): charged per message, times the factor
    t = e.vt
    e.post(0.5, 6)
    assert e.vt == pytest.approx(t + 3 * 6 * MODEL_NS["post"] * 1e-9)
    assert MODEL_NS["post"] > 0
    assert e.calibration()["post"] == {"messages": 6, "cpu_seconds": 0.5,
                                       "us_per_message": 0.5 / 6 * 1e6}
    cpu = Emulator({"latency": 1e-3, "clock": "virtual"}, 0, 4)
    cpu.after_compute(0.25, edges=1000, vertices=100, kernel="pull")
    assert cpu.vt == pytest.approx(0.25) and cpu.round_cost(0.1, 5, 5) == 0.1
    cpu.post(0.01, 3)  # (CPU time: the measured posting)
    assert cpu.vt == pytest.approx(0.26)


def test_layout_build_is_charged_like_compute():
    """A layout built before a solve's first sweep advances the virtual clock by its
    modelled cost (or its CPU time), times the straggler factor, and is recorded."""
    cfg = {"latency": 1e-3, "clock": "virtual", "compute": "model", "straggler": {1: 3.0},
           "ns_per_layout": {"push_r": (2.0, 10.0)}}
    e = Emulator(cfg, 1, 4)
    e.start()
    e.layout(55.0, 1000, 100, "push_r")  # CPU time ignored under the model
    assert e.vt == pytest.approx(3 * (2000 + 1000) * 1e-9)
    pe, pv = MODEL_LAYOUT_NS["pull_in_r"]
    e.layout(1.0, 10, 0, "pull_in_r")  # the defaults fill the kinds not given
    assert e.vt == pytest.approx(3 * (3000 + 10 * pe) * 1e-9)
    cal = e.calibration()
    assert cal["layout_push_r"] == {"builds": 1, "cpu_seconds": 55.0, "edges": 1000,
                                    "vertices": 100, "ns_per_edge": 55e9 / 1000}
    assert set(Emulation(**cfg).as_dict()["ns_per_layout"]) == set(LAYOUTS)
    cpu = Emulator({"latency": 1e-3, "clock": "virtual", "straggler": {0: 2.0}}, 0, 4)
    cpu.layout(0.25, 1000, 100, "pull")
    assert cpu.vt == pytest.approx(0.5)
    for bad in ({"push_r": (1.0,)}, {"push_r": (-1.0, 0.0)}, {"nope": (1.0, 1.0)}):
        with pytest.raises(ValueError, match="ns_per_layout"):
            Emulation(latency=1e-3, compute="model", ns_per_layout=bad)


def test_straggler_scenarios_specs():
    specs = scenarios.scenario("stragglers")
    kinds = {(s.tags or {}).get("scenario") for s in specs}
    assert kinds == set(scenarios.STRAGGLER_SCENARIOS)
    assert {s.graph for s in specs} == {"cnr-2000", "rmat:20"} and {s.ranks for s in specs} == {4}
    for kind in kinds:
        grp = [s for s in specs if s.tags["scenario"] == kind and s.graph == "cnr-2000"]
        assert sorted((s.mode, s.schedule) for s in grp) == [
            ("asap", "priority"), ("asap", "sweep"), ("bsp", "")]
    hetero = next(s for s in specs if s.tags["scenario"] == "hetero" and s.mode == "asap")
    assert hetero.emulation()["straggler"] == "1:1.5,2:2,3:3"
    assert hetero.engine_kwargs()["schedule"] in ("sweep", "priority")
    tr = next(s for s in specs if s.tags["scenario"] == "transient")
    emu = Emulation.from_any(tr.emulation())  # accepted by the engine's emulation
    assert (emu.pause_every, emu.pause_seconds, emu.pause_max) == (0.25, 0.02, 0.1)
    assert "pauses 20-100ms" in tr.net_label()
    assert {s.ranks for s in scenarios.scenario("stragglers-k8")} == {8}
    assert {s.ranks for s in scenarios.scenario("scale")} == {4, 16, 64}
    f = scenarios.scenario("factors")
    assert sorted({scenarios.straggler_factor(s.straggler) for s in f}) == [1, 2, 3, 5, 8]
    g = scenarios.grid(["rmat:10"], modes=("bsp", "asap"), schedule=("sweep", "priority"),
                       pauses=(0.01, 0.02, 0.1))
    assert sorted((s.mode, s.schedule) for s in g) == [("asap", "priority"), ("asap", "sweep"),
                                                      ("bsp", "")]
    assert all(s.pause_every == 0.1 and s.emulated for s in g)


def test_stragglers_scale_scenario_specs():
    """``stragglers-scale``: hetero and transient on K = 4, 16, 64, BSP and ASAP (default
    schedule), rank r's factor (1, 1.5, 2, 3)[r % 4] on every K, parsed by the engine."""
    specs = scenarios.scenario("stragglers-scale")
    assert {s.graph for s in specs} == {"cnr-2000", "rmat:20"}
    assert {s.ranks for s in specs} == {4, 16, 64}
    assert {s.group for s in specs} == {"scale-hetero", "scale-transient"}
    assert len(specs) == 2 * 2 * 3 * 2  # graphs x kinds x K x modes, one run each
    for s in specs:
        assert s.tags == {"scenario": s.group[len("scale-"):]}
        assert (s.latency, s.bandwidth) == (1e-3, 125e6) and s.schedule == ""
        assert s.tol == (1e-6 if s.mode == "asap" else pytest.approx(1e-6 * 0.15 / 0.85, 1e-2))
        assert "schedule" not in s.engine_kwargs()
        # ASAP's work limit grows past 8 ranks (a fast rank sweeps 1/K of the edges)
        assert s.max_iter == (5000 if s.mode == "asap" and s.ranks > 8 else 1000)
    assert {s.max_iter for s in scenarios.scenario("scale") if s.mode == "asap"
            and s.ranks == 64} == {5000}
    for K in (4, 16, 64):
        het = [s for s in specs if s.group == "scale-hetero" and s.ranks == K]
        assert len(het) == 4 and len({s.straggler for s in het}) == 1
        emu = Emulation.from_any(het[0].emulation())
        assert emu.straggler == {r: (1.0, 1.5, 2.0, 3.0)[r % 4] for r in range(K)
                                 if r % 4}  # factor-1 ranks left out, none beyond K - 1
        tr = next(s for s in specs if s.group == "scale-transient" and s.ranks == K)
        emu = Emulation.from_any(tr.emulation())
        assert emu.straggler == {} and (emu.pause_every, emu.pause_seconds, emu.pause_max) == (
            0.25, 0.02, 0.1)
    # K = 4 is the 4-rank scenario's cluster; --ranks keeps a subset
    assert scenarios.hetero_straggler(4) == scenarios.STRAGGLER_SCENARIOS["hetero"]["straggler"]
    assert scenarios.hetero_straggler(8) == "1:1.5,2:2,3:3,5:1.5,6:2,7:3"
    assert scenarios.hetero_straggler(1) == ""
    k8 = scenarios.scenario("stragglers-k8")
    assert {s.straggler for s in k8 if s.tags["scenario"] == "hetero"} == {
        "1:1.5,2:2,3:3"}  # as published (ranks 4-7 at full speed)
    assert len(scenarios.hetero_straggler(64).split(",")) == 48


def _rec(mode, t, kind="persistent", schedule="", group=None, K=4, **kw):
    return {"ok": True, "group": group or "s-" + kind, "tags": {"scenario": kind},
            "graph": "g", "ranks": K, "mode": mode, "schedule": schedule, "clock": "virtual",
            "time_to_error": {"1e-06": t}, "bytes_to_error": {"1e-06": 100.0 * t},
            "messages_sent": 10, "edges_visited": 1000, "wall_seconds": 5.0, "seconds": t,
            "bytes_sent": 1e6, "final_error": 1e-7, "peak_rss_mb": [50.0] * K, **kw}


def test_scenario_markdown():
    recs = [_rec("bsp", 3.0), _rec("asap", 1.0, schedule="sweep"),
            _rec("asap", 2.0, schedule="priority"), _rec("bsp", 1.0, kind="transient"),
            _rec("asap", 1.0, kind="transient", schedule="sweep")]
    md = report_scenarios.stragglers_md(recs)
    assert "| g | 4 | persistent | ASAP sweep | 3 | 1 | 3.00 | 2.5x **met**" in md
    assert "| g | 4 | persistent | ASAP priority | 3 | 2 | 1.50 | 2.5x not met" in md
    assert "| transient | ASAP sweep | 1 | 1 | 1.00 | 1.5x not met" in md
    assert "virtual clock" in md
    scale = [_rec("bsp", 2.0, group="scale", K=64), _rec("asap", 4.0, group="scale", K=64)]
    md = report_scenarios.scale_md(scale)
    assert "| g | 64 | BSP | 2 |" in md and "| g | 64 | ASAP | 4 | 0.50 |" in md
    assert "3.1 GB" in md  # 64 x 50 MB
    assert report_scenarios.sections([]) == ""
    assert "Rank counts" in report_scenarios.sections(scale)
    assert "rank 1 3x" in md and "group scale)" in md
    # stragglers-scale: one table per scenario group, each naming its scenario and its K
    ss = [_rec("bsp", 3.0, kind="hetero", group="scale-hetero", K=16),
          _rec("asap", 1.5, kind="hetero", group="scale-hetero", K=16),
          _rec("bsp", 2.0, kind="transient", group="scale-transient", K=64),
          _rec("asap", 4.0, kind="transient", group="scale-transient", K=64)]
    md = report_scenarios.scale_md(ss + scale)
    het, tr = md.index("scenario hetero"), md.index("scenario transient")
    assert md.index("rank 1 3x") < het < tr and md.count("| graph | K | mode |") == 3
    assert "Rank counts K = 16, scenario hetero: rank r runs (1, 1.5, 2, 3)[r % 4]" in md
    assert "Rank counts K = 64, scenario transient" in md
    assert "| g | 16 | ASAP | 1.5 | 2.00 |" in md[het:tr]
    assert "| g | 64 | ASAP | 4 | 0.50 |" in md[tr:]
    assert "scenario hetero" in report_scenarios.sections(ss)
    assert "| g | 16 |" not in report_scenarios.stragglers_md(ss)  # not an s-* group


def test_the_true_error_instrument_is_not_timed(monkeypatch):
    """The benchmarks' true-error trace (RankStats.track_error, an O(n/K) pass per ASAP
    wave) is stamped before it runs and its host seconds are left out of the clock from
    then on; the virtual clock ignores it (its CPU is returned so it is not charged)."""
    import numpy as np

    from asapgraph.engine import stats as stats_mod

    clock = [100.0]
    monkeypatch.setattr(stats_mod.time, "perf_counter", lambda: clock[0])
    st = stats_mod.RankStats(0)
    st.ref = np.array([0.5, 0.5])
    clock[0] = 101.0
    assert st.now() == 1.0

    def result():  # the instrument's pass takes 4 host seconds
        clock[0] += 4.0
        return np.array([0.25, 0.75])

    st.track_error(result, 2.0)
    # stamped before the pass; |2x - ref| summed; the state began now (no `since`)
    assert st.err_trace == [(1.0, 1.0, 0, 1.0)]
    clock[0] += 0.5
    assert st.now() == 1.5 and st.untimed_wall == 4.0
    st.clock = lambda: 7.0  # the virtual clock
    assert st.now() == 7.0
    st.ref = None
    assert st.track_error(result, 1.0) == 0.0 and len(st.err_trace) == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="timer slack is Linux's")
def test_host_clock_emulator_sets_fine_timer_slack(tmp_path):
    """A host-clock emulator lets its thread's sleeps end when due (1 ns timer slack, not
    Linux's 50 us default that lengthened every emulated delay and idle wait)."""
    # (the slack is inherited: a parent that made an Emulator passed its 1 ns on, so the
    # child first sets Linux's default 50 us itself)
    code = ("import ctypes\n"
            "ctypes.CDLL(None).prctl(29, 50000, 0, 0, 0)\n"
            "from asapgraph.engine.emulation import Emulator\n"
            "print(open('/proc/self/timerslack_ns').read().strip())\n"
            "Emulator({'latency': 1e-3}, 0, 2)\n"
            "print(open('/proc/self/timerslack_ns').read().strip())\n")
    # (a fresh process: the slack is per thread and inherited; cwd away from the source
    # tree, which `python -c` would import first)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True, cwd=tmp_path).stdout.split()
    assert out == ["50000", "1"], out
