"""MPI worker: a generator spec loaded in place against the general loader and one process.

Run as ``mpiexec -n K python _genload_worker.py CASES.json OUT.json``.  For every case
(``spec``, ``partition``, ``undirected``, ``weighted``) rank 0 writes one record of
comparisons (booleans and counts), checked by ``test_dist_genload.py``:

* ``same_as_general``: :func:`load_partitioned` (the in-place path of
  :mod:`asapgraph.partition.generated`) and the general loader (read, partition, shuffle,
  :func:`build_local`) give the same owned vertices, slots, per-peer maps, per-vertex
  arrays, and the same out-row of every vertex as a multiset (the shuffle's rounds
  interleave the ranks' slices inside a row);
* ``rows_in_edge_order``: every row lists its edges in global edge order (directed specs);
* ``same_as_single``: the gathered edges equal the single process's ``load_graph`` edges.
"""
import json
import sys

import numpy as np
from mpi4py import MPI

from asapgraph.graph.generators import from_spec
from asapgraph.graph.io import load_graph
from asapgraph.partition.generated import load_spec
from asapgraph.partition.loader import build_local, load_partitioned, read_dense_edges
from asapgraph.partition.partitioners import Partition, range_partition
from asapgraph.partition.reading import DenseEdges


def general(comm, spec, partition, weighted, undirected, shares=None):
    """The general loader's path for a spec (what load_partitioned did before)."""
    src, dst, w, n, _ = read_dense_edges(spec, comm, weighted, undirected, 2, 1 << 21, None)
    part = range_partition(comm, src, n, shares) if partition == "range" else \
        Partition(partition, comm.Get_size(), n)
    src, dst = src.astype(np.int32), dst.astype(np.int32)
    return build_local(comm, part, [src, dst, w], n, weighted), part


def gathered_edges(comm, lg):
    """All ranks' rows as global ``(src, dst, coef)`` in rank-then-row order, on rank 0."""
    me = comm.Get_rank()
    mine = {"owned": lg.owned, "indptr": lg.indptr, "tgt": np.asarray(lg.tgt, np.int64),
            "out_peers": lg.out_peers, "out_off": lg.out_off, "in_peers": lg.in_peers,
            "in_maps": lg.in_maps, "nloc": lg.nloc, "coef": lg.coef, "vcoef": lg.vcoef}
    allr = comm.gather(mine)
    if me != 0:
        return None
    out = []
    for r, g in enumerate(allr):
        # my slots to peer p stand for p's vertices p.owned[p.in_maps[index of r]]
        slot_vertex = np.zeros(int(g["out_off"][-1]), dtype=np.int64)
        for j, p in enumerate(g["out_peers"]):
            gp = allr[int(p)]
            k = int(np.flatnonzero(gp["in_peers"] == r)[0])
            slot_vertex[g["out_off"][j]:g["out_off"][j + 1]] = gp["owned"][gp["in_maps"][k]]
        t = g["tgt"]
        nl = g["nloc"]
        dst = np.empty(len(t), dtype=np.int64)
        loc = t < nl
        dst[loc] = g["owned"][t[loc]]
        dst[~loc] = slot_vertex[t[~loc] - nl]
        src = np.repeat(g["owned"], np.diff(g["indptr"]))
        coef = g["coef"] if g["coef"] is not None else np.repeat(g["vcoef"], np.diff(g["indptr"]))
        out.append((src, dst, coef))
    return allr, out


def edge_list(spec, is_file):
    """The input's edges in input order, with dense ids (sorted original ids)."""
    if not is_file:
        S, D, _ = from_spec(spec)
        return S.astype(np.int64), D.astype(np.int64)
    raw = np.loadtxt(spec, dtype=np.int64, comments="#", usecols=(0, 1), ndmin=2)
    ids = np.unique(raw)
    return np.searchsorted(ids, raw[:, 0]), np.searchsorted(ids, raw[:, 1])


def _rows_sorted(src, dst, coef):
    o = np.lexsort((dst, src))
    return src[o], dst[o], coef[o]


def main():
    comm = MPI.COMM_WORLD
    cases = json.load(open(sys.argv[1]))
    res = []
    for c in cases:
        spec, partition = c["spec"], c["partition"]
        und, wt = c.get("undirected", False), c.get("weighted", False)
        K = comm.Get_size()
        # skewed shares: rank 0 owns most rows (it receives more edges than its slice
        # holds, more from the others than its slice's arrays can take), the rest few
        shares = None
        if c.get("skew") and K > 1:
            shares = np.array([0.8] + [0.2 / (K - 1)] * (K - 1))
        source, kept = spec, None
        if c.get("dense"):  # the caller's arrays (DenseEdges): the loader must not write them
            S, D, n_ = from_spec(spec)
            source = DenseEdges(S.astype(np.int32), D.astype(np.int32), int(n_), name=spec)
            kept = (source.src.copy(), source.dst.copy())
        if c.get("file") or c.get("dense"):  # the rows path unless weighted (no load_spec)
            in_place = None
        else:
            in_place = load_spec(spec, comm, partition, weighted=wt, undirected=und,
                                 shares=shares) is not None
        lg, part, _ = load_partitioned(source, comm, partition, weighted=wt, undirected=und,
                                       shares=shares)
        untouched = kept is None or (np.array_equal(kept[0], source.src)
                                     and np.array_equal(kept[1], source.dst))
        lg0, part0 = general(comm, spec, partition, wt, und, shares)
        same_layout = all(comm.allgather(bool(
            np.array_equal(lg.owned, lg0.owned) and lg.nslots == lg0.nslots
            and np.array_equal(lg.indptr, lg0.indptr)
            and np.array_equal(lg.out_peers, lg0.out_peers)
            and np.array_equal(lg.out_off, lg0.out_off)
            and np.array_equal(lg.in_peers, lg0.in_peers)
            and all(np.array_equal(a, b) for a, b in zip(lg.in_maps, lg0.in_maps))
            and np.array_equal(lg.dangling, lg0.dangling) and np.array_equal(lg.vcoef, lg0.vcoef)
            and lg.tgt.dtype == lg0.tgt.dtype and (lg.coef is None) == (lg0.coef is None)
            and lg.n == lg0.n and lg.m == lg0.m and lg.mloc == lg0.mloc)))
        comm_mloc = comm.gather(lg.mloc)
        g1, e1 = gathered_edges(comm, lg) or (None, None)
        g0, e0 = gathered_edges(comm, lg0) or (None, None)
        if comm.Get_rank() != 0:
            continue
        rec = {"case": c, "in_place": in_place, "same_layout": same_layout,
               "untouched": bool(untouched), "mloc": [int(x) for x in comm_mloc],
               "same_partition": part.describe() == part0.describe()}
        rec["same_as_general"] = same_layout and all(
            all(np.array_equal(a, b) for a, b in zip(_rows_sorted(*x), _rows_sorted(*y)))
            for x, y in zip(e1, e0))
        s1 = np.concatenate([x[0] for x in e1])
        d1 = np.concatenate([x[1] for x in e1])
        g = load_graph(spec, undirected=und)
        gs, gd, _ = g.edges()
        o1, o = np.lexsort((d1, s1)), np.lexsort((gd, gs))
        rec["same_as_single"] = bool(g.n == lg.n and np.array_equal(s1[o1], gs[o])
                                     and np.array_equal(d1[o1], gd[o]))
        if not und:  # rows: the spec's edges of the rank's sources, stably by source key
            S, D = edge_list(spec, bool(c.get("file")))
            own = part.owner(S)
            ok = True
            for r, (src, dst, _) in enumerate(e1):
                sel = np.flatnonzero(own == r)
                gl = g1[r]["owned"]
                key = np.searchsorted(gl, S[sel])
                order = sel[np.argsort(key, kind="stable")]
                ok = ok and np.array_equal(src, S[order]) and np.array_equal(dst, D[order])
            rec["rows_in_edge_order"] = bool(ok)
        rec["edges"] = int(len(s1))
        rec["ranks_with_edges"] = int(sum(len(x[0]) > 0 for x in e1))
        res.append(rec)
    if comm.Get_rank() == 0:
        json.dump(res, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
