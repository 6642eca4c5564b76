"""Layout and threading thresholds shared by the single-process PageRank and a BSP rank.

Both run the same sweep kernel (:func:`asapgraph.kernels._pagerank.sweep`); these are the
measured switch points of its inputs, kept in one place so a rank lays out its rows
exactly as one process would.  :func:`omp_threads` caps OpenMP's threads for a block.
"""
import contextlib

#: ``reorder=None`` relabels vertices by out-degree when the graph has at least this many edges.
REORDER_MIN_EDGES = 1 << 20
#: ...unless the given order already has locality: at least ``LOCALITY_MIN_FRACTION`` of
#: sampled edges join ids closer than ``LOCALITY_WINDOW``.
LOCALITY_WINDOW = 1 << 12
LOCALITY_MIN_FRACTION = 0.5
#: ``threads=None`` uses one thread (no OpenMP region at all) below this many edges.
PARALLEL_MIN_EDGES = 1 << 20
#: software prefetch when the contribution array is larger than this (about L2).
PREFETCH_MIN_BYTES = 1 << 20
#: a BSP (sender, receiver) pair takes the combined message form (one partial sum per
#: remote target instead of one value per distinct source) when it ships fewer values AND
#: every value it saves pays for at least 1/``COMBINE_EDGES_PER_VALUE`` of the cut edges it
#: makes the sender combine each superstep: ``(sources - targets) * K >= cut edges``.  The
#: combine moves those edges' work from the receiver's sweep to the sender (same total,
#: but a superstep waits for the slowest rank), so a pair whose two forms ship about as
#: many values (R-MAT: within 5 %, a million cut edges per pair on rmat:20 with 4 ranks)
#: stays pulled; 32 edges (about 1.5-2 ns each) is what 8 bytes cost on a 1 Gb/s link
#: (64 ns).  cnr-2000, 4 ranks: every pair that ships fewer values combined saves 13-750
#: values per 32 edges.
COMBINE_EDGES_PER_VALUE = 32


@contextlib.contextmanager
def omp_threads(threads):
    """OpenMP's default thread count of the calling thread set to ``threads`` inside the
    block (every parallel region without an explicit count: parsing, id maps, counting
    sorts, CSR builds, sweeps, output), restored on exit; None or 0: unchanged.  Used for
    ``--threads N`` on one process (:func:`asapgraph.cli.main`) and for a rank's loader
    (:func:`asapgraph.partition.loader.load_partitioned`: the host's cores per rank)."""
    if not threads:
        yield
        return
    from asapgraph.kernels import _graph

    old = _graph.set_max_threads(int(threads))
    try:
        yield
    finally:
        _graph.set_max_threads(old)
