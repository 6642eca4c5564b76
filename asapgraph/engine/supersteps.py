"""Superstep pieces shared by the single-process engine and the BSP engine on MPI ranks.

Rationale
---------
A value-form program runs the same supersteps on one process
(:mod:`asapgraph.engine.single`) and on MPI ranks (:mod:`asapgraph.engine.bsp_programs`):
only the edge map differs (a local CSR, or typed per-peer messages).  What does not
differ lives here, written once against the :class:`asapgraph.engine.program.Context`
contract (``ctx.allreduce`` is a no-op reduction on one process, collective on ranks):

* :func:`generic_edge_map` / :func:`combine_rows`: the numpy edge map of programs with a
  custom ``message()`` or combiner (ufunc, ``collect``), over CSR rows, vectorised
  (``ufunc.reduceat`` per row, no Python loop over edges);
* :func:`value_form_loop`: the supersteps of a value-form program (scatter, edge map,
  apply, residual, aggregates, termination by residual or empty active set);
* :func:`delta_loop`: the synchronous (Jacobi) supersteps of an accumulative program in
  delta form: sum programs select the deltas above ``tol / n`` and push them (dense or,
  below the Ligra threshold :data:`PUSH_FRACTION`, sparse), min/max programs push the
  improving deltas; the single process plugs in its relabelled selection and its
  one-call min/max kernel;
* :func:`split_state`, :func:`reduce_aggregates`, :func:`count_true`, :func:`better`: the
  small collective helpers the delta loops of both engines use;
* :func:`minmax_init_flags`, :func:`minmax_growth_flags`, :func:`minmax_diverged`: the one
  test, after every min/max run on one process and on ranks, that its values did not
  overflow (a program whose edge op improves values around a cycle has no fixed point).

Invariant: every rank takes the same branches (aggregates are reduced in sorted key
order; counts and residuals are reduced before they are tested).
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph import options as _options
from asapgraph.engine.program import COLLECT, VertexProgram, combiner_identity
from asapgraph.kernels import _programs as K

__all__ = ["generic_edge_map", "combine_rows", "value_form_loop", "delta_loop", "split_state",
           "reduce_aggregates", "count_true", "better", "PUSH_FRACTION", "EMPTY_W",
           "minmax_init_flags", "minmax_growth_flags", "minmax_diverged"]

#: Ligra's threshold: a sparse push when the frontier's work is below ``m / PUSH_FRACTION``
PUSH_FRACTION = 20
#: "no weights / no coefficients" for the kernels
EMPTY_W = np.zeros(0, dtype=np.float64)


def _numpy_edge_op(op, x_src, w):
    if op == "copy":
        return x_src
    if op == "mul":
        return x_src * w
    if op == "add":
        return x_src + w.astype(x_src.dtype, copy=False)
    if op == "add_one":
        return x_src + 1
    raise ValueError(op)


def generic_edge_map(prog, ctx, comb, op, indptr, indices, w, x, active, n):
    """The numpy edge map (``op`` None: the program's ``message()``; ufunc or COLLECT
    combiner ``comb``) over CSR rows
    ``indptr``/``indices`` (sources of each row) with weights ``w``, restricted to the
    sources where ``active`` is True (None: all).  Shared by the single-process and MPI
    engines.  Returns ``((combined, has), edges scanned)``."""
    src = indices
    if active is not None:
        keep = np.asarray(active, dtype=bool)[indices]
        kept = np.zeros(keep.shape[0] + 1, dtype=np.int64)
        np.cumsum(keep, out=kept[1:])
        indptr = kept[indptr]            # kept edges before each row start
        src = indices[keep]
        if w is not None:
            w = w[keep]
    x_src = np.asarray(x)[src]
    ww = w if (w is not None and prog.use_weights) else np.ones(src.shape[0])
    if op is None:
        msgs = np.asarray(prog.message(ctx, x_src, ww))
    else:
        msgs = _numpy_edge_op(op, x_src, ww)
    return combine_rows(comb, indptr, msgs, n), int(src.shape[0])


def combine_rows(comb, indptr, msgs, n):
    """Combine per-edge ``msgs`` grouped in CSR rows ``indptr`` into one value per row.

    Returns ``(combined, has)``: ``has[v]`` says whether row ``v`` got a message; rows
    without one hold the combiner's identity.  ``comb == COLLECT`` returns
    ``((indptr, msgs), has)`` untouched.  Shared by the single-process and MPI engines.
    """
    has = np.diff(indptr) > 0
    if comb == COLLECT:
        return (indptr, msgs), has
    ufunc = {"sum": np.add, "min": np.minimum, "max": np.maximum}.get(comb, comb)
    out = np.zeros(n, dtype=msgs.dtype)
    if msgs.size:
        out[has] = ufunc.reduceat(msgs, indptr[:-1][has])
    if isinstance(comb, str):
        out[~has] = combiner_identity(comb, msgs.dtype) if msgs.dtype.kind in "fi" else 0
    elif ufunc.identity is not None:
        out[~has] = ufunc.identity
    return out, has


def split_state(out):
    """``state`` or ``(state, active)``: the second form needs a bool array (or None)."""
    if isinstance(out, tuple) and len(out) == 2 and (
            out[1] is None or (isinstance(out[1], np.ndarray) and out[1].dtype == np.bool_)):
        return out[0], out[1]
    return out, None


def reduce_aggregates(program, ctx, partial):
    """The program's partial aggregates reduced over ranks with its ``aggregators`` ops."""
    if not partial:
        return {}
    ops = getattr(program, "aggregators", {}) or {}
    # sorted: every rank must reduce the aggregates in the same order
    return {k: ctx.allreduce(v, ops.get(k, "sum")) for k, v in sorted(partial.items())}


def count_true(ctx, mask):
    """True entries of ``mask`` summed over ranks."""
    return int(ctx.allreduce(int(np.count_nonzero(mask)), "sum"))


def value_form_loop(program, ctx, state, emap, on_iteration, hook=None):
    """Supersteps of a value-form program from ``state`` (the output of ``init``).

    ``emap(direction, x, active) -> (combined, has)`` gathers the messages (one process or
    MPI ranks); ``on_iteration(it, residual)`` reports progress.  ``hook(name)``: the
    program's callback ``name`` as the engine calls it (MPI ranks: an exception on one
    rank is agreed by all), default the bound method.  Returns ``(state, iterations,
    converged, residual, per-iteration seconds)``.  Shared by the single-process runner
    and the BSP engine on MPI ranks.
    """
    hook = hook or (lambda name: getattr(program, name))
    scatter, apply, residual_of, aggregate = (hook(c) for c in ("scatter", "apply", "residual",
                                                                 "aggregate"))
    state, active = split_state(state)
    ctx.aggregates = reduce_aggregates(program, ctx, aggregate(ctx, state))
    has_test = converged = False
    residual, it_times, it = None, [], 0
    for it in range(ctx.max_iter):
        ctx.superstep = it
        if active is not None:
            has_test = True
            if count_true(ctx, active) == 0:
                converged = True
                break
        t0 = time.perf_counter()
        ctx.direction = direction = program.direction_at(ctx)
        x = scatter(ctx, state)
        combined, has = emap(direction, x, active)
        new_state, active = split_state(apply(ctx, state, combined, has))
        r = residual_of(ctx, state, new_state)
        state = new_state
        ctx.aggregates = reduce_aggregates(program, ctx, aggregate(ctx, state))
        it_times.append(time.perf_counter() - t0)
        if r is not None:
            has_test = True
            residual = float(ctx.allreduce(float(r), "sum"))
            _options.check_residual(residual, program.name, it + 1)
            on_iteration(it + 1, residual)
            if residual <= ctx.tol:
                converged = True
                it += 1
                break
        if active is not None and count_true(ctx, active) == 0:
            converged = True
            it += 1
            break
    else:
        it = ctx.max_iter
        converged = converged or not has_test
    return state, it, converged, residual, it_times


def delta_loop(program, ctx, values, deltas, coef, emap, on_iteration, *, relabel=None,
               whole=None, on_minmax=None, push_fraction=PUSH_FRACTION, hook=None):
    """Synchronous supersteps of an accumulative (delta-form) program.

    ``emap(direction, x, active, permuted=False) -> (combined, has)`` gathers the messages
    (one process or MPI ranks); ``on_iteration(it, residual)`` reports a sum program's
    progress, ``on_minmax(it, improved)`` a min/max program's (None: silent).  One-process
    specialisations, both optional: ``relabel(direction)`` returns the dense pull's
    relabelling (the selection then writes ``x`` in that order) or None; ``whole(ctx)``
    runs every superstep of a min/max program in one kernel call and returns
    ``(iterations, converged, per-iteration seconds)``, or None when it does not apply.
    ``push_fraction``: the sparse/dense threshold (the engine's own knob).  ``hook``: as
    :func:`value_form_loop` (``aggregate``, ``post_delta``).
    Returns ``(values, iterations, converged, residual, per-iteration seconds)``.
    """
    hook = hook or (lambda name: getattr(program, name))
    aggregate, post_delta = hook("aggregate"), hook("post_delta")
    comb = program.combiner
    thr = ctx.tol / max(ctx.n, 1)
    cf = EMPTY_W if coef is None else coef
    custom_post = (getattr(type(program), "post_delta", VertexProgram.post_delta)
                   is not VertexProgram.post_delta)
    converged, residual, it_times, it = False, None, [], 0
    if comb == "sum":
        sent = np.empty(ctx.n_local)
        x = np.empty(ctx.n_local)
    for it in range(ctx.max_iter):
        ctx.superstep = it
        ctx.direction = direction = program.direction_at(ctx)
        t0 = time.perf_counter()
        if comb == "sum":
            pos = relabel(direction) if relabel is not None else None
            if pos is None:
                nsel = int(ctx.allreduce(K.delta_select(values, deltas, cf, thr, sent, x), "sum"))
            else:   # one process: write x straight in the relabelled order of the dense pull
                nsel = int(K.delta_select_perm(values, deltas, cf, thr, sent, x, pos))
            if nsel == 0:
                converged = True
                break
            # unselected sources send op(0) = 0 (linear ops), so a dense frontier needs no mask
            sel = None if nsel * push_fraction > ctx.n else np.abs(sent) > 0
            if pos is not None and sel is not None:
                combined, _ = emap(direction, x[pos], sel)          # sparse: original order
            else:
                combined, _ = emap(direction, x, sel, permuted=pos is not None)
            combined = np.ascontiguousarray(combined, dtype=np.float64)
            ctx.aggregates = reduce_aggregates(program, ctx, aggregate(ctx, sent))
            if not custom_post:
                local = K.add_abs_sum(deltas, combined)
            else:
                K.add_abs_sum(deltas, combined)
                deltas = np.ascontiguousarray(post_delta(ctx, deltas), dtype=np.float64)
                local = K.add_abs_sum(deltas, EMPTY_W)
            residual = float(ctx.allreduce(float(local), "sum"))
            _options.check_residual(residual, program.name, it + 1)  # same on every rank
            it_times.append(time.perf_counter() - t0)
            on_iteration(it + 1, residual)
            if residual <= ctx.tol:
                converged = True
                it += 1
                break
        else:
            done = whole(ctx) if whole is not None else None
            if done is not None:
                it, converged, it_times = done
                break
            sel = better(comb, deltas, values)
            if count_true(ctx, sel) == 0:
                converged = True
                break
            values[sel] = deltas[sel]
            combined, has = emap(direction, values, sel)
            ufunc = np.minimum if comb == "min" else np.maximum
            ufunc(deltas, combined, out=deltas)
            it_times.append(time.perf_counter() - t0)
            if on_minmax is not None:
                on_minmax(it + 1, float(np.count_nonzero(sel)))
    else:
        it = ctx.max_iter
        if comb != "sum" and count_true(ctx, better(comb, deltas, values)) == 0:
            # the last superstep reached the fixed point: converged, as one process's
            # kernel (``whole``) reports it (``bfs --max-iter 6`` of a 5-level BFS: exit 0
            # on one process, 3 on ranks)
            converged = True
    if comb == "sum":
        values += deltas
    return values, it, converged, residual, it_times


def better(comb, a, b):
    """``a`` strictly improves on ``b`` under ``comb`` (``"min"``, else max); elementwise."""
    return a < b if comb == "min" else a > b


# ---------------------------------------------------------------------- min/max overflow
#: int64 offers at or beyond these (computed in float64) do not fit: the kernels' cast of
#: ``x * w`` / ``x + w`` back to int64 is then undefined (x86: INT64_MIN)
_I64_HI, _I64_LO = float(2 ** 63), -float(2 ** 63)


def minmax_init_flags(program, values, deltas):
    """``[initial values hold the overflow end]``: +inf for max, -inf for min (float64;
    then an infinity in the result may have been seeded, not grown)."""
    if np.dtype(program.value_dtype).kind != "f":
        return [0]
    anti = np.inf if program.combiner == "max" else -np.inf
    return [int(bool(np.any(np.asarray(values) == anti) or np.any(np.asarray(deltas) == anti)))]


def minmax_growth_flags(program, values, push=None):
    """Local evidence that a min/max run's values overflowed: ``[at the overflow end,
    NaN, int64 offer out of range]`` (0/1 each; reduce with max over ranks).

    float64: a value at +inf (max) / -inf (min), or NaN (inf * 0).  int64: an edge whose
    offer ``op(x_u, w)`` (in float64, from a source not at the identity) is outside the
    int64 range, checked per row from its extreme weights; ``push`` is ``(indptr, w)``
    of the local push CSR over ``values``'s first rows (``w`` None: unweighted), None to
    skip (a program whose direction changes)."""
    values = np.asarray(values)
    if values.dtype.kind == "f":
        anti = np.inf if program.combiner == "max" else -np.inf
        return [int(bool(np.any(values == anti))), int(bool(np.isnan(values).any())), 0]
    op = program.edge_op
    if push is None or op == "copy":
        return [0, 0, 0]
    indptr, w = push
    indptr = np.asarray(indptr)
    deg = np.diff(indptr)
    rows = deg.shape[0]
    has = deg > 0
    x = values[:rows][has]
    live = x != combiner_identity(program.combiner, values.dtype)
    if not live.any():
        return [0, 0, 0]
    if op == "add_one":  # x + 1 in int64 (exact)
        return [0, 0, int(bool(np.any(x[live] == np.iinfo(values.dtype).max)))]
    xf = x[live].astype(np.float64)  # (the kernels compute x * w and x + w in float64 too)
    if w is None or w.shape[0] == 0:  # every weight counts as 1
        hi = lo = np.ones_like(xf)
    else:
        starts = indptr[:-1][has]
        hi = np.maximum.reduceat(w, starts)[live]
        lo = np.minimum.reduceat(w, starts)[live]
    a, b = (xf * hi, xf * lo) if op == "mul" else (xf + hi, xf + lo)
    out = (np.maximum(a, b) >= _I64_HI) | (np.minimum(a, b) < _I64_LO)
    return [0, 0, int(bool(out.any()))]


def minmax_diverged(program, init_flags, growth_flags):
    """The InputError of a min/max run whose values overflowed (None: they did not);
    ``init_flags`` / ``growth_flags`` reduced over the ranks (max).  One line, the same
    whatever the evidence (inf, NaN, int64 range), on one process and on K ranks, in both
    modes (exit status 2, as a non-finite residual)."""
    from asapgraph.errors import InputError

    seeded, = init_flags
    at_end, nan, int_out = growth_flags
    if not (nan or int_out or (at_end and not seeded)):
        return None
    hint = _IMPROVING_CYCLES.get((program.combiner, program.edge_op), "")
    return InputError("asapgraph", None, (
        f"{program.name} diverged: its values grow without bound: a "
        f"{program.combiner} program whose edge_op {program.edge_op!r} improves a value "
        f"around a cycle{hint} has no fixed point"))


#: what makes a cycle improve its own values, per (combiner, edge_op)
_IMPROVING_CYCLES = {("max", "mul"): " (weights > 1)", ("max", "add"): " (positive weights)",
                     ("max", "add_one"): " (any cycle)", ("min", "add"): " (negative weights)",
                     ("min", "mul"): " (negative weights, or weights below 1 on negative values)"}
