"""The counting-wave termination protocol (engine/termination.py): the decision rule with
each caller's parameters, and one wave round trip on COMM_SELF (no mpiexec)."""
import numpy as np
import pytest

from asapgraph.engine.termination import (BUSY, CAPPED, DIRTY, EXTRA, RECV, SENT, LatentWaves,
                                          Waves)


def vec(sent, recv, busy=0, dirty=0, capped=0, *extra):
    v = np.zeros(EXTRA + len(extra))
    v[[SENT, RECV, BUSY, DIRTY, CAPPED]] = sent, recv, busy, dirty, capped
    v[EXTRA:] = extra
    return v


def feed(w, *waves):
    """Decide on a sequence of (vector, bound); the list of decisions."""
    out = []
    for v, b in waves:
        w.waves += 1
        out.append(w.decide(v, b))
    return out


def test_one_passive_wave_suffices_for_the_program_loop():
    """passive_waves=1, no tol (asap_programs): the first settled wave stops, converged."""
    w = Waves(None, passive_waves=1, max_waves=100)
    assert feed(w, (vec(3, 2), 0.0), (vec(3, 3, dirty=1), 0.0), (vec(3, 3, busy=1), 0.0),
                (vec(3, 3), 0.0)) == [False, False, False, True]
    assert w.converged
    w = Waves(None, passive_waves=1)  # nothing ever happened anywhere: stop at wave 1
    assert feed(w, (vec(0, 0), 0.0)) == [True] and w.converged


@pytest.mark.parametrize("drain", [False, True])
def test_capped_stops_or_drains(drain):
    w = Waves(None, passive_waves=1 if not drain else 2, tol=None if not drain else 1e-3,
              drain=drain)
    stop = feed(w, (vec(5, 4, busy=1, capped=1), 1.0))
    assert stop == [not drain] and not w.converged
    if drain:  # the run ends at the first quiet wave two waves after the drain began
        assert w.draining and w.drain_wave == 1
        assert feed(w, (vec(5, 5), 1.0), (vec(5, 5), 1.0)) == [False, True]
        assert not w.converged and w.bound == 1.0


def test_max_waves_stops_unconverged():
    w = Waves(None, passive_waves=1, max_waves=2)
    assert feed(w, (vec(1, 0, busy=1), 0.0), (vec(1, 0, busy=1), 0.0)) == [False, True]
    assert not w.converged


def test_two_passive_waves_and_the_earlier_bound_for_the_solver():
    """passive_waves=2 with tol (asap._Solver): stop after wave k iff waves k-1 and k had
    every rank passive, wave k is balanced and unchanged, and wave k-1's bound <= tol."""
    w = Waves(None, passive_waves=2, tol=1e-6)
    # a busy wave before the quiet one: no stop (its bound does not describe the end state)
    assert feed(w, (vec(4, 4, busy=1), 1e-9), (vec(4, 4), 1e-9)) == [False, False]
    assert feed(w, (vec(4, 4), 1e-9)) == [True]
    assert w.converged and w.bound == 1e-9
    w = Waves(None, passive_waves=2, tol=1e-6)
    assert feed(w, (vec(4, 4), 1e-3)) == [False] and w.stalled  # lower the threshold
    assert feed(w, (vec(4, 4), 1e-9)) == [False]  # the earlier bound was above tol
    assert feed(w, (vec(4, 4), 1e-9)) == [True]
    w = Waves(None, passive_waves=2, tol=1e-6)
    assert feed(w, (vec(4, 4), 1e-9), (vec(5, 4), 1e-9), (vec(5, 5, dirty=1), 1e-9)) \
        == [False, False, False]  # unbalanced, then changed


def test_dirty_from_the_counters_and_one_wave_on_comm_self():
    from asapgraph.comm.mpi import mpi

    w = Waves(mpi().COMM_SELF, nextra=2, passive_waves=2, tol=1.0)
    for sent, dirty in ((0, 1.0), (0, 0.0), (1, 1.0)):  # the first contribution is dirty
        assert w.idle
        w.contribute(sent, sent, False, extra=(0.5, 2.0), more={"b": (3.0, "max"),
                                                                "a": (np.ones(2), "sum")})
        res = None
        while res is None:
            res = w.test()
        assert res[DIRTY] == dirty and list(res[EXTRA:]) == [0.5, 2.0]
        assert w.reduced["b"] == 3.0 and list(w.reduced["a"]) == [1.0, 1.0]
        w.decide(res, res[EXTRA])
    assert w.waves == 3


def test_latent_waves_hold_a_result_until_its_emulated_completion():
    """Host's clock with an emulated network: a wave's result is seen no earlier than the
    latest contribution plus the collective's cost; meanwhile no new wave starts."""
    from asapgraph.comm.mpi import mpi

    clock = [10.0]
    costs = []

    def cost(nbytes):
        costs.append(nbytes)
        return 0.25

    w = LatentWaves(mpi().COMM_SELF, cost, lambda: clock[0], nextra=1, passive_waves=1)
    assert w.idle and w.next_event() == np.inf
    w.contribute(2, 2, False, extra=(0.5,), more={"b": (3.0, "max")})
    for _ in range(100):  # the real collective completes; its result is held
        assert w.test() is None
    assert not w.idle and w.next_event() == 10.25 and costs == [8 * (EXTRA + 2)]
    clock[0] = 10.2499
    assert w.test() is None
    clock[0] = 10.25
    res = w.test()
    assert res is not None and res[SENT] == 2 and list(res[EXTRA:]) == [0.5]
    assert w.reduced == {"b": 3.0} and w.waves == 1  # the clock's companion is removed
    assert w.idle and w.next_event() == np.inf and w.test() is None
    assert res[DIRTY] == 1 and not w.decide(res, 0.0)  # the first contribution is dirty


def test_make_waves_per_clock_and_network():
    from asapgraph.comm.mpi import mpi
    from asapgraph.engine.emulation import Emulator
    from asapgraph.engine.vclock import VirtualWaves, make_waves

    comm = mpi().COMM_SELF
    kinds = {cfg.get("clock", "wall") + str(cfg.get("latency", 0)):
             type(make_waves(comm, Emulator(cfg, 0, 2), passive_waves=1))
             for cfg in ({}, {"latency": 1e-3}, {"latency": 1e-3, "clock": "virtual"})}
    assert kinds == {"wall0": Waves, "wall0.001": LatentWaves, "virtual0.001": VirtualWaves}
    # one rank: a collective costs nothing, the waves need not wait
    assert type(make_waves(comm, Emulator({"latency": 1e-3}, 0, 1))) is Waves
