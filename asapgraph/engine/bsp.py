"""BSP PageRank: synchronous power iteration over the partitioned graph.

Rationale
---------
Superstep ``t``:

1. local sweep (Cython, :func:`._local.push_sweep`): ``acc[t] += x[u]/outw[u] * w`` over
   the owned vertices' out-edges; contributions to remote vertices land in the per-peer
   slot buffers, combined per target vertex;
2. sparse exchange with exactly the peers that need it: one typed ``Isend`` per
   out-peer, one ``Irecv`` per in-peer (both lists fixed at setup), each message a
   float64 array ``[header | slot values]``; received buffers are scatter-added through
   the slot -> local-index maps;
3. apply ``x' = alpha (acc + D d) + (1 - alpha) p`` and one ``Allreduce`` of
   ``(L1 change, dangling mass of x')``;
4. stop when the global L1 change is ``<= tol`` (networkx semantics) or after
   ``max_iter`` supersteps.

Invariant: the iterates equal single-process power iteration started from the uniform
vector, up to floating-point summation order (each ``acc`` entry receives the same
terms).  With emulation on, each received buffer is applied no earlier than its
``deliver_at`` header, and stragglers sleep after their sweep (in proportion to its CPU
time), exactly as in ASAP.
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph.kernels import _local
from asapgraph.comm.mpi import TAG_DATA, mpi
from asapgraph.engine.emulation import HEADER

__all__ = ["run_bsp"]


def run_bsp(comm, lg, p, d, alpha, tol, max_iter, emu, st):
    """Run BSP PageRank; returns ``(x_local, iterations, converged, residual)``."""
    MPI = mpi()
    perf, cpu = time.perf_counter, time.thread_time
    nloc = lg.nloc
    x = np.full(nloc, 1.0 / lg.n)
    acc = np.zeros(nloc + lg.nslots)
    outp, offs = lg.out_peers, lg.out_off
    sbufs = [np.zeros(HEADER + int(offs[j + 1] - offs[j])) for j in range(len(outp))]
    rbufs = [np.zeros(HEADER + len(mp)) for mp in lg.in_maps]
    red = np.zeros(2)
    out = np.zeros(2)
    red[1] = float(x[lg.dangling.astype(bool)].sum())
    comm.Allreduce(red, out, op=MPI.SUM)
    dmass = out[1]
    it, l1, converged = 0, np.inf, False
    while it < max_iter:
        it += 1
        t0, c0 = perf(), cpu()
        acc.fill(0.0)
        _local.push_sweep(lg.indptr, lg.tgt, lg.coef, lg.vcoef, x, acc, lg.dangling)
        st.compute_s += perf() - t0
        st.edges_visited += lg.mloc
        emu.after_compute(cpu() - c0)
        t1 = perf()
        reqs = [comm.Irecv([rbufs[j], MPI.DOUBLE], source=int(q), tag=TAG_DATA)
                for j, q in enumerate(lg.in_peers)]
        sreqs = []
        for j, q in enumerate(outp):
            b = sbufs[j]
            b[HEADER:] = acc[nloc + offs[j]: nloc + offs[j + 1]]
            b[0] = emu.stamp(int(q), b.nbytes)
            sreqs.append(comm.Isend([b, MPI.DOUBLE], dest=int(q), tag=TAG_DATA))
            st.messages_sent += 1
            st.bytes_sent += b.nbytes
        t2 = perf()
        MPI.Request.Waitall(reqs)
        t3 = perf()
        latest = max((b[0] for b in rbufs), default=0.0)
        if emu.cfg.network and latest:
            emu.wait_until(latest)
        t4 = perf()
        for j in range(len(rbufs)):
            _local.scatter_add(acc, lg.in_maps[j], rbufs[j][HEADER:])
        st.messages_received += len(rbufs)
        MPI.Request.Waitall(sreqs)
        t5 = perf()
        l1loc, dang, _ = _local.apply_update(x, acc, d, p, alpha, dmass, lg.dangling)
        red[0], red[1] = l1loc, dang
        t6 = perf()
        comm.Allreduce(red, out, op=MPI.SUM)
        t7 = perf()
        l1, dmass = float(out[0]), float(out[1])
        st.compute_s += t6 - t5
        st.comm_s += (t2 - t1) + (t5 - t4)
        st.wait_s += (t3 - t2) + (t4 - t3) + (t7 - t6)
        st.rounds = it
        st.sample(l1)
        if l1 <= tol:
            converged = True
            break
    return x, it, converged, l1
