"""Layout and threading thresholds shared by the single-process PageRank and a BSP rank.

Both run the same sweep kernel (:func:`asapgraph.kernels._pagerank.sweep`); these are the
measured switch points of its inputs, kept in one place so a rank lays out its rows
exactly as one process would.
"""

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
