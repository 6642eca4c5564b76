"""Vertex partitioners: which rank owns each dense vertex id.

Rationale
---------
Both partitioners are described by O(K) numbers, so every rank can compute the owner
of any vertex without a table:

* ``range`` (Gemini-style chunking): rank ``r`` owns the contiguous dense-id range
  ``[bounds[r], bounds[r+1])``.  Bounds balance ``alpha * |V_r| + |E_r|`` where
  ``|E_r|`` counts out-edges (the edges a rank stores) and ``alpha = 8 (K - 1)``, as in
  Gemini (Zhu et al., OSDI 2016, section 4.1).  Contiguity keeps the locality of the
  input order (web graphs such as cnr-2000 have most edges near the diagonal), so few
  edges cross ranks.  The bounds are computed in parallel from degree counts held by
  the id-block owners (no rank needs an n-entry array).
* ``hash``: ``owner(v) = mix64(v) mod K`` with the splitmix64 finaliser; balanced in
  expectation, no locality (every rank talks to every other one): the adversarial case
  for the message layer.

Invariant: ``owner`` is a pure function of ``(kind, K, n, bounds)``; ``owned(r)`` is
sorted, and ``local_index`` maps an owned dense id to its position in ``owned(r)``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["Partition", "range_bounds", "range_partition", "range_partition_counts"]

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix64(v):
    z = np.asarray(v, dtype=np.int64).astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


class Partition:
    """Owner function of a K-way vertex partition of ``0..n-1``."""

    def __init__(self, kind, K, n, bounds=None):
        if kind not in ("range", "hash"):
            raise ValueError(f"unknown partitioner {kind!r} (use 'range' or 'hash')")
        self.kind = kind
        self.K = int(K)
        self.n = int(n)
        if kind == "range":
            if bounds is None:
                bounds = np.linspace(0, n, K + 1).round().astype(np.int64)
            self.bounds = np.asarray(bounds, dtype=np.int64)
            assert self.bounds.shape == (K + 1,) and self.bounds[0] == 0 and self.bounds[-1] == n
        else:
            self.bounds = None

    def owner(self, v):
        """Owner rank of each dense id in ``v`` (int64 array)."""
        v = np.asarray(v)
        odt = np.int32 if self.K < 2**31 - 1 else np.int64  # ranks: int32 (memory)
        if self.kind == "range":
            return (np.searchsorted(self.bounds, v, side="right") - 1).astype(odt)
        return (_mix64(v) % np.uint64(self.K)).astype(odt)

    def owned(self, r):
        """Sorted dense ids owned by rank ``r``."""
        if self.kind == "range":
            return np.arange(self.bounds[r], self.bounds[r + 1], dtype=np.int64)
        out = []
        step = 1 << 22
        for s in range(0, self.n, step):
            v = np.arange(s, min(self.n, s + step), dtype=np.int64)
            out.append(v[self.owner(v) == r])
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)

    def local_index(self, r, v, owned=None):
        """Position of owned dense ids ``v`` in ``owned(r)``."""
        v = np.asarray(v)
        if self.kind == "range":  # keeps int32 ids int32 (python-int scalar)
            return v - int(self.bounds[r])
        if owned is None:
            owned = self.owned(r)
        return np.searchsorted(owned, v).astype(np.int64)

    def describe(self):
        d = {"kind": self.kind, "ranks": self.K, "n": self.n}
        if self.bounds is not None:
            d["bounds"] = self.bounds.tolist()
        return d


def range_bounds(cost_block, block_base, n, K, comm, fractions=None):
    """Range-partition bounds from per-vertex costs held in blocks across ranks.

    Parameters
    ----------
    cost_block : float64 array
        Cost of the vertices ``block_base .. block_base + len - 1`` held by this rank.
    block_base : int
        First dense id of this rank's block (blocks are contiguous and ordered by rank).
    n, K : int
    comm : MPI communicator
    fractions : float64 array (K,), optional
        Share of the total cost each rank should get (summing to 1; default ``1/K``
        each): the speed-proportional split of :mod:`asapgraph.engine.rebalance`.

    Returns
    -------
    int64 array (K+1,)
        ``bounds[r]`` = number of vertices whose inclusive cumulative cost is at most
        ``r * total / K`` (monotone; ``bounds[0] = 0``, ``bounds[K] = n``); with
        ``fractions``, at most ``total * sum(fractions[:r])``, every rank keeping at least
        one vertex when ``n >= K``.
    """
    from asapgraph.comm.mpi import mpi

    MPI = mpi()
    local_tot = float(cost_block.sum())
    before = comm.exscan(local_tot, op=MPI.SUM)
    before = 0.0 if comm.Get_rank() == 0 or before is None else before
    total = comm.allreduce(local_tot, op=MPI.SUM)
    cum = np.cumsum(cost_block) + before
    if fractions is None:
        targets = total * np.arange(1, K, dtype=np.float64) / K
    else:
        targets = total * np.cumsum(np.asarray(fractions, dtype=np.float64))[:-1]
    cnt = np.searchsorted(cum, targets * (1 + 1e-12), side="right").astype(np.int64)
    tot_cnt = np.zeros_like(cnt)
    if K > 1:
        comm.Allreduce(cnt, tot_cnt, op=MPI.SUM)
    bounds = np.concatenate([[0], tot_cnt, [n]]).astype(np.int64)
    bounds = np.maximum.accumulate(np.minimum(bounds, n))
    if fractions is not None and n >= K:  # no empty rank: bounds[r] in [r, n - K + r]
        r = np.arange(K + 1, dtype=np.int64)
        bounds = np.clip(bounds, r, n - K + r)
        bounds = np.maximum.accumulate(bounds - r) + r
    return bounds


def range_partition(comm, src, n, shares=None):
    """Range partition balancing ``alpha |V_r| + |E_r|`` (``alpha = 8 (K - 1)``, Gemini).

    ``src``: this rank's share of the edge sources (dense ids, any rank may hold any
    edge).  Out-degrees are counted by id block (dense range ``[n r / K, n (r+1) / K)``
    on rank ``r``), so no rank holds an ``n``-entry array; collective.  ``shares``: each
    rank's share of the total weight (:func:`range_bounds`' ``fractions``; default even).
    """
    from asapgraph.comm.mpi import alltoallv

    K, me = comm.Get_size(), comm.Get_rank()
    blk = np.array([n * r // K for r in range(K + 1)], dtype=np.int64)
    if 0 < n <= 2 * len(src):  # a counter per vertex: at most 4 bytes per local edge
        from asapgraph.kernels import _graph

        c = np.zeros(n, dtype=np.int64)
        _graph.count_ids(np.ascontiguousarray(src), c)  # the sort of np.unique: 1.2 s on
        us = np.flatnonzero(c)                          # rmat:22's half on a rank
        uc = c[us]
        del c
    else:
        us, uc = np.unique(src, return_counts=True)
    cnt = np.bincount(np.searchsorted(blk, us, side="right") - 1, minlength=K)
    ids_r, _ = alltoallv(comm, us.astype(np.int64), cnt)
    cnt_r, _ = alltoallv(comm, uc.astype(np.int64), cnt)
    del us, uc
    lo, hi = blk[me], blk[me + 1]
    deg = np.bincount(ids_r - lo, weights=cnt_r, minlength=hi - lo)
    del ids_r, cnt_r
    alpha = 8.0 * (K - 1) if K > 1 else 1.0
    return Partition("range", K, n, range_bounds(alpha + deg, int(lo), n, K, comm, shares))


def range_partition_counts(comm, counts, n, shares=None):
    """:func:`range_partition` from per-id out-degree counts (collective).

    ``counts`` (int64, length ``n``): the out-degrees this rank's edges give every dense
    id.  One ``Reduce_scatter`` sums them into the same id blocks :func:`range_partition`
    uses, so the bounds are the same (integer degrees: the float costs are exact).
    """
    from asapgraph.comm.mpi import mpi

    MPI = mpi()
    K, me = comm.Get_size(), comm.Get_rank()
    blk = np.array([n * r // K for r in range(K + 1)], dtype=np.int64)
    deg = np.empty(int(blk[me + 1] - blk[me]), dtype=np.int64)
    comm.Reduce_scatter([np.ascontiguousarray(counts, dtype=np.int64), MPI.INT64_T],
                        [deg, MPI.INT64_T], recvcounts=np.diff(blk).tolist(), op=MPI.SUM)
    alpha = 8.0 * (K - 1) if K > 1 else 1.0
    return Partition("range", K, n, range_bounds(alpha + deg, int(blk[me]), n, K, comm,
                                                 shares))
