"""One rank's share of a graph for vertex programs on MPI ranks: :class:`ProgramGraph`.

Rationale
---------
Layout.  Edges are shuffled to the owner of an endpoint (the partitioners of
:mod:`.partitioners`).  For every direction a program uses (``out``: u->v, ``in``: v->u,
``both``: the union, so a self-loop or a reciprocal pair counts twice exactly as in the
single-process undirected view) the engine builds, once, a *side*: a local CSR whose rows
are owned vertices and whose columns are owned vertices (``< nloc``) or *slots*
(``nloc + s``), one slot per (peer rank, remote vertex), ordered by peer then dense id,
so that a peer's slots are one contiguous range; each peer learns once which of its
vertices our slots stand for (``in_maps``).

:func:`load` reads and partitions a graph collectively (or slices a single-process
``Graph`` held by every rank); the engine that runs programs on it is
:mod:`asapgraph.engine.distributed`.
"""
from __future__ import annotations

import numpy as np

from asapgraph import options as _options
from asapgraph.comm.mpi import alltoallv, mpi
from asapgraph.errors import InputError
from asapgraph.partition.partitioners import Partition, range_partition

__all__ = ["ProgramGraph", "load"]

_EMPTY_W = np.zeros(0, dtype=np.float64)


class ProgramGraph:
    """One rank's share of a graph for vertex programs (collective construction).

    Attributes
    ----------
    n, m : int
        Global vertex and edge counts.
    nloc : int
        Number of owned vertices; ``owned`` their dense ids (sorted), ``orig`` their
        original ids.
    src, dst, w : arrays
        The rank's edges (dense ids; ``src`` owned by this rank), ``w`` float64 or None.
    out_degree, in_degree, out_weight : arrays over owned vertices.
    part : Partition
    source : str or None
        Where the graph came from (for error messages).
    """

    def __init__(self, comm, part, n, src, dst, w, orig, source):
        MPI = mpi()
        me = comm.Get_rank()
        self.comm, self.part, self.n, self.source = comm, part, int(n), source
        self.owned = part.owned(me)
        self.nloc = len(self.owned)
        self.src, self.dst, self.w = src, dst, w
        self.orig = np.asarray(orig, dtype=np.int64)
        self.m = int(comm.allreduce(len(src), op=MPI.SUM))
        self.weighted = w is not None
        su = self._local(src)
        self.out_degree = np.bincount(su, minlength=self.nloc).astype(np.int64)
        self.out_weight = (np.bincount(su, weights=w, minlength=self.nloc).astype(
            np.float64, copy=False) if w is not None else None)  # (no edges: int64)
        own = part.owner(dst)
        o = np.argsort(own, kind="stable")
        got, _ = alltoallv(comm, dst[o].astype(np.int64), np.bincount(own, minlength=comm.Get_size()))
        self.in_degree = np.bincount(self._local(got), minlength=self.nloc).astype(np.int64)
        self._sides = {}

    def _local(self, v):
        return np.asarray(self.part.local_index(self.part_rank(), v, self.owned), dtype=np.int64)

    def part_rank(self):
        return self.comm.Get_rank()

    def dense_id(self, original, what="source"):
        """Dense id of the vertex with original id ``original`` (collective).

        Raises ``InputError`` (on every rank) when no rank holds it.
        """
        MPI = mpi()
        hit = np.flatnonzero(self.orig == int(original))
        mine = int(self.owned[hit[0]]) if hit.size else self.n
        d = int(self.comm.allreduce(mine, op=MPI.MIN))
        if d == self.n:
            raise InputError(self.source if isinstance(self.source, str) else None, None,
                             f"{what} vertex {original} is not in the graph")
        return d

    def side(self, direction, form):
        """The local CSR of ``direction`` (``out``/``in``/``both``) in ``form`` push/pull."""
        key = (direction, form)
        if key not in self._sides:
            # message-flow edges a->b; push stores them at owner(a), pull at owner(b)
            flows = {"out": [(self.src, self.dst)], "in": [(self.dst, self.src)],
                     "both": [(self.src, self.dst), (self.dst, self.src)]}[direction]
            rows, cols, ws = [], [], []
            for a, b in flows:
                r, c = (a, b) if form == "push" else (b, a)
                rows.append(r)
                cols.append(c)
                ws.append(self.w)
            r = np.concatenate(rows).astype(np.int64)
            c = np.concatenate(cols).astype(np.int64)
            w = None if self.w is None else np.concatenate(ws)
            self._sides[key] = _Side(self.comm, self.part, self, r, c, w)
        return self._sides[key]


class _Side:
    """Local CSR (rows owned, columns owned or slots) with its per-peer slot maps."""

    def __init__(self, comm, part, g, rows, cols, w):
        K_, me = comm.Get_size(), comm.Get_rank()
        n, nloc = g.n, g.nloc
        # shuffle edges to the owner of their row end (those already owned stay)
        own = part.owner(rows)
        if K_ > 1:  # collective on every rank, even when all its edges are already home
            o = np.argsort(own, kind="stable")
            cnt = np.bincount(own, minlength=K_)
            rows, _ = alltoallv(comm, rows[o], cnt)
            cols, _ = alltoallv(comm, cols[o], cnt)
            w = None if w is None else alltoallv(comm, w[o], cnt)[0]
        ru = g._local(rows)
        o = np.argsort(ru, kind="stable")
        ru, cols = ru[o], cols[o]
        self.w = None if w is None else np.ascontiguousarray(w[o], dtype=np.float64)
        self.indptr = np.zeros(nloc + 1, dtype=np.int64)
        np.cumsum(np.bincount(ru, minlength=nloc), out=self.indptr[1:])
        cown = part.owner(cols)
        col = np.empty(len(cols), dtype=np.int64)
        loc = cown == me
        col[loc] = g._local(cols[loc])
        rem = np.flatnonzero(~loc)
        key = cown[rem].astype(np.int64) * np.int64(n) + cols[rem]
        ukey, inv = np.unique(key, return_inverse=True)
        col[rem] = nloc + inv.reshape(-1)
        self.col = col
        self.nloc, self.nslots = nloc, len(ukey)
        slot_peer = ukey // n
        slot_vertex = ukey % n
        pc = np.bincount(slot_peer, minlength=K_).astype(np.int64)
        self.out_peers = np.flatnonzero(pc).astype(np.int64)
        self.out_off = np.concatenate([[0], np.cumsum(pc[self.out_peers])]).astype(np.int64)
        recv, rc = alltoallv(comm, slot_vertex.astype(np.int64), pc)
        self.in_peers = np.flatnonzero(rc).astype(np.int64)
        roff = np.concatenate([[0], np.cumsum(rc)])
        self.in_maps = [g._local(recv[roff[q]:roff[q + 1]]) for q in self.in_peers]
        self.in_index = {int(q): j for j, q in enumerate(self.in_peers)}
        self.out_index = {int(q): j for j, q in enumerate(self.out_peers)}
        self._t = None

    def transposed(self):
        """CSR over targets ``0..nloc+nslots-1`` listing local sources (push gathers)."""
        if self._t is None:
            nt = self.nloc + self.nslots
            src = np.repeat(np.arange(self.nloc, dtype=np.int64), np.diff(self.indptr))
            o = np.argsort(self.col, kind="stable")
            tp = np.zeros(nt + 1, dtype=np.int64)
            np.cumsum(np.bincount(self.col, minlength=nt), out=tp[1:])
            tw = _EMPTY_W if self.w is None else np.ascontiguousarray(self.w[o])
            self._t = (tp, np.ascontiguousarray(src[o]), tw)
        return self._t


def _build(comm, src, dst, w, n, partition, idmap_original, source):
    MPI = mpi()
    K_ = comm.Get_size()
    if partition == "range":
        part = range_partition(comm, src, n)
    elif partition == "hash":
        part = Partition("hash", K_, n)
    else:
        raise ValueError(f"unknown partitioner {partition!r} (use 'range' or 'hash')")
    own = part.owner(src)
    o = np.argsort(own, kind="stable")
    cnt = np.bincount(own, minlength=K_)
    s, _ = alltoallv(comm, src[o].astype(np.int64), cnt)
    d, _ = alltoallv(comm, dst[o].astype(np.int64), cnt)
    ww = None if w is None else alltoallv(comm, np.asarray(w, dtype=np.float64)[o], cnt)[0]
    owned = part.owned(comm.Get_rank())
    orig = idmap_original(owned)
    del MPI
    return ProgramGraph(comm, part, n, s, d, ww, orig, source)


def load(source, comm=None, partition="range", weighted=False, undirected=False, weight_col=None,
         chunk_bytes=1 << 21, seed=None, progress=None, header=False):
    """Read and partition a graph for :func:`run` (collective; reusable by several runs).

    Parameters
    ----------
    source : str or Graph
        Edge-list file or generator spec (read in parallel as :func:`asapgraph.engine.load`
        does), or a single-process :class:`asapgraph.graph.Graph` present on every rank
        (each rank then takes a slice of its edges).
    comm : mpi4py communicator (default COMM_WORLD)
    partition : {"range", "hash"}
    weighted, undirected, weight_col, chunk_bytes, seed, header : as
        :func:`asapgraph.engine.load`.
    progress : asapgraph.progress.Progress, optional
        Rank 0's progress (None on the other ranks): a line per loading phase.

    Returns
    -------
    ProgramGraph
    """
    from asapgraph.graph.core import Graph
    from asapgraph.partition.loader import read_dense_edges

    MPI = mpi()
    if comm is None:
        comm = MPI.COMM_WORLD
    K_, me = comm.Get_size(), comm.Get_rank()
    if header and isinstance(source, Graph):
        from asapgraph.graph.io._readers import header_refusal

        raise header_refusal(getattr(source, "source", None) or "<graph>", "a Graph object, "
                             "not a file")
    if isinstance(source, Graph):
        s, d, w = source.edges()
        lo, hi = source.m * me // K_, source.m * (me + 1) // K_
        ids = source.original_ids()
        return _build(comm, s[lo:hi], d[lo:hi], None if w is None else w[lo:hi], source.n,
                      partition, lambda v: ids[v], getattr(source, "source", None))
    src, dst, w, n, idmap = read_dense_edges(source, comm, weighted, undirected,
                                             _options.weight_col_index(weight_col), chunk_bytes,
                                             seed, progress, bool(header))
    from asapgraph.partition.reading import DenseEdges

    # refusals name the file: a --labels edge list comes as rank 0's scattered edges (it
    # was None: '<input>: sssp needs non-negative edge weights (found -2)', no line)
    from asapgraph.graph.io._text import display_name

    name = display_name(source) if isinstance(source, str) else (
        source.name if isinstance(source, DenseEdges) and source.local else None)
    g = _build(comm, np.asarray(src, np.int64), np.asarray(dst, np.int64), w, n, partition,
               idmap.original, name)
    g.weight_col = weight_col  # where a refusal finds the weights' line
    g.header = bool(header)
    return g

