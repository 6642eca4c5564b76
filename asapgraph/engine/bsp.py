"""BSP PageRank: synchronous power iteration over the partitioned graph.

Rationale
---------
Every rank runs the single-process kernel, :func:`asapgraph.kernels._pagerank.sweep`, on its own
rows (:mod:`.pull`: the owned vertices' in-CSR relabelled by out-degree, sources in one
contribution array ``c`` = owned values followed by one segment per in-peer).  Setup:
``c`` holds ``x0 / outw`` and the ghosts of ``x0`` (one exchange).  Superstep ``t``:

1. sweep (Jacobi, ``c`` read, ``c'`` written): ``x'[v] = alpha (sum c[u] w_uv + delta
   D[v]) + (1 - alpha) P[v]`` over the owned rows; it also returns the local L1 change
   and dangling mass of ``x'``;
2. one ``Allreduce`` of ``(L1 change, dangling mass)``; stop when the global change is
   ``<= tol`` (networkx semantics) or after ``max_iter`` supersteps;
3. exchange: each out-peer's boundary values of ``c'`` are packed with one gather and
   sent (one typed ``Isend`` per out-peer), each in-peer's message is received straight
   into its segment of ``c'`` (one ``Irecv`` per in-peer, both lists fixed at setup);
   then ``c, c' = c', c``.

Invariant: the iterates equal single-process power iteration started from the uniform
vector, up to floating-point summation order (each row gathers the same terms).  With
emulation on, each received buffer is used no earlier than its ``deliver_at`` header,
and stragglers sleep after their sweep (in proportion to its CPU time), exactly as in
ASAP.  Timing: ``compute`` is the sweeps (their wall and CPU time and the median ns per
edge of one sweep are reported per rank) plus the layout's build (``pull_setup_seconds``;
0 when an earlier run on the same loaded graph built it), ``comm`` the packing and
posting, ``wait`` the blocking receives and the reductions.
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph.comm.mpi import TAG_DATA, mpi
from asapgraph.engine.emulation import HEADER
from asapgraph.engine.pull import pull_graph
from asapgraph.kernels import _pagerank as _k
from asapgraph.kernels import _pull

__all__ = ["run_bsp"]


class _Exchange:
    """Boundary values of one contribution array to the peers that read them."""

    def __init__(self, comm, lg, pg, emu, st):
        self.comm, self.lg, self.pg, self.emu, self.st = comm, lg, pg, emu, st
        self.sbufs = [np.zeros(HEADER + len(ix)) for ix in pg.send_idx]

    def __call__(self, c):
        MPI = mpi()
        comm, lg, pg, emu, st = self.comm, self.lg, self.pg, self.emu, self.st
        t1 = time.perf_counter()
        reqs = [comm.Irecv([c[lo:hi], MPI.DOUBLE], source=int(q), tag=TAG_DATA)
                for (lo, hi), q in zip(pg.recv_seg, lg.in_peers)]
        sreqs = []
        for b, ix, q in zip(self.sbufs, pg.send_idx, lg.out_peers):
            _pull.gather(c, ix, b[HEADER:])
            b[0] = emu.stamp(int(q), b.nbytes)
            sreqs.append(comm.Isend([b, MPI.DOUBLE], dest=int(q), tag=TAG_DATA))
            st.messages_sent += 1
            st.bytes_sent += b.nbytes
        t2 = time.perf_counter()
        MPI.Request.Waitall(reqs)
        latest = max((c[lo] for lo, _ in pg.recv_seg), default=0.0)
        if emu.cfg.network and latest:
            emu.wait_until(latest)
        st.messages_received += len(reqs)
        MPI.Request.Waitall(sreqs)
        st.comm_s += t2 - t1
        st.wait_s += time.perf_counter() - t2


def run_bsp(comm, lg, p, d, alpha, tol, max_iter, emu, st, threads=1):
    """Run BSP PageRank; returns ``(x_local, iterations, converged, residual)``."""
    MPI = mpi()
    perf, cpu = time.perf_counter, time.thread_time
    built = getattr(lg, "_pull", None)
    pg = pull_graph(comm, lg, threads)
    built = pg is not built             # else: laid out by an earlier run on this graph
    if built:
        st.compute_s += pg.setup_seconds
    exchange = _Exchange(comm, lg, pg, emu, st)
    # uniform teleport and dangling distributions: empty arrays, as on one process (the
    # kernel then reads 1/n instead of two vectors per row: same values, less traffic)
    if (d is p or np.array_equal(d, p)) and bool(np.all(p == 1.0 / lg.n)):
        P = D = np.zeros(0)
    else:
        P, D = pg.permute(p), pg.permute(d)
    x = np.full(lg.nloc, 1.0 / lg.n)
    c, c2 = np.zeros(pg.ncols), np.zeros(pg.ncols)
    np.multiply(x, pg.inv_out, out=c[:lg.nloc])
    red, out = np.zeros(2), np.zeros(2)
    red[1] = float(x[pg.inv_out == 0.0].sum())
    comm.Allreduce(red, out, op=MPI.SUM)
    dmass = out[1]
    stats = np.zeros((len(pg.bounds) - 1, _k.NSTATS))
    sweep_wall, sweep_cpu = [], []
    if max_iter > 0:
        exchange(c)
    it, l1, converged = 0, np.inf, False
    while it < max_iter:
        it += 1
        t0, c0 = perf(), cpu()
        _k.sweep(pg.indptr, pg.indices, pg.w, pg.inv_out, x, c, c2, P, D, alpha, dmass,
                 pg.bounds, stats, pg.prefetch, lg.n)
        dt, dc = perf() - t0, cpu() - c0
        sweep_wall.append(dt)
        sweep_cpu.append(dc)
        st.compute_s += dt
        st.edges_visited += pg.m
        emu.after_compute(dc)
        red[0] = stats[:, _k.STAT_CHANGE].sum()
        red[1] = stats[:, _k.STAT_DANGLING].sum()
        t6 = perf()
        comm.Allreduce(red, out, op=MPI.SUM)
        st.wait_s += perf() - t6
        l1, dmass = float(out[0]), float(out[1])
        c, c2 = c2, c
        st.rounds = it
        st.sample(l1)
        if l1 <= tol:
            converged = True
            break
        if it < max_iter:
            exchange(c)
    st.extra.update(pg.layout())
    st.extra["pull_setup_seconds"] = pg.setup_seconds if built else 0.0
    st.extra.update(_sweep_stats(sweep_wall, sweep_cpu, pg.m))
    return pg.unpermute(x), it, converged, l1


def _sweep_stats(wall, cpu, m):
    """Per-rank sweep figures: totals and the median ns per in-edge of one sweep."""
    def ns(ts):
        return float(np.median(ts) / m * 1e9) if ts and m else None

    return {"sweeps": len(wall), "sweep_seconds": float(sum(wall)),
            "sweep_cpu_seconds": float(sum(cpu)), "sweep_ns_per_edge": ns(wall),
            "sweep_cpu_ns_per_edge": ns(cpu)}
