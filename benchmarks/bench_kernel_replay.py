"""Replayed costs of the ASAP kernels a rank runs every round: the message coders
(``exchange.encode`` / ``exchange.decode``, ns a slot value, per payload mode) and the fixed
cost of a ``jacobi_push`` sweep (its passes over the owned vertices, with almost nothing
to push).  Thread CPU time, medians; no MPI.

Usage::

    python benchmarks/bench_kernel_replay.py [--slots 60000] [--vertices 85000] [--reps 60]

Segments: ``--slots`` values; ``residual``: log-normal magnitudes of random sign, ~10 % below
one step and ~10 % beyond +-127 steps (~1.2 bytes a value byte-coded, like the segments
dumped from a real rmat:20 run: 1.16-1.27); else 70 % nonzero, magnitudes ``u^6``
(``skewed``: ~1.8 bytes, ~40 % escapes) or uniform (form 4).  A decoder tuned on
``skewed`` alone lost on real segments (twenty-fifth session).  The sweep: ``--vertices``
owned vertices with 0-16 out-edges each, 2,000 remote slots, one block holding all the
residual (the uniform pool share added to every vertex).
``REPLAY_PERM=1``: the decoder's slot map a random permutation (else in order).
Used for the twenty-fourth session's rows in benchmarks/REPORT.md (run it on two trees with
``PYTHONPATH=TREE`` to compare).
"""
import argparse
import time

import os

import numpy as np

from asapgraph.engine import exchange as ex
from asapgraph.kernels import _local

PERM = os.environ.get("REPLAY_PERM") == "1"


def _median_ns(f, reps, per):
    ts = []
    for _ in range(reps):
        t0 = time.thread_time()
        f()
        ts.append(time.thread_time() - t0)
    return float(np.median(ts)) / per * 1e9


def coders(m, reps):
    rng = np.random.default_rng(0)
    h = 8 * ex.HEADER
    for dist in ("residual", "skewed", "uniform"):
        for qn in ("off", "q16b", "q16c"):
            acc = np.zeros(m)
            buf = np.zeros(h + 16 * m + 64, np.uint8)
            mp = (rng.permutation(m) if PERM else np.arange(m)).astype(np.int64)
            dst = np.zeros(m)
            te, td = [], []
            form = nb = 0
            for _ in range(reps):
                if dist == "residual":  # log-normal: ~10 % below a step, ~10 % escapes
                    acc[:] = np.exp(-rng.normal(8.0, 1.9, m)) * 1e-7 * np.where(
                        rng.random(m) < 0.5, 1.0, -1.0)
                else:
                    mag = rng.random(m) ** 6 if dist == "skewed" else rng.random(m)
                    acc[:] = mag * 1e-7 * (rng.random(m) < 0.7)
                t0 = time.thread_time()
                nb, form, _, _ = ex.encode(acc, 0, m, buf, ex.QUANT[qn])
                t1 = time.thread_time()
                ex.header(buf)[ex.FORM] = form
                ex.decode(dst, mp, buf, nb)
                t2 = time.thread_time()
                te.append(t1 - t0)
                td.append(t2 - t1)
            print(f"{dist:8s} {qn:5s} form {form}: {(nb - h) / m:.2f} B a value, encode "
                  f"{np.median(te) / m * 1e9:.2f} ns, decode {np.median(td) / m * 1e9:.2f} ns "
                  f"a value")


def sweep_fixed(n, reps):
    rng = np.random.default_rng(0)
    ns = 2000
    deg = rng.integers(0, 17, n)
    indptr = np.zeros(n + 1, np.int64)
    indptr[1:] = np.cumsum(deg)
    tgt = rng.integers(0, n + ns, int(indptr[-1]) + 64).astype(np.int32)
    vcoef = 1.0 / np.maximum(deg, 1)
    dang = (deg == 0).astype(np.uint8)
    x = np.zeros(n)
    base = rng.random(n) * 1e-12
    acc = np.zeros(n + ns)
    rs = np.zeros(n)
    nb = -(-n // 16)
    act, bsum = np.zeros(nb, np.int32), np.zeros(nb)
    bq, mass = np.array([1.0 / n]), np.zeros(4)
    for gs in (False, True):
        ts = []
        for _ in range(reps):
            acc[:n] = base
            acc[n:] = 0.0
            acc[:16] = 1.0
            t0 = time.thread_time()
            _local.jacobi_push(indptr, tgt, None, vcoef, x, acc, rs, act, bsum, dang, 0.85,
                               1e-9, bq, 0.0, bq, 1e-3, 16, 0.0, 0, mass, 1e-3, True, gs, 1.0)
            ts.append(time.thread_time() - t0)
        print(f"jacobi_push, {n} vertices, pools and mass sums, gauss_seidel={gs}: "
              f"{np.median(ts) * 1e6:.0f} us a sweep")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--slots", type=int, default=60000)
    ap.add_argument("--vertices", type=int, default=85000)
    ap.add_argument("--reps", type=int, default=60)
    a = ap.parse_args()
    coders(a.slots, a.reps)
    sweep_fixed(a.vertices, 5 * a.reps)


if __name__ == "__main__":
    main()
