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

__all__ = ["IdMap", "BitIdMap", "SpecIds", "map_ids"]


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


def map_ids(comm, edges, max_id=None):
    """Dense ids (global sorted rank of the original id) for local edges; collective.

    ``edges`` is a list ``[src, dst]`` of original ids, emptied here (peak memory).
    ``max_id``: this rank's largest id when known with every id non-negative (the
    parser's), so no pass over the ids looks for it; None: found here.
    Returns ``(src_dense, dst_dense, n, idmap)``.
    """
    MPI = mpi()
    K = comm.Get_size()
    src, dst = edges
    edges.clear()
    dense = _map_ids_dense(comm, src, dst, max_id)
    if dense is not None:
        return dense
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


def _map_ids_dense(comm, src, dst, max_id=None):
    """:func:`map_ids` by a presence map when the largest id is small next to the edges.

    Every rank marks the ids it holds in a bit map of ``N = max id + 1`` bits, one
    ``Allreduce`` (bitwise or) makes it global, and each rank maps its ids in place to
    their rank among the set bits (a rank directory: one int32 count per 64-bit word,
    :func:`asapgraph.kernels._graph.map_rank`): the same dense ids as the sample sort
    (the rank of the original id among all ids present), in compiled passes instead of
    two sorts and a binary search per endpoint (rmat:22 text on 2 ranks: that path took
    76 of 87 s loading on a busy machine).  The map and its directory take ``3 N / 16``
    bytes and stay in L2, where the byte map and int32 lookup table used before took
    ``5 N`` (rmat:22: 21 MB per rank, two ranks sharing a 32 MB L3).  Used when ``5 N``
    bytes stay within 2.5 bytes per edge of the smallest rank; returns None otherwise
    (collective decision).
    """
    from asapgraph.kernels import _graph

    MPI = mpi()
    K, me = comm.Get_size(), comm.Get_rank()
    src, dst = np.ascontiguousarray(src), np.ascontiguousarray(dst)
    mloc = len(src)
    mx, lo = -1, 0
    if max_id is not None:  # the parser's largest id (its ids are never negative)
        mx = int(max_id)
    else:
        for a in (src, dst):
            if len(a) and a.dtype in (np.int32, np.int64):
                l_, h_ = _graph.minmax(a)
                mx, lo = max(mx, int(h_)), min(lo, int(l_))
    ok = int(src.dtype == dst.dtype and src.dtype in (np.int32, np.int64) and lo >= 0)
    mx, mmin, ok = comm.allreduce(mx, op=MPI.MAX), comm.allreduce(mloc, op=MPI.MIN), \
        comm.allreduce(ok, op=MPI.MIN)
    N = mx + 1
    if not ok or N <= 0 or N >= 2**31 - 1 or 2 * N > mmin:
        return None
    # a bit map with a rank directory (N / 8 + N / 16 bytes, in L2) rather than a byte
    # map and a 4 N-byte lookup table: the id map's random reads stay in cache
    bits = np.zeros((N + 63) // 64, dtype=np.uint64)
    if mloc:
        _graph.mark_bits(src, bits)
        _graph.mark_bits(dst, bits)
    comm.Allreduce(MPI.IN_PLACE, [bits, MPI.UINT64_T], op=MPI.BOR)
    rank, n = _graph.bit_rank(bits)
    out = []
    for a in (src, dst):
        o = a if (a.dtype == np.int32 and a.flags.writeable) else np.empty(len(a), np.int32)
        if len(a):
            _graph.map_rank(a, bits, rank, o)
        out.append(o)
    del src, dst
    base, stop = n * me // K, n * (me + 1) // K
    block = _graph.set_bits_slice(bits, rank, base, stop)
    mem_mark("mi:dense")
    return out[0], out[1], int(n), BitIdMap(comm, block, base, int(n), bits, rank)


class BitIdMap(IdMap):
    """:class:`IdMap` of the bit-map path (:func:`_map_ids_dense`): every rank keeps the
    global presence map and its rank directory (``N / 8 + N / 16`` bytes), so the original
    ids of a range of dense ids are the positions of those set bits
    (:func:`asapgraph.kernels._graph.set_bits_slice`), found without messages.  The
    loader asks for the ids of every rank's owned vertices, a range under a range
    partition: two ``Alltoallv`` and four arrays of ``nloc`` int64 per rank before
    (rmat:22 text on 2 ranks: 0.01-0.05 s per rank, mostly their pages)."""

    def __init__(self, comm, block, base, n, bits, rank):
        super().__init__(comm, block, base, n)
        self.bits, self.rank = bits, rank

    def original(self, dense):
        """Original ids of arbitrary dense ids (collective)."""
        from asapgraph.kernels import _graph

        dense = np.asarray(dense, dtype=np.int64)
        lo = int(dense[0]) if len(dense) else 0
        # strictly increasing and spanning len(dense) ids: a range (a 1-byte temporary)
        run = len(dense) < 2 or (int(dense[-1]) - lo + 1 == len(dense)
                                 and bool((dense[1:] > dense[:-1]).all()))
        if not self.comm.allreduce(int(not run), op=mpi().MAX):  # a range on every rank
            return _graph.set_bits_slice(self.bits, self.rank, lo, lo + len(dense))
        return super().original(dense)


class SpecIds:
    """Id map of inputs with dense ids ``0..n-1`` already: a generator spec (the dense ids
    are the original ones) or a binary graph (``ids``: its original ids, memory-mapped;
    None when they are the dense ones)."""

    def __init__(self, n, ids=None):
        self.n = n
        self.ids = ids

    def original(self, dense):
        dense = np.asarray(dense, dtype=np.int64)
        return dense if self.ids is None else np.asarray(self.ids[dense], dtype=np.int64)
