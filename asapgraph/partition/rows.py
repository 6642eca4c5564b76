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
edge, int32 ids) plus its sorted targets (4 bytes per edge) plus ``4 n`` bytes of row
offsets (``8 n`` when a slice holds 2^31 edges or more); hence the condition ``n <= 2 x`` the smallest rank's edges (else the caller uses
the general loader).

In-rows (``layout="pull"``, BSP PageRank's loads): the same pass with the roles of the
two ends swapped -- each edge is placed by the owner of its *destination* and carries
its source -- so the owner receives the in-CSR of its vertices (:class:`InRows`, rows in
global edge order) and the BSP rank builds its pull layout from it directly
(:func:`asapgraph.engine.pull.pull_graph`) instead of building the out-rows and then
transposing them.  The out-degrees of the owned vertices (what a pull sweep divides
by) come from the source counts of step 1, summed into the owners' key ranges by one
more ``Reduce_scatter``; the partition is the one the out-rows would get (bounds from
the same source counts).
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph.comm.mpi import alltoallv, mpi
from asapgraph.partition.local_graph import local_from_rows
from asapgraph.partition.memory import mem_mark, phase, trim_malloc
from asapgraph.partition.partitioners import Partition, range_partition_counts

__all__ = ["fits", "local_from_slice", "InRows"]


def fits(comm, n, mine):
    """Whether every rank can hold ``8 n`` bytes of row offsets next to its ``mine`` edges
    (``n <= 2 mine`` on every rank) and ids fit int32; collective (the same answer on
    every rank)."""
    return n < 2**31 - 1 and not comm.allreduce(int(n > 2 * mine), op=mpi().MAX)


def _cnt_dtype(m):
    """Dtype of the counting sort's counters and offsets over ``m`` edges."""
    return np.int32 if m < 2**31 - 1 else np.int64


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


class InRows:
    """One rank's in-rows: what :func:`asapgraph.engine.pull.pull_graph` builds a BSP
    rank's pull layout from (``layout="pull"`` of :func:`local_from_slice`).

    Attributes
    ----------
    n, m : int
        Global vertex and edge counts.
    nloc, owned, orig, part
        Owned vertices (sorted dense ids; original ids, set by the loader) and the
        :class:`Partition`.
    indptr : int64 array (``nloc + 1``)
        In-CSR of the owned vertices, in ``owned`` order.
    src : int32 array
        Dense id of the source of every in-edge, row after row, each row in global edge
        order.  Emptied (``None``) once the pull layout is built from it.
    outdeg : int64 array (``nloc``)
        Out-degree of every owned vertex over the whole graph; ``dangling`` (uint8) 1
        where it is 0; ``mloc`` their sum (the out-edges :class:`LocalGraph` holds).
    in_peers, out_peers : int64 arrays
        Set by the pull build (ranks with an edge into / out of this rank's vertices).
    """

    def stats(self):
        """Layout counters, the keys of ``LocalGraph.stats`` (set by the pull build)."""
        return dict(self._stats)


def local_from_slice(comm, edges, n, partition, weighted, progress=None, t0=None,
                     layout="push", shares=None):
    """The :class:`~asapgraph.partition.local_graph.LocalGraph` and :class:`Partition` of
    this rank's slice ``edges = [src, dst]`` (dense ids below ``n``, one id dtype, unit
    weights; the caller checked :func:`fits`); collective.  ``edges`` is emptied here, so
    the slice is freed as soon as it is sorted.  ``layout="pull"`` (unweighted only):
    :class:`InRows` instead of the ``LocalGraph``.  ``shares``: the range partition's
    per-rank shares of the balance weight (default even)."""
    from asapgraph.kernels import _rankbuild as rb

    src, dst = edges
    edges.clear()
    K, me = comm.Get_size(), comm.Get_rank()
    t0 = time.perf_counter() if t0 is None else t0
    empty = np.zeros(0, dtype=np.int32)
    # int32 counters whenever the slice's offsets fit: half the cache footprint of the
    # random increments (two ranks of rmat:22 text: 8 MB each instead of 16 MB of a
    # shared 32 MB L3; a counting pass 0.20-0.22 -> 0.15-0.17 s with both ranks running)
    pos = np.zeros(n + 1, dtype=_cnt_dtype(len(src)))
    rb.count_keys(src, empty, pos)  # pos[1 + v]: out-degree of v in this slice
    if partition == "range":
        part = range_partition_counts(comm, pos[1:], n, shares)
    else:
        part = Partition(partition, K, n)
    key, kb = _owner_major(part, n)
    if key is not None:  # counts by key instead of by id
        cnt_v = pos[1:].copy()
        pos[1:][key] = cnt_v
        del cnt_v
    phase(progress, f"partitioned ({part.kind}) over {K} ranks", t0)
    if layout == "pull":
        if weighted:
            raise ValueError("the pull layout of a load is for unweighted graphs")
        held = [src, dst, pos, key]  # _in_rows frees them as it goes (peak memory)
        del src, dst, pos, key
        return _in_rows(comm, held, n, part, kb, progress, t0), part
    rowlen = pos[1:].astype(_cnt_dtype(len(src)))
    np.cumsum(pos, out=pos)  # pos[k]: start of row k
    # each owner's row lengths (its key range) and targets (its block of rows)
    nloc_q = np.diff(kb)
    rcnt, _ = alltoallv(comm, rowlen, nloc_q)
    del rowlen
    send = (pos[kb[1:]] - pos[kb[:-1]]).astype(np.int64)
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


def _in_rows(comm, held, n, part, kb, progress, t0):
    """:class:`InRows` of this rank's slice ``held = [src, dst, pos, key]`` (emptied
    here): ``pos[1:]`` holds the slice's source counts by key; each edge goes to the
    owner of its destination with its source."""
    from asapgraph.kernels import _rankbuild as rb

    src, dst, pos, key = held
    held.clear()
    MPI = mpi()
    K, me = comm.Get_size(), comm.Get_rank()
    nloc_q = np.diff(kb)
    nloc = int(nloc_q[me])
    outdeg = np.empty(nloc, dtype=np.int64)  # summed over the slices, in key order
    comm.Reduce_scatter([np.ascontiguousarray(pos[1:], dtype=np.int64), MPI.INT64_T],
                        [outdeg, MPI.INT64_T], recvcounts=nloc_q.tolist(), op=MPI.SUM)
    pos[:] = 0
    rb.count_keys(dst, key if key is not None else np.zeros(0, dtype=np.int32), pos)
    rowlen = pos[1:].astype(_cnt_dtype(len(src)))
    np.cumsum(pos, out=pos)
    rcnt, _ = alltoallv(comm, rowlen, nloc_q)
    del rowlen
    send = (pos[kb[1:]] - pos[kb[:-1]]).astype(np.int64)
    out = np.empty(len(src), dtype=src.dtype)
    rb.place_by_key(dst, src, key if key is not None else np.zeros(0, dtype=np.int32),
                    pos, out)
    del src, dst, pos, key
    trim_malloc()
    mem_mark("inrows:sorted")
    recv, rc = alltoallv(comm, out, send)
    del out
    trim_malloc()
    mem_mark("inrows:exchanged")
    phase(progress, "sent each owner its in-rows", t0)
    rcnt = rcnt.reshape(K, nloc)
    start = np.zeros(K, dtype=np.int64)
    np.cumsum(rc[:-1], out=start[1:])
    r = InRows()
    r.src = np.empty(len(recv), dtype=recv.dtype)
    r.indptr = np.empty(nloc + 1, dtype=np.int64)
    rb.merge_rows(recv, rcnt, start, r.src, r.indptr)
    del recv, rcnt
    r.n, r.nloc, r.part = n, nloc, part
    r.m = int(comm.allreduce(len(r.src), op=MPI.SUM))
    r.owned = part.owned(me)
    r.outdeg = outdeg
    r.mloc = int(outdeg.sum())
    r.dangling = (outdeg == 0).astype(np.uint8)
    r.in_peers = r.out_peers = None
    mem_mark("inrows:merged")
    phase(progress, f"built the in-rows: rank 0 holds {nloc:,} vertices, "
                     f"{len(r.src):,} in-edges", t0)
    return r
