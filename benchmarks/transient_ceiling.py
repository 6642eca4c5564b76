"""What work stealing could save in issue 14's transient-straggler cell: an upper bound.

Usage::

    python benchmarks/transient_ceiling.py [--scale 20] [--seed 1] [--ranks 4]
        [--levels 1e-4,1e-6] [--decade-seconds 0.0187]

While a rank is paused nobody advances the residual it holds.  Without stealing, the mass
its peers push into its vertices waits for it too (in their buffers or its queue); with
ideal stealing (every peer holds the paused rank's out-edges and pushes that mass on, at
no cost), only the residual the rank held when the pause began waits.  This runs the
delta (residual-push) PageRank of ``rmat:S:16:SEED`` (default seed 1: the graph that
``asapgraph bench`` and bench_issue14.py run for ``rmat:S``) in Jacobi rounds on K equal vertex ranges (the
generator permutes ids) until the true L1 error (sum of residual / (1 - alpha)) reaches
each level, then freezes each rank in turn and pushes everything else to a fixed point.
It prints, as fractions of the residual at the pause: the paused rank's share (the floor
with ideal stealing) and the floor without stealing; their ratio in decades is the most
a pause long enough to reach the floors can be shortened, converted to seconds at
``--decade-seconds`` (default: the pause-free ASAP run's pace on rmat:20, 4 ranks, model
clock: 0.1123 s for six decades).  Numpy/scipy only; ~1 min a level at scale 20.

``--runs ASAP.json BSP.json`` (two ``asapgraph bench --json-out`` files of one transient
cell and seed, e.g. from ``bench_issue14.py --cells transient --out DIR``) applies the
ceiling to that seed instead: every stall of the ASAP run's error trace (a gap of more
than 15 ms between its points: a rank paused) is shortened by the saving above, and a
stall that began within 1/share of 1e-6 ends the run within the decades left.  It
prints the BSP / ASAP ratio as run and the most ideal stealing could make of it.
"""
from __future__ import annotations

import argparse

import numpy as np
import scipy.sparse as sp

from asapgraph.graph import generators as gen


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1, help="the generator's seed (bench's: 1)")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--levels", default="1e-4,1e-6")
    ap.add_argument("--alpha", type=float, default=0.85)
    ap.add_argument("--rounds", type=int, default=120, help="frozen rounds to the floor")
    ap.add_argument("--decade-seconds", type=float, default=0.1123 / 6)
    ap.add_argument("--runs", nargs=2, metavar=("ASAP_JSON", "BSP_JSON"))
    ap.add_argument("--saving", type=float, default=0.0084, help="--runs: seconds a stall")
    ap.add_argument("--share", type=float, default=0.26, help="--runs: the paused share")
    a = ap.parse_args(argv)
    if a.runs:
        return seed_ceiling(a)
    K, alpha = a.ranks, a.alpha
    src, dst = gen.rmat(a.scale, 16, seed=a.seed)[:2]
    n = 1 << a.scale
    A = sp.csr_matrix((np.ones(len(src)), (src.astype(np.int64), dst.astype(np.int64))),
                      shape=(n, n))
    A.sum_duplicates()
    A.data[:] = 1.0  # duplicates count once, as the engine reads them
    deg = np.diff(A.indptr).astype(np.float64)
    dang = deg == 0
    inv = np.where(dang, 0.0, 1.0 / np.maximum(deg, 1.0))
    AT = A.T.tocsr()
    owner = np.minimum(np.arange(n) * K // n, K - 1)

    def push(r):  # what one round of pushing residual r sends (dangling: uniform)
        return alpha * (AT @ (r * inv)) + alpha * float(r[dang].sum()) / n

    levels = sorted((float(x) for x in a.levels.split(",")), reverse=True)
    r = np.full(n, (1.0 - alpha) / n)
    print(f"rmat:{a.scale}:16:{a.seed}, {K} ranks, alpha {alpha}: floors as fractions of the residual "
          f"at the pause; saving at {a.decade_seconds * 1e3:.1f} ms a decade")
    for level in levels:
        while r.sum() / (1.0 - alpha) > level:
            r = push(r)
        tot = float(r.sum())
        with_steal, without = [], []
        for q in range(K):
            mine = owner == q
            rq = np.where(mine, r, 0.0)
            ra = r - rq
            for _ in range(a.rounds):  # q frozen: what reaches its vertices stays
                out = push(ra)
                rq += np.where(mine, out, 0.0)
                ra = np.where(mine, 0.0, out)
            with_steal.append(float(r[mine].sum()) / tot)
            without.append((float(rq.sum()) + float(ra.sum())) / tot)
        ws, wo = np.array(with_steal), np.array(without)
        dec = np.log10(wo / ws)
        print(f"L1 {tot / (1 - alpha):.2e}: paused share (floor, ideal stealing) "
              f"{ws.min():.3f}-{ws.max():.3f}; floor without stealing {wo.min():.3f}-"
              f"{wo.max():.3f}; at most {dec.min():.2f}-{dec.max():.2f} decades = "
              f"{dec.min() * a.decade_seconds * 1e3:.1f}-"
              f"{dec.max() * a.decade_seconds * 1e3:.1f} ms a pause")


def seed_ceiling(a, level=1e-6):
    """``--runs``: the ceiling of ideal stealing on one seed's transient runs."""
    import json
    import math

    def rec(path):
        return json.load(open(path))["records"][0]

    ra, rb = rec(a.runs[0]), rec(a.runs[1])
    key = next(k for k in ra["time_to_error"] if abs(float(k) - level) < 1e-12)
    ta, tb = ra["time_to_error"][key], rb["time_to_error"][key]
    saved, end = 0.0, None
    tr = ra["error_trace"]
    for (t0, e0, _), (t1, _, _) in zip(tr, tr[1:]):
        if t0 >= ta:
            break
        if t1 - t0 > 0.015:  # a stall: a rank paused
            if e0 * a.share <= level:  # the others alone would have finished it
                end = t0 + a.decade_seconds * math.log10(e0 / level)
                break
            saved += min(t1 - t0, a.saving)
    best = (ta if end is None else end) - saved
    print(f"BSP {tb:.4f} s, ASAP {ta:.4f} s: {tb / ta:.3f}x; with ideal stealing ASAP >= "
          f"{best:.4f} s: at most {tb / best:.3f}x ({saved * 1e3:.0f} ms of stalls saved"
          f"{', the last pause overtaken' if end is not None else ''})")


if __name__ == "__main__":
    main()
