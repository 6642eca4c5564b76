"""Generator specs loaded in place: every rank builds its rows from its own slice.

Rationale
---------
A generator spec (``rmat:S``, ``er:N:M``) needs no file and no id mapping: its edges are
a pure function of ``(seed, edge number)`` (:mod:`asapgraph.graph.generators`) and its
ids are already dense.  The general loader (:mod:`asapgraph.partition.loader`) still
sends every ``(src, dst)`` pair to the owner of its source in rounds and counting-sorts
them there; for a spec that shuffle and its per-round sorts cost more CPU than the
generation itself (rmat:22 on 2 ranks: 3.3 of 6.9 s per rank).  Here instead:

1. rank ``r`` generates the edges ``[r m / K, (r+1) m / K)`` (one thread: the ranks
   share the cores) and counts its sources per dense id;
2. the owner function is agreed: a range partition from the summed counts
   (:func:`asapgraph.partition.partitioners.range_partition_counts`, one
   ``Reduce_scatter``: the same bounds as the general loader's), or the hash partition;
3. the rank counting-sorts its slice by source in owner-major order, keeping only the
   targets (:func:`asapgraph.kernels._rankbuild.place_by_key`), so each owner's rows are
   one block;
4. one ``Alltoallv`` sends each owner its block of targets (4 bytes per edge instead of
   8) and one more the row lengths of that block (4 bytes per vertex);
5. the owner concatenates the K rows of each vertex in rank order
   (:func:`asapgraph.kernels._rankbuild.merge_rows`) and maps targets to local vertices
   and slots in place (:func:`asapgraph.partition.local_graph.local_from_rows`).

Measured alternative (rmat:22, 2 ranks, one thread each, CPU seconds per rank on a shared
machine): every rank generating the whole stream and keeping the edges it owns (no
exchange at all) took 3.0 s for the generation and the filter alone, before any sorting,
against 2.6 s for this whole load (the general loader: 6.9 s); its cost does not shrink
with more ranks.  So each slice is generated once and exchanged compactly (see
benchmarks/REPORT.md, "Issue 13, loading").

Result: the same vertices, partition, slots and per-peer maps as the general loader for
the same spec (tests compare the two and the single process's graph), and every row lists
its out-edges in global edge order, for any K.  Memory per rank at the peak: the slice
(8 bytes per edge, int32 ids) plus its sorted targets (4 bytes per edge) plus
``8 n`` bytes of row offsets (``n <= 2`` edges per rank, else the general loader runs).
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph.comm.mpi import alltoallv, mpi
from asapgraph.partition.idmap import SpecIds
from asapgraph.partition.local_graph import local_from_rows
from asapgraph.partition.memory import mem_mark, phase, trim_malloc
from asapgraph.partition.partitioners import Partition, range_partition_counts

__all__ = ["load_spec"]


def _owner_major(part, n):
    """Key of every dense id in owner-major order (None for a range partition, whose id
    order already is) and the owners' key ranges ``kb`` (``K + 1``)."""
    K = part.K
    if part.kind == "range":
        return None, part.bounds.astype(np.int64)
    own = part.owner(np.arange(n, dtype=np.int64))
    own = own.astype(np.int16 if K < 2**15 else np.int32)  # int16: numpy's radix sort
    order = np.argsort(own, kind="stable")
    kb = np.zeros(K + 1, dtype=np.int64)
    np.cumsum(np.bincount(own, minlength=K), out=kb[1:])
    del own
    key = np.empty(n, dtype=np.int32)
    key[order] = np.arange(n, dtype=np.int32)
    return key, kb


def load_spec(source, comm, partition="range", weighted=False, undirected=False, seed=None,
              progress=None):
    """:func:`asapgraph.partition.loader.load_partitioned` for a generator spec; collective.

    Returns ``(lg, part, idmap)``, or None (on every rank) when the graph has more than
    twice as many vertices as the smallest rank has edges (``er:N:M`` with a large N):
    the ``n``-entry arrays would outweigh the edges, and the general loader runs instead.
    """
    from asapgraph.graph import generators as gen
    from asapgraph.kernels import _rankbuild as rb

    MPI = mpi()
    K, me = comm.Get_size(), comm.Get_rank()
    t0 = time.perf_counter()
    _, p = gen.parse_spec(source)  # the caller agreed that the spec parses
    n, m = int(p["n"]), int(p["m"])
    lo, hi = m * me // K, m * (me + 1) // K
    mine = 2 * (hi - lo) if undirected else hi - lo  # an upper bound, before the loops
    if n >= 2**31 - 1 or comm.allreduce(int(n > 2 * mine), op=MPI.MAX):
        return None
    src, dst, _ = gen.spec_slice(source, lo, hi, seed, threads=1)
    if undirected:  # as the general loader: the slice, then its reversed non-loops
        nl = src != dst
        src, dst = np.concatenate([src, dst[nl]]), np.concatenate([dst, src[nl]])
        del nl
    mem_mark("gen:slice")
    phase(progress, f"generated {len(src):,} edges on rank 0", t0)
    empty = np.zeros(0, dtype=np.int32)
    pos = np.zeros(n + 1, dtype=np.int64)
    rb.count_keys(src, empty, pos)  # pos[1 + v]: out-degree of v in this slice
    if partition == "range":
        part = range_partition_counts(comm, pos[1:], n)
    else:
        part = Partition(partition, K, n)
    key, kb = _owner_major(part, n)
    if key is not None:  # counts by key instead of by id
        cnt_v = pos[1:].copy()
        pos[1:][key] = cnt_v
        del cnt_v
    rowlen = pos[1:].astype(np.int32 if len(src) < 2**31 - 1 else np.int64)
    np.cumsum(pos, out=pos)  # pos[k]: start of row k
    phase(progress, f"partitioned ({part.kind}) over {K} ranks", t0)
    # each owner's row lengths (its key range) and targets (its block of rows)
    nloc_q = np.diff(kb)
    rcnt, _ = alltoallv(comm, rowlen, nloc_q)
    del rowlen
    send = pos[kb[1:]] - pos[kb[:-1]]
    out = np.empty(len(src), dtype=dst.dtype)
    rb.place_by_key(src, dst, key if key is not None else empty, pos, out)
    del src, dst, pos, key
    trim_malloc()
    mem_mark("gen:sorted")
    recv, rc = alltoallv(comm, out, send)
    del out
    trim_malloc()
    mem_mark("gen:exchanged")
    phase(progress, "sent each owner its rows", t0)
    nloc = int(nloc_q[me])
    rcnt = rcnt.reshape(K, nloc)
    start = np.zeros(K, dtype=np.int64)
    np.cumsum(rc[:-1], out=start[1:])
    tgt = np.empty(len(recv), dtype=recv.dtype)
    indptr = np.empty(nloc + 1, dtype=np.int64)
    rb.merge_rows(recv, rcnt, start, tgt, indptr)
    del recv, rcnt
    mem_mark("gen:merged")
    lg = local_from_rows(comm, part, n, indptr, tgt, weighted, progress, t0)
    trim_malloc()
    mem_mark("build_local")
    phase(progress, f"built the local graphs: rank 0 holds {lg.nloc:,} vertices, "
                     f"{lg.mloc:,} edges", t0)
    lg.orig = lg.owned.astype(np.int64, copy=False)
    return lg, part, SpecIds(n)
