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


Messages are int64 arrays ``[k, idx_0..idx_{k-1}, raw value bytes]`` (typed buffers, no
pickling), sent with ``Isend`` and received with ``Probe``/``Recv`` on a private
duplicate of the communicator (so no message of a run can match another run's receive).


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

import numpy as np

from asapgraph.comm.mpi import agree, mpi
from asapgraph.engine.program import COMBINERS, EDGE_OPS, combiner_identity
from asapgraph.engine.supersteps import (EMPTY_W, PUSH_FRACTION, delta_loop, generic_edge_map,
                                        value_form_loop)
from asapgraph.kernels import _programs as K

__all__ = ["TAG_BSP", "TAG_ASAP", "EMPTY_W", "pack", "unpack", "recv", "ufunc", "collective",
           "BSPMapper", "bsp_value", "bsp_delta"]

TAG_BSP = 311
TAG_ASAP = 312
_EMPTY_U8 = np.zeros(0, dtype=np.uint8)


# ============================================================================ messages


def pack(idx, vals, epoch=0):
    """``[epoch, k, idx..., raw bytes of vals]`` as one int64 array (typed, no pickling).

    ``epoch`` numbers the run: a receiver discards a message of another run (a
    defensive measure: a freed communicator's context may be reused by the next run).
    """
    k = len(idx)
    raw = np.ascontiguousarray(vals).view(np.uint8).reshape(-1)
    nw = (raw.size + 7) // 8
    buf = np.zeros(2 + k + nw, dtype=np.int64)
    buf[0] = epoch
    buf[1] = k
    buf[2:2 + k] = idx
    if raw.size:
        buf[2 + k:].view(np.uint8)[:raw.size] = raw
    return buf


def unpack(buf, dtype):
    k = int(buf[1])
    dtype = np.dtype(dtype)
    idx = buf[2:2 + k]
    vals = buf[2 + k:].view(np.uint8)[:k * dtype.itemsize].view(dtype)
    return idx, vals


def recv(comm, source, tag):
    MPI = mpi()
    st = MPI.Status()
    comm.Probe(source=source, tag=tag, status=st)
    buf = np.empty(st.Get_count(MPI.INT64_T), dtype=np.int64)
    comm.Recv([buf, MPI.INT64_T], source=st.Get_source(), tag=tag)
    return st.Get_source(), buf


def ufunc(comb):
    return {"sum": np.add, "min": np.minimum, "max": np.maximum}.get(comb, comb)



def collective(comm, fn, *a):
    """Run a program callback; an exception on any rank is raised on every rank."""
    err, out = None, None
    try:
        out = fn(*a)
    except Exception as e:  # noqa: BLE001
        err = e
    agree(comm, err)
    return out



# ============================================================================ BSP edge map


class BSPMapper:
    """Distributed edge map of one superstep: ``(combined, has_msg)`` over owned vertices."""

    def __init__(self, program, g, comm):
        self.p, self.g, self.comm = program, g, comm
        comb, op = program.combiner, program.edge_op
        self.builtin = (isinstance(comb, str) and comb in COMBINERS and op is not None
                        and np.dtype(program.value_dtype) in (np.dtype(np.float64), np.dtype(np.int64)))
        self.edges = 0
        self.messages = 0
        self.bytes = 0
        self.dense_steps = 0
        self.sparse_steps = 0

    def _w(self, w):
        return w if (w is not None and len(w) and self.p.use_weights) else EMPTY_W

    def __call__(self, ctx, direction, x, active=None):
        if self.builtin:
            return self._push(ctx, direction, x, active)
        return self._pull(ctx, direction, x, active)

    # ---- push form: combine per target locally, send per-peer (slot, value) pairs
    def _push(self, ctx, direction, x, active):
        p, comm, MPI = self.p, self.comm, mpi()
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
                self.edges += K.push_sparse(sd.indptr, sd.col, self._w(sd.w), frontier, x, oc, cc,
                                            out, has)
                self.sparse_steps += 1
        if out is None:
            tp, ts, tw = sd.transposed()
            out = np.empty(nt, dtype=dtype)
            has = np.empty(nt, dtype=np.uint8)
            mask = _EMPTY_U8 if active is None else np.ascontiguousarray(active, dtype=np.uint8)
            self.edges += K.gather_pull(tp, ts, self._w(tw), x, mask, oc, cc, ident, out, has)
            self.dense_steps += 1
        reqs, bufs = [], []
        for j, q in enumerate(sd.out_peers):
            lo, hi = sd.nloc + sd.out_off[j], sd.nloc + sd.out_off[j + 1]
            idx = np.flatnonzero(has[lo:hi])
            b = pack(idx, out[lo:hi][idx])
            bufs.append(b)
            reqs.append(comm.Isend([b, MPI.INT64_T], dest=int(q), tag=TAG_BSP))
            self.messages += 1
            self.bytes += b.nbytes
        res, got = out[:sd.nloc], has[:sd.nloc]
        uf = ufunc(p.combiner)
        for j, q in enumerate(sd.in_peers):
            _, b = recv(comm, int(q), TAG_BSP)
            idx, vals = unpack(b, dtype)
            t = sd.in_maps[j][idx]
            res[t] = uf(res[t], vals)
            got[t] = 1
        MPI.Request.Waitall(reqs)
        return res, got.view(bool)

    # ---- pull form: ship active boundary values, form messages at the target's owner
    def _pull(self, ctx, direction, x, active):
        comm, MPI = self.comm, mpi()
        sd = self.g.side(direction, "pull")
        x = np.asarray(x)
        amask = None if active is None else np.asarray(active, dtype=bool)
        reqs, bufs = [], []
        for j, q in enumerate(sd.in_peers):
            mp = sd.in_maps[j]
            idx = np.arange(len(mp)) if amask is None else np.flatnonzero(amask[mp])
            b = pack(idx, np.ascontiguousarray(x[mp[idx]]))
            bufs.append(b)
            reqs.append(comm.Isend([b, MPI.INT64_T], dest=int(q), tag=TAG_BSP))
            self.messages += 1
            self.bytes += b.nbytes
        xe = np.zeros(sd.nloc + sd.nslots, dtype=x.dtype)
        xe[:sd.nloc] = x
        ae = np.zeros(sd.nloc + sd.nslots, dtype=bool)
        ae[:sd.nloc] = True if amask is None else amask
        for j, q in enumerate(sd.out_peers):
            _, b = recv(comm, int(q), TAG_BSP)
            idx, vals = unpack(b, x.dtype)
            t = sd.nloc + sd.out_off[j] + idx
            xe[t] = vals
            ae[t] = True
        MPI.Request.Waitall(reqs)
        return self._generic(ctx, sd, xe, ae)

    def _generic(self, ctx, sd, x, active):
        """The single-process numpy path (:func:`.supersteps.generic_edge_map`), locally."""
        prog = self.p
        out, edges = generic_edge_map(prog, ctx, prog.combiner, prog.edge_op, sd.indptr, sd.col,
                                      sd.w, x, active, sd.nloc)
        self.edges += edges
        self.dense_steps += 1
        return out


# ============================================================================ BSP engines


def bsp_value(program, ctx, emap, progress):
    return value_form_loop(program, ctx, collective(ctx.comm, program.init, ctx),
                           lambda d, x, a: emap(ctx, d, x, a),
                           lambda it, r: _iter(progress, ctx, it, r))


def _iter(progress, ctx, it, residual):
    if progress is not None and ctx.rank == 0:
        progress.iteration(it, residual)


def bsp_delta(program, ctx, emap, progress, coef):
    """The delta-form supersteps (:func:`.supersteps.delta_loop`) over the MPI edge map."""
    values, deltas = (np.array(a, dtype=program.value_dtype) for a in
                      collective(ctx.comm, program.init_delta, ctx))
    return delta_loop(program, ctx, values, deltas, coef,
                      lambda d, x, a, permuted=False: emap(ctx, d, x, a),
                      lambda it, r: _iter(progress, ctx, it, r))

