"""Vertex migration: move rows of a range-partitioned :class:`LocalGraph` to new owners.

Rationale
---------
Dynamic load balancing (:mod:`asapgraph.engine.rebalance`) changes the bounds of a range
partition while a job runs.  Ranges stay contiguous and ordered by rank, so between the
old bounds and the new ones every rank sends each other rank one contiguous block of
its rows (possibly empty) and receives its new rows in rank order, which is dense-id
order: a migration is one ``Alltoallv`` per row array, with no sort.  What moves with a
vertex: its out-row (global dense targets, the per-edge coefficients of a weighted
graph), its original id (and a weighted graph's ``vcoef`` and dangling flag; an
unweighted graph's follow from the row length) and any number of the caller's per-vertex
float64 vectors (values, pending deltas, teleport vector, benchmark reference; a vector
that holds one value everywhere, as a uniform teleport vector, is rebuilt, not sent);
the new :class:`LocalGraph` (slots, per-peer ranges, the peers'
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


def _constants(comm, vecs):
    """For each vector, its value if it holds one value on every rank (a uniform teleport
    vector: reconstructed, not sent), else None; collective (one ``Allreduce``)."""
    from asapgraph.comm.mpi import mpi

    if not vecs:
        return []
    lo = np.array([v.min() if len(v) else np.inf for v in vecs]
                  + [-v.max() if len(v) else np.inf for v in vecs], dtype=np.float64)
    out = np.empty_like(lo)
    comm.Allreduce(lo, out, op=mpi().MIN)
    lo = out
    k = len(vecs)
    return [float(lo[i]) if lo[i] == -lo[k + i] else None for i in range(k)]


def migrate(comm, lg, part, bounds, vecs=(), untimed=0):
    """Move rows so that rank ``r`` owns ``[bounds[r], bounds[r+1])``; collective.

    Parameters
    ----------
    lg : LocalGraph
        This rank's share under the range partition ``part``.
    bounds : int64 array (K+1,)
        The new bounds (``bounds[0] = 0``, ``bounds[K] = n``, non-decreasing).
    vecs : sequence of float64 arrays (``lg.nloc`` each) or None
        Per-vertex vectors to move with their vertices (None entries stay None).  A
        vector that holds one value everywhere is rebuilt on arrival, not sent.
    untimed : int
        The last ``untimed`` vectors are measurement only (a benchmark's reference): they
        move, but their bytes are not the run's (``untimed_bytes``).

    What travels per moved vertex: its row length, original id and non-constant vectors
    (a weighted graph's ``vcoef`` and dangling flag too: an unweighted one's follow from
    the row length, as :func:`.local_graph.local_from_rows` computes them); per moved edge
    its global target (int32 where ids fit) and a weighted graph's coefficient.

    Returns
    -------
    (LocalGraph, Partition, list, dict)
        The new share, partition and vectors, and figures: ``moved_vertices`` /
        ``moved_edges`` / ``bytes`` (sent by this rank to other ranks; ``link_bytes`` the
        most to one of them) and ``seconds``.
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
    weighted = lg.coef is not None
    held = [i for i, v in enumerate(vecs) if v is not None]
    const = dict(zip(held, _constants(comm, [vecs[i] for i in held])))
    sent = [i for i in held if const[i] is None]
    timed = sum(i < len(vecs) - untimed for i in sent)
    # bytes to each destination: targets (+ coefficients) per edge; row length, id
    # (+ vcoef and dangling) and the vectors per vertex
    per_edge = (4 if n < 2**31 - 1 else 8) + 8 * weighted
    dest = ecnt * per_edge + vcnt * 8 * (2 + 2 * weighted + timed)
    fig = {"moved_vertices": int(vcnt[others].sum()), "moved_edges": int(ecnt[others].sum()),
           "bytes": int(dest[others].sum()),
           "link_bytes": int(dest[others].max(initial=0)),
           "untimed_bytes": int(8 * (len(sent) - timed) * vcnt[others].sum())}
    deg, _ = alltoallv(comm, np.diff(indptr), vcnt)
    gt = global_targets(lg)
    if n < 2**31 - 1:
        gt = gt.astype(np.int32)  # half the bytes of the largest array moved
    tgt, _ = alltoallv(comm, gt, ecnt)
    del gt
    coef = alltoallv(comm, lg.coef, ecnt)[0] if weighted else None
    ints = [np.asarray(lg.orig, dtype=np.int64)]
    if weighted:
        ints.append(np.asarray(lg.dangling, dtype=np.int64))
    ints, _ = alltoallv(comm, np.stack(ints, 1).ravel(), len(ints) * vcnt)
    ints = ints.reshape(len(deg), -1)
    cols = ([np.asarray(lg.vcoef, dtype=np.float64)] if weighted else []) + [
        np.asarray(vecs[i], dtype=np.float64) for i in sent]
    if cols:
        fl, _ = alltoallv(comm, np.stack(cols, 1).ravel(), len(cols) * vcnt)
        fl = fl.reshape(len(deg), len(cols))
    newpart = Partition("range", K, n, nb)
    rows = np.zeros(len(deg) + 1, dtype=np.int64)
    np.cumsum(deg, out=rows[1:])
    new = local_from_rows(comm, newpart, n, rows, tgt, weighted, coef=coef)
    new.orig = np.ascontiguousarray(ints[:, 0])
    if weighted:  # else local_from_rows set them from the row lengths
        new.vcoef = np.ascontiguousarray(fl[:, 0])
        new.dangling = np.ascontiguousarray(ints[:, 1]).astype(np.uint8)
    out, k = [], int(weighted)
    for i, v in enumerate(vecs):
        if v is None:
            out.append(None)
        elif const[i] is not None:
            out.append(np.full(new.nloc, const[i]))
        else:
            out.append(np.ascontiguousarray(fl[:, k]))
            k += 1
    fig["seconds"] = time.perf_counter() - t0
    return new, newpart, out, fig
