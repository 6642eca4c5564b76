"""The virtual clock charges an ASAP round's work as it happens (asapgraph.engine.vclock
``Charge``): a data message is stamped after its own encoding is charged, an ACK after
the decode of the message it answers, and the charges of a round add up to the one
charge of its totals (no MPI: the NotifyAck methods run on stand-ins)."""
import types

import numpy as np
import pytest

from asapgraph.engine import exchange as ex
from asapgraph.engine.emulation import Emulator
from asapgraph.engine.stats import RankStats
from asapgraph.engine.vclock import Charge

CFG = {"latency": 1e-3, "bandwidth": 125e6, "clock": "virtual", "compute": "model"}


class _Req:
    def Test(self):
        return True


class _Comm:
    def Isend(self, *a, **k):
        return _Req()


def _na(emu):
    """A NotifyAck with one out-peer and one in-peer (rank 1), built without MPI."""
    na = ex.NotifyAck.__new__(ex.NotifyAck)
    na.comm, na.emu, na.st = _Comm(), emu, RankStats(0)
    na.MPI = types.SimpleNamespace(BYTE=None, DOUBLE=None)
    na.out_peers = na.in_peers = np.array([1])
    na.window = 1
    na.pool = [[ex.message_buffer(64)]]
    na.pool_req = [[None]]
    na.inflight = np.zeros(1, dtype=np.int64)
    na._clock = lambda: emu.vt
    na.sent_at = [__import__("collections").deque()]
    na.rtt_min = np.full(1, np.inf)
    na.rtt_floor = 0.0
    na.ack_pending = []
    na.sent_to = np.zeros(2, dtype=np.int64)
    na.recv_from = np.zeros(2, dtype=np.int64)
    na.n_sent = na.n_recv = na.bytes_recv = na.n_acks = 0
    na.coded_sent = na.coded_applied = na.bcoded_sent = na.bcoded_applied = 0
    na.deliver = lambda j, buf, nb: None
    na.charge = None
    return na


def test_message_stamped_after_its_charge():
    emu = Emulator(CFG, 0, 2)
    na = _na(emu)
    na.charge = Charge(emu, na, na.st)
    c = emu.cfg
    one_msg = 1e-9 * (c.ns_per_round + c.ns_per_message + c.ns_per_byte * 200)
    assert one_msg > 0
    buf = na.open(0)
    na.send(0, buf, 200, ex.DENSE_EXACT)
    # the round's fixed cost and this message's cost came before its stamp
    want = one_msg + 200 / c.bandwidth + c.latency
    assert ex.header(buf)[ex.DELIVER_AT] == pytest.approx(want, rel=1e-12)
    assert emu.vt == pytest.approx(one_msg, rel=1e-12)
    # without the charge (the host's clock), the stamp is taken at the current clock
    emu2 = Emulator(CFG, 0, 2)
    na2 = _na(emu2)
    buf2 = na2.open(0)
    na2.send(0, buf2, 200, ex.DENSE_EXACT)
    assert ex.header(buf2)[ex.DELIVER_AT] == pytest.approx(200 / c.bandwidth + c.latency)


def test_ack_stamped_after_the_decode_it_answers(monkeypatch):
    emu = Emulator(CFG, 0, 2)
    na = _na(emu)
    na.charge = Charge(emu, na, na.st)
    stamps = []
    real = emu.stamp

    def stamp(peer, nbytes):
        stamps.append(emu.vt)
        return real(peer, nbytes)

    monkeypatch.setattr(emu, "stamp", stamp)
    c = emu.cfg
    na._apply(0, ex.message_buffer(64), 300)
    na._apply(0, ex.message_buffer(64), 300)
    first = 1e-9 * (c.ns_per_round + c.ns_per_message + c.ns_per_byte * 300)
    # (the first ACK's 8 bytes are counted with the second message)
    second = first + 1e-9 * (c.ns_per_message + c.ns_per_byte * (300 + 8))
    assert stamps == pytest.approx([first, second], rel=1e-12)


def test_charges_of_a_round_add_up_to_its_totals():
    emu = Emulator(CFG, 0, 2)
    emu.factor = 3.0
    na = _na(emu)
    passes = [0]
    ch = Charge(emu, na, na.st, passes=lambda: passes[0], nloc=1000)
    ch.round()
    na.n_recv, na.bytes_recv = 2, 500
    ch()
    passes[0] = 1
    na.n_sent, na.st.bytes_sent, na.bcoded_sent, na.n_acks = 1, 400, 50, 1
    na.bcoded_applied, na.coded_applied = 70, 20
    ch()
    ch()  # nothing new: no charge
    whole = emu.round_cost(0.0, 4, 1000, 900, coded=(0, 20), bcoded=(50, 70)) * 3.0
    assert emu.vt == pytest.approx(whole, rel=1e-12)
    # the calibration counts one round
    assert emu.calib["round"][0] == 2  # (the line above added one)
