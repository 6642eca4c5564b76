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
   one block -- the other owners' blocks at the front of the buffer, its own at the
   tail;
4. one ``Alltoallv`` sends each other owner its block of targets (4 bytes per edge
   instead of 8), received into the sorted slice's own arrays (resident already), and
   one more the row lengths of that block (4 bytes per vertex);
5. the owner concatenates the K rows of each vertex in rank order into the sort's
   buffer itself, reading its own rows from the tail ahead of the write
   (:func:`asapgraph.kernels._rankbuild.merge_rows_tail`; :func:`_ship_rows`), and maps
   targets to local vertices and slots in place
   (:func:`asapgraph.partition.local_graph.local_from_rows`).

Slices are in input order and rank r holds the r-th one, so every row lists its
out-edges in input order, for any K.  Memory per rank at the peak: the slice (8 bytes per
edge, int32 ids) plus its sorted targets (4 bytes per edge) plus ``4 n`` bytes of row
offsets (``8 n`` when a slice holds 2^31 edges or more); hence the condition ``n <= 2 x``
the smallest rank's edges (else the caller uses the general loader).  The exchange and
the merge allocate no further edge-sized array.

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

from asapgraph.comm.mpi import alltoallv, alltoallv_remote, mpi
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
                     layout="push", shares=None, scratch=False):
    """The :class:`~asapgraph.partition.local_graph.LocalGraph` and :class:`Partition` of
    this rank's slice ``edges = [src, dst]`` (dense ids below ``n``, one id dtype, unit
    weights; the caller checked :func:`fits`); collective.  ``edges`` is emptied here, so
    the slice is freed as soon as it is sorted.  ``layout="pull"`` (unweighted only):
    :class:`InRows` instead of the ``LocalGraph``.  ``shares``: the range partition's
    per-rank shares of the balance weight (default even).  ``scratch``: the slice's arrays
    are the loader's own (parsed, generated or mapped here, not the caller's data), so
    once sorted they may hold the rows received from the other ranks (no fresh
    edge-sized buffer, :func:`_ship_rows`)."""
    from asapgraph.kernels import _rankbuild as rb

    src, dst = edges
    edges.clear()
    K = comm.Get_size()
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
        return _in_rows(comm, held, n, part, kb, progress, t0, scratch), part
    held = [src, dst, pos, key]  # _ship_rows frees them as it goes (peak memory)
    del src, dst, pos, key
    indptr, tgt = _ship_rows(comm, held, kb, scratch, "rows")
    phase(progress, "sent each owner its rows", t0)
    lg = local_from_rows(comm, part, n, indptr, tgt, weighted, progress, t0)
    trim_malloc()
    mem_mark("build_local")
    phase(progress, f"built the local graphs: rank 0 holds {lg.nloc:,} vertices, "
                     f"{lg.mloc:,} edges", t0)
    return lg, part


def _in_rows(comm, held, n, part, kb, progress, t0, scratch=False):
    """:class:`InRows` of this rank's slice ``held = [src, dst, pos, key]`` (emptied
    here): ``pos[1:]`` holds the slice's source counts by key; each edge goes to the
    owner of its destination with its source."""
    from asapgraph.kernels import _rankbuild as rb

    src, dst, pos, key = held
    held.clear()
    MPI = mpi()
    me = comm.Get_rank()
    nloc_q = np.diff(kb)
    nloc = int(nloc_q[me])
    outdeg = np.empty(nloc, dtype=np.int64)  # summed over the slices, in key order
    comm.Reduce_scatter([np.ascontiguousarray(pos[1:], dtype=np.int64), MPI.INT64_T],
                        [outdeg, MPI.INT64_T], recvcounts=nloc_q.tolist(), op=MPI.SUM)
    pos[:] = 0
    rb.count_keys(dst, key if key is not None else np.zeros(0, dtype=np.int32), pos)
    held = [dst, src, pos, key]
    del src, dst, pos, key
    r = InRows()
    r.indptr, r.src = _ship_rows(comm, held, kb, scratch, "inrows")
    phase(progress, "sent each owner its in-rows", t0)
    r.n, r.nloc, r.part = n, nloc, part
    r.m = int(comm.allreduce(len(r.src), op=MPI.SUM))
    r.owned = part.owned(me)
    r.outdeg = outdeg
    r.mloc = int(outdeg.sum())
    r.dangling = (outdeg == 0).astype(np.uint8)
    r.in_peers = r.out_peers = None
    phase(progress, f"built the in-rows: rank 0 holds {nloc:,} vertices, "
                     f"{len(r.src):,} in-edges", t0)
    return r


def _ship_rows(comm, held, kb, scratch, label):
    """Each owner's rows of this rank's slice, sent to it and merged; collective.

    ``held = [by, val, pos, key]`` (emptied here): the slice's row ends and carried ends
    (one id dtype), ``pos[1 + k]`` the slice's row length of key ``k`` (zero-based
    ``pos[0]``; :func:`asapgraph.kernels._rankbuild.count_keys`), ``key`` the owner-major
    keys of the ids (None: the ids themselves), ``kb`` the owners' key ranges.  Returns
    ``(indptr, tgt)``: the CSR of this rank's owned vertices, each row the rows of ranks
    ``0..K-1`` in rank order.

    One edge-sized buffer is allocated, ``out`` (``max(len(by), total)`` entries, where
    ``total`` is the edges this rank receives): the counting sort places the rows bound
    for other ranks at its front, in rank order, and this rank's own rows at its tail;
    only the former travel (:func:`asapgraph.comm.mpi.alltoallv_remote`), received into
    the sorted slice's ``val`` array when ``scratch`` allows and it is large enough (its
    pages are resident already: a fresh buffer costs its page faults, 0.1-0.3 s of
    system time per rank on rmat:22 text with 2 MB pages); the merge then writes the rows
    into ``out`` itself, reading the own rows ahead of the write
    (:func:`asapgraph.kernels._rankbuild.merge_rows_tail`).  Before: a receive buffer
    and a merge output of ``total`` entries each and a copy of the own rows through MPI.
    """
    from asapgraph.kernels import _rankbuild as rb

    by, val, pos, key = held
    held.clear()
    K, me = comm.Get_size(), comm.Get_rank()
    m = len(by)
    nloc_q = np.diff(kb)
    nloc = int(nloc_q[me])
    rowlen = pos[1:].astype(_cnt_dtype(m))
    # each owner's row lengths (its key range)
    rcnt, _ = alltoallv(comm, rowlen, nloc_q)
    del rowlen
    rcnt = rcnt.reshape(K, nloc)
    np.cumsum(pos, out=pos)  # pos[k]: start of row k in the slice's key order
    starts = pos[kb[:-1]].astype(np.int64)
    send = pos[kb[1:]].astype(np.int64) - starts  # each owner's block of the slice
    rc = np.empty(K, dtype=np.int64)
    comm.Alltoall([send, mpi().INT64_T], [rc, mpi().INT64_T])
    total, own = int(rc.sum()), int(send[me])
    cap = max(m, total)
    if _cnt_dtype(cap) != pos.dtype:
        pos = pos.astype(_cnt_dtype(cap))
    # the own block moves to the tail of out, the blocks after it close the gap
    lo, hi = int(kb[me]), int(kb[me + 1])
    pos[lo:hi] += cap - own - int(starts[me])
    pos[hi:] -= own
    sdis = starts - np.where(np.arange(K) > me, own, 0)
    out = np.empty(cap, dtype=val.dtype)
    rb.place_by_key(by, val, key if key is not None else np.zeros(0, dtype=np.int32), pos,
                    out)
    del by, pos, key
    remote = total - int(rc[me])
    rdis = np.zeros(K, dtype=np.int64)
    np.cumsum(np.where(np.arange(K) == me, 0, rc)[:-1], out=rdis[1:])
    usable = (scratch and val.dtype == out.dtype and val.flags.c_contiguous
              and val.flags.writeable and len(val) >= remote)
    recv = val if usable else np.empty(remote, dtype=out.dtype)
    del val
    trim_malloc()
    mem_mark(f"{label}:sorted")
    alltoallv_remote(comm, out, send, sdis, recv, rc, rdis)
    mem_mark(f"{label}:exchanged")
    indptr = np.empty(nloc + 1, dtype=np.int64)
    rb.merge_rows_tail(recv, rcnt, rdis, out, me, cap - own, indptr)
    del recv, rcnt
    if cap > total:  # the slice was longer than the rows: give the tail back
        out.resize((total,), refcheck=False)
    trim_malloc()
    mem_mark(f"{label}:merged")
    return indptr, out
