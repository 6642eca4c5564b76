"""The host clock's emulated waits keep the core where every rank has one of its own
(``Emulator.hold_cores``, nineteenth session, issue 15): a timed sleep gives the core away
and ends late -- ~40 us on an idle 2-core host, up to several ms when anything else is
runnable -- which the modelled cluster and the virtual clock do not have; and the ASAP
solve's own setup (state and message buffers) is charged on the virtual clock with CPU
compute (``Emulator.setup``)."""
import time

import pytest

from asapgraph.engine import emulation as em
from asapgraph.engine.emulation import Emulator


class _Comm:
    def __init__(self, size):
        self.size = size

    def Get_size(self):
        return self.size


def _no_sleep(monkeypatch):
    def boom(_):
        raise AssertionError("slept: the wait should spin")

    monkeypatch.setattr(em.time, "sleep", boom)


def test_wait_spins_and_lasts_when_holding_the_core(monkeypatch):
    emu = Emulator({"latency": 1e-3}, 0, 2)
    emu.spin = True
    _no_sleep(monkeypatch)
    t = time.perf_counter()
    emu.wait(2e-3)  # (kept the core: time.sleep is not called)
    assert time.perf_counter() - t >= 2e-3
    # every emulated wait of the host's clock goes through it: a held delivery, a
    # collective's modelled cost, a straggler's extra
    emu.wait_until(em.now() + 1e-3)
    emu.collective(None)  # (host clock: the modelled cost only)
    slow = Emulator({"latency": 1e-3, "straggler": {0: 2.0}}, 0, 2)
    slow.spin = True
    assert slow.after_compute(1e-3) == pytest.approx(1e-3)


def test_wait_sleeps_otherwise(monkeypatch):
    emu = Emulator({"latency": 1e-3}, 0, 2)
    assert not emu.spin  # (the default: only hold_cores turns it on)
    slept = []
    monkeypatch.setattr(em.time, "sleep", slept.append)
    emu.wait(1e-3)
    emu.wait(0.0)
    assert slept == [1e-3]


@pytest.mark.parametrize("cfg, over, env, want", [
    ({"latency": 1e-3}, False, None, True),           # emulated, a core per rank
    ({"latency": 1e-3}, True, None, False),           # ranks share cores: they sleep
    ({"latency": 1e-3}, False, "0", False),           # ASAPGRAPH_SPIN_WAITS=0
    ({"latency": 1e-3, "clock": "virtual"}, False, None, False),  # nothing waits
    (None, False, None, False),                       # no emulation: nothing to wait for
])
def test_hold_cores(monkeypatch, cfg, over, env, want):
    import asapgraph.comm.mpi as m

    monkeypatch.setattr(m, "oversubscribed", lambda comm: over)
    if env is None:
        monkeypatch.delenv("ASAPGRAPH_SPIN_WAITS", raising=False)
    else:
        monkeypatch.setenv("ASAPGRAPH_SPIN_WAITS", env)
    emu = Emulator(cfg, 0, 2)
    assert emu.hold_cores(_Comm(2)) is want and emu.spin is want
    assert Emulator(cfg, 0, 1).hold_cores(_Comm(1)) is False  # (one rank: no peer)


def test_setup_charged_with_cpu_compute_not_with_the_model():
    emu = Emulator({"latency": 1e-3, "clock": "virtual", "straggler": {0: 3.0}}, 0, 2)
    emu.setup(2e-3)
    assert emu.vt == pytest.approx(6e-3) and emu.compute_vs == pytest.approx(6e-3)
    assert emu.calibration()["setup"] == {"solves": 1, "cpu_seconds": pytest.approx(2e-3)}
    model = Emulator({"latency": 1e-3, "clock": "virtual", "compute": "model"}, 0, 2)
    model.setup(2e-3)
    assert model.vt == 0.0 and "setup" not in model.calibration()
