"""Vertex migration: move rows of a range-partitioned :class:`LocalGraph` to new owners.

Rationale
---------
Dynamic load balancing (:mod:`asapgraph.engine.rebalance`) changes the bounds of a range
partition while a job runs.  Ranges stay contiguous and ordered by rank, so between the
old bounds and the new ones every rank sends each other rank one contiguous block of
its rows (possibly empty) and receives its new rows in rank order, which is dense-id
order: a migration is one ``Alltoallv`` per row array, with no sort.  What moves with a
vertex: its out-row (global dense targets, the per-edge coefficients of a weighted
graph), its per-vertex constants (``vcoef``, ``dangling``, original id) and any number
of the caller's per-vertex float64 vectors (values, pending deltas, teleport vector,
benchmark reference); the new :class:`LocalGraph` (slots, per-peer ranges, the peers'
in-maps -- the boundary maps) is then rebuilt from the rows by the loader's own builder
(:func:`.local_graph.local_from_rows`), so it is the layout the loader would have made for
those bounds.  Collective.

Cost: O(rows moved + local edges) numpy work and the exchange of the moved rows (the
rows that stay are copied locally); rebuilding the slots touches every local edge.
Invariant: the union of the ranks' rows, constants and vectors is unchanged (nothing is
created or lost; the tests check every vector and the mass of the values).
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph.comm.mpi import alltoallv
from asapgraph.partition.local_graph import local_from_rows
from asapgraph.partition.partitioners import Partition

__all__ = ["migrate", "global_targets"]


def global_targets(lg):
    """The global dense id of every local edge's target (int64, CSR order)."""
    ids = np.concatenate([np.asarray(lg.owned, dtype=np.int64),
                          np.asarray(lg.slot_vertex, dtype=np.int64)])
    return ids[np.asarray(lg.tgt)]  # one gather (a masked pair of them: 10x slower)


def migrate(comm, lg, part, bounds, vecs=()):
    """Move rows so that rank ``r`` owns ``[bounds[r], bounds[r+1])``; collective.

    Parameters
    ----------
    lg : LocalGraph
        This rank's share under the range partition ``part``.
    bounds : int64 array (K+1,)
        The new bounds (``bounds[0] = 0``, ``bounds[K] = n``, non-decreasing).
    vecs : sequence of float64 arrays (``lg.nloc`` each) or None
        Per-vertex vectors to move with their vertices (None entries stay None).

    Returns
    -------
    (LocalGraph, Partition, list, dict)
        The new share, partition and vectors, and figures: ``moved_vertices`` /
        ``moved_edges`` (sent by this rank to other ranks) and ``seconds``.
    """
    t0 = time.perf_counter()
    K, me = comm.Get_size(), comm.Get_rank()
    if part.kind != "range":
        raise ValueError("vertex migration needs a range partition")
    nb = np.asarray(bounds, dtype=np.int64)
    n = lg.n
    assert nb.shape == (K + 1,) and nb[0] == 0 and nb[-1] == n and np.all(np.diff(nb) >= 0)
    lo, hi = int(part.bounds[me]), int(part.bounds[me + 1])
    cut = np.clip(nb, lo, hi) - lo            # row index bounds of each destination
    vcnt = np.diff(cut).astype(np.int64)
    indptr = np.asarray(lg.indptr, dtype=np.int64)
    ecnt = np.diff(indptr[cut]).astype(np.int64)
    others = np.arange(K) != me
    fig = {"moved_vertices": int(vcnt[others].sum()), "moved_edges": int(ecnt[others].sum())}
    # bytes this rank sends to others: targets (+ coefficients), 2 ints and the floats
    # per vertex, the row lengths
    nfl = 1 + sum(v is not None for v in vecs)
    fig["bytes"] = (fig["moved_edges"] * ((4 if n < 2**31 - 1 else 8) + 8 * (lg.coef is not None))
                    + 8 * fig["moved_vertices"] * (3 + nfl))
    deg, _ = alltoallv(comm, np.diff(indptr), vcnt)
    gt = global_targets(lg)
    if n < 2**31 - 1:
        gt = gt.astype(np.int32)  # half the bytes of the largest array moved
    tgt, _ = alltoallv(comm, gt, ecnt)
    del gt
    coef = alltoallv(comm, lg.coef, ecnt)[0] if lg.coef is not None else None
    ints, _ = alltoallv(comm, np.stack([np.asarray(lg.orig, dtype=np.int64),
                                        np.asarray(lg.dangling, dtype=np.int64)], 1).ravel(),
                        2 * vcnt)
    ints = ints.reshape(-1, 2)
    held = [v for v in vecs if v is not None]
    fl = np.stack([np.asarray(lg.vcoef, dtype=np.float64)] + [np.asarray(v, dtype=np.float64)
                                                              for v in held], 1)
    fl, _ = alltoallv(comm, fl.ravel(), fl.shape[1] * vcnt)
    fl = fl.reshape(-1, 1 + len(held))
    newpart = Partition("range", K, n, nb)
    rows = np.zeros(len(deg) + 1, dtype=np.int64)
    np.cumsum(deg, out=rows[1:])
    new = local_from_rows(comm, newpart, n, rows, tgt, coef is not None, coef=coef)
    new.vcoef = np.ascontiguousarray(fl[:, 0])
    new.dangling = np.ascontiguousarray(ints[:, 1]).astype(np.uint8)
    new.orig = np.ascontiguousarray(ints[:, 0])
    out, k = [], 1
    for v in vecs:
        if v is None:
            out.append(None)
        else:
            out.append(np.ascontiguousarray(fl[:, k]))
            k += 1
    fig["seconds"] = time.perf_counter() - t0
    return new, newpart, out, fig
