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
  custom combiner must be a commutative, associative numpy ufunc (checked on a few small values of
  ``value_dtype`` when the program is validated: ``np.subtract`` or ``np.power`` is
  refused with a :class:`ProgramError`).
* ``state`` is opaque to the engine (an array, or a dict of arrays aligned with the local
  vertices); the engine only reads ``scatter``'s output and ``result``'s output.
* ``apply`` must return new arrays (not modify ``state`` in place) when the program
  defines ``residual``, which compares the old and the new state.
* :func:`asapgraph.programs.run` with a communicator of more than one rank calls
  ``asapgraph.engine.distributed.run(program, graph, mode=, max_iter=, tol=, comm=, progress=)``,
  which returns a ``ProgramResult`` (values on rank 0).

When the hooks run and what they receive
----------------------------------------
``setup(ctx)``
    once, before anything else (precompute per-vertex constants on ``self``).
``aggregate(ctx, x)`` and ``ctx.aggregates``
    value form: called with the state after ``init`` and after every ``apply``; the
    partial values it returns (a dict ``name -> scalar or array``) are reduced over the
    ranks with ``aggregators[name]`` (sum by default) in sorted name order, and the
    result is ``ctx.aggregates`` during the *next* superstep's ``scatter``/``apply``
    (Pregel).  Accumulative sum programs: called once per round with ``sent``, the deltas
    the local vertices sent that round (zero where a vertex sent nothing), and the reduced
    values are ``ctx.aggregates`` in that round's ``post_delta``.  ``sent`` holds the raw
    deltas, before ``coef`` (what was folded into the vertices' values; the edges carried
    ``coef * sent``).  Min/max programs never call it.  ``ctx.aggregates`` is ``{}`` until
    the first reduction.
``post_delta(ctx, deltas)``
    accumulative sum programs only, once per round after the round's messages were
    added to the pending ``deltas`` (local vertices); returns the new pending deltas
    (e.g. add a global term such as PageRank's dangling mass from ``ctx.aggregates``).
    Overriding it makes the engine call ``aggregate`` first.
``result(ctx, state)``
    once at the end, over the local vertices.

Checked return values
---------------------
Every array a callback returns is checked as it comes back (see :func:`validate_program`):
one value per local vertex (``init``, ``init_delta``, ``scatter``, ``apply``, ``coef``,
``post_delta``, ``result``) or per edge (``message``), and values that convert to
``value_dtype`` without changing kind (an int64 program whose ``scatter`` returns floats is
refused, a float program may return ints).  A failure raises :class:`ProgramError` naming
the program and the callback, e.g. ``SeededKatz.init_delta() returned deltas of shape
(10,), expected (12,): one value per local vertex``.

Running at most ``k`` steps
---------------------------
``run(program, graph, steps=k)`` runs ``k`` supersteps (BSP; rounds of the delta form)
whatever the residual, and reports ``converged=True``: the run did what was asked.  It
stops earlier only at a fixpoint (no active vertex, no pending delta, a step whose
residual is 0), where further steps would change nothing; ``iterations`` is the number
run.  ``asapgraph run ... --steps K`` is the command-line form.
"""
from __future__ import annotations

import functools

import numpy as np

from asapgraph.errors import InputError

__all__ = ["VertexProgram", "Context", "COMBINERS", "EDGE_OPS", "DIRECTIONS",
           "validate_program", "combiner_identity", "ProgramError", "check_finite_weights"]

#: built-in combiners (engine codes)
COMBINERS = {"sum": 0, "min": 1, "max": 2}
#: built-in edge operators: message of an edge u->v with weight w given the value x_u sent by u
EDGE_OPS = {"copy": 0, "mul": 1, "add": 2, "add_one": 3}
#: "out": messages flow along edges (u->v); "in": against them; "both": either way
DIRECTIONS = ("out", "in", "both")
#: the collect pseudo-combiner: ``apply`` receives every message, grouped per target
COLLECT = "collect"


class ProgramError(InputError):
    """A program's declarations or a callback's return value are wrong.

    ``str(err)`` is one line ``PROGRAM: what is wrong`` (the CLI prints it, exit 2).
    """

    def __init__(self, program, message):
        super().__init__(getattr(program, "name", None) or type(program).__name__, None, message)


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
        Original (user) ids of the local vertices.  With ``--labels`` (vertices named by
        text) these are the dense ids ``0..n-1``, numbered in the sorted order of the
        names (``np.unique``); the names themselves are not visible to callbacks (on K
        ranks only rank 0 holds them): pass a vertex to a program as its dense id, e.g.
        ``np.searchsorted(graph.labels, name)`` in Python.
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


#: built-in edge operators that read the edge weight (copy and add_one do not)
WEIGHTED_EDGE_OPS = ("mul", "add")


def reads_edge_weights(program):
    """Whether ``program``'s result can depend on edge weights: it declares
    ``reads_weights`` (it reads them outside the edge operators), or ``use_weights``
    with an edge operator that reads them (``mul``, ``add``, or None: ``message``
    gets the weights).  ``copy`` and ``add_one`` never read them: with those the
    weights change nothing, whatever ``use_weights`` says."""
    if getattr(program, "reads_weights", False):
        return True
    return bool(getattr(program, "use_weights", True)) and (
        getattr(program, "edge_op", "copy") in WEIGHTED_EDGE_OPS + (None,))


def check_finite_weights(program, ctx):
    """Refuse a non-finite edge weight, for a program that reads the weights
    (``use_weights``, or ``reads_weights`` for one that reads them outside the edge
    operators, as SSSP), in the words a text file gets: ``edge weight inf is not a
    finite number``.  Files are checked at their line when read; graphs converted from
    objects (scipy, networkx, arrays, pandas) were not, and Katz, HITS, SSSP and
    PageRankProgram then refused with an overflow or spectral-bound message that did
    not name the weight.  Collective (one allreduce on ranks): the same value is named
    on every rank."""
    if not ctx.weighted or not reads_edge_weights(program):
        return
    w = getattr(ctx.graph, "weights", None)
    code = 3
    if w is not None and w.size:
        w = np.asarray(w)
        if not np.isfinite(w).all():
            code = 0 if np.isnan(w).any() else (1 if np.isposinf(w).any() else 2)
    code = int(ctx.allreduce(code, "min"))
    if code < 3:
        from asapgraph.errors import InputError

        raise InputError(getattr(ctx.graph, "source", None) or "<graph>", None,
                         f"edge weight {('nan', 'inf', '-inf')[code]} is not a finite number")


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
        Built-in edge operator (run in Cython): the message of an edge ``u -> v`` of weight
        ``w`` when ``u`` sends ``x`` is ``x`` (copy), ``x * w`` (mul), ``x + w`` (add) or
        ``x + 1`` (add_one); ``w`` is 1 on unweighted graphs and when ``use_weights`` is
        False.  (Sum-accumulative programs send ``x = coef_u * delta_u`` and need a linear
        op, copy or mul.)  None calls ``message`` instead: value form (BSP) only, an
        accumulative program needs a built-in op.
    use_weights : bool
        Edge operators read the edge weights of weighted graphs (else every weight is 1).
    reads_weights : bool, optional
        The program reads the weights outside the edge operators (``ctx.out_weight``, the
        graph's weights in ``setup``), as SSSP does: with ``use_weights = False`` and
        without it, ``asapgraph run --weighted`` is refused (the weights would change
        nothing) and non-finite weights are not checked.
    accumulative : bool
        The program has Maiter's delta form (see module docstring) and may run in ASAP.
    aggregators : dict
        ``name -> "sum" | "min" | "max"``: how ``aggregate``'s partial values are reduced.
    default_tol, default_max_iter : float, int
        Used when ``run`` is not given ``tol`` / ``max_iter``.

    Optional method ``error_factor(ctx)`` (accumulative sum programs)
        A number ``F`` (finite, ``>= 0``; refused otherwise) such that the L1 error of the
        result is at most ``F`` times the pending delta mass ``sum |delta|`` (e.g. ``1 /
        (1 - d)`` for a PageRank-like program whose coefficients sum to at most ``d < 1``
        per vertex; the built-in Katz and PageRank define it).  ``tol`` then bounds the L1
        error of the result: the engines stop at a mass ``<= tol / F``, and
        ``stats["error_bound"]`` reports ``F * mass``.  Without it (or returning None)
        ``tol`` is the threshold of the pending mass itself and ``error_bound`` is None.
        Called once after ``setup`` (collectively on ranks).

    Optional method ``error_units(ctx)`` (with ``error_factor``)
        ``(scale, unit)`` for a program that solves in a scaled unit (the built-in Katz:
        ``init_delta`` returns ``beta / scale``, ``result`` multiplies by ``scale``):
        ``stats["error_bound"]`` is then ``scale * F * mass`` (the values' unit), ``tol``
        bounds the error over ``unit`` (engines stop at ``F * mass <= tol * unit /
        scale``), and ``stats["relative_error_bound"]`` is ``error_bound / unit``.

    Combiner identities (``combined[v]`` where no message arrived, the initial values of
    the delta form of min/max programs, "unreached"): sum 0; min ``+inf`` (float64) or
    ``np.iinfo(np.int64).max``; max ``-inf`` or ``np.iinfo(np.int64).min``.  A value
    at the identity is never sent.
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
        # duck typing is allowed, but the declarations must be there (every one the
        # checks below and the engines read without a default: a missing edge_op was
        # an AttributeError, "internal error ... this is a bug")
        for attr in ("combiner", "direction", "edge_op", "accumulative"):
            if not hasattr(program, attr):
                raise TypeError(f"{type(program).__name__} is not a vertex program (no attribute {attr!r}; "
                                "subclass asapgraph.programs.VertexProgram)")
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
    vd = getattr(program, "value_dtype", np.float64)
    try:
        vd = np.dtype(vd)
    except TypeError:
        raise ProgramError(program, f"value_dtype {vd!r} is not a numpy dtype") from None
    if program.accumulative and comb == "sum" and vd != np.dtype(np.float64):
        raise ProgramError(program, f"sum-accumulative programs need value_dtype float64, not {vd} "
                           "(deltas are scaled by coef() and summed as floats)")
    _check_defined(program)
    if isinstance(comb, np.ufunc):
        _check_order_free(program, comb, vd)
    builtin_path = isinstance(comb, str) and comb != COLLECT and program.edge_op is not None
    if builtin_path and vd not in (np.dtype(np.float64), np.dtype(np.int64)):
        raise ProgramError(program, f"value_dtype {vd} with the built-in combiner {comb!r} and edge_op "
                           f"{program.edge_op!r}: the kernels take float64 or int64 (use a custom "
                           "message()/ufunc combiner for other dtypes)")
    return _with_checks(program, vd)


def _check_order_free(program, comb, vd):
    """Refuse a ufunc combiner that is not commutative and associative on a few small
    values of ``value_dtype`` (e.g. ``np.subtract``, ``np.power``, ``np.arctan2``).

    The engines combine the messages to a vertex in an order that depends on the edge
    layout, the rank count and (on ranks) the boundary exchange: such a combiner gave a
    different answer on every rank count.  A probe cannot prove the laws, but it catches
    the ufuncs that break them on ordinary values; one that cannot run on the dtype is
    left to fail where it is used."""
    vd = np.dtype(vd)
    if vd.kind not in "biuf":
        return
    base = [0, 1, 2, 3, 7] + ([-1] if vd.kind in "if" else []) + ([0.5] if vd.kind == "f" else [])
    if vd.kind == "b":
        base = [False, True]
    for values in (base, [v for v in base if v >= 0]):  # (np.power refuses ints ** -1)
        vals = np.asarray(values).astype(vd)
        a, b, c = (x.ravel() for x in np.meshgrid(vals, vals, vals, indexing="ij"))
        try:
            with np.errstate(all="ignore"):
                ab, ba = comb(a, b), comb(b, a)
                left, right = comb(ab, c), comb(a, comb(b, c))
            break
        except Exception:  # noqa: BLE001 - not defined on this dtype: fails where it is used
            continue
    else:
        return
    a, b, c = a.tolist(), b.tolist(), c.tolist()

    def same(x, y):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype.kind in "fc" or y.dtype.kind in "fc":
            return np.isclose(x, y, rtol=1e-12, atol=0.0, equal_nan=True)
        return x == y

    law = None
    if not same(ab, ba).all():
        law, i = "commutative", int(np.flatnonzero(~same(ab, ba))[0])
        example = f"{comb.__name__}({a[i]!r}, {b[i]!r}) != {comb.__name__}({b[i]!r}, {a[i]!r})"
    elif not same(left, right).all():
        law, i = "associative", int(np.flatnonzero(~same(left, right))[0])
        example = (f"{comb.__name__}({comb.__name__}({a[i]!r}, {b[i]!r}), {c[i]!r}) != "
                   f"{comb.__name__}({a[i]!r}, {comb.__name__}({b[i]!r}, {c[i]!r}))")
    if law is not None:
        raise ProgramError(program, f"combiner np.{comb.__name__} is not {law} ({example}): the "
                           "engines combine a vertex's messages in an order that depends on the "
                           "edge layout and the rank count, so the answer would too; use a "
                           "commutative, associative ufunc (np.add, np.maximum, np.bitwise_or, "
                           "...) or combiner 'collect'")


def _check_defined(program):
    """The callbacks the program's form needs are defined (not the base class's)."""
    if not isinstance(program, VertexProgram):
        return  # duck typing: the engines will call what is there
    cls = type(program)

    def own(cb):
        return getattr(cls, cb, None) is not getattr(VertexProgram, cb)

    name = cls.__name__
    if program.accumulative and program.combiner == "sum":
        if not own("init_delta"):
            raise ProgramError(program, f"{name} is a sum-accumulative program (accumulative = "
                               "True, combiner 'sum') but does not define init_delta(ctx) -> "
                               "(values, deltas)")
    elif program.accumulative:
        if not (own("init") or own("init_delta")):
            raise ProgramError(program, f"{name} is a {program.combiner}-accumulative program but "
                               "defines neither init(ctx) (the initial values) nor "
                               "init_delta(ctx)")
    else:
        missing = [cb for cb in ("init", "apply") if not own(cb)]
        if missing:
            raise ProgramError(program, f"{name} is a value-form program (accumulative = False) "
                               f"but does not define {' nor '.join(m + '()' for m in missing)}")


def exact_steps(program, steps, mode):
    """``(max_iter, tol)`` of a run of ``steps`` steps, fewer at a fixpoint (see the module
    docstring)."""
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ProgramError(program, f"steps must be a whole number >= 0, not {steps!r}")
    if mode != "bsp":
        raise ProgramError(program, "steps=k runs k synchronous supersteps: it needs mode='bsp' "
                           "(ASAP has no global steps)")
    return int(steps), 0.0


def finish_steps(result, steps):
    """A run of ``steps`` supersteps did what was asked: report it converged."""
    if result.iterations <= steps:
        result.converged = True
    return result


# ---------------------------------------------------------------------- checked callbacks
def _kind_ok(got, want):
    """Values of dtype ``got`` may become ``want`` (bool->int->float; never float->int)."""
    return got == want or np.can_cast(got, want, casting="same_kind")


def _check(program, cb, what, value, n, dtype=None, per="local vertex"):
    """``value`` as a 1-D array of ``n`` values (of ``dtype`` when given), or ProgramError."""
    name = f"{type(program).__name__}.{cb}()"
    try:
        arr = np.asarray(value)
    except Exception as e:  # noqa: BLE001 - ragged lists and the like
        raise ProgramError(program, f"{name} returned {what} that is not an array ({e})") from None
    # (no local count in these lines: a rank's n differs from one process's, and the
    # same program must be refused with the same line on 1 and K ranks)
    if arr.ndim == 0:
        raise ProgramError(program, f"{name} returned {what} as a scalar {arr.item()!r}, expected "
                           f"a 1-D array: one value per {per}")
    if arr.ndim != 1:
        raise ProgramError(program, f"{name} returned {what} of {arr.ndim} dimensions, expected "
                           f"a 1-D array: one value per {per}")
    if arr.shape != (n,):
        raise ProgramError(program, f"{name} returned {what} with {_more_or_fewer(arr.shape[0], n)} "
                           f"values than expected: one value per {per}")
    if dtype is not None and not _kind_ok(arr.dtype, dtype):
        raise ProgramError(program, f"{name} returned {what} of dtype {arr.dtype}, which does not "
                           f"convert to the program's value_dtype {dtype} without losing values "
                           "(declare value_dtype, or cast in the callback)")
    return value


def _more_or_fewer(got, n):
    """``'more'`` or ``'fewer'``: how ``got`` rows compare with the ``n`` expected (the
    counts themselves are local: a rank's differ from one process's)."""
    return "more" if got > n else "fewer"


def _check_numbers(program, cb, what, value, finite):
    """Refuse NaN in ``value`` (and +-inf too when ``finite``), naming the callback.

    NaN has no order: a min/max combine keeps or drops it depending on the order in which
    offers meet (so the answer would depend on the mode and the rank count); a sum
    program's non-finite delta or coefficient poisons every vertex it reaches."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "fc" or arr.size == 0:
        return value
    bad = not np.isfinite(arr).all() if finite else np.isnan(arr).any()
    if not bad:
        return value
    name = f"{type(program).__name__}.{cb}()"
    if finite:  # (the same words whatever the local mix of NaN and inf: same line on K ranks)
        raise ProgramError(program, f"{name} returned non-finite {what} (NaN or inf): a sum "
                           f"program's {what} must be finite numbers")
    raise ProgramError(program, f"{name} returned {what} with NaN: a min/max program cannot "
                       "order NaN (the answer would depend on the order of the updates); use "
                       "inf or -inf for 'no value'")


def _minmax_init_values(out):
    """The values of an accumulative min/max ``init``: ``out`` or ``out[0]`` of
    ``(values, active)`` (as the default ``init_delta`` reads them)."""
    return out[0] if isinstance(out, tuple) else out


def _check_state(program, cb, out, n, active_expected):
    """``state`` or ``(state, active)``; arrays in the state have ``n`` rows."""
    state, active = out, None
    if active_expected and isinstance(out, tuple) and len(out) == 2:
        state, active = out
    if not isinstance(state, (dict, np.ndarray, list, tuple)):
        raise ProgramError(program, f"{type(program).__name__}.{cb}() returned a state of type "
                           f"{type(state).__name__}, expected an array (or a dict of arrays) "
                           "with one row per local vertex")
    parts = state.values() if isinstance(state, dict) else [state]
    for part in parts:  # (no local count in the lines: the same line on 1 and K ranks)
        if isinstance(part, np.ndarray) and part.ndim >= 1 and part.shape[0] != n:
            raise ProgramError(program, f"{type(program).__name__}.{cb}() returned a state array of "
                               f"{_more_or_fewer(part.shape[0], n)} rows than expected: one per "
                               "local vertex")
    if active is not None:
        if not (isinstance(active, np.ndarray) and active.dtype == np.bool_):
            return out  # not the (state, active) form: a 2-tuple state
        if active.shape != (n,):
            raise ProgramError(program, f"{type(program).__name__}.{cb}() returned an active mask "
                               f"that is not a 1-D array of one value per local vertex")
    return out


_CHECKED_CLASSES = {}


def program_class(program):
    """The program's own class (the one the user wrote), behind the checking subclass."""
    cls = type(program)
    return cls.__mro__[1] if cls.__dict__.get("_asapgraph_checked") else cls


def _with_checks(program, vd):
    """``program`` seen through a subclass whose callbacks check what they return.

    The returned object shares the user's instance ``__dict__`` (what ``setup`` and the
    callbacks store on ``self`` is on the user's object after the run, as before), and its
    class derives from the program's class; ``post_delta`` is wrapped only where the
    program defines it, so engines that look up overridden hooks on ``type(program)`` see
    the same answer.
    """
    cls = type(program)
    if getattr(cls, "_asapgraph_checked", False) or not hasattr(program, "__dict__"):
        return program
    sub = _CHECKED_CLASSES.get((cls, vd))
    if sub is None:
        sub = _CHECKED_CLASSES[(cls, vd)] = _checked_class(cls, vd)
    p = object.__new__(sub)
    try:
        p.__dict__ = program.__dict__
    except (AttributeError, TypeError):  # an exotic class: run unchecked rather than fail
        return program
    return p


def _checked_class(cls, vd):
    n = lambda ctx: int(ctx.n_local)  # noqa: E731
    # the state goes to the edge map as it is when the program keeps the default scatter:
    # check its dtype where it is made (init, apply), naming that callback
    state_is_sent = getattr(cls, "scatter", None) is VertexProgram.scatter
    minmax = lambda self: self.combiner in ("min", "max")  # noqa: E731 - built-in min/max

    def sent_state(self, cb, out, ctx):
        state = out[0] if isinstance(out, tuple) and len(out) == 2 else out
        if state_is_sent and isinstance(state, np.ndarray) and state.ndim == 1:
            _check(self, cb, "a state", state, n(ctx), vd)
            if minmax(self):
                _check_numbers(self, cb, "a state", state, finite=False)

    def init(self, ctx, out):
        if self.accumulative and minmax(self):
            # the initial values of a min/max program (read by the default init_delta)
            vals = _minmax_init_values(out)
            _check(self, "init", "values", vals, n(ctx), vd)
            _check_numbers(self, "init", "values", vals, finite=False)
            return out
        out = _check_state(self, "init", out, n(ctx), True)
        sent_state(self, "init", out, ctx)
        return out

    def apply(self, ctx, out):
        out = _check_state(self, "apply", out, n(ctx), True)
        sent_state(self, "apply", out, ctx)
        return out

    def init_delta(self, ctx, out):
        if not (isinstance(out, tuple) and len(out) == 2):
            raise ProgramError(self, f"{cls.__name__}.init_delta() must return (values, deltas), "
                               f"not {type(out).__name__}")
        finite = not minmax(self)
        for what, arr in zip(("values", "deltas"), out):
            _check(self, "init_delta", what, arr, n(ctx), vd)
            _check_numbers(self, "init_delta", what, arr, finite)
        return out

    def scatter(self, ctx, out):
        _check(self, "scatter", "values", out, n(ctx), vd)
        if minmax(self):
            _check_numbers(self, "scatter", "values", out, finite=False)
        return out

    def coef(self, ctx, out):
        if out is None:
            return out
        _check(self, "coef", "coefficients", out, n(ctx), np.dtype(np.float64))
        return _check_numbers(self, "coef", "coefficients", out, finite=True)

    def post_delta(self, ctx, out):
        _check(self, "post_delta", "deltas", out, n(ctx), vd)
        return _check_numbers(self, "post_delta", "deltas", out, finite=True)

    def message(self, ctx, out, x_src):
        return _check(self, "message", "messages", out, len(x_src), None, per="edge")

    def result(self, ctx, out):
        parts = out.values() if isinstance(out, dict) else [out]
        for part in parts:
            _check(self, "result", "a column", part, n(ctx))
        return out

    body = {"_asapgraph_checked": True, "__module__": cls.__module__,
            "__qualname__": cls.__qualname__}
    checks = {"init": init, "apply": apply, "init_delta": init_delta, "scatter": scatter,
              "coef": coef, "post_delta": post_delta, "message": message, "result": result}
    for cb, check in checks.items():
        if cb == "post_delta" and getattr(cls, cb, None) is getattr(VertexProgram, cb):
            continue  # the engines skip a post_delta the program does not define
        if callable(getattr(cls, cb, None)):
            body[cb] = _checked_method(getattr(cls, cb), check, cb == "message")
    return type(cls.__name__, (cls,), body)


def _checked_method(fn, check, pass_first_arg):
    @functools.wraps(fn)
    def checked(self, ctx, *args):
        out = fn(self, ctx, *args)
        return check(self, ctx, out, args[0]) if pass_first_arg else check(self, ctx, out)

    return checked
