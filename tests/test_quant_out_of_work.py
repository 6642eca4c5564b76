"""Out of work, a slot buffer with new contributions goes out 16-bit even where its
remainder would exceed the rank's passivity budget, and the remainder follows in the next
flush (asapgraph.engine.asap.QUANT_OUT_OF_WORK); before, such a buffer went out exact in
float64 (8 bytes a slot: on rmat:20's persistent straggler cell one ~560 KB message a run,
4.5 ms of a 1 Gbit/s link, benchmarks/REPORT.md, twentieth session).  Nothing is lost or
created: what the messages deliver plus what stays in the slots is the buffer (to the
last bit of each slot's two additions).  (No MPI: ``_Solve.flush`` runs on a stand-in
of the solve's state.)"""
import types

import numpy as np

from asapgraph.engine import asap
from asapgraph.engine import exchange as ex
from asapgraph.engine.stats import RankStats

NLOC, M = 4, 256


class _NA:
    def __init__(self):
        self.sent = []
        self.sent_to, self.recv_from = np.zeros(2, np.int64), np.zeros(2, np.int64)

    def full(self, j):
        return False

    def open(self, j):
        return ex.message_buffer(M)

    def send(self, j, buf, nbytes, form):
        ex.header(buf)[ex.FORM] = form  # (as NotifyAck.send)
        self.sent.append((buf[:nbytes].copy(), nbytes, int(form)))


class _Solve:
    flush = asap._Solve.flush
    _answer_mask, _held, _now = (asap._Solve._answer_mask, asap._Solve._held,
                                 asap._Solve._now)

    def __init__(self, quant_out, slots):
        self.sol = types.SimpleNamespace(
            keep_remainders=True, quant=ex.QUANT["q16b"], approx=0.0, quant_out=quant_out,
            answer_gate=0.0, answer_hold=True,
            sched=types.SimpleNamespace(neighbours=lambda me, t: np.array([1])))
        self.na, self.mm = _NA(), None
        acc = np.zeros(NLOC + M)
        acc[NLOC:] = slots
        self.d = types.SimpleNamespace(acc=acc, dbuf=np.zeros((1, 2)))
        self.dirty, self.rem = np.array([True]), np.array([False])
        self.remm, self.nout = np.zeros(1), 1
        self.seg_lo, self.seg_hi = np.array([NLOC]), np.array([NLOC + M])
        # out of work: the residual within a tiny passivity target (budget 1e-12)
        self.target, self.share, self.rl = 1e-12, 1.0, 0.0
        self.gs = self.gw = 1.0
        self.K, self.me, self.rounds = 2, 0, 1
        self.peer_index, self.in_index = {1: 0}, {1: 0}
        self.quant = [ex.QUANT["q16b"]]
        self.waited_for = np.zeros(1, dtype=bool)
        self.last_sweep_len = 1e-3
        self.st = RankStats(0)
        # the sweep gate's answer rule (off here: asap.ANSWER_GATE)
        self.seen, self.out_mark, self.current = np.zeros(1), np.zeros(1), np.zeros(1, bool)
        self.answered, self.answered_at = np.full(1, -1.0), np.full(1, -np.inf)
        self.wants_answer = np.zeros(1, dtype=bool)
        self.emu = types.SimpleNamespace(virtual=False, coder=lambda *a: None)

    def _exact_only(self):
        return False


def _slots():
    rng = np.random.default_rng(7)
    v = rng.uniform(-1.0, 1.0, M) * 1e-6
    v[3] = 1e-3  # the step is max |v| / 32767: most slots leave a remainder
    return v


def _delivered(sent):
    got = np.zeros(M)
    for buf, nbytes, _ in sent:
        ex.decode(got, np.arange(M, dtype=np.int64), buf, nbytes)
    return got


def test_new_contributions_go_16_bit_out_of_work_and_the_remainder_follows():
    v = _slots()
    s = _Solve(True, v)
    assert s.flush(True) == 1
    (_, nbytes, form), = s.na.sent
    assert form not in (0, 1) and nbytes < 2 * M + 8 * ex.HEADER + 16  # 16-bit, not float64
    assert s.rem[0] and s.remm[0] > 1e-12  # the remainder stays, beyond the budget
    assert s.st.extra.get("exact_fallbacks", 0) == 0
    # the next flush (out of work, nothing new) sends the remainder: re-quantised or exact
    assert s.flush(True) == 1
    slots = s.d.acc[NLOC:]
    assert np.abs(slots).sum() <= 1e-12 and s.remm[0] <= 1e-12
    # delivered + what stays is the buffer (a slot's 16-bit part plus its remainder)
    np.testing.assert_allclose(_delivered(s.na.sent) + slots, v, rtol=1e-15, atol=0)
    assert s.flush(True) == 0  # within the budget: what stays waits


def test_without_it_the_buffer_goes_exact():
    v = _slots()
    s = _Solve(False, v)
    assert s.flush(True) == 1
    (_, nbytes, form), = s.na.sent
    assert form in (0, 1) and nbytes >= 8 * M  # float64: 8 bytes a slot
    assert s.st.extra["exact_fallbacks"] == 1
    assert not s.rem[0] and not s.d.acc[NLOC:].any()
    assert np.array_equal(_delivered(s.na.sent), v)

