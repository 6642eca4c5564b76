"""BSP PageRank: synchronous power iteration over the partitioned graph.

Rationale
---------
Every rank runs the single-process kernel, :func:`asapgraph.kernels._pagerank.sweep`, on its own
rows (:mod:`.pull`: the owned vertices' in-CSR relabelled by out-degree, sources in one
contribution array ``c`` = owned values followed by one segment per in-peer).  Setup:
``c`` holds ``x0 / outw`` and the ghosts of ``x0`` (one exchange).  Superstep ``t``:

1. sweep (Jacobi, ``c`` read, ``c'`` written): ``x'[v] = alpha (sum c[u] w_uv + delta
   D[v]) + (1 - alpha) P[v]`` over the owned rows; it also returns the local L1 change
   and dangling mass of ``x'``; then, unless this is the last allowed superstep, the
   partial sums of the out-peers that take the combined form (:mod:`.pull`: one sum of
   ``c'[u] w_uv`` per remote target, over the rank's cut edges into it) are computed
   into their send buffers -- part of the superstep's compute, its edges counted;
2. one ``Allreduce`` of ``(L1 change, dangling mass)``; stop when the global change is
   ``<= tol`` (networkx semantics) or after ``max_iter`` supersteps;
3. exchange: each pull out-peer's boundary values of ``c'`` are packed with one gather,
   and every out-peer's buffer is sent (one typed ``Isend`` per out-peer), each in-peer's
   message is received straight into its segment of ``c'`` (one ``Irecv`` per in-peer,
   both lists and the per-pair forms fixed at setup); then ``c, c' = c', c``.

Threads (hybrid ranks x threads, ``--np K --threads T``): the owned rows are split into
``T`` edge-balanced blocks (:func:`asapgraph.kernels._pagerank.balanced_bounds`) and each
sweep is one OpenMP region, exactly as on one process; ``T = 1`` is a plain serial loop
(no OpenMP region, so no thread spin-waits at a barrier on a loaded host).  The layout
build, the packing and the combine stay serial.

Overlap of the exchange with the sweep (post the receives, sweep and send the boundary
rows, sweep the interior while the messages fly) is not done, because measured it has
nothing to hide here: on rmat:20 over 2 ranks the rows that read no ghost value hold 0.85 %
of a rank's in-edges (there is no interior to sweep while waiting) and the rows whose
values are sent hold 98 %; on cnr-2000 the interior holds 84-97 % of the edges but the
messages are a few KB; and between ranks of one host a 1.8 MB message (rmat:20) costs
well under a millisecond against a 17-60 ms sweep.  What a superstep waits for is the
slower rank (``wait`` in the per-rank JSON), which overlap does not shorten.

Invariant: the iterates equal single-process power iteration started from the uniform
vector, up to floating-point summation order (each row sums the same terms ``c[u] w_uv``,
those of a combined pair grouped into the partial sum its sender shipped).  With
emulation on, each received buffer is used no earlier than its ``deliver_at`` header,
and stragglers sleep after their sweep (in proportion to its CPU time), exactly as in
ASAP; on the virtual clock (:mod:`.vclock`) the waits and sleeps advance each rank's
clock instead, and each ``Allreduce`` costs the latest clock plus the modelled collective
(the supersteps' order of events is fixed, so BSP needs no further synchronisation).  Timing: ``compute`` is the sweeps and combines (their wall and CPU time and the
median ns per edge of one superstep's sweep + combine are reported per rank, with the
combine's share apart) plus the layout's build (``pull_setup_seconds``; 0 when an earlier
run on the same loaded graph built it), ``comm`` the packing and posting, ``wait`` the
blocking receives and the reductions.  The combine of the superstep that converges is
wasted (its partial sums are never sent): at most ``combine_edges`` per run.
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph.comm.mpi import TAG_DATA, MeteredComm, mpi
from asapgraph.engine import evtrace
from asapgraph.engine.emulation import HEADER
from asapgraph.engine.evtrace import ev as _ev
from asapgraph.engine.pull import pull_graph
from asapgraph.kernels import _pagerank as _k
from asapgraph.kernels import _pull

__all__ = ["run_bsp"]


class _Exchange:
    """Boundary values of one contribution array to the peers that read them."""

    def __init__(self, comm, lg, pg, emu, st):
        self.comm, self.lg, self.pg, self.emu, self.st = comm, lg, pg, emu, st
        self.sbufs = [np.zeros(HEADER + int(v)) for v in pg.sent]
        self.combined = np.flatnonzero(pg.combined).tolist()

    def combine(self, c):
        """The combined out-peers' partial sums of ``c`` into their buffers; returns the
        edges visited."""
        pg, e = self.pg, 0
        for j in self.combined:
            e += _pull.combine(c, pg.comb_ptr[j], pg.comb_src[j], pg.comb_w[j],
                               self.sbufs[j][HEADER:], pg.prefetch)
        return e

    def __call__(self, c):
        MPI = mpi()
        comm, lg, pg, emu, st = self.comm, self.lg, self.pg, self.emu, self.st
        cpu = time.thread_time
        t1 = time.perf_counter()
        mark = cpu()  # (each message's posting is charged before its stamp: emu.post)
        reqs = [comm.Irecv([c[lo:hi], MPI.DOUBLE], source=int(q), tag=TAG_DATA)
                for (lo, hi), q in zip(pg.recv_seg, lg.in_peers)]
        n = len(reqs)
        sreqs = []
        for b, ix, comb, q in zip(self.sbufs, pg.send_idx, pg.combined, lg.out_peers):
            pc = 0.0
            if not comb:                # combined: filled by combine() after the sweep
                c0 = cpu()              # (the combine is charged with the sweep)
                _pull.gather(c, ix, b[HEADER:])
                pc = cpu() - c0
                emu.pack(pc, len(ix))
            emu.post(cpu() - mark - pc, n + 1)
            b[0] = emu.stamp(int(q), b.nbytes)
            sreqs.append(comm.Isend([b, MPI.DOUBLE], dest=int(q), tag=TAG_DATA))
            st.messages_sent += 1
            st.bytes_sent += b.nbytes
            mark, n = cpu(), 0
        emu.post(cpu() - mark, n)  # (the last Isend; the receives with no send)
        t2 = time.perf_counter()
        _ev("x1", emu.vt)
        MPI.Request.Waitall(reqs)
        _ev("x2", emu.vt)
        latest = max((c[lo] for lo, _ in pg.recv_seg), default=0.0)
        if emu.cfg.network and latest:
            emu.wait_until(latest)
        if evtrace.DIR:  # (how late the wait ended: the host's sleeps overshoot)
            _ev("x3", emu.vt, latest - (emu.vt if emu.virtual else time.time()))
        st.messages_received += len(reqs)
        MPI.Request.Waitall(sreqs)
        st.comm_s += t2 - t1
        st.wait_s += time.perf_counter() - t2


def run_bsp(comm, lg, p, d, alpha, tol, max_iter, emu, st, threads=1, x0=None, balancer=None,
            step0=0):
    """Run BSP PageRank with ``threads`` OpenMP threads in this rank's sweep; returns
    ``(x_local, iterations, converged, residual)``.

    ``x0``: the iterate to start from (default uniform); ``balancer``
    (:class:`.rebalance.Balancer`): each superstep's sweep is measured and its figures
    ride on the superstep's ``Allreduce``; the run returns early, after the superstep
    (``step0`` + its number) on whose sums a migration was decided."""
    MPI = mpi()
    perf, cpu = time.perf_counter, time.thread_time
    built = getattr(lg, "_pull", None)
    mc, c0 = MeteredComm(comm), cpu()
    pg = pull_graph(mc, lg, threads)
    built = pg is not built             # else: laid out by an earlier run on this graph
    if built:
        st.compute_s += pg.setup_seconds
        # charged like compute, its CPU time outside MPI calls (the virtual clock; a
        # straggler's sleep on the host's)
        emu.layout(cpu() - c0 - mc.cpu, lg.mloc, lg.nloc,
                   ("pull_in" if pg.built_from == "in_rows" else "pull")
                   + ("_r" if pg.reordered else ""))
    exchange = _Exchange(comm, lg, pg, emu, st)
    kernel = "pull_r" if pg.reordered else "pull"  # what the compute model charges
    # uniform teleport and dangling distributions: empty arrays, as on one process (the
    # kernel then reads 1/n instead of two vectors per row: same values, less traffic)
    if (d is p or np.array_equal(d, p)) and bool(np.all(p == 1.0 / lg.n)):
        P = D = np.zeros(0)
    else:
        P, D = pg.permute(p), pg.permute(d)
    x = np.full(lg.nloc, 1.0 / lg.n) if x0 is None else pg.permute(x0)
    c, c2 = np.zeros(pg.ncols), np.zeros(pg.ncols)
    np.multiply(x, pg.inv_out, out=c[:lg.nloc])
    nb = 2 + (balancer.size if balancer is not None else 0)
    red, out = np.zeros(nb), np.zeros(nb)
    red[1] = float(x[pg.inv_out == 0.0].sum())
    comm.Allreduce(red, out, op=MPI.SUM)
    emu.collective(comm, red.nbytes)
    dmass = out[1]
    stats = np.zeros((len(pg.bounds) - 1, _k.NSTATS))
    sweep_wall, sweep_cpu = [], []
    sweep_edges, comb_wall, comb_cpu = [], [], []
    if max_iter > 0:
        t0 = perf()
        st.edges_visited += exchange.combine(c)
        st.compute_s += perf() - t0
        exchange(c)
    it, l1, converged = 0, np.inf, False
    while it < max_iter:
        it += 1
        t0, c0 = perf(), cpu()
        _ev("s0", emu.vt)
        _k.sweep(pg.indptr, pg.indices, pg.w, pg.inv_out, x, c, c2, P, D, alpha, dmass,
                 pg.bounds, stats, pg.prefetch, lg.n)
        e = pg.m
        if exchange.combined and it < max_iter:
            t1, c1 = perf(), cpu()
            e += exchange.combine(c2)
            comb_wall.append(perf() - t1)
            comb_cpu.append(cpu() - c1)
        dt, dc = perf() - t0, cpu() - c0
        sweep_wall.append(dt)
        sweep_cpu.append(dc)
        sweep_edges.append(e)
        st.compute_s += dt
        st.edges_visited += e
        slept = emu.after_compute(dc, e, lg.nloc, kernel)
        red[0] = stats[:, _k.STAT_CHANGE].sum()
        red[1] = stats[:, _k.STAT_DANGLING].sum()
        if balancer is not None:  # measured: the compute charged (CPU time, or the compute
            # model's) plus what the emulated host added; a superstep is one full sweep
            balancer.record(e, emu.last_charged + slept, 1.0)
            red[2:] = balancer.vector()
        t6 = perf()
        _ev("a0", emu.vt)
        comm.Allreduce(red, out, op=MPI.SUM)
        _ev("a1", emu.vt)
        emu.collective(comm, red.nbytes)
        _ev("a2", emu.vt)
        st.wait_s += perf() - t6
        l1, dmass = float(out[0]), float(out[1])
        c, c2 = c2, c
        st.rounds = it
        st.sample(l1)
        if l1 <= tol:
            converged = True
            break
        if balancer is not None and it < max_iter and balancer.decide(step0 + it, out[2:]):
            break  # migrate now (.rebalance): x is the whole state
        if it < max_iter:
            exchange(c)
    evtrace.dump(comm.Get_rank(), 0.0)
    st.extra.update(pg.layout())
    st.extra["pull_setup_seconds"] = pg.setup_seconds if built else 0.0
    st.extra["threads"] = len(pg.bounds) - 1
    st.extra.update(_sweep_stats(sweep_wall, sweep_cpu, sweep_edges, comb_wall, comb_cpu))
    return pg.unpermute(x), it, converged, l1


def _sweep_stats(wall, cpu, edges, comb_wall, comb_cpu):
    """Per-rank superstep compute figures: totals, and the median over supersteps of the
    ns per edge of one sweep plus its combine (edges: the sweep's in-edges plus the
    combined cut edges); the combine's totals apart."""
    def ns(ts):  # the median of a few floats, in Python: np.median imports numpy.ma, 5-13
        # ms of the rank's first call, inside the compute time
        r = sorted(t / e * 1e9 for t, e in zip(ts, edges) if e)
        h = len(r) // 2
        return (r[h] if len(r) % 2 else 0.5 * (r[h - 1] + r[h])) if r else None

    return {"sweeps": len(wall), "sweep_seconds": float(sum(wall)),
            "sweep_cpu_seconds": float(sum(cpu)), "sweep_ns_per_edge": ns(wall),
            "sweep_cpu_ns_per_edge": ns(cpu), "combines": len(comb_wall),
            "combine_seconds": float(sum(comb_wall)),
            "combine_cpu_seconds": float(sum(comb_cpu))}
