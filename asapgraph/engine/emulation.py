"""Network and straggler emulation inside the message layer (off by default).

Rationale
---------
One module, used identically by the BSP and the ASAP engines, so the two modes see the
same emulated machine.

* *Links.*  Every message carries a small float64 header whose first field is the
  earliest delivery time, stamped by the sender::

      start       = max(now, link_free[peer])          # per-link serialisation queue
      link_free   = start + bytes / bandwidth
      deliver_at  = link_free + latency + jitter        # jitter ~ U(0, jitter), seeded

  The receiver holds a received message in a local delivery queue until its
  ``deliver_at`` (ranks of one job share a host clock; ``time.time`` is used because
  it is common to all processes on a host).  Random jitter also reorders messages.
  BSP's exchange waits for the deliveries in the same way.
* *Stragglers.*  A rank with factor ``f`` sleeps ``(f - 1) x`` the CPU time of each local
  sweep (``time.thread_time``) after it; optional random pauses (probability
  ``pause_prob`` per sweep, ``pause_seconds`` long) model hiccups.
* *Transient stragglers* (``pause_every > 0``): every rank pauses now and then, as a
  garbage collector or a noisy neighbour makes it: pauses start at the times of a Poisson
  process on the rank's own clock (exponential gaps of mean ``pause_every`` seconds, the
  gap counted from the end of the previous pause) and last a duration drawn uniformly
  from ``[pause_seconds, pause_max]`` (``pause_max`` 0: exactly ``pause_seconds``).  A
  pause that fell due is taken after the next local compute (a rank waiting for
  messages is not computing; a due pause is never split or skipped, at most delayed to
  the end of that compute).  On the host's clock the rank sleeps; on the virtual clock
  its clock jumps.  Seeded like the rest, so the same pauses at the same (virtual)
  times in every repetition.
* *Compute model* (``compute``).  ``"cpu"`` (default): compute costs the thread CPU time
  it took.  ``"model"`` (SimGrid-style modelled bursts): a sweep costs
  ``ns_per_edge x edges + ns_per_vertex x vertices`` nanoseconds of its kernel (``pull``:
  BSP's PageRank sweep; ``push``: ASAP's sweeps) and every ASAP round's other work
  (polls, applying and packing messages, waves) :meth:`Emulator.round_cost`; the constants are a host
  calibration (:data:`MODEL_NS`, measured on the 2-core host of benchmarks/REPORT.md; the
  measured CPU ns per edge and vertex of each kernel are in the ranks' ``--json`` under
  ``compute_calibration``, to recalibrate).  Compute for which no edge count is passed
  (the BSP channel of programs with hooks) is charged its CPU time.  CPU time measures the
  host: with 4 ranks time-sliced on 2 cores a memory-bound sweep's CPU time varies
  +-10-20 % with what runs beside it, and ASAP, bound by its straggler's sweeps, carried
  that noise into its virtual time (benchmarks/REPORT.md, issue 15); the model removes it,
  at the price of being a model (cache effects, the partition's locality and the edge
  order are in the constants, not in the run).  CPU time, not wall
  time: with more ranks than cores, a sweep's wall time includes the time the OS gave
  to other ranks, and multiplying that made the emulated slowdown depend on how busily
  the *other* ranks wait (BSP's ranks spin in MPI waits: its emulated runs varied
  0.28-0.44 s on cnr-2000 with wall-time sleeps).
* *Seeded.*  All random draws come from ``numpy.random.default_rng((seed, rank))``, so a
  run repeats (up to the OS scheduler).
* *Clock* (``clock="virtual"``, :mod:`.vclock`).  The same formulas on a per-rank virtual
  clock ``vt`` instead of the host's: compute advances ``vt`` by its thread CPU time x the
  straggler factor (plus the pauses), with no sleeping; a stamped message leaves at ``vt``;
  a rank waiting for a message advances ``vt`` to its ``deliver_at``; a collective
  (:meth:`Emulator.collective`) costs the latest clock over the ranks plus
  ``ceil(log2 K) x latency + bytes / bandwidth``.  Real MPI carries the real messages;
  only time is virtual, so the host's scheduling does not enter the figures.

* *Host waits.*  On the host's clock the emulated waits (a held message of BSP's exchange,
  a collective's modelled cost, a straggler's extra) go through :meth:`Emulator.wait`:
  where every rank has a core of its own (:meth:`Emulator.hold_cores`) it spins, as a
  modelled rank busy-polls or computes, instead of sleeping -- a sleep gives the core away
  and ended 40-45 us late on this host, milliseconds when anything else was runnable
  (benchmarks/REPORT.md, nineteenth session); ranks that share cores sleep.  ASAP's idle
  rank still sleeps between its polls: spinning there slowed its peer's sweeps.

The real numbers are reported too: time spent holding messages (``emulated_delay_s``) and
sleeping as a straggler (``straggler_sleep_s``) are accounted separately from the real
compute and communication time.
"""
from __future__ import annotations

import heapq
import math
import sys
import time
import dataclasses
from dataclasses import dataclass, field

import numpy as np

#: BSP PageRank's message header: float64 slots before each peer's values in the pull
#: layout (:mod:`.pull`, :mod:`.bsp`; only the delivery time is read).  ASAP's header
#: (:data:`.exchange.HEADER`) has one more field since the twenty-third session (the
#: answer count of the sweep gate's answer rule); BSP's messages keep their size.
HEADER = 7

__all__ = ["Emulation", "Emulator", "parse_straggler", "parse_pauses", "HEADER", "CLOCKS",
           "COMPUTE", "KERNELS", "MODEL_NS", "LAYOUTS", "MODEL_LAYOUT_NS", "RS_NS"]

#: the clocks of the emulation: the host's (``wall``, the default) or per-rank virtual
CLOCKS = ("wall", "virtual")

#: how compute is charged: thread CPU time, or the modelled cost of the work done
COMPUTE = ("cpu", "model")

#: the sweep kernels the compute model charges: BSP's pull and ASAP's push sweeps, each on
#: the rows in their given order or (``_r``) relabelled by degree (the layouts of
#: :mod:`.pull` and :func:`.asap_delta.push_layout`, chosen by the relabelling policy: a
#: relabelled sweep costs less per edge, so one constant per kernel charged one layout
#: too little and the other too much -- measured, rmat:20 on 4 ranks: push 1.31-1.44 ns
#: per edge against the one constant's 1.8, pull 1.14-1.32 against 0.69)
KERNELS = ("pull", "push", "pull_r", "push_r")

#: the compute model's default constants (ns): per sweep kernel ``(per edge, per vertex)``;
#: an ASAP round's other work: per round, per message applied or sent, per byte of those
#: messages, per vertex of a pass over the rank's state; BSP's packing: per value gathered
#: into a message.  A host calibration
#: (benchmarks/fit_compute_model.py --graphs cnr-2000,rmat:20,rmat:20:4,web-NotreDame
#: --repeat 3: least squares over the ranks' measured CPU time, 4 ranks, both modes, on a
#: quiet host; the given-order kernels from cnr-2000, the relabelled ones from the other
#: three; benchmarks/REPORT.md, "compute model refitted per layout", eleventh session).
#: The rounds' and the packing's constants are the sixth session's fit (cnr-2000 and
#: rmat:18): that code did not change, and the new fit put 0 on a message (collinear with
#: the bytes), and ASAP ranks on small graphs then swept stale input more often
#: per round trip (rmat:8, 2 ranks, 1 ms: tol 1e-6 not reached in 1000 sweeps with it).
#: ``compute_calibration`` in ``--json`` has the data to redo it elsewhere.
#: ``coded``, ``bytecoded``: ``(encode, decode)`` ns per value of a coded (form 8 of
#: :mod:`.exchange`: per slot of at least one step) or byte-coded (form 9: per slot)
#: 16-bit message, the sender charged its encodes, the receiver its decodes: the coders'
#: whole CPU, measured around their calls in the ranks (``compute_calibration``'s
#: ``encode_bytecoded`` etc.; twenty-fifth session, after the encoder's rewrite, this
#: host): byte-coded, issue 14's four emulated cells on the model (rmat:20 and cnr-2000,
#: 4 ranks, 16 rank rows, least squares over messages and values: 5-6 us a call besides,
#: in ``message``) encode 3.34, decode 3.46 ns a value; coded, rmat:20 persistent with
#: ``ASAPGRAPH_ASAP_QUANT=q16c``, encode 7.25, decode 8.78.  Until then each was a guess at
#: the coding's extra over the plain 16-bit forms, one constant half charged at each end
#: (0.85 and 2.75 ns), which priced the byte-coded messages at about a quarter of what
#: the ranks spent on them (7.2-8.6 ns to encode, 3.1-3.8 to decode, before the rewrite).
#: The same session's refit of the rest on this host (``fit_compute_model.py --graphs
#: cnr-2000,rmat:20 --np 4 --repeat 2``, the coders' measured CPU taken out, the round fixed
#: at 10 us) gave message 95.6 us and byte 0.48 ns: on issue 14's rmat:20 cells that pair
#: prices the rounds as the kept one does (1.00x), on cnr-2000's 1.58x higher; kept, as
#: the small-graph tests' trajectories (the stall guard's) depend on it.
#: ``round``, ``message``, ``byte``, ``pass`` and ``post`` (BSP's exchange per message
#: posted, :meth:`Emulator.post`) are the twenty-eighth session's refit over 4, 16 and 64
#: ranks (``fit_compute_model.py --graphs rmat:20,cnr-2000 --np 4,16,64 --repeat 1
#: --relative --no-dynamic --args '--straggler 1:3 --rebalance start --bandwidth 125e6
#: --compute model'``: 168 rank rows, residual 9.8 %, post 17.4 %): the sixth session's
#: 10 us a round and 60 us a message priced the rounds at 1.24-1.90x their measured CPU
#: at 16 and 64 ranks (many small messages: 23-45 us a message measured) and 0.94x at 4
#: (fewer, costlier rounds: ~58 us each); the new constants put every graph and rank
#: count within 0.88-1.14x.  BSP's posting (~3-7 us a message measured) was free before.
#: The sweep, packing and layout constants are kept (the 64-rank runs on 2 cores time
#: the sweeps with 32 other ranks beside them: residuals 15-47 %).
#: ``push_r``'s per-vertex constant is the fit's 3.48 less :data:`RS_NS` (nineteenth
#: session): its Gauss-Seidel sweeps no longer write the snapshot array ``rs``; the sweeps
#: that still do pay it on top (:meth:`Emulator.after_compute`, ``snapshot``).
MODEL_NS = {"pull": (0.46, 3.8), "push": (0.56, 4.52), "pull_r": (0.83, 3.56),
            "push_r": (0.85, 3.48 - 0.26), "round": 58170.0, "message": 22760.0,
            "byte": 1.045, "pass": 0.0, "gather": 1.4, "coded": (7.25, 8.8),
            "bytecoded": (3.35, 3.45), "post": 2480.0}

#: ns per owned vertex of a ``jacobi_push`` sweep's snapshot array ``rs`` (written in the
#: snapshot pass, read in the push): what a Gauss-Seidel sweep of the uniform schedule no
#: longer does (benchmarks/REPORT.md, nineteenth session: an edge-free sweep of 95,512 owned
#: vertices and 210,282 slots, the straggler's state on issue 14's rmat:20 grid, best of
#: 3 x 150: 5.08 -> 4.82 ns per owned vertex; 514,180 and 228,485, 2 ranks' state: 4.69 ->
#: 4.09; the smaller saving taken).  ``push_r`` charges it only on the sweeps that write
#: ``rs`` (the warm start, ``ASAPGRAPH_ASAP_GS=0``, the priority schedule); ``push`` (the
#: given order, and the programs' sweeps) keeps the fit's constant, which includes it.
RS_NS = 0.26

#: the layouts a solve builds before its first sweep (:meth:`Emulator.layout`): BSP's pull
#: rows from the in-rows the loader shipped (``pull_in``, relabelled ``pull_in_r``) or
#: from the rank's out-rows (``pull``, ``pull_r``), ASAP's relabelled push rows
#: (``push_r``), and ASAP's count of the rank's edges into remote slots (``cut``, the
#: sweep gate's input, one scan of the rows' targets)
LAYOUTS = ("pull_in", "pull_in_r", "pull", "pull_r", "push_r", "cut")
#: the compute model's constants of a layout's build, ns ``(per edge, per vertex)`` of
#: the rank's rows: least squares over the builds' CPU time (benchmarks/fit_compute_model.py
#: --graphs cnr-2000,rmat:20,rmat:18,web-NotreDame,rmat:19:4 --np 2 --repeat 2, fourteenth
#: session; residuals 1.4-7.1 %).  The given-order builds (``pull_in``, ``pull``) come
#: from cnr-2000 alone, so their split between edges and vertices is loose (their sum
#: fits it); the relabelled ones from the other four graphs.  rmat:20 on 2 ranks: push_r
#: 35 ms a rank (measured 38-42 ms), pull_r 106 ms.  ``cut``: 0.18-0.34 ns per edge measured
#: (``count_nonzero(tgt >= nloc)`` over 8.3 M int32 targets, sixteenth session).
MODEL_LAYOUT_NS = {"pull_in": (2.9, 26.4), "pull_in_r": (2.12, 48.7), "pull": (3.83, 36.9),
                   "pull_r": (8.62, 64.8), "push_r": (2.15, 31.6), "cut": (0.25, 0.0)}


def now():
    return time.time()


_SLACK = []


def fine_timer_slack():
    """Let this thread's sleeps end when they are due: Linux extends each timed sleep by
    the thread's timer slack (50 us by default) to batch wake-ups, which lengthened every
    emulated delay, straggler sleep and idle wait of the host's clock (measured on the
    2-core host: ``time.sleep(0.0005)`` overshot by 74 us median, 21 us with a 1 ns slack;
    BSP sleeps twice a superstep, ASAP's idle loop sleeps 20-100 us at a time).  Sets the
    slack to 1 ns once (``prctl(PR_SET_TIMERSLACK)``); elsewhere nothing."""
    if _SLACK:
        return
    _SLACK.append(True)
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(29, 1, 0, 0, 0)  # PR_SET_TIMERSLACK
    except (OSError, AttributeError):  # no libc symbol: keep the default slack
        pass


def parse_straggler(text):
    """``"1:3,2:1.5"`` -> ``{1: 3.0, 2: 1.5}`` (rank:factor list).  ValueError for a bad
    part, a rank below 0, a factor that is not a finite number >= 1 (``inf`` made the
    rank's every sweep last forever: the run never ended; ``nan`` passed a ``< 1`` test) and
    a rank given twice (the second factor silently replaced the first)."""
    out = {}
    if not text:
        return out
    if isinstance(text, dict):
        return {int(k): float(v) for k, v in text.items()}
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        r, _, f = part.partition(":")
        try:
            rank, factor = int(r), (float(f) if f else 2.0)
        except ValueError:
            raise ValueError(f"bad straggler spec {part!r}: expected RANK:FACTOR") from None
        if rank < 0:
            raise ValueError(f"bad straggler spec {part!r}: RANK must be >= 0")
        if not 1.0 <= factor < math.inf:
            raise ValueError(f"straggler factor must be a finite number >= 1, got {f}")
        if rank in out:
            raise ValueError(f"rank {rank} is given twice in {text!r}")
        out[rank] = factor
    return out


def parse_pauses(text):
    """``"MIN:MAX:EVERY"`` -> ``(MIN, MAX, EVERY)`` seconds of transient stragglers
    (``0 <= MIN <= MAX``, ``EVERY > 0``, all finite); ValueError otherwise."""
    try:
        lo, hi, every = (float(x) for x in str(text).split(":"))
        ok = 0.0 <= lo <= hi < math.inf and 0.0 < every < math.inf
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"expected MIN:MAX:EVERY seconds with 0 <= MIN <= MAX and "
                         f"EVERY > 0, got {text!r}")
    return lo, hi, every


@dataclass
class Emulation:
    """Emulated network/straggler parameters (all zero: emulation off).

    Parameters
    ----------
    latency : float
        Seconds added to every message.
    bandwidth : float
        Bytes per second of every link (0: infinite).
    jitter : float
        Extra delay drawn uniformly from ``[0, jitter]`` seconds per message.
    straggler : dict
        ``{rank: factor}``: those ranks compute ``factor`` times slower.
    pause_prob, pause_seconds : float
        Random pauses: after each sweep, with probability ``pause_prob``, sleep
        ``pause_seconds``.
    pause_every, pause_max : float
        Transient stragglers (module docstring): pauses at exponential gaps of mean
        ``pause_every`` seconds, each ``U(pause_seconds, pause_max)`` long (``pause_max``
        0: ``pause_seconds``).
    compute : {"cpu", "model"}
        How compute is charged (module docstring).
    ns_per_edge, ns_per_vertex : dict
        The compute model's sweep constants (``{kernel: ns}`` for the kernels of
        :data:`KERNELS`; those not given take :data:`MODEL_NS`'s).
    ns_per_round, ns_per_message, ns_per_byte, ns_per_pass : float
        The compute model's ASAP round constants (:meth:`Emulator.round_cost`).
    ns_per_coded, ns_per_bytecoded : tuple
        ``(encode, decode)`` ns per value of the coded and byte-coded 16-bit messages
        (:meth:`Emulator.round_cost`).
    ns_per_gather : float
        BSP's packing, per value gathered into a message (:meth:`Emulator.pack`).
    ns_per_post : float
        BSP's exchange, per message posted (each ``Irecv`` and ``Isend`` with its stamp,
        :meth:`Emulator.post`); defaults of all nine from :data:`MODEL_NS`; ignored with
        ``compute="cpu"``.
    ns_per_layout : dict
        A layout's build (:meth:`Emulator.layout`): ``{layout: (ns per edge, ns per
        vertex)}`` for the layouts of :data:`LAYOUTS` (those not given take
        :data:`MODEL_LAYOUT_NS`'s).
    seed : int
    clock : {"wall", "virtual"}
        ``virtual``: per-rank virtual clocks (module docstring); needs ``latency > 0``
        (the lookahead of the conservative synchronisation, :mod:`.vclock`).
    """

    latency: float = 0.0
    bandwidth: float = 0.0
    jitter: float = 0.0
    straggler: dict = field(default_factory=dict)
    pause_prob: float = 0.0
    pause_seconds: float = 0.0
    seed: int = 0
    clock: str = "wall"
    pause_every: float = 0.0
    pause_max: float = 0.0
    compute: str = "cpu"
    ns_per_edge: dict = field(default_factory=dict)    # filled from MODEL_NS
    ns_per_vertex: dict = field(default_factory=dict)  # (__post_init__)
    ns_per_round: float = MODEL_NS["round"]
    ns_per_message: float = MODEL_NS["message"]
    ns_per_byte: float = MODEL_NS["byte"]
    ns_per_pass: float = MODEL_NS["pass"]
    ns_per_gather: float = MODEL_NS["gather"]
    ns_per_post: float = MODEL_NS["post"]
    ns_per_coded: tuple = MODEL_NS["coded"]
    ns_per_bytecoded: tuple = MODEL_NS["bytecoded"]
    ns_per_layout: dict = field(default_factory=dict)  # filled from MODEL_LAYOUT_NS

    def __post_init__(self):
        if self.clock not in CLOCKS:
            raise ValueError(f"clock must be one of {', '.join(CLOCKS)}, not {self.clock!r}")
        if self.compute not in COMPUTE:
            raise ValueError(f"compute must be one of {', '.join(COMPUTE)}, not "
                             f"{self.compute!r}")
        if self.pause_every < 0 or self.pause_seconds < 0 or self.pause_max < 0:
            raise ValueError("pause_every, pause_seconds and pause_max must be >= 0")
        if self.pause_max and self.pause_max < self.pause_seconds:
            raise ValueError(f"pause_max ({self.pause_max:g}) must be >= pause_seconds "
                             f"({self.pause_seconds:g})")
        for name in ("ns_per_edge", "ns_per_vertex"):
            d = {**{k: MODEL_NS[k][0 if name == "ns_per_edge" else 1]
                    for k in KERNELS}, **dict(getattr(self, name) or {})}
            if set(d) != set(KERNELS) or min(d.values()) < 0:
                raise ValueError(f"{name} must map {', '.join(KERNELS)} to ns >= 0, got {d}")
            setattr(self, name, {k: float(v) for k, v in d.items()})
        lay = {**MODEL_LAYOUT_NS, **dict(self.ns_per_layout or {})}
        if set(lay) != set(LAYOUTS) or not all(
                len(v) == 2 and min(v) >= 0 for v in lay.values()):
            raise ValueError(f"ns_per_layout must map {', '.join(LAYOUTS)} to two ns >= 0 "
                             f"(per edge, per vertex), got {lay}")
        self.ns_per_layout = {k: (float(v[0]), float(v[1])) for k, v in lay.items()}
        for name in ("ns_per_coded", "ns_per_bytecoded"):
            v = getattr(self, name)
            try:
                v = tuple(float(x) for x in v)
            except TypeError:
                v = ()
            if len(v) != 2 or min(v) < 0:
                raise ValueError(f"{name} must be two ns >= 0 (encode, decode), got "
                                 f"{getattr(self, name)!r}")
            setattr(self, name, v)
        if min(self.ns_per_message, self.ns_per_byte, self.ns_per_pass,
               self.ns_per_gather, self.ns_per_post) < 0 or not (
                self.ns_per_round > 0):
            # a round that costs no virtual time lets a rank run round after round at one
            # instant (measured: a fit with ns_per_round 0 hung the repeatability test)
            raise ValueError("the compute model needs ns_per_round > 0 and the other round "
                             "constants >= 0")
        if self.clock == "virtual" and not self.latency > 0:
            raise ValueError("clock 'virtual' needs latency > 0 (the lookahead of its "
                             "conservative synchronisation)")

    @property
    def active(self):
        return bool(self.latency > 0 or self.bandwidth > 0 or self.jitter > 0 or self.straggler
                    or self.pause_prob > 0 or self.pause_every > 0)

    @property
    def virtual(self):
        return self.clock == "virtual"

    @property
    def network(self):
        return bool(self.latency > 0 or self.bandwidth > 0 or self.jitter > 0)

    def as_dict(self):
        return {"latency": self.latency, "bandwidth": self.bandwidth, "jitter": self.jitter,
                "straggler": {str(k): v for k, v in self.straggler.items()},
                "pause_prob": self.pause_prob, "pause_seconds": self.pause_seconds,
                "pause_every": self.pause_every, "pause_max": self.pause_max,
                "seed": self.seed, "clock": self.clock, "compute": self.compute,
                **({"ns_per_edge": dict(self.ns_per_edge),
                    "ns_per_vertex": dict(self.ns_per_vertex),
                    "ns_per_round": self.ns_per_round, "ns_per_message": self.ns_per_message,
                    "ns_per_byte": self.ns_per_byte, "ns_per_pass": self.ns_per_pass,
                    "ns_per_gather": self.ns_per_gather, "ns_per_post": self.ns_per_post,
                    "ns_per_coded": list(self.ns_per_coded),
                    "ns_per_bytecoded": list(self.ns_per_bytecoded),
                    "ns_per_layout": {k: list(v) for k, v in self.ns_per_layout.items()}}
                   if self.compute == "model" else {})}

    @classmethod
    def from_any(cls, obj):
        if obj is None:
            return cls()
        if isinstance(obj, cls):
            return obj
        from collections.abc import Mapping

        if not isinstance(obj, Mapping):  # ("x": dict()'s "dictionary update sequence ...")
            raise ValueError(f"emulation must be an Emulation, a dict of its fields or None, "
                             f"got {obj!r}")
        d = dict(obj)
        unknown = sorted(set(d) - {f.name for f in dataclasses.fields(cls)})
        if unknown:  # (cls(**d)'s "unexpected keyword argument" names one, as a TypeError)
            raise ValueError(f"emulation: unknown field(s) {', '.join(map(repr, unknown))} "
                             f"(fields: {', '.join(f.name for f in dataclasses.fields(cls))})")
        if "straggler" in d:
            d["straggler"] = parse_straggler(d["straggler"])
        return cls(**d)


class Emulator:
    """Per-rank emulation state: link queues, delivery queue, straggler sleeps; with
    ``clock="virtual"`` the rank's virtual clock ``vt`` (seconds since :meth:`start`)."""

    def __init__(self, cfg, rank, K):
        self.cfg = Emulation.from_any(cfg)
        self.rank, self.K = rank, K
        self.virtual = self.cfg.virtual
        self.vt = 0.0
        self.compute_vs = 0.0  # virtual seconds charged for compute (virtual clock)
        self.last_cpu = 0.0  # CPU seconds of the last after_compute
        self.last_charged = 0.0  # seconds charged for it (CPU time or the compute model)
        self._rng = None  # made on first use: numpy.random costs a rank ~5 MB resident
        self.link_free = np.zeros(K)
        self.factor = float(self.cfg.straggler.get(rank, 1.0))
        self.queue = []  # heap of (deliver_at, seq, item)
        self._seq = 0
        self.delay_s = 0.0  # time messages were held beyond their real arrival
        self.sleep_s = 0.0
        self.model = self.cfg.compute == "model"
        self.next_pause = None  # transient stragglers: when the next pause falls due
        self.pauses, self.pause_s = 0, 0.0
        # per kernel: [calls, CPU seconds, edges, vertices] (the model's calibration data)
        self.calib = {}
        # host clock, ranks with cores of their own (:meth:`hold_cores`): the emulated
        # waits spin instead of sleeping (:meth:`wait`)
        self.spin = False
        if not self.virtual:
            fine_timer_slack()

    @property
    def rng(self):
        """This rank's generator (jitter, pauses), seeded by ``(seed, rank)``."""
        if self._rng is None:
            self._rng = np.random.default_rng([int(self.cfg.seed), int(self.rank), 0x5EED])
        return self._rng

    # ------------------------------------------------------------------ host waits
    def hold_cores(self, comm):
        """Host clock with emulation, every rank on a core of its own (collective; env
        ``ASAPGRAPH_SPIN_WAITS=0``: off): the emulated waits -- BSP's held messages, a
        collective's modelled cost, a straggler's extra -- keep the core (:meth:`wait`)
        instead of sleeping.  Returns whether they do.  (ASAP's idle rank still sleeps
        between polls: an idle rank spinning slowed its peer's sweeps on a quiet host.)

        Why: a rank that sleeps gives its core away, and where anything else is runnable
        (another session's niced job, the MPI launcher) it gets it back only when the
        scheduler preempts that -- up to a time slice (ms) later; even on an idle host a
        timed sleep ends ~20-70 us late.  A modelled cluster's rank keeps its core while
        it waits (MPI busy-polls; a straggler computes), so these delays were the host's,
        not the model's: the virtual clock has none (issue 15, K = 2 on 2 cores; measured
        in benchmarks/REPORT.md, nineteenth session).  Ranks that share cores keep
        sleeping: there a spinning rank would take the CPU its peers need."""
        import os

        from asapgraph.comm.mpi import oversubscribed

        on = (not self.virtual and self.cfg.active and comm.Get_size() > 1
              and os.environ.get("ASAPGRAPH_SPIN_WAITS", "1") != "0")
        self.spin = bool(on and not oversubscribed(comm)) if on else False
        return self.spin

    def wait(self, seconds):
        """Host clock: let ``seconds`` pass, spinning on the core (:meth:`hold_cores`) or
        sleeping."""
        if seconds <= 0.0:
            return
        if not self.spin:
            time.sleep(seconds)
            return
        clock = time.perf_counter
        end = clock() + seconds
        while clock() < end:
            pass

    # ------------------------------------------------------------------ clock
    def now(self):
        """This rank's time: the virtual clock, or the host's (``time.time``)."""
        return self.vt if self.virtual else now()

    def start(self):
        """Start of a run: the virtual clock (and the link queues) back to 0, the generator
        back to its seed (what ran before -- the speed probe of ``--rebalance start`` --
        does not shift the run's jitter and pauses); the first transient pause drawn."""
        self._rng = None
        self.vt = self.compute_vs = 0.0
        self.link_free[:] = 0.0
        self.next_pause = None
        if self.cfg.pause_every > 0:
            self.next_pause = self.now() + self.rng.exponential(self.cfg.pause_every)

    def round_cost(self, cpu_seconds, messages=0, vertices=0, nbytes=0, coded=(0, 0),
                   bcoded=(0, 0), rounds=1):
        """Virtual seconds of an ASAP round's work other than its sweep (unscaled): its
        CPU time, or under the compute model ``ns_per_round + ns_per_message x messages
        (data and ACKs, applied and sent) + ns_per_byte x nbytes (of the data messages
        applied and sent) + ns_per_pass x vertices`` plus the coders (``vertices``: the
        vertices of the full passes over the rank's state the round made: an exact
        recount of its residual, a passive rank's wave contribution; ``coded``: the values
        ``(sent, applied)`` of the coded 16-bit messages, charged ``ns_per_coded``
        ``(encode, decode)`` each; ``bcoded``, of the byte-coded ones, charged
        ``ns_per_bytecoded``).  The round's CPU time and work are recorded for
        :meth:`calibration` (kernel ``"round"``).  ``rounds=0``: a part of a round charged
        as it happens (:class:`.vclock.Charge`; the round's fixed cost is in another
        part)."""
        r = self.calib.setdefault("round", [0, 0.0, 0, 0, 0, 0, 0, 0, 0])
        r[0] += rounds
        r[1] += max(cpu_seconds, 0.0)
        r[2] += int(messages)
        r[3] += int(vertices)
        r[4] += int(nbytes)
        r[5] += int(coded[0])
        r[6] += int(coded[1])
        r[7] += int(bcoded[0])
        r[8] += int(bcoded[1])
        if not self.model:
            return max(cpu_seconds, 0.0)
        c = self.cfg
        (ce, cd), (be, bd) = c.ns_per_coded, c.ns_per_bytecoded
        return 1e-9 * (c.ns_per_round * rounds + c.ns_per_message * messages
                       + c.ns_per_byte * nbytes + c.ns_per_pass * vertices
                       + ce * coded[0] + cd * coded[1] + be * bcoded[0] + bd * bcoded[1])

    def coder(self, kind, cpu_seconds, values):
        """One message's coding, measured where it ran (ASAP's flush and delivery):
        ``kind`` is ``"encode_coded"``, ``"decode_coded"``, ``"encode_bytecoded"`` or
        ``"decode_bytecoded"``, ``values`` the values it charges (:func:`.exchange.
        coded_values`).  Not charged here (the round's CPU time, or its modelled cost,
        covers it); recorded for :meth:`calibration`, so a model fit can take the coders'
        own cost per value from the real messages (benchmarks/fit_compute_model.py)."""
        c = self.calib.setdefault(kind, [0, 0.0, 0, 0])
        c[0] += 1
        c[1] += max(cpu_seconds, 0.0)
        c[2] += int(values)

    def calibration(self):
        """Measured CPU time and work of each kernel's sweeps (per kernel: ``{"sweeps",
        "cpu_seconds", "edges", "vertices", "ns_per_edge"}``) and of the ASAP rounds' other
        work on the virtual clock (``"round"``: ``{"rounds", "cpu_seconds", "messages",
        "bytes", "vertices", "us_per_round"}``), the data a compute model is calibrated from
        (``benchmarks/fit_compute_model.py``)."""
        out = {}
        for k, (n, c, e, v, *b) in self.calib.items():
            if k == "round":
                out[k] = {"rounds": n, "cpu_seconds": c, "messages": e, "bytes": b[0],
                          "vertices": v, "coded_sent": b[1], "coded_applied": b[2],
                          "bytecoded_sent": b[3], "bytecoded_applied": b[4],
                          "us_per_round": c / n * 1e6 if n else None}
            elif k.startswith("layout_"):
                out[k] = {"builds": n, "cpu_seconds": c, "edges": e, "vertices": v,
                          "ns_per_edge": c / e * 1e9 if e else None}
            elif k == "setup":
                out[k] = {"solves": n, "cpu_seconds": c}
            elif k.startswith(("encode_", "decode_")):
                out[k] = {"messages": n, "cpu_seconds": c, "values": e,
                          "ns_per_value": c / e * 1e9 if e else None}
            elif k == "pack":
                out[k] = {"messages": n, "cpu_seconds": c, "values": e,
                          "ns_per_value": c / e * 1e9 if e else None}
            elif k == "post":
                out[k] = {"messages": n, "cpu_seconds": c,
                          "us_per_message": c / n * 1e6 if n else None}
            else:
                out[k] = {"sweeps": n, "cpu_seconds": c, "edges": e, "vertices": v,
                          "ns_per_edge": c / e * 1e9 if e else None}
        return out

    def pack(self, cpu_seconds, values):
        """BSP's packing of one message (``values`` gathered in ``cpu_seconds`` of CPU):
        charged like compute -- its CPU time, or ``ns_per_gather x values`` under the
        compute model, times the straggler factor (virtual clock: the clock advances
        before the message is stamped; host clock: a straggler sleeps the extra) --
        and recorded for :meth:`calibration` (kernel ``"pack"``)."""
        c = self.calib.setdefault("pack", [0, 0.0, 0, 0])
        c[0] += 1
        c[1] += cpu_seconds
        c[2] += int(values)
        s = 1e-9 * self.cfg.ns_per_gather * values if self.model else max(cpu_seconds, 0.0)
        self._spend_scaled(s)

    def post(self, cpu_seconds, messages):
        """BSP's exchange besides the packing: ``messages`` receives and sends posted
        (``Irecv``; the header, the stamp and the ``Isend``) in ``cpu_seconds`` of CPU,
        charged like compute -- its CPU time, or ``ns_per_post x messages`` under the
        compute model -- times the straggler factor, before the message's stamp, and
        recorded for :meth:`calibration` (``post``).  ASAP's rounds pay theirs
        (:meth:`round_cost`'s ``ns_per_message``); BSP's used to be free on either clock,
        which favoured BSP where messages are many and small (64 ranks: ~1 ms of Python
        a superstep, benchmarks/REPORT.md, twenty-seventh session)."""
        c = self.calib.setdefault("post", [0, 0.0, 0, 0])
        c[0] += int(messages)
        c[1] += max(cpu_seconds, 0.0)
        s = 1e-9 * self.cfg.ns_per_post * messages if self.model else max(cpu_seconds, 0.0)
        self._spend_scaled(s)

    def layout(self, cpu_seconds, edges, vertices, kind):
        """A layout's build before a solve's first sweep (``kind`` in :data:`LAYOUTS`;
        ``edges``, ``vertices``: the rank's rows): compute like a sweep -- its CPU time,
        or under the compute model ``ns_per_layout[kind]`` per edge and per vertex --
        times the straggler factor (virtual clock: the clock advances; host clock: a
        straggler sleeps the extra), recorded for :meth:`calibration` (``layout_KIND``).
        The host's clock always counted the build (it falls between the run's start and
        its first sweep); the virtual clock used to leave it out (issue 15: K = 2,
        rmat:20, ASAP's virtual time to L1 1e-6 was 0.75 of its wall time)."""
        c = self.calib.setdefault("layout_" + kind, [0, 0.0, 0, 0])
        c[0] += 1
        c[1] += max(cpu_seconds, 0.0)
        c[2] += int(edges)
        c[3] += int(vertices)
        if self.model:
            e, v = self.cfg.ns_per_layout[kind]
            s = 1e-9 * (e * edges + v * vertices)
        else:
            s = max(cpu_seconds, 0.0)
        self._spend_scaled(s)

    def setup(self, cpu_seconds):
        """A solve's setup before its first sweep other than its layouts, its sweeps and
        its collectives (ASAP: allocating and initialising the rank's state and message
        buffers; ``cpu_seconds`` of CPU): with ``compute="cpu"`` charged like compute --
        its CPU time times the straggler factor (virtual clock: the clock advances; host
        clock: a straggler waits the extra) -- and recorded for :meth:`calibration`
        (``setup``).  The host's clock always counted it (it falls between the run's
        start and its first sweep); the virtual clock left it out (issue 15: K = 2,
        cnr-2000, ASAP's first sweep started at 4.5 virtual ms against 8-10 ms on the
        host, the warm sweep being ~4.3 ms of it).  The compute model has no constant for
        it and charges nothing (its figures stay those of its calibration)."""
        if self.model:
            return
        c = self.calib.setdefault("setup", [0, 0.0, 0, 0])
        c[0] += 1
        c[1] += max(cpu_seconds, 0.0)
        self._spend_scaled(max(cpu_seconds, 0.0))

    def _spend_scaled(self, seconds):
        """:meth:`_spend` ``seconds`` of compute at this rank's straggler factor."""
        self._spend(seconds, (self.factor - 1.0) * seconds if self.factor > 1.0 else 0.0)

    def _spend(self, seconds, extra):
        """``seconds`` of compute and ``extra`` seconds of emulated slowness (straggler,
        pauses): the virtual clock advances by both; on the host's clock the rank sleeps
        the extra (the compute took its real time).  Returns ``extra``."""
        if self.virtual:
            self.advance(max(seconds, 0.0) + extra)
        elif extra > 0:
            self.wait(extra)
        self.sleep_s += extra
        return extra

    def advance(self, seconds):
        """Virtual clock: ``seconds`` of (already scaled) compute."""
        self.vt += seconds
        self.compute_vs += seconds

    def collective_cost(self, nbytes=8):
        """Modelled time of a collective over the ranks: ``ceil(log2 K) x latency +
        bytes / bandwidth``."""
        c = math.ceil(math.log2(self.K)) * self.cfg.latency if self.K > 1 else 0.0
        return c + (nbytes / self.cfg.bandwidth if self.cfg.bandwidth > 0 else 0.0)

    def collective(self, comm, nbytes=8):
        """After a blocking collective over ``comm`` (collective): on the virtual clock
        every clock becomes the latest one plus :meth:`collective_cost`; on the host's
        clock, with an emulated network, every rank sleeps that cost (the real collective
        left every rank at about the latest entry, the cost is what the emulated network
        adds to it, as it adds latency to every message: before, a BSP superstep's
        ``Allreduce`` took no emulated time on the host's clock and 1 ms per superstep on the
        virtual one, cnr-2000 2 ranks 1 ms: virtual / wall 1.31)."""
        if not self.virtual:
            if self.cfg.network:
                cost = self.collective_cost(nbytes)
                if cost > 0:
                    self.wait(cost)
                    self.delay_s += cost
            return
        from asapgraph.comm.mpi import mpi

        self.vt = comm.allreduce(self.vt, op=mpi().MAX) + self.collective_cost(nbytes)

    # ------------------------------------------------------------------ sender side
    def stamp(self, peer, nbytes):
        """Delivery time for a message of ``nbytes`` sent now to ``peer``."""
        t = self.now()
        if not self.cfg.network:
            return t
        start = max(t, self.link_free[peer])
        if self.cfg.bandwidth > 0:
            start += nbytes / self.cfg.bandwidth
        self.link_free[peer] = start
        j = self.rng.uniform(0.0, self.cfg.jitter) if self.cfg.jitter > 0 else 0.0
        return start + self.cfg.latency + j

    # ------------------------------------------------------------------ receiver side
    def hold(self, deliver_at, item):
        """Queue ``item`` until ``deliver_at``; returns True if it must wait."""
        t = now()
        if deliver_at <= t or not self.cfg.network:
            return False
        self._seq += 1
        heapq.heappush(self.queue, (deliver_at, self._seq, item))
        self.delay_s += deliver_at - t
        return True

    def due(self):
        """Items whose delivery time has come (in delivery-time order)."""
        out = []
        t = now()
        while self.queue and self.queue[0][0] <= t:
            out.append(heapq.heappop(self.queue)[2])
        return out

    def next_due(self):
        return self.queue[0][0] if self.queue else None

    def wait_until(self, t):
        """Sleep until absolute time ``t`` (BSP exchange); returns seconds slept (virtual
        clock: advance it to ``t``)."""
        if self.virtual:
            dt = max(0.0, t - self.vt)
            self.vt += dt
            self.delay_s += dt
            return dt
        dt = t - now()
        if dt > 0:
            self.wait(dt)
            self.delay_s += dt
            return dt
        return 0.0

    # ------------------------------------------------------------------ stragglers
    def _pause_due(self, t):
        """Transient stragglers: the pause due by time ``t`` (seconds, 0 if none); draws
        its length and the next one's start."""
        if self.next_pause is None:
            if self.cfg.pause_every <= 0:
                return 0.0
            self.next_pause = t + self.rng.exponential(self.cfg.pause_every)
        if t < self.next_pause:
            return 0.0
        lo, hi = self.cfg.pause_seconds, self.cfg.pause_max
        d = float(self.rng.uniform(lo, hi)) if hi > lo else lo
        self.next_pause = t + d + self.rng.exponential(self.cfg.pause_every)
        self.pauses += 1
        self.pause_s += d
        return d

    def after_compute(self, seconds, edges=None, vertices=0, kernel="push", snapshot=False):
        """Sleep as a straggler after ``seconds`` of real compute (CPU time); returns time
        slept.  Virtual clock: advance it by the scaled compute and the pause instead.

        ``edges``, ``vertices``: the work of the compute (a sweep of ``kernel``, one of
        :data:`KERNELS`): recorded for :meth:`calibration`; under the compute model the
        compute costs that work, not ``seconds``.  ``snapshot``: the sweep wrote the
        snapshot array of its ``vertices`` (``jacobi_push``'s ``rs``), charged
        :data:`RS_NS` each on top for ``push_r`` (whose constant leaves it out)."""
        self.last_cpu = seconds
        if edges is not None:
            c = self.calib.setdefault(kernel, [0, 0.0, 0, 0])
            c[0] += 1
            c[1] += seconds
            c[2] += int(edges)
            c[3] += int(vertices)
            if self.model:
                seconds = 1e-9 * (self.cfg.ns_per_edge[kernel] * edges
                                  + (self.cfg.ns_per_vertex[kernel]
                                     + (RS_NS if snapshot and kernel == "push_r" else 0.0))
                                  * vertices)
        self.last_charged = seconds  # the compute as charged (CPU time or the model's)
        s = 0.0
        if self.factor > 1.0 and seconds > 0:
            s += (self.factor - 1.0) * seconds
        if self.cfg.pause_prob > 0 and self.rng.random() < self.cfg.pause_prob:
            s += self.cfg.pause_seconds
        if self.cfg.pause_every > 0:
            s += self._pause_due((self.vt + max(seconds, 0.0) + s) if self.virtual else now())
        return self._spend(seconds, s)
