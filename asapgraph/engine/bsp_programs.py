"""The BSP half of the vertex-program engine on MPI ranks: typed per-peer messages, the
distributed edge map of a superstep and the value-form and delta (Jacobi) loops.

Rationale
---------
Two forms of a side:

* push form (rows = message senders), used for built-in combiners (sum/min/max) with a
  built-in edge operator: a superstep runs the Cython ``gather_pull`` of
  :mod:`asapgraph.kernels._programs` over the *transposed* local CSR (every target, owned
  or slot, lists its local sources; no atomics), or ``push_sparse`` for small frontiers.
  Messages to remote targets are therefore already combined per (peer, target vertex)
  with the program's combiner; one typed message per peer carries ``(slot index, value)``
  pairs of the slots that received something, and the owner folds them in with the same
  combiner (``numpy`` ufunc on unique indices), setting ``has_msg``.
* pull form (rows = message receivers, columns = senders with ghost slots), used for the
  ``collect`` combiner, custom ``message()`` functions and custom ufunc combiners:
  owners send the values of their *active* boundary vertices (one typed message per
  peer), and every message is formed and combined at the target's owner, exactly as in
  the single-process numpy path.


Messages are those of every engine (:class:`.exchange.Channel`: a float64 header with
the emulated delivery time and the payload form, then the exact values of the program's
dtype, with int32 slot indices unless every slot travels; no pickling), one per peer
pair and superstep, on a private duplicate of the communicator (so no message of a run
can match another run's receive).  The network and straggler emulation
(:mod:`.emulation`) applies as in the tuned engines.


BSP: superstep = edge map (above), exchange with exactly the peers of the side (every
peer pair exchanges one, possibly empty, message per superstep, so the receive count
is known), ``apply`` on owned vertices, aggregates and the convergence test by
``Allreduce`` (``ctx.allreduce``).  Accumulative programs run the synchronous delta form
(Jacobi), value-form programs the value form, both as in the single-process runner, so
the iterates equal the single-process ones up to floating-point summation order.


The entry point is :func:`asapgraph.engine.distributed.run`; the ASAP loop is
:mod:`.asap_programs`; the sides come from :mod:`asapgraph.partition.program_graph`.
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph.comm.mpi import agree
from asapgraph.engine import exchange as ex
from asapgraph.engine.emulation import Emulator
from asapgraph.engine.program import (COMBINERS, EDGE_OPS, VertexProgram, combiner_identity,
                                     program_class)
from asapgraph.engine.supersteps import (EMPTY_W, PUSH_FRACTION, delta_loop, generic_edge_map,
                                        value_form_loop)
from asapgraph.engine.stats import RankStats
from asapgraph.kernels import _programs as K

__all__ = ["EMPTY_W", "ufunc", "collective",
           "BSPMapper", "bsp_value", "bsp_delta"]

_EMPTY_U8 = np.zeros(0, dtype=np.uint8)


# ============================================================================ helpers


def ufunc(comb):
    return {"sum": np.add, "min": np.minimum, "max": np.maximum}.get(comb, comb)



def collective(comm, fn, *a):
    """Run a program callback; an exception on any rank is raised on every rank."""
    err, out = None, None
    try:
        out = fn(*a)
    except (Exception, SystemExit) as e:  # noqa: BLE001 - a callback's sys.exit() too:
        err = e                           # raised on one rank only, it aborted the job
    agree(comm, err)
    return out



# ============================================================================ BSP edge map


class BSPMapper:
    """Distributed edge map of one superstep: ``(combined, has_msg)`` over owned vertices.

    Messages travel on :class:`.exchange.Channel` (the engines' one message format: exact
    values of the program's dtype, sparse or dense), with the network and straggler
    emulation of ``emulation`` (:mod:`.emulation`): a straggler sleeps after each
    superstep's compute (CPU time since the previous exchange), messages are applied no
    earlier than their delivery time."""

    def __init__(self, program, g, comm, emulation=None):
        self.p, self.g, self.comm = program, g, comm
        comb, op = program.combiner, program.edge_op
        self.builtin = (isinstance(comb, str) and comb in COMBINERS and op is not None
                        and np.dtype(program.value_dtype) in (np.dtype(np.float64), np.dtype(np.int64)))
        self.st = RankStats(comm.Get_rank())
        self.emu = Emulator(emulation, comm.Get_rank(), comm.Get_size())
        self.channels = {}
        self.dense_steps = 0
        self.sparse_steps = 0
        self.c0 = time.thread_time()

    def _w(self, w):
        return w if (w is not None and len(w) and self.p.use_weights) else EMPTY_W

    def __call__(self, ctx, direction, x, active=None):
        if self.builtin:
            return self._push(ctx, direction, x, active)
        return self._pull(ctx, direction, x, active)

    def _exchange(self, sd, reverse, dtype, encode, decode):
        """One superstep's messages on the channel of ``sd`` (a straggler first sleeps
        for the compute since the previous exchange)."""
        key = (id(sd), reverse, np.dtype(dtype).itemsize)
        ch = self.channels.get(key)
        if ch is None:
            # (a message may list up to every slot sparsely: value and int32 index)
            ch = self.channels[key] = ex.Channel(self.comm, sd, self.emu, self.st,
                                                 np.dtype(dtype).itemsize + 4, reverse)
        self.emu.after_compute(time.thread_time() - self.c0)
        ch.exchange(encode, decode)
        self.c0 = time.thread_time()

    # ---- push form: combine per target locally, send per-peer (slot, value) pairs
    def _push(self, ctx, direction, x, active):
        p = self.p
        sd = self.g.side(direction, "push")
        dtype = np.dtype(p.value_dtype)
        x = np.ascontiguousarray(x, dtype=dtype)
        ident = combiner_identity(p.combiner, dtype)
        cc, oc = COMBINERS[p.combiner], EDGE_OPS[p.edge_op]
        nt = sd.nloc + sd.nslots
        out = has = None
        if active is not None:
            frontier = np.flatnonzero(active).astype(np.int64)
            work = int(np.sum(sd.indptr[frontier + 1] - sd.indptr[frontier]))
            if work + frontier.size < max(len(sd.col), 1) // PUSH_FRACTION:
                out = np.full(nt, ident, dtype=dtype)
                has = np.zeros(nt, dtype=np.uint8)
                self.st.edges_visited += K.push_sparse(sd.indptr, sd.col, self._w(sd.w),
                                                       frontier, x, oc, cc, out, has)
                self.sparse_steps += 1
        if out is None:
            tp, ts, tw = sd.transposed()
            out = np.empty(nt, dtype=dtype)
            has = np.empty(nt, dtype=np.uint8)
            mask = _EMPTY_U8 if active is None else np.ascontiguousarray(active, dtype=np.uint8)
            self.st.edges_visited += K.gather_pull(tp, ts, self._w(tw), x, mask, oc, cc, ident,
                                                   out, has)
            self.dense_steps += 1
        res, got = out[:sd.nloc], has[:sd.nloc]
        uf = ufunc(p.combiner)

        def encode(j, buf):
            lo, hi = sd.nloc + sd.out_off[j], sd.nloc + sd.out_off[j + 1]
            return ex.encode_exact(out[lo:hi], np.flatnonzero(has[lo:hi]).astype(np.int32), buf,
                                   dense_ok=False)

        def decode(j, buf, nbytes):
            t, vals = ex.decode_exact(sd.in_maps[j], buf, nbytes, dtype)
            res[t] = uf(res[t], vals)
            got[t] = 1

        self._exchange(sd, False, dtype, encode, decode)
        return res, got.view(bool)

    # ---- pull form: ship active boundary values, form messages at the target's owner
    def _pull(self, ctx, direction, x, active):
        sd = self.g.side(direction, "pull")
        x = np.asarray(x)
        amask = None if active is None else np.asarray(active, dtype=bool)
        xe = np.zeros(sd.nloc + sd.nslots, dtype=x.dtype)
        xe[:sd.nloc] = x
        ae = np.zeros(sd.nloc + sd.nslots, dtype=bool)
        ae[:sd.nloc] = True if amask is None else amask

        def encode(j, buf):
            mp = sd.in_maps[j]
            vals = np.ascontiguousarray(x[mp])
            idx = np.arange(len(mp), dtype=np.int32) if amask is None else \
                np.flatnonzero(amask[mp]).astype(np.int32)
            return ex.encode_exact(vals, idx, buf, dense_ok=False)

        def decode(j, buf, nbytes):
            slots = np.arange(sd.nloc + sd.out_off[j], sd.nloc + sd.out_off[j + 1])
            t, vals = ex.decode_exact(slots, buf, nbytes, x.dtype)
            xe[t] = vals
            ae[t] = True

        self._exchange(sd, True, x.dtype, encode, decode)
        return self._generic(ctx, sd, xe, ae)

    def _generic(self, ctx, sd, x, active):
        """The single-process numpy path (:func:`.supersteps.generic_edge_map`), locally."""
        prog = self.p
        out, edges = generic_edge_map(prog, ctx, prog.combiner, prog.edge_op, sd.indptr, sd.col,
                                      sd.w, x, active, sd.nloc)
        self.st.edges_visited += edges
        self.dense_steps += 1
        return out


# ============================================================================ BSP engines


def bsp_value(program, ctx, emap, progress):
    return value_form_loop(program, ctx, collective(ctx.comm, program.init, ctx),
                           lambda d, x, a: emap(ctx, d, x, a),
                           lambda it, r: _iter(progress, ctx, it, r),
                           hook=lambda name: agreed(ctx.comm, program, name))


def agreed(comm, program, name):
    """The callback ``name`` of ``program``, called so that an exception on any rank is
    raised on every rank (:func:`collective`: one small ``allreduce`` per call), where the
    program defines it (the base class's defaults cannot fail: called as they are)."""
    fn = getattr(program, name)
    if getattr(program_class(program), name, None) is getattr(VertexProgram, name, None):
        return fn
    return lambda *a: collective(comm, fn, *a)


def _iter(progress, ctx, it, residual):
    if progress is not None and ctx.rank == 0:
        progress.iteration(it, residual)


def bsp_delta(program, ctx, emap, progress, coef, inputs):
    """The delta-form supersteps (:func:`.supersteps.delta_loop`) over the MPI edge map,
    from ``inputs``, the ``(values, deltas)`` of ``program.init_delta`` (collective)."""
    values, deltas = (np.array(a, dtype=program.value_dtype) for a in inputs)
    return delta_loop(program, ctx, values, deltas, coef,
                      lambda d, x, a, permuted=False: emap(ctx, d, x, a),
                      lambda it, r: _iter(progress, ctx, it, r),
                      hook=lambda name: agreed(ctx.comm, program, name))

