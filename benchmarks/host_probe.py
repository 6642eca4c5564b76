"""How fast is this host right now?  Four short probes, each timed on the wall clock and as
this process's CPU time, with the run-queue wait (``/proc/self/schedstat``) beside them.

Usage::

    flock /tmp/wallclock.lock python benchmarks/host_probe.py [ROUNDS] [--both]

``l1``      an L1-resident numpy add (8 KB arrays): the core's speed (frequency, steal);
``gather``  a random gather ``x[idx]`` over an 8 MB float64 array allocated at start
            (a sweep's access pattern): memory latency and TLB;
``stream``  a sum over 256 MB allocated at start: memory bandwidth;
``touch``   first touch of a fresh 64 MB ``np.empty`` (what a run's setup pays per page;
            the VM's balloon reports free 2 MB blocks to the hypervisor, whose next
            touch faults on the host).

``--both`` runs a second copy pinned to the other CPU at the same time (the two ranks of a
K = 2 run share L3 and memory).  Prints one line per round: ns per element (wall) and
the run-queue wait in ms.

``--touch-gaps 0,3,10``: instead, for each gap, allocate and touch 1 GB, free it, wait the
gap (seconds), allocate and touch 1 GB again; prints us per 4 KB page (wall and CPU) of
both touches.  On this VM (virtio balloon with free page reporting) memory freed more than
~2 s before costs 5-12 us a page to touch again, memory freed just before 0.6 us
(benchmarks/REPORT.md, twenty-first session).
"""
import os
import subprocess
import sys
import time

import numpy as np


def sched():
    with open("/proc/self/schedstat") as f:
        c, d, _ = f.read().split()
    return int(c), int(d)


def probe(rounds):
    rng = np.random.default_rng(1)
    x = rng.random(1 << 20)
    idx = rng.integers(0, 1 << 20, 1 << 22).astype(np.int32)
    big = np.ones(1 << 25)
    a, b, c = np.ones(1024), np.ones(1024), np.empty(1024)
    out = np.ones(1 << 22)  # touched: the gather's own cost only
    res = []
    for _ in range(rounds):
        row = {}
        for name, fn, n in (
                ("l1", lambda: [np.add(a, b, out=c) for _ in range(20000)], 20000 * 1024),
                ("gather", lambda: np.take(x, idx, out=out), 1 << 22),
                ("stream", lambda: big.sum(), 1 << 25),
                ("touch", lambda: np.empty(1 << 23).fill(1.0), (1 << 23) // 512)):
            c0, d0 = sched()
            t = time.perf_counter()
            fn()
            w = time.perf_counter() - t
            c1, d1 = sched()
            # touch: us per 4 KB page; the others ns per element
            row[name] = (w / n * (1e6 if name == "touch" else 1e9), (d1 - d0) * 1e-6)
        res.append(row)
    return res


def touch_gaps(gaps):
    def touch():
        t, c = time.perf_counter(), time.thread_time()
        a = np.empty(1 << 27)  # 1 GB
        a.fill(1.0)
        return a, (time.perf_counter() - t) / (1 << 18) * 1e6, \
            (time.thread_time() - c) / (1 << 18) * 1e6
    for gap in gaps:
        a, w, c = touch()
        del a
        time.sleep(gap)
        a, w2, c2 = touch()
        del a
        print(f"gap {gap:g} s: first touch {w:.2f} us a page (CPU {c:.2f}), "
              f"again {w2:.2f} (CPU {c2:.2f})", flush=True)


def main():
    if "--touch-gaps" in sys.argv:
        touch_gaps([float(x) for x in sys.argv[sys.argv.index("--touch-gaps") + 1].split(",")])
        return
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rounds = int(args[0]) if args else 5
    other = None
    if "--both" in sys.argv:
        other = subprocess.Popen(["taskset", "-c", "1", sys.executable, __file__, str(rounds)],
                                 stdout=subprocess.DEVNULL)
        os.sched_setaffinity(0, {0})
    la = os.getloadavg()[0]
    rows = probe(rounds)
    if other is not None:
        other.wait()
    print(f"{time.strftime('%H:%M:%S')} load {la:.2f}: " + "  ".join(
        f"{k} {min(r[k][0] for r in rows):.3g}-{max(r[k][0] for r in rows):.3g}"
        f" (rq {sum(r[k][1] for r in rows):.1f} ms)" for k in rows[0]))


if __name__ == "__main__":
    main()
