"""Generator specs loaded in place: every rank builds its rows from its own slice.

Rationale
---------
A generator spec (``rmat:S``, ``er:N:M``) needs no file and no id mapping: its edges are
a pure function of ``(seed, edge number)`` (:mod:`asapgraph.graph.generators`) and its
ids are already dense.  The general loader (:mod:`asapgraph.partition.loader`) still
sends every ``(src, dst)`` pair to the owner of its source in rounds and counting-sorts
them there; for a spec that shuffle and its per-round sorts cost more CPU than the
generation itself (rmat:22 on 2 ranks: 3.3 of 6.9 s per rank).  Here instead, rank ``r`` generates the edges ``[r m / K, (r+1) m / K)`` (one thread: the ranks share
the cores), and :func:`asapgraph.partition.rows.local_from_slice` turns the slice into the
owners' rows: degrees counted, range bounds by one ``Reduce_scatter``, the slice sorted by
owner, each owner sent only targets and row lengths.

Measured alternative (rmat:22, 2 ranks, one thread each, CPU seconds per rank on a shared
machine): every rank generating the whole stream and keeping the edges it owns (no
exchange at all) took 3.0 s for the generation and the filter alone, before any sorting,
against 2.6 s for this whole load (the general loader: 6.9 s); its cost does not shrink
with more ranks.  So each slice is generated once and exchanged compactly (see
benchmarks/REPORT.md, "Issue 13, loading").

Result: the same vertices, partition, slots and per-peer maps as the general loader for
the same spec (tests compare the two and the single process's graph), and every row lists
its out-edges in global edge order, for any K.
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph.partition.idmap import SpecIds
from asapgraph.partition.memory import mem_mark, phase
from asapgraph.partition.rows import fits, local_from_slice

__all__ = ["load_spec"]


def load_spec(source, comm, partition="range", weighted=False, undirected=False, seed=None,
              progress=None, layout="push", shares=None):
    """:func:`asapgraph.partition.loader.load_partitioned` for a generator spec; collective.

    Returns ``(lg, part, idmap)`` (``layout="pull"``: ``lg`` is the
    :class:`~asapgraph.partition.rows.InRows`), or None (on every rank) when the graph has more than
    twice as many vertices as the smallest rank has edges (``er:N:M`` with a large N):
    the ``n``-entry arrays would outweigh the edges, and the general loader runs instead.
    """
    from asapgraph.graph import generators as gen

    K, me = comm.Get_size(), comm.Get_rank()
    t0 = time.perf_counter()
    _, p = gen.parse_spec(source)  # the caller agreed that the spec parses
    n, m = int(p["n"]), int(p["m"])
    lo, hi = m * me // K, m * (me + 1) // K
    mine = 2 * (hi - lo) if undirected else hi - lo  # an upper bound, before the loops
    if not fits(comm, n, mine):
        return None
    src, dst, _ = gen.spec_slice(source, lo, hi, seed, threads=1)
    if undirected:  # as the general loader: the slice, then its reversed non-loops
        nl = src != dst
        src, dst = np.concatenate([src, dst[nl]]), np.concatenate([dst, src[nl]])
        del nl
    mem_mark("gen:slice")
    phase(progress, f"generated {len(src):,} edges on rank 0", t0)
    edges = [src, dst]
    del src, dst
    lg, part = local_from_slice(comm, edges, n, partition, weighted, progress, t0, layout,
                                shares, scratch=True)
    lg.orig = lg.owned.astype(np.int64, copy=False)
    return lg, part, SpecIds(n)
