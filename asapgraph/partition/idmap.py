"""Dense vertex ids across ranks: the distributed sample sort of original ids.

Rationale
---------
Step 2 of the partitioned loader (:mod:`asapgraph.partition.loader`).  Original int64
ids are mapped to dense ids equal to their rank in the global sorted order (the same
numbering as :meth:`asapgraph.graph.Graph.from_original_ids`): ranks sample their
distinct ids, splitters are agreed with one allgather, ids go to the splitter owner
(Alltoallv), owners sort-unique them, an exclusive scan gives each block's base, and
answers go back (Alltoallv).  The owners keep their sorted block, so :class:`IdMap` can
answer the original id of any dense id later (collectively, for the output).  Generator
specs already have dense ids ``0..n-1`` (isolated vertices included): :class:`SpecIds`.
"""
from __future__ import annotations

import numpy as np

from asapgraph.comm.mpi import allgatherv, alltoallv, mpi
from asapgraph.partition.memory import BLOCK, mem_mark

__all__ = ["IdMap", "SpecIds", "map_ids"]


class IdMap:
    """Distributed dense <-> original id map (sample-sorted blocks, one per rank)."""

    def __init__(self, comm, block, base, n):
        self.comm = comm
        self.block = block  # sorted original ids of dense ids base..base+len-1
        self.base = base
        self.n = n
        self.bases, _ = allgatherv(comm, np.array([base], dtype=np.int64))

    def original(self, dense):
        """Original ids of arbitrary dense ids (collective)."""
        dense = np.asarray(dense, dtype=np.int64)
        order = None  # owned ids come sorted: no permutation (peak memory)
        if len(dense) > 1 and not bool((dense[1:] >= dense[:-1]).all()):
            order = np.argsort(dense, kind="stable")
        ds = dense if order is None else dense[order]
        # rank r answers for [bases[r], bases[r+1]) (an empty block shares the next base)
        cuts = np.searchsorted(ds, self.bases, side="left")
        counts = np.diff(np.append(cuts, len(ds)))
        q, qc = alltoallv(self.comm, ds, counts)
        del ds
        q -= self.base
        ans = self.block[q].astype(np.int64, copy=False)
        del q
        back, _ = alltoallv(self.comm, ans, qc)
        del ans
        if order is None:
            return back
        out = np.empty_like(dense)
        out[order] = back
        return out


def map_ids(comm, edges):
    """Dense ids (global sorted rank of the original id) for local edges; collective.

    ``edges`` is a list ``[src, dst]`` of original ids, emptied here (peak memory).
    Returns ``(src_dense, dst_dense, n, idmap)``.
    """
    MPI = mpi()
    K = comm.Get_size()
    src, dst = edges
    edges.clear()
    uniq = np.union1d(np.unique(src), np.unique(dst))
    # original ids travel as int32 unless some rank holds one that needs int64
    wide = comm.allreduce(int(uniq.dtype == np.int64 and len(uniq) > 0), op=MPI.MAX)
    uniq = uniq.astype(np.int64 if wide else np.int32, copy=False)
    mem_mark("mi:uniq")
    ns = min(len(uniq), 64 * K)
    samp = uniq[np.linspace(0, len(uniq) - 1, ns).astype(np.int64)] if ns else uniq[:0]
    allsamp, _ = allgatherv(comm, samp)
    allsamp.sort()
    if len(allsamp):
        splitters = allsamp[(np.arange(1, K) * len(allsamp)) // K]
    else:
        splitters = np.zeros(K - 1, dtype=np.int64)
    dest = np.searchsorted(splitters, uniq, side="right")
    counts = np.bincount(dest, minlength=K)
    recv, rcounts = alltoallv(comm, uniq, counts)
    block = np.unique(recv)
    base = comm.exscan(len(block), op=MPI.SUM)
    base = 0 if comm.Get_rank() == 0 or base is None else int(base)
    n = int(comm.allreduce(len(block), op=MPI.SUM))
    ans = base + np.searchsorted(block, recv)
    vdt = np.int32 if n < 2**31 - 1 else np.int64
    dense_u, _ = alltoallv(comm, ans.astype(vdt), rcounts)
    del ans, recv
    mem_mark("mi:dense_u")

    def lookup(a):  # in place when the dtype allows; blocks bound the int64 temporaries
        out = a if a.dtype == vdt and a.flags.owndata and a.flags.writeable else \
            np.empty(len(a), dtype=vdt)
        for i in range(0, len(a), BLOCK):
            out[i:i + BLOCK] = dense_u[np.searchsorted(uniq, a[i:i + BLOCK])]
        return out

    s = lookup(src)
    del src
    d = lookup(dst)
    del dst
    return s, d, n, IdMap(comm, block, base, n)


class SpecIds:
    """Identity id map of a generator spec (ids are already 0..n-1)."""

    def __init__(self, n):
        self.n = n

    def original(self, dense):
        return np.asarray(dense, dtype=np.int64)

