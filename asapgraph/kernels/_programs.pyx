# cython: language_level=3
"""Generic edge-map kernels for vertex programs (typed, nogil, OpenMP).

Rationale
---------
What: the edge-level work of every vertex program whose message is one of the built-in
edge operators and whose combiner is one of the built-in monoids, so that a program
written in Python never costs a Python call per edge.

Edge operators (``op``), applied to the value ``x_u`` sent by the source ``u`` of an
edge with weight ``w`` (``w = 1`` on unweighted graphs):
``OP_COPY`` ``x_u``; ``OP_MUL`` ``x_u * w``; ``OP_ADD`` ``x_u + w``; ``OP_ADD_ONE`` ``x_u + 1``.
Combiners (``comb``): ``COMB_SUM``, ``COMB_MIN``, ``COMB_MAX`` (commutative monoids with
identities 0, +inf / INT64_MAX, -inf / INT64_MIN).

Variants (Ligra's edgeMap, Shun & Blelloch PPoPP 2013, with its dense/sparse switch;
Beamer et al. SC 2012 for direction optimisation):

The kernels live in modules by family; this module re-exports every name, so callers
keep ``from asapgraph.kernels import _programs as K``:

* :mod:`asapgraph.kernels._edgemap`: the dense gather and sparse push edge maps
  (``gather_pull``, ``push_sparse``), the sum-accumulative delta kernels
  (``async_sweep_sum``, ``delta_select``, ``delta_select_perm``, ``add_abs_sum``) and the
  layout helpers (``scatter_perm``, ``relabel``, ``merge_csr``, ``segment_mode``);
* :mod:`asapgraph.kernels._minmax`: the min/max-accumulative kernels
  (``async_sweep_minmax``, ``async_sweep_minmax_par``, ``async_fixpoint_minmax``,
  ``union_find_fixpoint``, ``bsp_minmax``);
* :mod:`asapgraph.kernels._progthreads`: the one thread-count state every kernel above
  honours (``set_num_threads``, ``num_threads``, ``set_parallel_threshold``);
* ``_progkern.pxd``: the shared inline edge operators, combiners and atomics.

Invariants: ``indptr`` is int64 of length n+1 and non-decreasing; ``indices`` are dense
vertex ids in ``0..n-1`` (int32 or int64); weight arrays are either empty (unweighted)
or aligned with ``indices``; an empty ``active`` mask means "every source is active".
``out``/``has`` of ``push_sparse`` must be initialised by the caller (identity / 0).
The sum combiner in ``push_sparse`` with several threads is not bitwise reproducible
(float addition order), min and max are.  Threads: a kernel whose work is below
``SMALL_WORK`` runs on one thread; above, on ``set_num_threads``'s cap when set (the
``threads=`` argument of :func:`asapgraph.programs.run`) else OpenMP's default
(``OMP_NUM_THREADS``).

References: Malewicz et al., "Pregel", SIGMOD 2010; Gonzalez et al., "PowerGraph",
OSDI 2012; Shun & Blelloch, "Ligra", PPoPP 2013; Zhu et al., "Gemini", OSDI 2016;
Zhang, Gao, Gao, Wang, "Maiter: an asynchronous graph processing framework for
delta-based accumulative iterative computation", IEEE TPDS 25(8), 2014; Beamer, Asanovic,
Patterson, "Direction-optimizing breadth-first search", SC 2012; Shiloach & Vishkin,
"An O(log n) parallel connectivity algorithm", J. Algorithms 1982; Sutton, Ben-Nun,
Barak, "Optimizing parallel graph connectivity computation via subgraph sampling"
(Afforest), IPDPS 2018.
"""
from asapgraph.kernels._edgemap import (add_abs_sum, async_sweep_sum, delta_select,
                                        delta_select_perm, gather_pull, merge_csr, push_sparse,
                                        relabel, scatter_perm, segment_mode)
from asapgraph.kernels._minmax import (async_fixpoint_minmax, async_sweep_minmax,
                                       async_sweep_minmax_par, bsp_minmax, union_find_fixpoint)
from asapgraph.kernels._progthreads import num_threads, set_num_threads, set_parallel_threshold

__all__ = ["OP_COPY", "OP_MUL", "OP_ADD", "OP_ADD_ONE", "COMB_SUM", "COMB_MIN", "COMB_MAX",
           "gather_pull", "push_sparse", "async_sweep_sum", "delta_select", "delta_select_perm",
           "add_abs_sum", "scatter_perm", "relabel", "merge_csr", "segment_mode",
           "async_sweep_minmax", "async_sweep_minmax_par", "async_fixpoint_minmax",
           "union_find_fixpoint", "bsp_minmax", "set_num_threads", "num_threads",
           "set_parallel_threshold"]

OP_COPY = 0
OP_MUL = 1
OP_ADD = 2
OP_ADD_ONE = 3
COMB_SUM = 0
COMB_MIN = 1
COMB_MAX = 2
