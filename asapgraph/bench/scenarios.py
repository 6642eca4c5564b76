"""Benchmark run specifications and the named scenarios shipped with asapgraph.

A :class:`RunSpec` is one distributed PageRank run (graph, ranks, mode, ASAP knobs,
emulated network and stragglers, tolerance, seed, repetition).  A scenario is a list of
them with a group label per run (``rq1`` .. ``rq5``); :func:`grid` builds the cartesian
product the ``--grid`` options describe.

The scenarios answer the questions of the ASAP paper for graphs:

* ``rq1`` -- does ASAP converge faster to the same accuracy?  rmat:20 and cnr-2000 on
  4 ranks, on the emulated cluster (1 ms latency, 1 Gbit/s links, rank 1 three times
  slower: :data:`CLUSTER`) and unemulated; BSP runs to ``tol=1e-9`` (its trace then
  covers every error level) and ASAP to ``1e-6``, both repeated; ASAP once more to
  ``1e-4`` and ``1e-8`` (points of the error-vs-bytes curve).
* ``rq2`` -- how much traffic and synchronisation does it save?  the bytes, messages and
  wait time of the rq1 runs, plus bytes vs fanout ``k`` and vs the approximation knob
  (cnr-2000, emulated cluster).
* ``rq3`` -- which topology property governs convergence?  ASAP rounds vs the spectral gap
  ``1 - sigma_2(P)`` of the stochastic-reduce graph, fanout 1..K-1 at K = 4 and 6.
* ``rq4`` -- does the stochastic reduce on a sparse expander keep the guarantee of the
  full reduce?  final L1 error vs the reference for every fanout (must be ``<= tol``).
* ``rq5`` -- what does NOTIFY-ACK gain over a barrier?  BSP vs ASAP as the straggler
  factor grows (1, 2, 3, 5) on cnr-2000 with 1 ms / 1 Gbit/s links, wait time per rank,
  and window 1 vs 4.

Issue 14 item 5 and issue 15 item 3 add:

* ``stragglers`` / ``stragglers-k8`` -- persistent (rank 1 3x), heterogeneous (speeds 1,
  1.5, 2, 3) and transient stragglers (every rank pauses 20-100 ms now and then), on 4 and
  8 ranks, each with BSP and ASAP under both schedules (the sweep-vs-priority ablation):
  :data:`STRAGGLER_SCENARIOS`, targets :data:`STRAGGLER_TARGETS`.
* ``scale`` -- 4, 16 and 64 ranks (meant for ``--clock virtual``).
* ``stragglers-scale`` -- the heterogeneous and transient stragglers on 4, 16 and 64 ranks
  (BSP and ASAP with the engine's default schedule; ``--clock virtual --compute model``).
  On K ranks rank r runs (1, 1.5, 2, 3)[r % 4] times slower (:func:`hetero_straggler`:
  the same mix of speeds at every K, a quarter of the ranks 3x); every rank pauses
  in ``transient`` at every K.  (``stragglers-k8`` keeps the 4-rank string, ranks 1-3
  slowed and ranks 4-7 at full speed, as its published figures were measured.)
"""
from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field

from asapgraph.options import SCHEDULES  # the ablation's ASAP variants (BSP: the baseline)

__all__ = ["RunSpec", "CLUSTER", "SCENARIOS", "scenario", "grid", "LEVELS",
           "STRAGGLER_SCENARIOS", "STRAGGLER_TARGETS", "SCHEDULES", "HETERO_SPEEDS",
           "hetero_straggler", "straggler_net"]

#: error levels (L1 vs the reference) at which time-to-error is recorded
LEVELS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)

#: the emulated cluster of the issue: 1 ms latency, 1 Gbit/s per link, rank 1 three times slower
CLUSTER = {"latency": 1e-3, "bandwidth": 125e6, "straggler": "1:3"}
#: the emulated cluster's links alone (latency, bandwidth), without its straggler
_LINKS = {k: CLUSTER[k] for k in ("latency", "bandwidth")}


@dataclass
class RunSpec:
    """One benchmark run (all fields JSON-serialisable)."""

    graph: str
    ranks: int = 4
    mode: str = "asap"
    partition: str = "range"
    fanout: int = 2
    window: int = 1
    approx: float = 0.0
    tol: float = 1e-6
    max_iter: int = 1000
    latency: float = 0.0
    bandwidth: float = 0.0
    jitter: float = 0.0
    straggler: str = ""
    seed: int = 0
    repeat: int = 0
    group: str = "grid"
    tags: dict = field(default_factory=dict)
    clock: str = "wall"  # "virtual": per-rank virtual clocks (asapgraph.engine.vclock)
    rebalance: str = "off"  # off | start | dynamic (asapgraph.engine.rebalance)
    schedule: str = ""  # ASAP's --schedule (sweep / priority; "": the engine's default)
    compute: str = "cpu"  # how compute is charged: "cpu" time or the "model" (emulation)
    # transient stragglers: every rank pauses U(pause_min, pause_max) s at exponential
    # gaps of mean pause_every s of its own clock (0: off; asapgraph.engine.emulation)
    pause_every: float = 0.0
    pause_min: float = 0.0
    pause_max: float = 0.0
    # ASAP: the fanout asked for (``--fanout``), as the engine's ``--json`` reports it
    # beside the one applied: :func:`grid` clamps ``fanout`` to K-1 (None: as ``fanout``;
    # BSP: None, it has no fanout)
    fanout_asked: int | None = None

    def __post_init__(self):
        if self.mode == "asap" and self.fanout_asked is None:
            self.fanout_asked = self.fanout
        elif self.mode != "asap":
            self.fanout_asked = None

    @property
    def emulated(self):
        return bool(self.latency or self.bandwidth or self.jitter or self.straggler
                    or self.pause_every)

    def emulation(self):
        """The ``emulation=`` argument of :func:`asapgraph.engine.api` (None: off)."""
        if not self.emulated:
            return None
        emu = {"latency": self.latency, "bandwidth": self.bandwidth, "jitter": self.jitter,
               "straggler": self.straggler, "seed": self.seed + 1000 * self.repeat,
               "clock": self.clock}
        if self.compute != "cpu":
            emu["compute"] = self.compute
        if self.pause_every:
            emu.update(pause_every=self.pause_every, pause_seconds=self.pause_min,
                       pause_max=self.pause_max)
        return emu

    def engine_kwargs(self):
        kw = {"mode": self.mode, "partition": self.partition, "tol": self.tol,
              "max_iter": self.max_iter, "seed": self.seed + 1000 * self.repeat,
              "emulation": self.emulation()}
        if self.mode == "asap":
            kw.update(fanout=self.fanout, window=self.window, approx=self.approx)
            if self.schedule:
                kw["schedule"] = self.schedule
        if self.rebalance != "off":
            kw["rebalance"] = self.rebalance
        return kw

    def net_label(self):
        if not self.emulated:
            return "none"
        parts = []
        if self.latency:
            parts.append(f"{self.latency * 1e3:g}ms")
        if self.bandwidth:
            parts.append(f"{self.bandwidth * 8 / 1e9:g}Gb/s")
        if self.jitter:
            parts.append(f"jitter {self.jitter * 1e3:g}ms")
        if self.straggler:
            parts.append(f"straggler {self.straggler}")
        if self.pause_every:
            parts.append(f"pauses {self.pause_min * 1e3:g}-{self.pause_max * 1e3:g}ms every "
                         f"~{self.pause_every * 1e3:g}ms")
        if self.clock != "wall":
            parts.append(f"{self.clock} clock")
        if self.compute != "cpu":
            parts.append(f"{self.compute} compute")
        return ", ".join(parts)

    def label(self):
        s = f"{self.graph} K={self.ranks} {self.mode}"
        if self.mode == "asap":
            s += f" k={self.fanout} W={self.window}" + (f" approx={self.approx:g}" if self.approx else "")
            s += f" {self.schedule}" if self.schedule else ""
        if self.rebalance != "off":
            s += f" rebalance={self.rebalance}"
        return s + f" tol={self.tol:g} net[{self.net_label()}] rep {self.repeat}"

    def as_dict(self):
        return asdict(self)


def _straggler_factor(spec):
    if not spec:
        return 1.0
    return max(float(p.split(":")[1]) for p in spec.split(",") if ":" in p)


def _rep(specs, repeat):
    """``repeat`` rounds of ``specs``, interleaved (BSP, ASAP, BSP, ASAP, ...): the host's
    speed drifts by tens of percent over minutes, and back-to-back repetitions of one
    mode then compared a fast phase with a slow one."""
    out = []
    for r in range(repeat):
        for s in specs:
            d = s.as_dict()
            d["repeat"] = r
            out.append(RunSpec(**d))
    return out


def _rq1(graphs, K, repeat, bsp_tol=1e-9, asap_tols=(1e-4, 1e-8), nets=None):
    """BSP to ``bsp_tol`` and ASAP to 1e-6, ``repeat`` times; ASAP to the other tols once."""
    nets = [CLUSTER, {}] if nets is None else nets
    out = []
    for g in graphs:
        for net in nets:
            main = [RunSpec(g, K, "bsp", tol=bsp_tol, group="rq1", **net),
                    RunSpec(g, K, "asap", fanout=2, tol=1e-6, group="rq1", **net)]
            out += _rep(main, repeat)
            out += [RunSpec(g, K, "asap", fanout=2, tol=t, group="rq1", **net) for t in asap_tols]
    return out


def _rq2(graph, K, repeat, fanouts=None, approxs=(0.0, 0.05, 0.2)):
    fanouts = range(1, K) if fanouts is None else fanouts
    out = [RunSpec(graph, K, "asap", fanout=k, tol=1e-6, group="rq2", **CLUSTER) for k in fanouts]
    out += [RunSpec(graph, K, "asap", fanout=2, approx=a, tol=1e-6, group="rq2", **CLUSTER)
            for a in approxs if a > 0]
    out.append(RunSpec(graph, K, "bsp", tol=1e-7, group="rq2", **CLUSTER))
    return _rep(out, repeat)


def _rq3(graph, Ks, repeat, tol=1e-6):
    out = []
    for K in Ks:
        for k in range(1, K):
            out.append(RunSpec(graph, K, "asap", fanout=k, tol=tol, group="rq3"))
    return _rep(out, repeat)


def _rq5(graph, K, repeat, factors=(1, 2, 3, 5), windows=(1, 4)):
    out = []
    for f in factors:
        strag = "" if f == 1 else f"1:{f:g}"
        net = {**_LINKS, "straggler": strag}
        out.append(RunSpec(graph, K, "bsp", tol=1.76e-7, group="rq5", tags={"factor": f}, **net))
        for w in windows:
            out.append(RunSpec(graph, K, "asap", fanout=2, window=w, tol=1e-6, group="rq5",
                               tags={"factor": f}, **net))
    return _rep(out, repeat)


#: issue 14 item 5, the emulated clusters of the straggler scenarios (1 ms, 1 Gbit/s):
#: ``persistent``: rank 1 3x slower; ``hetero``: rank speeds 1, 1.5, 2, 3 (rank r's factor);
#: ``transient``: every rank pauses 20-100 ms (uniform) at exponential gaps of mean 250 ms
#: of its own clock, as garbage collection or a noisy neighbour does (seeded)
STRAGGLER_SCENARIOS = {
    "persistent": {"straggler": "1:3"},
    "hetero": {"straggler": "1:1.5,2:2,3:3"},
    "transient": {"pause_every": 0.25, "pause_min": 0.02, "pause_max": 0.1},
}

#: the slowdown factors of the heterogeneous scenario: rank r runs HETERO_SPEEDS[r % 4]
#: times slower, on any rank count (on 4 ranks: STRAGGLER_SCENARIOS["hetero"])
HETERO_SPEEDS = (1.0, 1.5, 2.0, 3.0)


def hetero_straggler(K):
    """The ``--straggler`` string of the heterogeneous scenario on ``K`` ranks: rank r's
    factor is ``HETERO_SPEEDS[r % 4]`` (factor-1 ranks left out), e.g. K = 4:
    ``"1:1.5,2:2,3:3"``; K = 8: ``"1:1.5,2:2,3:3,5:1.5,6:2,7:3"``."""
    return ",".join(f"{r}:{HETERO_SPEEDS[r % len(HETERO_SPEEDS)]:g}" for r in range(int(K))
                    if HETERO_SPEEDS[r % len(HETERO_SPEEDS)] != 1.0)


def straggler_net(kind, K):
    """The emulated cluster of straggler scenario ``kind`` on ``K`` ranks (1 ms, 1 Gbit/s
    links plus :data:`STRAGGLER_SCENARIOS`; ``hetero`` scaled by :func:`hetero_straggler`)."""
    net = {**_LINKS, **STRAGGLER_SCENARIOS[kind]}
    if kind == "hetero":
        net["straggler"] = hetero_straggler(K)
    return net


#: the issue's targets: ASAP's speed-up over BSP (time to L1 1e-6) per scenario
STRAGGLER_TARGETS = {"persistent": 2.5, "hetero": 2.0, "transient": 1.5}

def _bsp_tol(tol):
    """BSP's certified tol whose trace reaches the true error ``tol`` (as in rq1/rq5):
    its bound is ``alpha / (1 - alpha)`` times the last change."""
    return tol * 0.15 / 0.85 * 0.999


def _stragglers(graphs, Ks=(4,), kinds=tuple(STRAGGLER_SCENARIOS), schedules=SCHEDULES,
                repeat=1, tol=1e-6):
    """Issue 14 item 5: per graph, rank count and straggler scenario, BSP and ASAP with
    each schedule (the ablation sweep vs priority), to L1 ``tol``; groups ``s-<kind>``
    (``s-persistent-k8`` etc. for ``K != 4``), tags ``scenario``.  BSP runs to ``tol x
    0.15 / 0.85`` so that its trace reaches the level (as in rq1/rq5)."""
    out = []
    for g in graphs:
        for K in Ks:
            for kind in kinds:
                net = {**_LINKS, **STRAGGLER_SCENARIOS[kind]}
                grp = f"s-{kind}" + ("" if K == 4 else f"-k{K}")
                tags = {"scenario": kind}
                out.append(RunSpec(g, K, "bsp", tol=_bsp_tol(tol), group=grp, tags=tags,
                                   **net))
                for sch in schedules:
                    out.append(RunSpec(g, K, "asap", fanout=2, tol=tol, group=grp, tags=tags,
                                       schedule=sch, **net))
    return _rep(out, repeat)


def _asap_work_cap(K):
    """ASAP's work limit (``max_iter``: sweeps of a rank's own edges) on K ranks: the
    default 1000 up to 8 ranks, 5000 beyond.  With 1/64 of cnr-2000 and a 3x straggler a
    fast rank sweeps stale input more than 1000 times before the slow rank's part
    converges (the run then stopped unconverged at L1 4.9e-4; with 5000 it converges)."""
    return 1000 if K <= 8 else 5000


def _scale(graphs, Ks=(4, 16, 64), repeat=1, tol=1e-6):
    """Issue 15 item 3: K = 4, 16, 64 ranks, rank 1 3x, 1 ms / 1 Gbit/s (meant for the
    virtual clock), BSP and ASAP; group ``scale``."""
    out = []
    for g in graphs:
        for K in Ks:
            out.append(RunSpec(g, K, "bsp", tol=_bsp_tol(tol), group="scale", **CLUSTER))
            out.append(RunSpec(g, K, "asap", fanout=2, tol=tol, group="scale",
                               max_iter=_asap_work_cap(K), **CLUSTER))
    return _rep(out, repeat)


def _stragglers_scale(graphs, Ks=(4, 16, 64), kinds=("hetero", "transient"), repeat=1,
                      tol=1e-6):
    """Issue 15 item 3 for the other straggler scenarios: per graph, scenario and K, BSP and
    ASAP (fanout 2, the engine's default schedule) on :func:`straggler_net`; group
    ``scale-<kind>`` (tables per scenario by :func:`asapgraph.bench.report_scenarios.scale_md`),
    tags ``scenario``."""
    out = []
    for g in graphs:
        for kind in kinds:
            for K in Ks:
                net = straggler_net(kind, K)
                grp, tags = f"scale-{kind}", {"scenario": kind}
                out.append(RunSpec(g, K, "bsp", tol=_bsp_tol(tol), group=grp, tags=tags, **net))
                out.append(RunSpec(g, K, "asap", fanout=2, tol=tol, group=grp, tags=tags,
                                   max_iter=_asap_work_cap(K), **net))
    return _rep(out, repeat)


def _rebalance(graphs, K, repeat):
    """Issue 14's ablation on the emulated cluster (rank 1 three times slower): static vs
    rebalanced (``start``, ``dynamic``) x sweep vs priority, BSP and ASAP, interleaved."""
    out = []
    for g in graphs:
        runs = []
        for rb in ("off", "start", "dynamic"):
            runs.append(RunSpec(g, K, "bsp", tol=1e-9, group="rebalance", rebalance=rb,
                                tags={"rebalance": rb}, **CLUSTER))
            for sch in SCHEDULES:
                runs.append(RunSpec(g, K, "asap", fanout=2, tol=1e-6, group="rebalance",
                                    rebalance=rb, schedule=sch,
                                    tags={"rebalance": rb, "schedule": sch}, **CLUSTER))
        out += _rep(runs, repeat)
    return out


def _quick():
    g = "rmat:13"
    out = []
    for net in (CLUSTER, {}):
        out.append(RunSpec(g, 2, "bsp", tol=1e-8, group="rq1", **net))
        out.append(RunSpec(g, 2, "asap", fanout=1, tol=1e-6, group="rq1", **net))
    out.append(RunSpec(g, 2, "asap", fanout=1, tol=1e-8, group="rq1", **CLUSTER))
    out.append(RunSpec(g, 3, "asap", fanout=1, tol=1e-6, group="rq3"))
    out.append(RunSpec(g, 3, "asap", fanout=2, tol=1e-6, group="rq3"))
    out.append(RunSpec(g, 3, "asap", fanout=1, tol=1e-6, group="rq2", **CLUSTER))
    out.append(RunSpec(g, 3, "asap", fanout=2, tol=1e-6, group="rq2", **CLUSTER))
    out.append(RunSpec(g, 3, "bsp", tol=1e-7, group="rq2", **CLUSTER))
    out.append(RunSpec(g, 2, "bsp", tol=1.76e-7, group="rq5", tags={"factor": 3},
                       latency=1e-3, bandwidth=125e6, straggler="1:3"))
    out.append(RunSpec(g, 2, "asap", fanout=1, tol=1e-6, group="rq5", tags={"factor": 3},
                       latency=1e-3, bandwidth=125e6, straggler="1:3"))
    return out


def _report(repeat):
    """The full report (< 20 minutes on 2 cores; 2-3 minutes here)."""
    return (_rq1(["cnr-2000", "rmat:20"], 4, repeat)
            + _rq2("cnr-2000", 4, 1)
            + _rq3("rmat:16", (4, 6), 1)
            + _rq5("cnr-2000", 4, 1))


#: name -> (description, builder(repeat) -> list[RunSpec])
SCENARIOS = {
    "quick": ("CI smoke test: rmat:13 on 2-3 ranks, every plot, about 30 s", lambda r: _quick()),
    "headline": ("rmat:20 and cnr-2000, 4 ranks, emulated cluster and unemulated",
                 lambda r: _rq1(["rmat:20", "cnr-2000"], 4, r)),
    "rq1": ("ASAP vs BSP time to each error level (rmat:20, cnr-2000, 4 ranks)",
            lambda r: _rq1(["rmat:20", "cnr-2000"], 4, r)),
    "rq2": ("bytes vs fanout and approximation (cnr-2000, 4 ranks, emulated cluster)",
            lambda r: _rq2("cnr-2000", 4, r)),
    "rq3": ("rounds vs spectral gap (rmat:16, K=4 and 6, fanout 1..K-1)",
            lambda r: _rq3("rmat:16", (4, 6), r)),
    "rq4": ("stochastic vs full reduce: final error for every fanout (rmat:16, K=4 and 6)",
            lambda r: _rq3("rmat:16", (4, 6), r)),
    "rq5": ("NOTIFY-ACK vs barrier: speedup vs straggler factor (cnr-2000, 4 ranks)",
            lambda r: _rq5("cnr-2000", 4, r)),
    "report": ("everything in benchmarks/REPORT.md (RQ1-RQ5, < 20 minutes)", _report),
    # issue 14 item 5 / issue 15 item 3 (run them with --clock virtual on a shared host)
    "stragglers": ("persistent (1:3), heterogeneous (1, 1.5, 2, 3) and transient (20-100 ms "
                   "pauses) stragglers, BSP vs ASAP sweep vs priority (cnr-2000, rmat:20, 4 "
                   "ranks)", lambda r: _stragglers(["cnr-2000", "rmat:20"], (4,), repeat=r)),
    "stragglers-k8": ("the straggler scenarios on K = 8 ranks (cnr-2000, rmat:20)",
                      lambda r: _stragglers(["cnr-2000", "rmat:20"], (8,), repeat=r)),
    "factors": ("RQ5 with straggler factors 1, 2, 3, 5, 8, window 1 (cnr-2000, rmat:20, 4 "
                "ranks; --clock virtual)",
                lambda r: _rq5("cnr-2000", 4, r, (1, 2, 3, 5, 8), (1,))
                + _rq5("rmat:20", 4, r, (1, 2, 3, 5, 8), (1,))),
    "scale": ("K = 4, 16, 64 ranks, rank 1 3x (cnr-2000, rmat:20; --clock virtual)",
              lambda r: _scale(["cnr-2000", "rmat:20"], repeat=r)),
    "stragglers-scale": ("heterogeneous (rank r: (1, 1.5, 2, 3)[r % 4]) and transient "
                         "stragglers on K = 4, 16, 64 ranks, BSP vs ASAP (cnr-2000, rmat:20; "
                         "--clock virtual --compute model)",
                         lambda r: _stragglers_scale(["cnr-2000", "rmat:20"], repeat=r)),
    "rebalance": ("static vs rebalanced x sweep vs priority, BSP and ASAP (cnr-2000, rmat:20, "
                  "4 ranks, emulated cluster)",
                  lambda r: _rebalance(["cnr-2000", "rmat:20"], 4, r)),
}


def scenario(name, repeat=None):
    """The runs of a named scenario (``repeat`` None: its default)."""
    if name not in SCENARIOS:
        raise KeyError(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}")
    default = 5 if name in ("report", "rq1", "headline") else 3 if name == "rebalance" else 1
    return SCENARIOS[name][1](default if repeat is None else int(repeat))


def grid(graphs, ranks=(4,), modes=("bsp", "asap"), fanout=(2,), window=(1,), approx=(0.0,),
         latency=(0.0,), bandwidth=(0.0,), straggler=("",), tol=(1e-6,), repeat=1,
         partition=("range",), seed=0, schedule=("",), pauses=None, rebalance=("off",)):
    """Cartesian product of the options; BSP runs ignore (and do not multiply) ASAP knobs.
    ``pauses``: ``(min, max, every)`` seconds of transient stragglers (None: off);
    ``rebalance``: modes of :mod:`asapgraph.engine.rebalance` (tag ``rebalance``)."""
    out, seen = [], set()
    pz = {} if not pauses else dict(zip(("pause_min", "pause_max", "pause_every"),
                                        map(float, pauses)))
    for g, K, m, k, w, a, lat, bw, sg, t, part, sch, rb in itertools.product(
            graphs, ranks, modes, fanout, window, approx, latency, bandwidth, straggler, tol,
            partition, schedule, rebalance):
        asked = int(k)
        if m == "bsp":
            k, w, a, sch = 2, 1, 0.0, ""
        else:
            k = min(int(k), max(1, int(K) - 1))  # the engine clamps the fanout to K-1
        spec = RunSpec(g, int(K), m, part, int(k), int(w), float(a), float(t), latency=float(lat),
                       bandwidth=float(bw), straggler=sg, seed=seed, group="grid",
                       schedule=sch, rebalance=rb, tags={"rebalance": rb},
                       fanout_asked=asked if m == "asap" else None, **pz)
        # (the same run once: an ask clamped to another ask's fanout is that run, which
        # records the first ask)
        key = tuple(sorted((kk, str(v)) for kk, v in spec.as_dict().items()
                           if kk != "fanout_asked"))
        if key in seen:
            continue
        seen.add(key)
        out.append(spec)
    return _rep(out, repeat)


def straggler_factor(spec):
    """Largest straggler factor of a spec string (1.0 when none)."""
    return _straggler_factor(spec)
