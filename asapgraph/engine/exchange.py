"""Engine messages: one header, one payload format, the NOTIFY-ACK window and the BSP channel.

Rationale
---------
*Format.*  Every data message of the engines (PageRank, the sum and min/max programs,
the general program engine; BSP and ASAP) is one byte buffer ``[header | payload]``.  The header is
``HEADER`` float64 fields: emulated delivery time (:mod:`.emulation`), payload form,
the push-sum pair ``(s, w)`` of the stochastic reduce (:mod:`.reduce`), the teleport and
dangling pool shares owed to the receiver (ASAP ``jacobi`` form), the sender's last
sweep duration (the receiver's sweep gate) and the count of the receiver's messages the
sender had applied when its last sweep began (``ANSWERS``, negative when the sender's gate
waits for the receiver's answer: :data:`.asap.ANSWER_GATE`); fields a message does not
use are 0.  (BSP PageRank's pull layout keeps its own 7-slot header,
:data:`.emulation.HEADER`.)  The
payload forms (header field ``FORM``):

====  ==========================================================  =======================
form  payload                                                     made by
====  ==========================================================  =======================
0     dense float64: every slot value                             :func:`encode`
1     sparse float64: ``k`` values, ``k`` int32 slot indices      :func:`encode`
2     dense float32 (error feedback)                              :func:`encode`
3     sparse float32: ``k`` values, ``k`` int32 slot indices      :func:`encode`
4     dense 16-bit: float64 step, every slot as int16             :func:`encode`
5     sparse 16-bit: float64 step, ``k`` int32 indices, ``k`` int16 :func:`encode`
6     dense exact (the value dtype, 8 bytes): every slot value    :func:`encode_exact`
7     sparse exact: ``k`` values, ``k`` int32 slot indices        :func:`encode_exact`
8     coded 16-bit: float64 step, ``k`` (uint32), two Exp-Golomb   :func:`encode`
      orders, then per slot of at least one step its gap and
      its zigzagged int16 as Exp-Golomb codes (a bit stream)
9     byte-coded 16-bit: float64 step, ``m`` (uint32), per slot   :func:`encode`
      an int8, or the byte 0x80 and an int16 (beyond +-127)
====  ==========================================================  =======================

The smallest form is chosen per message.  *Quantisation with error feedback* (forms 2-5,
8 and 9, sums only): values travel by default as 16-bit integers of a per-message step
``max|v| / 32767`` in the smallest of forms 4, 5 and 9 (:func:`._local.encode_segment`;
env ``ASAPGRAPH_ASAP_QUANT``: ``q16b`` that default, ``q16c`` the Exp-Golomb coded form 8
besides, ``q16`` forms 4 and 5 only, ``f32`` float32, ``off`` float64), rounded toward
zero, the remainder staying in the slot where it keeps combining, so no mass is created
or lost and non-negative residuals stay non-negative; slots below one step simply wait.
Measured before (ASAP PageRank, 4 ranks, tol 1e-6): cnr-2000 1.85 MB (float32) -> 1.06
MB (16-bit), rmat:19 38.8 -> 27.4 MB; BSP sends 3.8 and 70.9 MB.  Forms 6 and 7 carry
values exactly (min/max offers, the general engine's values: the program's dtype).

*Where the bytes went* (twelfth session; rmat:20, 4 ranks, 1 ms, 1 Gbit/s, rank 1 3x
slower, static partition, virtual clock, model compute, seed 1: 39.2 MB until true L1
error 1e-6, BSP 135.0 MB): 84 % dense 16-bit payloads (187 messages of ~175 KB: nearly
every slot of a peer's buffer holds at least one step, so indices of any coding cannot
help), 16 % out-of-work flushes in dense float64 (9 of ~700 KB); headers and ACKs well
under 1 %.  Every rank sent one message per peer per sweep (the sweep gate aligns the
sweeps; the straggler two), so there were no redundant flushes to combine.  The values
are residuals, power-law: 88 % of the 16-bit integers are at most 128 in magnitude, and
their order-0 entropy is 0.9 bytes per slot against the 2 bytes sent.

*Coded 16-bit* (form 8).  The same integers, Exp-Golomb coded (Teuhola 1978): per slot of
at least one step the gap to the previous one and the zigzagged value, each with an
order chosen per message from their mean; lossless, so the receiver adds
bit for bit what forms 4/5 would add (tests/mpi/test_dist_units.py).  Measured on the
messages above: 1.0 bytes per slot (varint 1.2, bitmap + int16 2.1, the entropy 0.9).
Cost: CPU (88,000 slots, best of 60: encode 9.0 ns per slot against 5.9 for the plain
forms, decode 3.4 ns per value against 1.0), charged by the compute model per value on
top of the bytes (``ns_per_coded``, :data:`.emulation.MODEL_NS`: measured in the ranks,
7.25 ns to encode and 8.8 to decode a value since the twenty-fifth session).  (Earlier
versions with histogram-chosen orders, byte-wise bit I/O and a branching zigzag took 31
and then 14 ns to encode; charged at the latter, 6.25 ns a value at each end, ASAP's time to 1e-6 on
rmat:20 was 1.37x that of before the coding, geometric mean of the grid below.)

*Byte-coded 16-bit* (form 9, the default since the thirteenth session).  The same
integers, one byte each where within +-127 and an escape byte (0x80) plus the int16
otherwise, every slot in order; lossless like form 8 (tests/mpi/test_dist_units.py).
88,000 slots with 83 % within +-127 steps, best of 40: 1.34 bytes per slot (form 8 1.19,
form 4 2.0), encode 5.5 against 4.7 ns per slot, decode 2.1 against 1.2 ns per value
(charged ``ns_per_bytecoded``: until the twenty-fifth session 0.85 ns a value at each
end; since, after the encoder's rewrite, what the ranks measured: 3.35 ns to encode and
3.45 to decode, where the old encoder took 7.2-8.6).  Bytes until true L1 error
1e-6 (rmat:20, 4 ranks, 1 ms, 1 Gbit/s, virtual clock, model compute, seeds 1-5), static
BSP's over ASAP's with ``start``: 6.80-7.07x (rank 1 3x) and 7.01-7.12x (speeds
1:1.5:2:3), from 4.19x and 4.07-4.37x with forms 4/5; cnr-2000 (seed 1) 16.2x and 8.3x
from 12.7x and 5.7x.  Its earlier arrivals shifted rmat:20's sweep gate into taking turns
(1.82x static BSP instead of 2.42x, seed 1) until the gate's patience was capped where
the links' delay is a sizeable part of a sweep (:data:`.asap.GATE_DELAYED`).

*Remainders out of work.*  Once a rank is out of work (its residual below its passivity
target) its flushes used to go out in float64, exactly.  In the end game a rank runs out
of work after every sweep and new mass from its peers puts it back to work, so those
flushes were 4x the size of 16-bit ones (~7x the coded ones): with form 8, 38 % of the
bytes until 1e-6 and most of the run's tail.  Now 16-bit remainders may stay in the
slots while the rank's residual plus all its remainders is within its passivity target
(``encode``'s ``budget``: a message whose remainder would exceed it goes out exactly
instead); they are residual like the residual left on the rank's own vertices, counted
in the bound (the waves sum the slot buffers), and a rank holding only such remainders
may be passive.  Remainder-only buffers go out (exactly, or re-quantised to a finer step
when that fits the budget) once new residual or a lowered target (a stalled wave)
exceeds it; the drain (work limit, migration) empties every buffer exactly.  Nothing is
dropped: at the end, what is left in the slots is pending residual within the certified
bound, as on the vertices.  (env ``ASAPGRAPH_ASAP_REMAINDERS=0``: every out-of-work flush
exact, for A/B.)

Measured (same scenarios, seeds 1-3, bytes until true L1 error 1e-6, ASAP sweep schedule;
x = BSP's bytes with the same partition / ASAP's; "default": 16-bit forms with the
remainders and :meth:`.asap._Solve.flush_due`; "q16c": the coded form besides, its CPU
charged):

===========================  ======================  ======================  ======================
scenario                     before                  default                 q16c
===========================  ======================  ======================  ======================
rmat:20, rank 1 3x, static   39.2-45.0 MB, 3.0-3.4x  34.4 MB, 3.9x           19.8-22.0 MB, 6.1-6.8x
rmat:20, rank 1 3x, start    35.4-35.7 MB, 3.2-3.3x  32.2 MB, 3.6x           15.0-15.7 MB, 7.4-7.7x
rmat:20, speeds 1:1.5:2:3    36.9-39.6 MB, 3.4-3.7x  30.2-31.8 MB, 4.2-4.5x  18.0-18.2 MB, 7.4-7.5x
rmat:20, speeds ..., start   36.3-37.1 MB, 3.0-3.1x  30.9-32.8 MB, 3.5-3.7x  15.3-15.6 MB, 7.3-7.4x
cnr-2000, rank 1 3x, static  0.70-0.73 MB, 5.2-5.4x  0.62-0.63 MB, 6.0-6.2x  0.37-0.38 MB, 9.9-10x
cnr-2000, rank 1 3x, start   0.36-0.40 MB, 8.0-8.8x  0.30-0.34 MB, 9.5-11x   0.20-0.22 MB, 15-16x
cnr-2000, speeds 1:1.5:2:3   0.58-0.61 MB, 6.2-6.6x  0.52-0.53 MB, 7.1-7.3x  0.31-0.32 MB, 12x
cnr-2000, speeds ..., start  0.74-0.76 MB, 8.3-8.5x  0.66-0.69 MB, 9.0-9.5x  0.33-0.34 MB, 19x
===========================  ======================  ======================  ======================

Against static BSP (135.0 MB) rmat:20 with rebalance start: default 4.2x, q16c 8.6-9.0x.
Whole runs to tol 1e-6, rmat:20: before 46.8-71.2 MB, default 34.2-43.2, q16c 16.7-26.4.
Time to 1e-6 against before (geometric mean over the cells and seeds, range): default
rmat:20 0.971x (0.89-1.05), cnr-2000 1.000x; q16c rmat:20 1.210x (0.96-1.51), cnr-2000
1.005x (0.91-1.11); q16c with its coding not charged, rmat:20 1.018x (0.82-1.26).  So
the coded form halves the bytes at a fifth more time on rmat:20, some of it its CPU (on
every rank's path: after each sweep, and the straggler's at its slowness) and some the
sweep gate locking ranks into taking turns (two ranks alternating their sweeps, each
waiting for the other's message: rmat:20, speeds 1:1.5:2:3, start, seed 3, every rank
waited 10-12 ms after its 7 ms sweeps), which any change of arrival times shifts; the
issue's 5x on rmat:20 is met only with it, the "not slower" only without it.  Hence
opt-in.

*NOTIFY-ACK* (:class:`NotifyAck`, ASAP).  Flushing the buffer of out-peer ``q`` is one
``Isend`` of ``[header | payload]``; the receiver applies it (scatter-add or min/max)
and then sends a tiny ACK (one float64: its emulated delivery time).  At most
``window`` un-ACKed messages per peer (one send buffer per window position); while
waiting, the sender keeps computing and combining into the buffer.  Receives are
pre-posted (one per in-peer for data, one per out-peer for ACKs); with an emulated
network a message or ACK is held until its delivery time.  The counters ``n_sent`` /
``n_recv`` are the termination waves' (:mod:`.termination`).

*BSP channel* (:class:`Channel`).  One message per out-peer per superstep in the same
format, one ``Irecv`` per in-peer, delivered no earlier than the latest delivery time.

The general program engine (:mod:`.bsp_programs`: :class:`Channel`; :mod:`.asap_programs`:
:class:`NotifyAck`) sends the same messages, forms 6 and 7 with values of the
program's dtype (any fixed size).
"""
from __future__ import annotations

import collections
import heapq
import time

import numpy as np

from asapgraph.comm.mpi import TAG_ACK, TAG_DATA, mpi
from asapgraph.engine.evtrace import ev as _ev
from asapgraph.kernels import _local

__all__ = ["HEADER", "DELIVER_AT", "FORM", "GOSSIP_S", "GOSSIP_W", "POOL_B", "POOL_D",
           "SWEEP_LEN", "ANSWERS", "DENSE_EXACT", "SPARSE_EXACT", "CODED", "QUANT", "header",
           "message_buffer", "encode", "decode", "coded_values", "coded_values_of",
           "encode_exact",
           "decode_exact", "NotifyAck", "Channel"]

#: float64 header fields of every engine message
HEADER = 8
DELIVER_AT, FORM, GOSSIP_S, GOSSIP_W, POOL_B, POOL_D, SWEEP_LEN, ANSWERS = range(HEADER)
#: payload forms of min/max offers (after the six of :func:`encode`), and :func:`encode`'s
#: coded 16-bit form
DENSE_EXACT, SPARSE_EXACT, CODED, BYTE_CODED = 6, 7, 8, 9


def header(buf):
    """The float64 header fields of message ``buf`` (a view)."""
    return buf[:8 * HEADER].view(np.float64)


def message_buffer(slots, itemsize=8):
    """A byte buffer for a message of up to ``slots`` values (of at most ``itemsize``
    bytes; 8 for the float64 forms) in any form."""
    return np.zeros(8 * (HEADER + 1) + max(8, int(itemsize)) * slots, dtype=np.uint8)


#: what :func:`encode` does with the values: float64 exactly, float32 or 16-bit integers
#: of a per-message step (both with error feedback)
QUANT = {"off": 0, "f32": 1, "q16c": 2, "q16": 3, "q16b": 4}


def encode(acc, lo, hi, buf, quant=0, budget=np.inf):
    """Move a peer's slot buffer ``acc[lo:hi]`` into message ``buf``; returns ``(bytes,
    form, mass, left)``, ``mass`` the buffer's ``sum |v|`` before the move, ``left``
    the ``sum |v|`` that stays in it.

    Forms 0-5 and 8 (module docstring), the smallest; ``quant`` (a value of
    :data:`QUANT`): quantised with error feedback (the remainder stays in the slots),
    else the slots are left zero; ``budget`` (16-bit): if more than this would stay,
    exact float64 instead.  Compiled passes over the segment and one into the buffer
    (:func:`._local.encode_segment`); the header is the caller's.
    """
    return _local.encode_segment(acc, lo, hi, buf, 8 * HEADER, quant, budget)


def coded_values(buf, nbytes):
    """``(coded, byte_coded)``: the values of message ``buf`` if it is coded 16-bit (form
    8) or byte-coded (form 9), else 0 (what the compute model charges their coding for:
    :meth:`.emulation.Emulator.round_cost`)."""
    form = int(header(buf)[FORM]) if nbytes >= 8 * HEADER else -1
    k = coded_values_of(buf, nbytes, form)
    return (k, 0) if form == CODED else (0, k)


def coded_values_of(buf, nbytes, form):
    """The values a coded (8) or byte-coded (9) message of ``form`` carries (the count in
    its payload's prefix: nonzero slots, or every slot), else 0."""
    h = 8 * HEADER
    if nbytes < h + 12 or (form != CODED and form != BYTE_CODED):
        return 0
    return int(buf[h + 8:h + 12].view(np.uint32)[0])


def decode(acc, mp, buf, nbytes):
    """Scatter-add a message made by :func:`encode` through ``mp`` (slot -> index of
    ``acc``); returns ``(mass, dabs)``: its signed mass and the change of ``sum |acc|``
    it made (:func:`._local.decode_message`)."""
    return _local.decode_message(acc, mp, buf, nbytes, 8 * HEADER, FORM)


def encode_exact(seg, ch, buf, dense_ok=True):
    """Message of the slots ``ch`` of ``seg`` (values of any fixed-size dtype, sent
    exactly) into ``buf``: sparse (form 7: ``k`` values, then ``k`` int32 slot indices)
    or every slot (form 6), whichever is smaller; returns ``(bytes, form)``.
    ``dense_ok=False``: every slot only when ``ch`` is every slot (the receiver must
    know which slots were sent, not only their values)."""
    k, m, h, isz = len(ch), len(seg), 8 * HEADER, seg.dtype.itemsize
    if k < m and (not dense_ok or (isz + 4) * k < isz * m):
        buf[h:h + isz * k].view(seg.dtype)[:] = seg[ch]
        buf[h + isz * k:h + (isz + 4) * k].view(np.int32)[:] = ch
        return h + (isz + 4) * k, SPARSE_EXACT
    buf[h:h + isz * m].view(seg.dtype)[:] = seg
    return h + isz * m, DENSE_EXACT


def decode_exact(mp, buf, nbytes, dtype):
    """``(targets, values)`` of a message made by :func:`encode_exact` (targets
    through ``mp``)."""
    h, isz = 8 * HEADER, np.dtype(dtype).itemsize
    if int(header(buf)[FORM]) == DENSE_EXACT:
        return mp, buf[h:nbytes].view(dtype)
    k = (nbytes - h) // (isz + 4)
    return mp[buf[h + isz * k:nbytes].view(np.int32)], buf[h:h + isz * k].view(dtype)


class NotifyAck:
    """The NOTIFY-ACK windows of one ASAP solve (see the module docstring).

    ``out_peers``/``out_slots``: ranks this one sends to and the most slots of a message
    to each; ``in_peers``/``in_slots``: ranks it receives from.  ``deliver(j, buf,
    nbytes)`` applies a data message of in-peer ``j`` (called by :meth:`poll`, after its
    emulated delivery time; the ACK follows).  Traffic goes to ``st``.  ``itemsize``: the
    most bytes of a payload value (8: the float64 forms and 8-byte exact values).
    """

    def __init__(self, comm, out_peers, out_slots, in_peers, in_slots, window, emu, st,
                 deliver, itemsize=8):
        MPI = self.MPI = mpi()
        self.comm, self.emu, self.st, self.deliver = comm, emu, st, deliver
        self.out_peers, self.in_peers = out_peers, in_peers
        self.window = window
        K = comm.Get_size()
        nout = len(out_peers)
        self.rbufs = [message_buffer(s, itemsize) for s in in_slots]
        self.reqs = [comm.Irecv([self.rbufs[j], MPI.BYTE], source=q, tag=TAG_DATA)
                     for j, q in enumerate(in_peers)]
        self.abufs = [np.zeros(1) for _ in range(nout)]
        self.reqs += [comm.Irecv([self.abufs[j], MPI.DOUBLE], source=q, tag=TAG_ACK)
                      for j, q in enumerate(out_peers)]
        self.stats = [MPI.Status() for _ in self.reqs]
        # send side: one buffer per window position holding any form of a message, made
        # when first needed (:meth:`open`): a peer never has more than ``window`` in
        # flight, and rarely that many.  Made up front, --window 2147483647 (a valid
        # value) allocated that many buffers per peer, and the ranks were killed (SIGKILL,
        # out of memory) before the first sweep, on K ranks only.
        self._slots, self._itemsize = list(out_slots), itemsize
        self.pool = [[] for _ in range(nout)]
        self.pool_req = [[] for _ in range(nout)]
        self.inflight = np.zeros(nout, dtype=np.int64)
        # each link's smallest round trip (send -> ACK delivered) so far, on the rank's
        # clock (virtual time on the virtual clock): its floor is twice the network's
        # delay plus the least the peer took to poll (what the sweep gate reads)
        self._clock = (lambda: emu.vt) if getattr(emu, "virtual", False) else time.perf_counter
        self.sent_at = [collections.deque() for _ in range(nout)]
        self.rtt_min = np.full(nout, np.inf)
        self.rtt_floor = 0.0  # the largest of the links' rtt_min (0 until an ACK)
        self.ack_pending = []
        self.sent_to = np.zeros(K, dtype=np.int64)
        self.recv_from = np.zeros(K, dtype=np.int64)
        self.n_sent = self.n_recv = 0
        self.bytes_recv = 0  # data bytes applied (the compute model's round cost)
        # values of coded 16-bit messages sent (encoded) and applied (decoded), and of
        # byte-coded ones (ditto: the model charges each end's coder apart)
        self.coded_sent = self.coded_applied = 0
        self.bcoded_sent = self.bcoded_applied = 0
        self.n_acks = 0  # ACKs arrived (ditto)
        # the virtual clock's charge of the work done so far (:class:`.vclock.Charge`),
        # called before each stamp, so a message leaves after its own coding (and an ACK
        # after the decode of the message it answers); None on the host's clock
        self.charge = None

    def _apply(self, j, buf, nbytes):
        """Deliver in-peer ``j``'s message, count it and ACK it."""
        MPI, q = self.MPI, self.in_peers[j]
        _ev("D", j, nbytes)
        self.deliver(j, buf, nbytes)
        self.n_recv += 1
        self.bytes_recv += nbytes
        c, b = coded_values(buf, nbytes)
        self.coded_applied += c
        self.bcoded_applied += b
        self.recv_from[q] += 1
        self.st.messages_received += 1
        if self.charge is not None:
            self.charge()
        a = np.array([self.emu.stamp(q, 8)])
        self.ack_pending.append(self.comm.Isend([a, MPI.DOUBLE], dest=q, tag=TAG_ACK))
        self.st.acks_sent += 1
        self.st.bytes_sent += 8

    def _repost(self, i):
        MPI, nin = self.MPI, len(self.in_peers)
        if i < nin:
            self.reqs[i] = self.comm.Irecv([self.rbufs[i], MPI.BYTE], source=self.in_peers[i],
                                           tag=TAG_DATA)
        else:
            self.reqs[i] = self.comm.Irecv([self.abufs[i - nin], MPI.DOUBLE],
                                           source=self.out_peers[i - nin], tag=TAG_ACK)

    def poll(self):
        """Receive everything that has arrived (data and ACKs, held ones when due);
        returns the number of events."""
        MPI, emu, nin = self.MPI, self.emu, len(self.in_peers)
        ev = 0
        while True:
            idx = MPI.Request.Testsome(self.reqs, self.stats)
            if not idx:
                break
            for pos, i in enumerate(idx):  # statuses come in completion order
                ev += 1
                if i < nin:
                    buf = self.rbufs[i]
                    nb = self.stats[pos].Get_count(MPI.BYTE)
                    da = float(buf[:8].view(np.float64)[0])
                    _ev("R", i, da)
                    # hold() declines when the delivery time has passed meanwhile
                    if not (emu.cfg.network and emu.hold(da, ("d", i, (buf[:nb].copy(), nb)))):
                        self._apply(i, buf, nb)
                else:
                    j = i - nin
                    if not (emu.cfg.network and emu.hold(self.abufs[j][0], ("a", j, None))):
                        self.ack_arrived(j)
                self._repost(i)
        for kind, j, item in emu.due():
            ev += 1
            if kind == "d":
                self._apply(j, item[0], item[1])
            else:
                self.ack_arrived(j)
        if len(self.ack_pending) > 64:
            self.ack_pending[:] = [r for r in self.ack_pending if not r.Test()]
        return ev

    def receive(self, sink, block=False):
        """Hand every completed receive to ``sink(kind, j, payload, nbytes)`` and repost
        it (the virtual clock's path, :mod:`.vclock`: nothing is applied here): kind
        ``"d"``, in-peer ``j``'s data message (a copy of its bytes); kind ``"a"``, out-peer
        ``j``'s ACK (its delivery time).  ``block``: first wait for one receive.  Returns
        the number handed."""
        MPI, n = self.MPI, 0
        if block:
            status = MPI.Status()
            i = MPI.Request.Waitany(self.reqs, status)
            if i != MPI.UNDEFINED:
                self._hand(i, status, sink)
                n += 1
        while True:
            idx = MPI.Request.Testsome(self.reqs, self.stats)
            if not idx:
                return n
            for pos, i in enumerate(idx):
                self._hand(i, self.stats[pos], sink)
                n += 1

    def _hand(self, i, status, sink):
        nin = len(self.in_peers)
        if i < nin:
            nb = status.Get_count(self.MPI.BYTE)
            sink("d", i, self.rbufs[i][:nb].copy(), nb)
        else:
            sink("a", i - nin, float(self.abufs[i - nin][0]), 8)
        self._repost(i)

    def apply(self, j, buf, nbytes):
        """Deliver in-peer ``j``'s message ``buf`` now (counted, then ACKed)."""
        self._apply(j, buf, nbytes)

    def ack_arrived(self, j):
        """Out-peer ``j``'s ACK is delivered: one window position frees (and the link's
        round trip is measured)."""
        self.inflight[j] -= 1
        self.n_acks += 1
        _ev("A", j)
        sent = self.sent_at[j]
        if sent:
            r = self._clock() - sent.popleft()
            if r < self.rtt_min[j]:
                self.rtt_min[j] = r
                rtt = self.rtt_min
                self.rtt_floor = float(rtt[np.isfinite(rtt)].max())

    def acked(self):
        """Every message this rank sent was ACKed."""
        return not self.inflight.any()

    def full_mask(self):
        """Per out-peer: its window is full."""
        return self.inflight >= self.window

    def full(self, j):
        """Out-peer ``j`` has ``window`` un-ACKed messages: nothing more may go to it."""
        return self.inflight[j] >= self.window

    def open(self, j):
        """A free send buffer of out-peer ``j`` (its window must not be full); pass it to
        :meth:`send` once filled after the header."""
        row = self.pool_req[j]
        slot = next((s for s, r in enumerate(row) if r is None or r.Test()), None)
        if slot is None:  # every buffer made so far is in flight (fewer than window)
            slot = len(row)
            row.append(None)
            self.pool[j].append(message_buffer(self._slots[j], self._itemsize))
        self._slot = slot
        return self.pool[j][slot]

    def send(self, j, buf, nbytes, form):
        """Send the message opened by :meth:`open` (stamps its delivery time and form)."""
        q = int(self.out_peers[j])
        f = header(buf)
        f[FORM] = form
        c, b = coded_values(buf, nbytes)
        self.coded_sent += c
        self.bcoded_sent += b
        self.n_sent += 1
        self.st.messages_sent += 1
        self.st.bytes_sent += nbytes
        if self.charge is not None:
            self.charge()
        f[DELIVER_AT] = self.emu.stamp(q, nbytes)
        self.pool_req[j][self._slot] = self.comm.Isend([buf[:nbytes], self.MPI.BYTE], dest=q,
                                                       tag=TAG_DATA)
        self.inflight[j] += 1
        _ev("T", j, nbytes)
        self.sent_at[j].append(self._clock())
        self.sent_to[q] += 1

    def settle(self):
        """Deliver every message in flight, held ones included (collective: one
        ``Alltoall`` of the per-pair counts).  Returns ``(delivered, unmatched)``: the
        messages this call delivered, and those received beyond what the peers say they
        sent (a message of another solve: must be 0)."""
        MPI, comm, emu = self.MPI, self.comm, self.emu
        expect = np.zeros(comm.Get_size(), dtype=np.int64)
        comm.Alltoall([self.sent_to, MPI.INT64_T], [expect, MPI.INT64_T])
        held = [it for it in emu.queue if it[2][0] == "d"]
        emu.queue[:] = [it for it in emu.queue if it[2][0] != "d"]
        heapq.heapify(emu.queue)
        before = self.n_recv
        for _, _, (_, j, item) in held:
            self._apply(j, item[0], item[1])
        nin = len(self.in_peers)
        status = MPI.Status()
        while (self.recv_from < expect).any():
            i = MPI.Request.Waitany(self.reqs[:nin], status) if nin else MPI.UNDEFINED
            if i == MPI.UNDEFINED:
                break
            self._apply(i, self.rbufs[i], status.Get_count(MPI.BYTE))
            self._repost(i)
        return self.n_recv - before, int(np.maximum(self.recv_from - expect, 0).sum())

    def wait_acks(self):
        """Wait until every message this rank sent is ACKed (after a collective
        :meth:`settle`, every peer has applied them, so their ACKs are coming)."""
        MPI, nin, emu = self.MPI, len(self.in_peers), self.emu
        held = [it for it in emu.queue if it[2][0] == "a"]
        emu.queue[:] = [it for it in emu.queue if it[2][0] != "a"]
        heapq.heapify(emu.queue)
        for _, _, (_, j, _) in held:
            self.inflight[j] -= 1
        status = MPI.Status()
        while self.inflight.any():
            i = MPI.Request.Waitany(self.reqs[nin:], status)
            self.inflight[i] -= 1
            self._repost(nin + i)
        for sent in self.sent_at:  # (not timed: the drain waits for them)
            sent.clear()

    def close(self):
        """Cancel the posted receives, complete every send, then a barrier: a fast rank
        must not start a next solve while a peer still polls this one (collective)."""
        MPI = self.MPI
        for r in self.reqs:
            r.Cancel()
        MPI.Request.Waitall(self.reqs)
        MPI.Request.Waitall(self.ack_pending)
        MPI.Request.Waitall([r for row in self.pool_req for r in row if r is not None])
        self.comm.Barrier()


class Channel:
    """The BSP exchange of the engines on ranks, for any payload form.

    One message per out-peer per superstep (``[header | payload]`` bytes: delivery time,
    payload form), one ``Irecv`` per in-peer; received buffers are applied no earlier than
    their delivery time.  ``encode(j, buf)`` fills out-peer ``j``'s message after the
    header and returns ``(bytes, form)``; ``decode(j, buf, nbytes)`` applies in-peer
    ``j``'s.  Traffic and time go to ``st``.  ``reverse``: messages flow against the
    push layout (the owners of boundary vertices send their values to the ranks holding
    their slots: the pull form); ``itemsize``: the most payload bytes per slot.
    """

    def __init__(self, comm, lg, emu, st, itemsize=8, reverse=False):
        self.MPI = mpi()
        self.comm, self.lg, self.emu, self.st = comm, lg, emu, st
        offs = lg.out_off
        slot_sizes = [int(offs[j + 1] - offs[j]) for j in range(len(lg.out_peers))]
        map_sizes = [len(mp) for mp in lg.in_maps]
        if reverse:
            self.send_peers, self.recv_peers = lg.in_peers, lg.out_peers
            sizes, rsizes = map_sizes, slot_sizes
        else:
            self.send_peers, self.recv_peers = lg.out_peers, lg.in_peers
            sizes, rsizes = slot_sizes, map_sizes
        self.sbufs = [message_buffer(s, itemsize) for s in sizes]
        self.rbufs = [message_buffer(s, itemsize) for s in rsizes]
        self.statuses = [self.MPI.Status() for _ in self.rbufs]
        self.c0 = time.thread_time()

    def compute(self, seconds):
        """Account ``seconds`` of local work; a straggler sleeps after it (CPU time)."""
        self.st.compute_s += seconds
        self.emu.after_compute(time.thread_time() - self.c0)

    def exchange(self, encode, decode):
        MPI, comm, emu, st = self.MPI, self.comm, self.emu, self.st
        perf, cpu = time.perf_counter, time.thread_time
        t1 = perf()
        # each message's posting, its encode left out, is charged before its stamp
        # (emu.post, as in BSP PageRank's exchange)
        mark = cpu()
        rbufs = self.rbufs
        reqs = [comm.Irecv([rbufs[j], MPI.BYTE], source=int(q), tag=TAG_DATA)
                for j, q in enumerate(self.recv_peers)]
        n = len(reqs)
        sreqs = []
        for j, q in enumerate(self.send_peers):
            b = self.sbufs[j]
            c0 = cpu()
            nbytes, form = encode(j, b)
            c1 = cpu()
            f = header(b)
            f[FORM] = form
            emu.post((c0 - mark) + (cpu() - c1), n + 1)
            f[DELIVER_AT] = emu.stamp(int(q), nbytes)
            sreqs.append(comm.Isend([b[:nbytes], MPI.BYTE], dest=int(q), tag=TAG_DATA))
            st.messages_sent += 1
            st.bytes_sent += nbytes
            mark, n = cpu(), 0
        emu.post(cpu() - mark, n)
        t2 = perf()
        MPI.Request.Waitall(reqs, self.statuses)
        latest = max((float(b[:8].view(np.float64)[0]) for b in rbufs), default=0.0)
        if emu.cfg.network and latest:
            emu.wait_until(latest)
        t4 = perf()
        for j, b in enumerate(rbufs):
            decode(j, b, self.statuses[j].Get_count(MPI.BYTE))
        st.messages_received += len(rbufs)
        MPI.Request.Waitall(sreqs)
        st.comm_s += (t2 - t1) + (perf() - t4)
        st.wait_s += t4 - t2

    def reduce(self, *vals):
        """Global sums of ``vals`` (one ``Allreduce``); restarts the straggler's CPU clock."""
        t = time.perf_counter()
        red = np.array(vals, dtype=np.float64)
        out = np.zeros_like(red)
        self.comm.Allreduce(red, out, op=self.MPI.SUM)
        self.emu.collective(self.comm, red.nbytes)
        self.st.wait_s += time.perf_counter() - t
        self.c0 = time.thread_time()
        return out
