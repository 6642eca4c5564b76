"""What the host took from a benchmark rank during a run (Linux ``/proc``; zeros elsewhere).

A wall-clock run's time is the rank's CPU time, plus the time it was *runnable but not
running* (``run_delay``: other processes, or its peer, held the core), plus the time it
slept or blocked by itself.  The virtual clock charging CPU time sees only the first, so a
wall run whose ranks waited on the run queue measured the host's load, not the model's
subject.  :func:`snapshot` reads the counters of this process (all its threads) and the
machine's; :func:`delta` turns two snapshots into the per-rank record ``host``:

``run_delay_s``
    seconds this rank's threads were runnable and waiting for a CPU
    (``/proc/self/task/*/schedstat``, second field);
``cpu_s``
    their CPU seconds (first field);
``minflt`` / ``majflt``
    page faults (``/proc/self/stat``);
``nivcsw``
    involuntary context switches (preempted; ``/proc/self/status``);
``steal_s``
    the machine's steal time over the run, all CPUs (``/proc/stat``: the hypervisor ran
    something else on our vCPUs);
``psi_cpu_some_s``
    the machine's CPU pressure over the run (``/proc/pressure/cpu``, ``some total``:
    wall seconds in which at least one task waited for a CPU).
"""
from __future__ import annotations

import os

__all__ = ["snapshot", "delta"]

_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def snapshot():
    """Counters now, as a dict of numbers (missing ones left out)."""
    s = {}
    cpu = delay = 0
    ok = False
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        tids = []
    for t in tids:
        txt = _read(f"/proc/self/task/{t}/schedstat")
        if txt:
            f = txt.split()
            cpu += int(f[0])
            delay += int(f[1])
            ok = True
    if ok:
        s["cpu_ns"], s["run_delay_ns"] = cpu, delay
    txt = _read("/proc/self/stat")
    if txt:
        f = txt[txt.rindex(")") + 2:].split()  # fields from the 3rd (state)
        s["minflt"], s["majflt"] = int(f[7]), int(f[9])
    txt = _read("/proc/self/status")
    if txt:
        for line in txt.splitlines():
            if line.startswith("nonvoluntary_ctxt_switches:"):
                s["nivcsw"] = int(line.split()[1])
    txt = _read("/proc/stat")
    if txt and txt.startswith("cpu "):
        f = txt.split("\n", 1)[0].split()
        if len(f) > 8:
            s["steal_ticks"] = int(f[8])
    txt = _read("/proc/pressure/cpu")
    if txt:
        for line in txt.splitlines():
            if line.startswith("some"):
                s["psi_some_us"] = int(line.rsplit("total=", 1)[1])
    return s


def delta(a, b):
    """The record of what happened between snapshots ``a`` and ``b``."""
    d = {}
    if "cpu_ns" in a and "cpu_ns" in b:
        d["cpu_s"] = (b["cpu_ns"] - a["cpu_ns"]) * 1e-9
        d["run_delay_s"] = (b["run_delay_ns"] - a["run_delay_ns"]) * 1e-9
    for k in ("minflt", "majflt", "nivcsw"):
        if k in a and k in b:
            d[k] = b[k] - a[k]
    if "steal_ticks" in a and "steal_ticks" in b:
        d["steal_s"] = (b["steal_ticks"] - a["steal_ticks"]) / _HZ
    if "psi_some_us" in a and "psi_some_us" in b:
        d["psi_cpu_some_s"] = (b["psi_some_us"] - a["psi_some_us"]) * 1e-6
    return d
