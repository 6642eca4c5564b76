"""What work stealing could save in issue 14's transient-straggler cell: an upper bound.

Usage::

    python benchmarks/transient_ceiling.py [--scale 20] [--ranks 4] [--levels 1e-4,1e-6]
        [--decade-seconds 0.0187]

While a rank is paused nobody advances the residual it holds.  Without stealing, the mass
its peers push into its vertices waits for it too (in their buffers or its queue); with
ideal stealing (every peer holds the paused rank's out-edges and pushes that mass on, at
no cost), only the residual the rank held when the pause began waits.  This runs the
delta (residual-push) PageRank of ``rmat:S`` in Jacobi rounds on K equal vertex ranges (the
generator permutes ids) until the true L1 error (sum of residual / (1 - alpha)) reaches
each level, then freezes each rank in turn and pushes everything else to a fixed point.
It prints, as fractions of the residual at the pause: the paused rank's share (the floor
with ideal stealing) and the floor without stealing; their ratio in decades is the most
a pause long enough to reach the floors can be shortened, converted to seconds at
``--decade-seconds`` (default: the pause-free ASAP run's pace on rmat:20, 4 ranks, model
clock: 0.1123 s for six decades).  Numpy/scipy only; ~1 min a level at scale 20.
"""
from __future__ import annotations

import argparse

import numpy as np
import scipy.sparse as sp

from asapgraph.graph import generators as gen


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--levels", default="1e-4,1e-6")
    ap.add_argument("--alpha", type=float, default=0.85)
    ap.add_argument("--rounds", type=int, default=120, help="frozen rounds to the floor")
    ap.add_argument("--decade-seconds", type=float, default=0.1123 / 6)
    a = ap.parse_args(argv)
    K, alpha = a.ranks, a.alpha
    src, dst = gen.rmat(a.scale, 16, seed=0)[:2]
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
    print(f"rmat:{a.scale}, {K} ranks, alpha {alpha}: floors as fractions of the residual "
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


if __name__ == "__main__":
    main()
