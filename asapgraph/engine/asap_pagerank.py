"""ASAP PageRank on ranks: the driver of :class:`.asap._Solver` for the ``jacobi`` and
``push`` forms (one solve, or two for the push form with a dangling vector unlike the
teleport vector), and the pieces the rebalanced driver (:mod:`.rebalance`) shares with it.
"""
from __future__ import annotations

import numpy as np

from asapgraph.comm.mpi import mpi
from asapgraph.engine.asap import _Solver, work_figures

__all__ = ["run_asap", "same_vec", "dangling_rhs", "normalised", "solver_figures"]


def same_vec(comm, a, b):
    """True on every rank when ``a == b`` on every rank (collective)."""
    return comm.allreduce(bool(np.array_equal(a, b)), op=mpi().LAND)


def run_asap(comm, lg, p, dvec, alpha, tol, emu, st, fanout=2, window=1, approx=0.0, seed=0,
             debug_mass=False, form="jacobi", max_iter=None, schedule=None):
    """Run ASAP PageRank; returns ``(x_local, rounds, converged, bound, extra)``.

    ``max_iter``: BSP supersteps' worth of edge work, :data:`.asap.WORK_FACTOR` x
    ``max_iter`` sweeps of the whole graph's edges summed over the ranks (None: no limit);
    a run stopped by it returns ``converged`` False with the bound it reached.
    """
    MPI = mpi()
    sol = _Solver(comm, lg, alpha, emu, st, fanout, window, approx, seed, debug_mass, form,
                  max_iter, schedule)
    dmask = lg.dangling.astype(bool)
    same = True
    if form == "push" and dvec is not None:
        same = same_vec(comm, dvec, p)
    if form == "jacobi":  # teleport and dangling mass are spread inside the solve
        y, bound, rounds = sol.solve(p, tol, relative=True, bdang=dangling_rhs(comm, p, dvec))
        x = normalised(comm, emu, y)
    elif same:
        y, bound, rounds = sol.solve(p, tol, relative=True)
        S = comm.allreduce(float(y.sum()), op=MPI.SUM)
        emu.collective(comm)
        x = y / S
    else:
        st.ref = None  # two solves: an iterate of one is not an iterate of the answer
        beta = 1.0 - alpha
        inner = tol * beta * beta / 4.0
        y, b1, r1 = sol.solve(p, inner, relative=False)
        z, b2, r2 = sol.solve(dvec, inner, relative=False)
        yd, zd = comm.allreduce(np.array([y[dmask].sum(), z[dmask].sum()]), op=MPI.SUM)
        s = yd / (1.0 - alpha / beta * zd)
        x = y + alpha * s * z / beta
        S = comm.allreduce(float(x.sum()), op=MPI.SUM)
        emu.collective(comm, 24)
        x /= S
        bound, rounds = 4.0 * max(b1, b2) / (beta * beta), r1 + r2
    extra = solver_figures(sol, debug_mass, sol.mass_checks, sol.max_mass_error)
    rounds_max = comm.allreduce(rounds, op=MPI.MAX)
    return x, rounds_max, bool(bound <= tol), bound, extra


def dangling_rhs(comm, p, dvec):
    """Where the jacobi form spreads dangling mass: ``p`` unless a different ``dvec`` is
    given (collective: every rank must agree)."""
    return p if dvec is None or same_vec(comm, dvec, p) else dvec


def normalised(comm, emu, y):
    """``y / sum(y)`` over the ranks (the sum is a collective, charged as one)."""
    x = y / comm.allreduce(float(y.sum()), op=mpi().SUM)
    emu.collective(comm)
    return x


def solver_figures(sol, debug_mass, checks, worst):
    """The ``extra`` figures of an ASAP PageRank run on :class:`_Solver` ``sol``."""
    extra = {**sol.sched.figures(), "fanout_asked": sol.fanout_asked, **work_figures(sol),
             "window": sol.window, "approx": sol.approx,
             "form": sol.form, "schedule": sol.schedule}
    if debug_mass:
        extra["mass_checks"] = checks
        extra["max_mass_error"] = worst
    return extra
