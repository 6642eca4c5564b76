"""Rows sent to their owners: a rank's slice of dense-id edges becomes the local graphs.

Rationale
---------
The general loader (:func:`asapgraph.partition.local_graph.build_local`) sends every
``(src, dst)`` pair to the owner of its source in rounds, each round sorted by owner with
a stable argsort, then counting-sorts the received edges by local source: three passes
that move 8 bytes per edge and one comparison sort.  On rmat:22 text with 2 ranks that
was 8.3 s of a 12.4 s load, against 4.6 s for the whole single-process ``load_graph``.
When the ids are dense and every edge weighs 1 (generator specs, and unweighted text or
binary inputs once their ids are mapped), a rank's slice is turned into rows instead:

1. the rank counts its sources per dense id;
2. the owner function is agreed: a range partition from the summed counts
   (:func:`asapgraph.partition.partitioners.range_partition_counts`, one
   ``Reduce_scatter``: the same bounds as :func:`~.partitioners.range_partition`), or the
   hash partition;
3. the rank counting-sorts its slice by source in owner-major order, keeping only the
   targets (:func:`asapgraph.kernels._rankbuild.place_by_key`), so each owner's rows are
   one block;
4. one ``Alltoallv`` sends each owner its block of targets (4 bytes per edge instead of
   8) and one more the row lengths of that block (4 bytes per vertex);
5. the owner concatenates the K rows of each vertex in rank order
   (:func:`asapgraph.kernels._rankbuild.merge_rows`) and maps targets to local vertices
   and slots in place (:func:`asapgraph.partition.local_graph.local_from_rows`).

Slices are in input order and rank r holds the r-th one, so every row lists its
out-edges in input order, for any K.  Memory per rank at the peak: the slice (8 bytes per
edge, int32 ids) plus its sorted targets (4 bytes per edge) plus ``8 n`` bytes of row
offsets; hence the condition ``n <= 2 x`` the smallest rank's edges (else the caller uses
the general loader).
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph.comm.mpi import alltoallv, mpi
from asapgraph.partition.local_graph import local_from_rows
from asapgraph.partition.memory import mem_mark, phase, trim_malloc
from asapgraph.partition.partitioners import Partition, range_partition_counts

__all__ = ["fits", "local_from_slice"]


def fits(comm, n, mine):
    """Whether every rank can hold ``8 n`` bytes of row offsets next to its ``mine`` edges
    (``n <= 2 mine`` on every rank) and ids fit int32; collective (the same answer on
    every rank)."""
    return n < 2**31 - 1 and not comm.allreduce(int(n > 2 * mine), op=mpi().MAX)


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


def local_from_slice(comm, edges, n, partition, weighted, progress=None, t0=None):
    """The :class:`~asapgraph.partition.local_graph.LocalGraph` and :class:`Partition` of
    this rank's slice ``edges = [src, dst]`` (dense ids below ``n``, one id dtype, unit
    weights; the caller checked :func:`fits`); collective.  ``edges`` is emptied here, so
    the slice is freed as soon as it is sorted."""
    from asapgraph.kernels import _rankbuild as rb

    src, dst = edges
    edges.clear()
    K, me = comm.Get_size(), comm.Get_rank()
    t0 = time.perf_counter() if t0 is None else t0
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
    mem_mark("rows:sorted")
    recv, rc = alltoallv(comm, out, send)
    del out
    trim_malloc()
    mem_mark("rows:exchanged")
    phase(progress, "sent each owner its rows", t0)
    nloc = int(nloc_q[me])
    rcnt = rcnt.reshape(K, nloc)
    start = np.zeros(K, dtype=np.int64)
    np.cumsum(rc[:-1], out=start[1:])
    tgt = np.empty(len(recv), dtype=recv.dtype)
    indptr = np.empty(nloc + 1, dtype=np.int64)
    rb.merge_rows(recv, rcnt, start, tgt, indptr)
    del recv, rcnt
    mem_mark("rows:merged")
    lg = local_from_rows(comm, part, n, indptr, tgt, weighted, progress, t0)
    trim_malloc()
    mem_mark("build_local")
    phase(progress, f"built the local graphs: rank 0 holds {lg.nloc:,} vertices, "
                     f"{lg.mloc:,} edges", t0)
    return lg, part
