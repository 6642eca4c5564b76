"""The public vertex-program API: what a program declares and what an engine calls.

Design
------
A program is a small Python class.  It never loops over vertices or edges: every callback
receives numpy arrays over *all the vertices the engine hands it at once* (the whole graph
in the single-process runner, the rank's local vertices in the distributed engine), and
the edge-level work is declared, not written: an edge operator (``edge_op``) and a
combiner run in the Cython kernels of :mod:`asapgraph.kernels._programs`.  This is
Ligra's edgeMap/vertexMap split (the program never chooses push or pull, dense or
sparse) with Pregel's combiner and aggregators, PowerGraph's gather (= edge op +
combiner) and apply, and Maiter's delta-accumulative form for programs that can run
asynchronously.

Two forms
---------
**Value form** (any program; BSP only).  Superstep ``t``:

1. ``x = scatter(ctx, state)``: the per-vertex value each *active* vertex sends.
2. For every edge ``u -> v`` in the program's ``direction`` with ``u`` active, the
   message ``edge_op(x[u], w_uv)`` (or the vectorised ``message(ctx, x_src, w)`` callback
   for a custom edge function) is combined into ``combined[v]`` with ``combiner``.
3. ``state, active = apply(ctx, state, combined, has_msg)``; vertices not in
   ``active`` send nothing next superstep.
4. Aggregates: ``aggregate(ctx, state)`` returns local partial values, reduced across
   ranks with the operator named in ``aggregators`` and visible next superstep as
   ``ctx.aggregates[name]`` (Pregel).
5. Stop when no vertex is active, when ``residual(ctx, old, new)`` (a local partial sum,
   reduced by the engine) drops below ``ctx.tol``, or at ``ctx.max_iter``.

**Accumulative (delta) form** (``accumulative = True``; runs in BSP *and* ASAP).  The
program declares Maiter's pieces: ``init_delta(ctx) -> (values, deltas)``, the combiner
``⊕`` (sum, min or max; it is also the accumulate operator: ``value ⊕= delta``), a
linear per-vertex coefficient ``coef(ctx)`` and an edge operator ``g`` such that the
fixed point is ``v = c ⊕ (⊕_u g_uv(v_u))``.  The engine keeps a value and a pending delta
per vertex; processing a vertex folds its delta into its value and sends
``edge_op(coef_u * delta_u, w_uv)`` (sum) or ``edge_op(value_u, w_uv)`` (min/max, only
when the value improved) to its targets' deltas.  Because the combine is commutative,
associative and (for sums) the edge function is linear, the fixed point does not depend
on the order of processing: BSP processes all pending deltas in lock step (Jacobi),
ASAP as soon as they arrive (Gauss-Seidel, per-peer buffers in the distributed engine).
Optional hooks (sum programs; monotone min/max programs need no global terms and do not
get these calls): ``aggregate(ctx, sent)`` over the deltas sent in the round (e.g.
PageRank's dangling mass) and ``post_delta(ctx, deltas)`` to add a global term.
Termination: for sums, when the pending mass ``sum |delta|`` is at most ``ctx.tol``
(a vertex is processed only when ``|delta_u| > tol / n``); for min/max, when no delta
improves a value.

Engine-facing contract (what the distributed engine must honour too)
--------------------------------------------------------------------
* Every callback is called collectively (by every rank, in the same order), with arrays
  over the rank's local vertices; ``ctx.allreduce`` may be called inside callbacks.
* ``ctx.vertices`` (dense global ids), ``ctx.ids`` (original ids), ``ctx.out_degree``,
  ``ctx.in_degree``, ``ctx.out_weight`` are local arrays; ``ctx.n`` is the global count.
* Boundary messages are combined with the same ``combiner`` before they are applied, so a
  custom combiner must be a commutative, associative numpy ufunc.
* ``state`` is opaque to the engine (an array, or a dict of arrays aligned with the local
  vertices); the engine only reads ``scatter``'s output and ``result``'s output.
* ``apply`` must return new arrays (not modify ``state`` in place) when the program
  defines ``residual``, which compares the old and the new state.
* Phase 2: :func:`asapgraph.programs.run` with a communicator of more than one rank calls
  ``asapgraph.engine.distributed.run(program, graph, mode=, max_iter=, tol=, comm=, progress=)``
  (to be provided by the MPI engine), which must return a ``ProgramResult``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["VertexProgram", "Context", "COMBINERS", "EDGE_OPS", "DIRECTIONS",
           "validate_program", "combiner_identity"]

#: built-in combiners (engine codes)
COMBINERS = {"sum": 0, "min": 1, "max": 2}
#: built-in edge operators: message of an edge u->v with weight w given the value x_u sent by u
EDGE_OPS = {"copy": 0, "mul": 1, "add": 2, "add_one": 3}
#: "out": messages flow along edges (u->v); "in": against them; "both": either way
DIRECTIONS = ("out", "in", "both")
#: the collect pseudo-combiner: ``apply`` receives every message, grouped per target
COLLECT = "collect"


def combiner_identity(combiner, dtype):
    """Identity element of a built-in combiner for ``dtype`` (float64 or int64)."""
    dtype = np.dtype(dtype)
    if combiner == "sum":
        return dtype.type(0)
    if dtype.kind == "f":
        return dtype.type(np.inf if combiner == "min" else -np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.max if combiner == "min" else info.min)


class Context:
    """What callbacks see about the run: the graph's local view, counters, reductions.

    Attributes
    ----------
    graph : Graph
        The whole graph (single process) or the rank's part (distributed).
    n : int
        Global number of vertices.
    n_local : int
        Number of vertices handed to callbacks (``== n`` on one process).
    vertices : int64 array
        Dense global ids of the local vertices.
    ids : int64 array
        Original (user) ids of the local vertices.
    out_degree, in_degree : int64 arrays
        Degrees of the local vertices (parallel edges and self-loops count).
    out_weight : float64 array or None
        Sums of out-edge weights (weighted graphs).
    weighted : bool
    superstep : int
        Current superstep / sweep (0-based).
    aggregates : dict
        Reduced aggregates of the previous superstep.
    tol, max_iter : float, int
        The run's tolerance and iteration cap.
    mode : str
        ``"bsp"`` or ``"asap"``.
    rank, size : int
        Position in the communicator (0 and 1 on one process).
    direction : str
        Direction of the superstep being run.
    """

    def __init__(self, graph, mode="bsp", tol=0.0, max_iter=100, comm=None):
        self.graph = graph
        self.n = graph.n
        self.n_local = graph.n
        self.vertices = np.arange(graph.n, dtype=np.int64)
        self.ids = graph.original_ids()
        self.out_degree = graph.out_degree
        self.in_degree = np.diff(graph.indptr)
        self.out_weight = graph.out_weight
        self.weighted = graph.weighted
        self.superstep = 0
        self.aggregates = {}
        self.tol = tol
        self.max_iter = max_iter
        self.mode = mode
        self.comm = comm
        self.rank = 0 if comm is None else comm.Get_rank()
        self.size = 1 if comm is None else comm.Get_size()
        self.direction = "out"

    def allreduce(self, value, op="sum"):
        """Reduce a scalar or array over all ranks (``op``: sum, min, max).

        Collective: every rank must call it at the same point.  Identity on one process.
        """
        if self.comm is None or self.size == 1:
            return value
        from asapgraph.comm.mpi import allreduce  # lazy: importing asapgraph never initialises MPI

        return allreduce(self.comm, value, op)


class VertexProgram:
    """Base class of vertex programs.  Override the attributes and callbacks you need.

    Class attributes (declarative; read by the engines)
    ---------------------------------------------------
    name : str
        Used in results and progress lines.
    value_dtype : numpy dtype
        dtype of the values sent along edges: ``np.float64`` or ``np.int64`` for the
        built-in kernels (any dtype with a custom ``message``/combiner).
    combiner : str or numpy ufunc
        ``"sum"``, ``"min"``, ``"max"`` (kernels), ``"collect"`` (``apply`` receives
        every message grouped per target as ``(indptr, messages)``) or a commutative,
        associative numpy ufunc with ``reduceat`` (e.g. ``np.bitwise_or``).
    direction : {"out", "in", "both"}
        Messages flow along the edges, against them, or both ways (undirected view).
        ``direction_at(ctx)`` may override it per superstep (HITS alternates).
    edge_op : {"copy", "mul", "add", "add_one"} or None
        Built-in edge operator (run in Cython); None calls ``message``.
    use_weights : bool
        Edge operators read the edge weights of weighted graphs (else every weight is 1).
    accumulative : bool
        The program has Maiter's delta form (see module docstring) and may run in ASAP.
    aggregators : dict
        ``name -> "sum" | "min" | "max"``: how ``aggregate``'s partial values are reduced.
    default_tol, default_max_iter : float, int
        Used when ``run`` is not given ``tol`` / ``max_iter``.
    """

    name = "program"
    value_dtype = np.float64
    combiner = "sum"
    direction = "out"
    edge_op = "copy"
    use_weights = True
    accumulative = False
    aggregators: dict = {}
    default_tol = 1e-10
    default_max_iter = 100

    # ------------------------------------------------------------------ both forms
    def setup(self, ctx):
        """Called once before ``init``/``init_delta`` (precompute per-vertex constants)."""

    def direction_at(self, ctx):
        """Direction of superstep ``ctx.superstep`` (default: ``self.direction``)."""
        return self.direction

    def message(self, ctx, x_src, weights):
        """Custom edge function (used when ``edge_op`` is None), vectorised over edges.

        ``x_src`` holds the value sent by the source of every edge, ``weights`` the edge
        weights (ones when unweighted).  Return one message per edge.
        """
        raise NotImplementedError(f"{type(self).__name__}: edge_op is None but message() is not defined")

    def aggregate(self, ctx, state):
        """Local partial aggregates ``{name: value}`` (reduced by ``aggregators``), or None."""
        return None

    def result(self, ctx, state):
        """The output: one array, or a dict ``{column: array}`` over the local vertices."""
        return state

    # ------------------------------------------------------------------ value form
    def init(self, ctx):
        """Initial state, or ``(state, active)`` with ``active`` a bool mask (None: all)."""
        raise NotImplementedError(f"{type(self).__name__} defines neither init() nor init_delta()")

    def scatter(self, ctx, state):
        """The value every vertex sends this superstep (default: ``state`` itself)."""
        return state

    def apply(self, ctx, state, combined, has_msg):
        """New state from the combined messages; returns ``state`` or ``(state, active)``.

        ``combined[v]`` is the identity of the combiner where ``has_msg[v]`` is False.
        """
        raise NotImplementedError(f"{type(self).__name__} must define apply()")

    def residual(self, ctx, old, new):
        """Local part of a convergence measure (summed over ranks), or None (no test)."""
        return None

    # ------------------------------------------------------------------ delta form
    def init_delta(self, ctx):
        """``(values, deltas)`` of the delta form.

        Default for min/max programs: values at the identity, deltas = ``init(ctx)``.
        """
        if self.combiner in ("min", "max"):
            init = self.init(ctx)
            if isinstance(init, tuple):
                init = init[0]
            init = np.asarray(init, dtype=self.value_dtype)
            values = np.full(ctx.n_local, combiner_identity(self.combiner, self.value_dtype),
                             dtype=self.value_dtype)
            return values, init.copy()
        raise NotImplementedError(f"{type(self).__name__}: sum-accumulative programs must define init_delta()")

    def coef(self, ctx):
        """Per-vertex coefficient of the delta sent (sum programs); None means 1."""
        return None

    def post_delta(self, ctx, deltas):
        """Global term added after each round (after ``aggregate`` over the sent deltas)."""
        return deltas


def validate_program(program, mode="bsp"):
    """Check a program's declarations; raise ``ValueError``/``TypeError`` with the reason.

    Returns the program instance (a class is instantiated with no arguments).
    """
    if isinstance(program, type):
        program = program()
    if not isinstance(program, VertexProgram):
        # duck typing is allowed, but the declarations must be there
        for attr in ("combiner", "direction"):
            if not hasattr(program, attr):
                raise TypeError(f"{program!r} is not a vertex program (no attribute {attr!r})")
    name = getattr(program, "name", type(program).__name__)
    comb = program.combiner
    if isinstance(comb, str):
        if comb not in COMBINERS and comb != COLLECT:
            raise ValueError(f"{name}: unknown combiner {comb!r} (sum, min, max, collect or a numpy ufunc)")
    elif not (isinstance(comb, np.ufunc) and comb.nin == 2):
        raise TypeError(f"{name}: combiner must be 'sum', 'min', 'max', 'collect' or a binary numpy ufunc")
    if program.edge_op is not None and program.edge_op not in EDGE_OPS:
        raise ValueError(f"{name}: unknown edge_op {program.edge_op!r} (one of {sorted(EDGE_OPS)} or None)")
    if program.direction not in DIRECTIONS:
        raise ValueError(f"{name}: direction must be one of {DIRECTIONS}, not {program.direction!r}")
    if mode not in ("bsp", "asap"):
        raise ValueError(f"mode must be 'bsp' or 'asap', not {mode!r}")
    if program.accumulative:
        if comb not in COMBINERS:
            raise ValueError(f"{name}: accumulative programs need a built-in combiner (sum, min or max), not {comb!r}")
        if comb == "sum" and program.edge_op not in ("copy", "mul"):
            raise ValueError(f"{name}: a sum-accumulative program needs a linear edge_op ('copy' or 'mul'), "
                             f"not {program.edge_op!r}: deltas would not add up to the same fixed point")
        if comb != "sum" and program.edge_op is None:
            raise ValueError(f"{name}: accumulative programs need a built-in edge_op")
    if mode == "asap" and not program.accumulative:
        raise ValueError(
            f"{name} cannot run in ASAP mode: it does not declare accumulative = True. ASAP applies "
            "updates asynchronously, in any order, so it is only correct for programs whose "
            "combine is commutative and associative and whose repeated application converges "
            "to the same fixed point regardless of order (sums of deltas through a linear edge "
            "function, or monotone min/max). Run it with mode='bsp'.")
    return program
