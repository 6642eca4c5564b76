"""Per-rank accounting shared by both engines, and its gathering to rank 0.

Every rank counts data messages and bytes sent (payload + header; ACKs and gossip are
counted separately and included in the totals), rounds or supersteps, and splits its
wall time into computing (local sweeps), communicating (packing, posting, applying
received buffers, collectives that return at once) and waiting (blocked on messages or
reductions, idle backoff).  Emulated delays and straggler sleeps are reported on their
own so the real numbers stay visible.  A trace of ``(seconds, l1_bound)`` samples lets
callers draw error-vs-time curves.
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph.comm.mpi import mpi

__all__ = ["RankStats", "gather_stats", "traffic_totals", "virtual_figures"]


class RankStats:
    def __init__(self, rank):
        self.rank = rank
        self.messages_sent = 0
        self.bytes_sent = 0
        self.acks_sent = 0
        self.gossip_sent = 0
        self.messages_received = 0
        self.rounds = 0
        self.compute_s = 0.0
        self.comm_s = 0.0
        self.wait_s = 0.0
        self.edges_visited = 0
        self.t0 = time.perf_counter()
        self.trace = []  # (seconds since start, global L1 bound) -- rank 0 only matters
        self.extra = {}
        self.ref = None  # local slice of a reference solution (see track_error)
        self.err_trace = []
        #: rank 0's :class:`asapgraph.progress.Progress` (None elsewhere): a throttled line
        #: per superstep / termination wave, so a long run shows it is moving
        self.progress = None
        self.progress_what = ("iteration", "residual")
        #: seconds since the start for the traces: the host's, or (virtual clock, see
        #: :mod:`.vclock`) a callable returning the rank's virtual clock
        self.clock = None
        #: host seconds spent on the benchmarks' instrument (:meth:`track_error`): not the
        #: algorithm's time, so the host's clock leaves them out (the virtual clock does
        #: not charge them)
        self.untimed_wall = 0.0

    def now(self):
        if self.clock is not None:
            return self.clock()
        return time.perf_counter() - self.t0 - self.untimed_wall

    def sample(self, bound):
        """The global residual or bound after a superstep (BSP) or a wave (ASAP)."""
        self.trace.append((self.now(), float(bound)))
        if self.progress is not None:
            self.progress.iteration(len(self.trace), float(bound), what=self.progress_what,
                                    sent=f"{self.bytes_sent / 1e6:,.1f} MB from rank 0")

    def track_error(self, result, scale, since=None):
        """Record ``(seconds, sum |x * scale - ref|, bytes sent, since)`` for this rank's
        vertices, ``x = result()``, ``since``: when this state came to be (the end of the
        rank's last sweep; default: now); returns the CPU seconds it took.

        Benchmarks only (``ref`` set): the L1 error is additive over ranks, so the sum of
        the ranks' records at the same protocol event (termination waves complete in the
        same order everywhere) is the true error of the whole vector at that moment.  The
        instrument's time is not the run's: the record is stamped before it, and the host
        seconds it takes are left out of :meth:`now` from then on (an O(n/K) pass per
        wave: on rmat:20 with 2 ranks, ASAP's time to L1 1e-6 on the host's clock
        included ~50 ms of it, a sixth of the run; BSP's errors are replayed afterwards).
        """
        if self.ref is None:
            return 0.0
        from asapgraph.kernels import _local

        c0, w0 = time.thread_time(), time.perf_counter()
        t = self.now()
        self.err_trace.append((t, _local.l1_diff_scaled(result(), scale, self.ref),
                               self.bytes_sent, t if since is None else min(since, t)))
        self.untimed_wall += time.perf_counter() - w0
        return time.thread_time() - c0

    def as_dict(self):
        d = {"rank": self.rank, "messages_sent": self.messages_sent, "bytes_sent": self.bytes_sent,
             "acks_sent": self.acks_sent, "gossip_sent": self.gossip_sent,
             "messages_received": self.messages_received, "rounds": self.rounds,
             "compute_seconds": self.compute_s, "comm_seconds": self.comm_s,
             "wait_seconds": self.wait_s, "edges_visited": self.edges_visited}
        d.update(self.extra)
        return d


def gather_stats(comm, st, layout_stats, mode, seconds, extra=None):
    """Gather every rank's record to rank 0 and add totals; returns the dict (rank 0) or None.

    Message counts: a rank's record has ``messages_sent`` (its data messages), ``acks_sent``
    (ASAP's NOTIFY-ACK acknowledgements) and ``gossip_sent``; the totals have
    ``messages_sent`` = every message of the run (data + ACKs + gossip, the figure the
    benchmarks compare), split as ``data_messages_sent`` (the sum of the records'
    ``messages_sent``) and ``acks_sent``.  BSP sends no ACKs: the two totals agree."""
    rec = st.as_dict()
    rec.update(layout_stats)
    recs = comm.gather(rec, root=0)
    if comm.Get_rank() != 0:
        return None
    tot = {"mode": mode, "ranks": comm.Get_size(), "seconds": seconds,
           "rounds": max(r["rounds"] for r in recs),
           "messages_sent": int(sum(r["messages_sent"] + r["acks_sent"] + r["gossip_sent"]
                                    for r in recs)),
           "data_messages_sent": int(sum(r["messages_sent"] for r in recs)),
           "acks_sent": int(sum(r["acks_sent"] for r in recs)),
           "bytes_sent": int(sum(r["bytes_sent"] for r in recs)),
           "wait_seconds": float(sum(r["wait_seconds"] for r in recs)),
           "compute_seconds": float(sum(r["compute_seconds"] for r in recs)),
           "comm_seconds": float(sum(r["comm_seconds"] for r in recs)),
           "edges_visited": int(sum(r["edges_visited"] for r in recs)),
           "trace": [list(t) for t in st.trace]}
    if extra:
        tot.update(extra)
    tot["per_rank"] = recs
    return tot


def np_float(x):
    return float(np.asarray(x))


def traffic_totals(comm, st, emu):
    """Edges, messages, bytes and times of ``st`` summed over the ranks, with the
    emulation's figures (``emu``: the rank's :class:`.emulation.Emulator`); collective."""
    MPI = mpi()
    tot = np.array([st.edges_visited, st.messages_sent, st.bytes_sent, st.acks_sent],
                   dtype=np.int64)
    comm.Allreduce(MPI.IN_PLACE, [tot, MPI.INT64_T], op=MPI.SUM)
    times = np.array([st.compute_s, st.comm_s, st.wait_s, emu.delay_s, emu.sleep_s])
    comm.Allreduce(MPI.IN_PLACE, times, op=MPI.SUM)
    clock = virtual_figures(comm, st, emu)
    return {**clock, "edges_scanned": int(tot[0]), "messages_sent": int(tot[1] + tot[3]),
            "data_messages_sent": int(tot[1]), "bytes_sent": int(tot[2]),
            "acks_sent": int(tot[3]), "compute_seconds": float(times[0]),
            "comm_seconds": float(times[1]), "wait_seconds": float(times[2]),
            "emulated_delay_seconds": float(times[3]),
            "straggler_sleep_seconds": float(times[4]),
            "emulation": emu.cfg.as_dict() if emu.cfg.active else None}


def virtual_wait_seconds(per_rank):
    """The virtual seconds the ranks spent not computing (waiting for messages and
    collectives, the modelled network), summed over the ranks as ``wait_seconds`` is: per
    rank, its clock at the end less its compute (:func:`virtual_figures`).  On the virtual
    clock ``wait_seconds`` stays the host's: this is the figure on the run's clock."""
    return float(sum(max(0.0, r["virtual_seconds"] - r["virtual_compute_seconds"])
                     for r in per_rank))


def virtual_figures(comm, st, emu):
    """The clock of the run (collective): ``{"clock": "wall"}``, or on the virtual clock
    ``virtual_seconds`` (the latest rank clock), and per rank in ``st.extra`` its clock
    at the end and its compute in virtual seconds."""
    if not emu.virtual:
        return {"clock": "wall"}
    st.extra["virtual_seconds"] = emu.vt
    st.extra["virtual_compute_seconds"] = emu.compute_vs
    return {"clock": "virtual", "virtual_seconds": float(comm.allreduce(emu.vt, op=mpi().MAX))}
