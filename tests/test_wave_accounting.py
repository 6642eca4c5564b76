"""A busy ASAP rank's wave contribution is charged for the slots it sums, before the wave's
stamp, and sums only the slot segments changed since their flush (the rest: the flushes'
remainders, ``remm``); the bench's true-error trace never dates a wave's row before the
states its parts read began (no MPI: stand-ins)."""
import types

import numpy as np

from asapgraph.engine import api
from asapgraph.engine.asap import _Solve
from asapgraph.engine.asap_delta import DeltaState


def _solve(nloc=4, segs=((4, 9), (9, 12), (12, 20)), debug=True):
    """A stand-in busy jacobi rank: ``nloc`` vertices, slot segments ``segs``."""
    s = _Solve.__new__(_Solve)
    acc = np.zeros(segs[-1][1])
    s.d = types.SimpleNamespace(acc=acc, flow=np.zeros(2))
    s.nloc, s.nout = nloc, len(segs)
    s.seg_lo = np.array([a for a, _ in segs])
    s.seg_hi = np.array([b for _, b in segs])
    s.dirty = np.zeros(len(segs), dtype=bool)
    s.remm = np.zeros(len(segs))
    s.sol = types.SimpleNamespace(debug_mass=debug, approx=0.0)
    return s


def test_slot_mass_sums_only_the_changed_segments():
    s = _solve()
    acc = s.d.acc
    acc[4:9] = [0.5, -0.25, 0.0, 0.125, -1.0]  # segment 0: new pushes (dirty)
    acc[9:12] = [1e-6, -2e-6, 0.0]  # segment 1: a flush's 16-bit remainders
    s.remm[1] = 3e-6
    s.dirty[0] = True  # segment 2: flushed, empty
    mass, nsum = s._slot_mass()
    assert nsum == 5
    assert mass == np.abs(acc[4:]).sum()
    s.dirty[:] = False  # after a flush of segment 0 that kept nothing
    acc[4:9] = 0.0
    assert s._slot_mass() == (3e-6, 0)


def test_slot_mass_checked_in_debug():
    s = _solve()
    s.d.acc[13] = 0.5  # a clean segment holding mass its remm does not know
    try:
        s._slot_mass()
    except AssertionError:
        pass
    else:
        raise AssertionError("the debug check missed a slot segment's mass")
    s.sol.debug_mass = False
    assert s._slot_mass() == (0.0, 0)


class _Waves:
    idle = True

    def __init__(self, log):
        self.log = log

    def contribute(self, sent, recv, busy, capped=False, extra=(), more=None):
        self.log.append(("stamp", busy, extra[0]))


def _stub_round(s, waves, log):
    """A busy jacobi rank's round state around ``_contribute``: ``waves`` as its wave
    protocol, the slot mass added to ``rl`` as its wave sums, charges logged."""
    s.d.wave_sums = lambda rl=None, slots=None: (rl + slots, 1.0, 0.0)
    s.wv = waves
    s.mm, s.prog, s.jac, s.bal, s.over = None, False, True, None, False
    s.last_contrib, s.last_sweep_len, s.rl, s.passes = -1.0, 0.0, 0.25, 0
    s.contrib_r = (0.0, 0.0)  # (SKIP_STALE)
    s.st, s.e_start = types.SimpleNamespace(edges_visited=0), 0  # (the work sum, audit 31)
    s.na = types.SimpleNamespace(n_sent=0, n_recv=0,
                                 charge=lambda: log.append(("charge", s.passes)))


def test_busy_contribution_charges_its_slot_pass_before_the_stamp():
    s = _solve(nloc=4)
    log = []
    s.d.acc[4:9] = 0.5
    s.dirty[0] = True
    _stub_round(s, _Waves(log), log)
    assert s._contribute(False, 1.0)
    # the 5 slots of the changed segment, in units of the rank's 4 vertices, charged
    # before the wave's stamp; the mass it reports: rl + the slots
    assert log == [("charge", 5 / 4), ("stamp", True, 0.25 + 2.5)]


def test_wave_sums_takes_the_callers_slot_mass():
    d = DeltaState.__new__(DeltaState)
    d.jac, d.prog, d.nloc, d.sx = True, False, 2, 0.75
    d.acc = np.array([0.1, 0.2, 0.3, -0.4])
    d.dbuf = np.zeros((1, 2))
    assert d.wave_sums(0.5) == (0.5 + 0.7, 0.75, 0.0)
    assert d.wave_sums(0.5, 0.25) == (0.75, 0.75, 0.0)


class _Comm:
    def __init__(self, traces):
        self.traces = traces

    def gather(self, trace, root=0):
        return self.traces

    def Get_rank(self):
        return 0


def test_true_error_rows_never_dated_before_the_states_they_read():
    # (seconds, error, bytes, since: when the part's state began -- its last sweep's end)
    # wave 0: rank 1 was in a sweep when the wave completed and read its part after it
    # (its sweep ended at 0.014, after rank 0's reading at 0.010): dated 0.014.  Wave 1:
    # rank 1 read late (paused) a state of 0.016, before rank 0's reading: rank 0's time
    traces = [[(0.010, 1e-3, 10, 0.005), (0.020, 1e-4, 20, 0.018)],
              [(0.014, 2e-3, 5, 0.014), (0.060, 2e-4, 6, 0.016)]]
    rows, ranks = api._sum_traces(_Comm(traces), None)
    assert [r[0] for r in rows] == [0.014, 0.020]
    assert rows[0][1] == 3e-3 and rows[0][2] == 15
    assert ranks == [[1e-3, 2e-3], [1e-4, 2e-4]]


def test_track_error_records_when_the_state_began():
    from asapgraph.engine.stats import RankStats

    st = RankStats(0)
    st.ref = np.array([0.5, 0.5])
    st.clock = lambda: 0.03
    st.track_error(lambda: np.array([1.0, 1.0]), 0.5, since=0.02)
    st.track_error(lambda: np.array([1.0, 1.0]), 0.5)
    assert [r[3] for r in st.err_trace] == [0.02, 0.03]


class _Waves2(_Waves):
    """A wave in flight that has completed: test() returns it once, then idle."""

    def __init__(self, log):
        super().__init__(log)
        self.idle = False
        self.done = [np.zeros(3)]

    def test(self):
        if self.done:
            self.idle = True
            self.log.append(("result",))
            return self.done.pop()
        return None


def _busy(log, nloc=4):
    s = _solve(nloc=nloc)
    s.d.acc[4:9] = 0.5  # a sweep's output, not flushed yet
    s.d.acc[9:12] = 1e-3  # a flush's remainders
    s.remm[1] = 3e-3
    s.dirty[0] = s.dirty[2] = True
    _stub_round(s, _Waves2(log), log)
    s.wave_events = 0
    s._on_wave = lambda res: log.append(("acted",)) and False
    return s


def test_a_wave_that_completed_is_acted_on_before_the_next_contribution():
    log = []
    s = _busy(log)
    s.passive = lambda out_work: True
    s._out_of_work = lambda: True
    assert not s._wave(False, 1.0)
    assert [e[0] for e in log] == ["result", "acted", "charge", "stamp"]
    assert s.contributed and s.wave_events == 2


def test_sweep_end_contribution_does_not_sum_the_sweeps_output():
    # right after a sweep: the wave that completed during it first, then a busy
    # contribution whose slots are the flushes' remainders only (the pushed mass is
    # leaving the rank, like mass in flight); no slot pass to charge
    log = []
    s = _busy(log)
    assert not s.sweep_wave(1.0)
    assert log == [("result",), ("acted",), ("charge", 0.0), ("stamp", True, 0.25 + 3e-3)]
    # at a round's end (after the flush) the unflushed segments are summed
    log2 = []
    s2 = _busy(log2)
    s2.passive = lambda out_work: False
    s2._out_of_work = lambda: False
    assert not s2._wave(False, 1.0)
    assert log2[-2:] == [("charge", 13 / 4), ("stamp", True, 0.25 + 3e-3 + 2.5)]
