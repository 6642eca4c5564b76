"""Partitioned loading: every rank reads its own share, ids are mapped, edges shuffled.

Rationale
---------
No rank ever holds the whole edge list.

1. *Reading.*  An uncompressed text file is split into K byte ranges; a line belongs to
   the rank whose range contains its first byte (so ranges are aligned to line starts
   without communication).  A compressed file cannot be split: rank 0 decompresses it
   and streams bounded chunks (``chunk_bytes``, cut at line ends) round-robin to the
   ranks, each chunk carrying the number of the line it starts at (so errors name the
   right line).  A generator spec (``rmat:S``, ``er:N:M``) is produced per rank with the
   counter-based ``*_slice`` generators: rank r makes edges ``[r m/K, (r+1) m/K)``, and
   takes its own path (:mod:`asapgraph.partition.generated`): no id mapping, and instead
   of the shuffle of step 3 each rank sorts its slice by owner and sends each owner only
   targets and row lengths.
2. *Id mapping.*  Original int64 ids are mapped to dense ids equal to their rank in the
   global sorted order (the same numbering as :meth:`asapgraph.graph.Graph.from_original_ids`):
   a sample sort -- ranks sample their distinct ids, splitters are agreed with one
   allgather, ids go to the splitter owner (Alltoallv), owners sort-unique them, an
   exclusive scan gives each block's base, and answers go back (Alltoallv).  Generator
   specs already have dense ids ``0..n-1`` (isolated vertices included).
3. *Partitioning and shuffle.*  The owner function (:mod:`.partition`) is agreed, every
   edge is sent to the owner of its source (Alltoallv of typed arrays), and the local
   out-CSR with per-peer slots is built (:class:`LocalGraph`).  Without weights (every
   edge weighs 1) and when ``n`` is at most twice the smallest rank's edge count, each
   rank instead sorts its slice into the owners' rows (:mod:`asapgraph.partition.rows`,
   the path of generator specs): one counting sort, 4 bytes per edge sent instead of 8,
   no second sort on the owner (rmat:22 text on 2 ranks, load and one superstep:
   29.5 -> 19.5 CPU seconds).

Bad input found by any rank is agreed collectively (:func:`.comm.agree`): every rank
raises the same one-line error, which the CLI prints once.

This module runs the three steps and owns the collective entry
:func:`load_partitioned`; the steps live in :mod:`asapgraph.partition.reading`,
:mod:`asapgraph.partition.idmap` and :mod:`asapgraph.partition.local_graph`, the memory
discipline they share in :mod:`asapgraph.partition.memory`.  The public names of those
modules are re-exported here.
"""
from __future__ import annotations

import os
import time

import numpy as np

from asapgraph.errors import InputError
from asapgraph.comm.mpi import agree, host_core_share, mpi
from asapgraph.partition.idmap import IdMap, SpecIds, map_ids
from asapgraph.partition.local_graph import LocalGraph, build_local
from asapgraph.partition.memory import MEM_TRACE, mem_mark, phase, trim_malloc, tune_malloc
from asapgraph.partition.partitioners import Partition, range_partition
from asapgraph.partition.reading import (DenseEdges, agree_konect, read_local_edges,
                                        scatter_whole_file)
from asapgraph.partition.rows import fits, local_from_slice

__all__ = ["load_partitioned", "LocalGraph", "read_local_edges", "read_dense_edges",
           "build_local", "map_ids", "IdMap", "MEM_TRACE"]


def read_dense_edges(source, comm, weighted, undirected, weight_col, chunk_bytes, seed,
                     progress=None, header=False):
    """This rank's edges with global dense ids (collective): ``(src, dst, w, n, idmap)``.

    Reads the rank's share (:func:`read_local_edges`), adds reverse edges when
    ``undirected`` (self-loops once), maps original ids to dense ones (generator specs
    already have them), and refuses a graph with no edges on every rank.  ``progress``
    (rank 0's :class:`asapgraph.progress.Progress`, None elsewhere) gets a line per phase.
    ``header``: a text edge list's header line is skipped (refused for other inputs).
    """
    t0 = time.perf_counter()
    info = {}
    agree_konect(source, comm, undirected)
    whole = scatter_whole_file(source, comm, weighted, undirected, weight_col, header)
    if whole is not None:  # rank 0 read it (undirected applied there, as on one process)
        source, undirected = whole, False
        phase(progress, f"read {whole.name} on rank 0 and scattered it: {whole.n:,} "
                        "vertices", t0)
    src, dst, w, n_spec = read_local_edges(source, comm, weighted, weight_col, chunk_bytes, seed,
                                           info, header=header and whole is None)
    mem_mark("read")
    phase(progress, f"read {len(src):,} edges on rank 0", t0)
    if undirected:
        nl = src != dst
        src, dst = np.concatenate([src, dst[nl]]), np.concatenate([dst, src[nl]])
        if w is not None:
            w = np.concatenate([w, w[nl]])
    if n_spec is None:
        held = [src, dst]
        del src, dst
        src, dst, n, idmap = map_ids(comm, held, info.get("max_id"))
        mem_mark("map_ids")
        phase(progress, f"mapped ids: {n:,} vertices", t0)
    else:
        n = int(n_spec)
        idmap = info.get("idmap") or SpecIds(n)  # a binary graph's own ids, else identity
    if n == 0:
        from asapgraph.graph.io._text import display_name

        agree(comm, InputError(display_name(source) if isinstance(source, (str, os.PathLike))
                               else None, None, "no edges found"))  # as on one process
    return src, dst, w, n, idmap


def _is_spec(source):
    from asapgraph.graph.generators import is_spec

    return isinstance(source, str) and is_spec(source) and not os.path.exists(source)


def load_partitioned(source, comm, partition="range", weighted=False, undirected=False,
                     weight_col=2, chunk_bytes=1 << 21, seed=None, progress=None,
                     layout="push", shares=None, header=False):
    """Read, map ids, partition and shuffle; collective over ``comm``.  ``progress``: rank
    0's :class:`asapgraph.progress.Progress` (None elsewhere), a line per phase.
    ``layout="pull"`` (BSP PageRank): where the rows path applies (unweighted, dense ids
    that fit, :mod:`asapgraph.partition.rows`), the in-rows
    (:class:`~asapgraph.partition.rows.InRows`) instead of the out-rows; elsewhere (weighted
    inputs, the general loader) the ``LocalGraph`` as for ``"push"``.  ``shares``: each
    rank's share of a range partition's balance weight (``--rebalance start``: the probed
    speeds, :func:`asapgraph.engine.rebalance.probe_speeds`; default even).  ``header``:
    a text edge list's header line is skipped (refused for other inputs, as on one process).

    Returns
    -------
    lg : LocalGraph or InRows
    part : Partition
    idmap : object with ``original(dense) -> orig`` (collective)

    The loader's OpenMP regions (id maps, counting sorts, CSR builds) run on at most this
    host's cores per rank (:func:`~asapgraph.comm.mpi.host_core_share`).
    """
    from asapgraph.kernels import _graph
    from asapgraph.kernels.tuning import omp_threads

    with omp_threads(min(_graph.max_threads(), host_core_share(comm))):
        return _load_partitioned(source, comm, partition, weighted, undirected, weight_col,
                                 chunk_bytes, seed, progress, layout, shares, header)


def _load_partitioned(source, comm, partition, weighted, undirected, weight_col, chunk_bytes,
                      seed, progress, layout, shares, header=False):
    MPI = mpi()
    K = comm.Get_size()
    tune_malloc()
    t0 = time.perf_counter()
    if _is_spec(source):
        from asapgraph.partition.generated import load_spec

        err = None
        try:
            from asapgraph.graph.generators import parse_spec

            if header:
                from asapgraph.graph.io._readers import header_refusal

                raise header_refusal(source, "spec")
            parse_spec(source)
        except Exception as e:  # noqa: BLE001
            err = e
        agree(comm, err)
        got = load_spec(source, comm, partition, weighted, undirected, seed, progress,
                        "pull" if layout == "pull" and not weighted else "push", shares)
        if got is not None:
            comm.Barrier()
            del MPI
            return got
    src, dst, w, n, idmap = read_dense_edges(source, comm, weighted, undirected, weight_col,
                                             chunk_bytes, seed, progress, header)
    if weighted:  # PageRank's loader: the check of the single-process pagerank, on all ranks
        from asapgraph.options import negative_weights_error

        neg = comm.allreduce(int(w is not None and w.size > 0 and float(w.min()) < 0), op=MPI.MAX)
        if neg:  # rank 0 names the line of the first one (it can read the file)
            from asapgraph.graph.io._text import display_name

            path = source if isinstance(source, str) else (
                source.name if isinstance(source, DenseEdges) and source.local else None)
            agree(comm, negative_weights_error(None if path is None else display_name(path),
                                               path if comm.Get_rank() == 0 else None,
                                               weight_col + 1, header=header))
    if n < 2**31 - 1:  # dense ids fit in int32: halve the exchanged volume
        src, dst = src.astype(np.int32, copy=False), dst.astype(np.int32, copy=False)
    if w is None and fits(comm, n, len(src)):  # unit weights: rows to the owners
        edges = [src, dst]
        del src, dst
        # the arrays are the loader's own unless the caller handed them in (DenseEdges)
        lg, part = local_from_slice(comm, edges, n, partition, weighted, progress, t0,
                                    "pull" if layout == "pull" and not weighted else "push",
                                    shares, scratch=not isinstance(source, DenseEdges))
        return _finish(comm, lg, part, idmap)
    if partition == "range":
        part = range_partition(comm, src, n, shares)
        mem_mark("range_bounds")
    else:
        part = Partition(partition, K, n)
    edges = [src, dst, w]
    del src, dst, w
    phase(progress, f"partitioned ({part.kind}) over {K} ranks", t0)
    lg = build_local(comm, part, edges, n, weighted, progress)
    trim_malloc()
    mem_mark("build_local")
    phase(progress, f"built the local graphs: rank 0 holds {lg.nloc:,} vertices, "
                     f"{lg.mloc:,} edges", t0)
    return _finish(comm, lg, part, idmap)


def _finish(comm, lg, part, idmap):
    lg.orig = idmap.original(lg.owned)
    mem_mark("orig")
    comm.Barrier()
    return lg, part, idmap
