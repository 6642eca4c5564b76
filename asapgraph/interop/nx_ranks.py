"""The networkx backend's PageRank on MPI ranks: ``nx.config.backends.asapgraph.np`` and
``.mode``.

Rationale
---------
A networkx user reaches the distributed engines without leaving networkx, in the two ways
an MPI program can run:

* **Launched ranks** (``np = K > 1`` in a plain Python process): the converted graph's
  edge arrays (dense ids, in the order of ``G``'s nodes) and the personalization /
  dangling vectors are written as ``.npy`` files to a temporary directory, and ``K``
  ranks are started with the CLI's launcher (:func:`asapgraph.comm.launch.run_ranks`,
  the same ``mpiexec``, environment and dying-rank supervision as ``--np K``) on
  :mod:`asapgraph.interop.rank_worker`.  Each rank memory-maps the arrays and takes its
  ``m/K`` slice (:class:`asapgraph.partition.reading.DenseEdges`: the vertex count is
  given, so isolated nodes keep their place, as in a generator spec).  Rank 0 writes the
  ranks vector; the caller reads it back.
* **Under mpiexec** (this script runs on K ranks: ``mpiexec -n K python script.py``, so
  every rank holds the same ``G``): the call is collective; each rank passes its own copy
  of the arrays as :class:`DenseEdges`, the engine runs on ``COMM_WORLD``, and rank 0's
  result is broadcast so every rank returns the same dict.  ``np`` must be unset or K.

``mode`` (``"bsp"``, the default on ranks, or ``"asap"``) chooses the engine.  On one
process BSP and ASAP are the same computation, so ``mode`` without ranks runs the
single-process kernel, as the CLI's ``--mode`` without ``--np`` does.

Stop rule.  networkx stops when the L1 change of an iteration is ``< n * tol``, which
certifies an L1 error of at most ``alpha / (1 - alpha)`` times that change.  The
distributed engines stop on a certified error bound, so they are given
``alpha / (1 - alpha) * n * tol`` (``n * tol`` rounded down one ulp): BSP then stops at
the same superstep as networkx's loop; ASAP stops as soon as its bound is as good.
``max_iter`` is BSP's superstep limit and ASAP's work limit in the same units (the
engine's: :data:`asapgraph.engine.asap.WORK_FACTOR` x ``max_iter`` sweeps of the whole
graph's edges, summed over the ranks; an ASAP sweep may run on partial input, so it needs
more edge work than BSP), as ``--np K --mode asap --max-iter N`` has it.  Until the
engine counted ``max_iter`` so (3e6ee60) this module multiplied it by 10 for ASAP itself;
both together gave ASAP 80 x ``max_iter`` sweeps, ten times the CLI's budget.  An
unconverged run raises ``PowerIterationFailedConvergence``.  ``nstart`` (a starting
vector) is refused on ranks: the engines start from the uniform vector.
``nx.config.backends.asapgraph.threads`` is each BSP rank's OpenMP threads (default one).

``last_run()`` returns the engine's accounting of the most recent run on ranks, as the
CLI's ``--json`` shows it: ``mode``, ``ranks``, ``iterations`` (BSP supersteps, ASAP
rounds), ``converged``, ``error_bound``, ``tol``, ``bytes_sent``, ``messages_sent``,
``edges_visited``.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile

import numpy as np

from asapgraph.comm.launch import local_ranks_refusal, mpi_world_size_from_env

__all__ = ["placement", "check_config", "pagerank_on_ranks", "last_run", "MODES"]

#: ``nx.config.backends.asapgraph.mode`` values
MODES = (None, "bsp", "asap")

_LAST = {}


def last_run():
    """Accounting of the last PageRank the backend ran on ranks (a dict; empty before):
    ``mode``, ``ranks``, ``iterations`` (BSP supersteps, ASAP rounds), ``converged``,
    ``error_bound``, ``tol``, ``bytes_sent``, ``messages_sent``, ``edges_visited``."""
    return dict(_LAST)


def check_config(np_, mode):
    """``np`` (None or an int) after checking the values of ``np`` and ``mode``;
    ValueError naming the setting.  Every backend function checks them (the others run in
    the calling process whatever ``np`` is, but a misspelt ``mode = "fast"`` or an
    ``np = 0`` passed without a word there and was refused only by pagerank)."""
    if mode not in MODES:
        raise ValueError(f"nx.config.backends.asapgraph.mode must be one of "
                         f"{', '.join(map(repr, MODES))}, got {mode!r}")
    if np_ is not None:
        if isinstance(np_, bool) or not isinstance(np_, (int, np.integer)) or np_ < 1:
            raise ValueError(f"nx.config.backends.asapgraph.np must be a positive integer "
                             f"or None, got {np_!r}")
        np_ = int(np_)
    return np_


def placement(np_, mode):
    """Where a backend PageRank runs, from the config values ``np`` and ``mode``.

    Returns None (this process, the OpenMP kernel), ``("spawn", K, mode)`` or
    ``("world", K, mode)``; a bad value raises ValueError naming the setting.
    """
    np_ = check_config(np_, mode)
    world = mpi_world_size_from_env()
    if world is not None and world > 1:
        if np_ is not None and np_ != world:
            raise ValueError(f"nx.config.backends.asapgraph.np is {np_} but this program "
                             f"runs on {world} MPI ranks (unset np, or set it to {world})")
        return ("world", world, mode or "bsp")
    if np_ is not None and np_ > 1:
        why = local_ranks_refusal(np_, "run your script under your own mpiexec with a "
                                       "hostfile and np unset")
        if why is not None:  # (started every rank on this host: 100000 hung, as --np did)
            raise ValueError(f"nx.config.backends.asapgraph.np: {why}")
        return ("spawn", np_, mode or "bsp")
    return None


def _edges(g):
    """Dense edge arrays ``(src, dst, weights)`` of an in-CSR (rows are destinations)."""
    dst = np.repeat(np.arange(g.n, dtype=g.indices.dtype), np.diff(g.indptr))
    return np.asarray(g.indices), dst, g.weights


def _engine_tol(alpha, limit):
    return alpha / (1.0 - alpha) * limit if alpha > 0 else limit


def pagerank_on_ranks(where, g, alpha, P, D, limit, max_iter, threads=None):
    """PageRank of the converted graph ``g`` on ranks (``where`` from :func:`placement`):
    ``(ranks by dense id, converged)``.  ``P``/``D``: dense personalization / dangling
    vectors or None; ``limit``: networkx's ``n * tol`` rounded down one ulp; ``threads``:
    ``nx.config.backends.asapgraph.threads`` (OpenMP threads per BSP rank; None: one, as
    ``--np`` without ``--threads``; above 1 in ASAP the engine refuses it, as the CLI
    does -- it was not passed on, so a set value was ignored on ranks)."""
    kind, K, mode = where
    params = {"mode": mode, "alpha": float(alpha), "tol": _engine_tol(alpha, limit),
              "max_iter": int(max_iter), "n": int(g.n),
              "threads": 1 if threads is None else int(threads)}
    if kind == "world":
        return _on_world(g, params, P, D)
    return _spawn(g, K, params, P, D)


def _vector(v):
    return None if v is None else (np.arange(len(v), dtype=np.int64), np.asarray(v, float))


def run_params(edges, params, P, D, comm=None):
    """The engine call both placements make (collective over ``comm``); a DistResult."""
    from asapgraph.engine import api

    return api.pagerank(edges, comm, mode=params["mode"], alpha=params["alpha"],
                        tol=params["tol"], max_iter=params["max_iter"],
                        personalization=_vector(P), dangling=_vector(D),
                        weighted=edges.weights is not None,
                        threads=params.get("threads", 1))


def _remember(params, K, stats, conv, bound, its):
    _LAST.clear()
    _LAST.update({"mode": params["mode"], "ranks": K, "iterations": int(its),
                  "converged": bool(conv), "error_bound": float(bound), "tol": params["tol"],
                  "bytes_sent": stats.get("bytes_sent"),
                  "messages_sent": stats.get("messages_sent"),
                  "edges_visited": stats.get("edges_visited")})


def _on_world(g, params, P, D):
    from asapgraph.comm.mpi import mpi
    from asapgraph.partition.reading import DenseEdges

    comm = mpi().COMM_WORLD
    src, dst, w = _edges(g)
    res = run_params(DenseEdges(src, dst, g.n, w), params, P, D, comm)
    x = np.empty(g.n) if comm.Get_rank() else np.ascontiguousarray(res.ranks, dtype=float)
    comm.Bcast(x, root=0)
    stats = comm.bcast(res.stats if comm.Get_rank() == 0 else None, root=0)
    _remember(params, comm.Get_size(), stats, res.converged, res.error_bound, res.iterations)
    return x, bool(res.converged)


def _spawn(g, K, params, P, D):
    from asapgraph.comm.launch import find_mpiexec, run_ranks

    tmp = tempfile.mkdtemp(prefix="asapgraph-nx-")
    try:
        src, dst, w = _edges(g)
        np.save(os.path.join(tmp, "src.npy"), src)
        np.save(os.path.join(tmp, "dst.npy"), dst)
        del src, dst
        for name, v in (("weights", w), ("personalization", P), ("dangling", D)):
            if v is not None:
                np.save(os.path.join(tmp, name + ".npy"), np.asarray(v, dtype=np.float64))
        with open(os.path.join(tmp, "params.json"), "w") as f:
            json.dump(params, f)
        rc = run_ranks(find_mpiexec(), K, [tmp], module="asapgraph.interop.rank_worker")
        err = os.path.join(tmp, "error.txt")
        if os.path.exists(err):
            with open(err) as f:
                raise ValueError(f.read().strip())
        out = os.path.join(tmp, "ranks.npy")
        if rc != 0 or not os.path.exists(out):
            raise RuntimeError(f"asapgraph backend: the PageRank on {K} ranks failed "
                               f"(exit status {rc}; the ranks' messages are above)")
        x = np.load(out)
        with open(os.path.join(tmp, "result.json")) as f:
            r = json.load(f)
        _remember(params, K, r["stats"], r["converged"], r["error_bound"], r["iterations"])
        return x, bool(r["converged"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
