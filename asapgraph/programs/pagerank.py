"""Single-process PageRank with networkx semantics and an OpenMP pull kernel.

Semantics (identical to ``networkx.pagerank`` on a ``MultiDiGraph``)
---------------------------------------------------------------------
``x = alpha * (x Q + sum(x[dangling]) * D) + (1 - alpha) * P`` from ``x0 = 1/n``, where
``Q[u, v] = W_uv / sum_v' W_uv'`` (parallel edges add up, self-loops count, unweighted:
every ``W = 1``), *dangling* vertices are those with no out-edge (or out-weight 0), ``P`` is
the personalization vector (uniform by default) and ``D`` the dangling distribution
(``P`` by default, as in networkx).  Both are normalised to sum 1.

Stop rule and error bound
-------------------------
``tol`` bounds the L1 error of the result (the meaning it has in every mode and on every
rank count, see :mod:`asapgraph.options`).  Because the update is an ``alpha``-contraction
in L1, a Jacobi sweep whose L1 change is ``c`` certifies
``||x_k - x*||_1 <= error_bound = alpha / (1 - alpha) * c``; iteration stops when
``error_bound <= tol`` (absolute: *not* scaled by ``n``) or after ``max_iter`` sweeps (then
``converged`` is False).  networkx stops when ``||x_k - x_{k-1}||_1 < n * tol_nx``
(default ``1e-6``, on a million vertices an L1 change of 1, i.e. no accuracy at all), which
certifies the error ``alpha / (1 - alpha) * n * tol_nx``: networkx's ``tol_nx``
corresponds to our ``tol = alpha / (1 - alpha) * n * tol_nx``.  The default ``tol =
1e-10`` is far below the 1e-8 we test against networkx.  The Gauss-Seidel method switches
to Jacobi sweeps once its own change is below the threshold and stops only on a Jacobi
change, so the same bound holds for every method.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import numpy as np

from asapgraph.kernels import _pagerank as _k
from asapgraph.kernels.tuning import (LOCALITY_MIN_FRACTION, LOCALITY_WINDOW, PARALLEL_MIN_EDGES,
                                      PREFETCH_MIN_BYTES, REORDER_MIN_EDGES)
from asapgraph import options as _options
from asapgraph import progress as _progress
from asapgraph.errors import InputError
from asapgraph.graph.weights import rescale_out_weights
from asapgraph.programs._util import label_positions, safe_distribution

__all__ = ["pagerank", "PageRankResult", "METHODS", "DEFAULT_TOL", "DEFAULT_MAX_ITER"]

#: Default bound on the L1 error (see :data:`asapgraph.options.DEFAULTS`).
DEFAULT_TOL, DEFAULT_MAX_ITER = _options.DEFAULTS["pagerank"]

#: Selectable sweep schemes ("auto" picks the measured fastest, see ``_AUTO``).
#: Sweeps to L1 error 1e-6 (measured): rmat:20 jacobi 16, gauss-seidel 41-45; cnr-2000
#: jacobi 65, gauss-seidel 72.  Also measured and rejected: Gauss-Seidel with the dangling
#: mass updated at once (45 on rmat:20), with the iterate renormalised every sweep (no
#: change), and the linear-system form ``y = alpha A y + (1-alpha) P`` normalised at the end
#: (rmat:20: 74 Jacobi / 39 Gauss-Seidel sweeps; cnr-2000: 84 / 72).  Power (Jacobi) sweeps
#: keep ``sum(x) = 1``, so their error lives in the zero-sum subspace, where the rate is
#: ``alpha * |lambda_2|`` (small on R-MAT); the other schemes carry an error component along
#: the dominant direction, which decays only at about ``alpha``.
METHODS = ("jacobi", "gauss-seidel")
_AUTO = "jacobi"

_PAD = 64  # >= PF_DIST + 4 spare entries after the relabelled indices


@dataclass
class PageRankResult:
    """What :func:`pagerank` returns.

    Attributes
    ----------
    ranks : float64 array, shape (n,)
        Rank of each dense vertex id (sums to 1).
    ids : int64 array, shape (n,)
        Original id of each dense vertex (``0..n-1`` when the graph names its vertices:
        ``vertices()`` gives the names, and is what ``write_values`` should get).
    iterations : int
        Number of sweeps performed.
    converged : bool
        True when ``error_bound <= tol``.
    residual : float
        L1 change of the last sweep (``||x_k - x_{k-1}||_1``).
    error_bound : float
        Certified L1 error of ``ranks``: ``alpha / (1 - alpha) * residual``.
    compute_seconds : float
        Wall time of the iteration (setup of inverse degrees included, graph loading not).
    method : str
        Sweep scheme used.
    threads : int
        OpenMP threads used.
    tol, alpha : float
        The parameters of the run.
    """

    ranks: np.ndarray
    ids: np.ndarray
    iterations: int
    converged: bool
    residual: float
    compute_seconds: float
    method: str
    threads: int
    tol: float = DEFAULT_TOL
    alpha: float = 0.85
    iteration_seconds: list = field(default_factory=list, repr=False)
    error_bound: float = 0.0
    #: Vertex labels (strings, tuples, ...) when the graph had them (``Graph.labels``).
    labels: object = field(default=None, repr=False)

    def vertices(self):
        """Original label (or id) of every vertex, aligned with ``ranks``."""
        return self.ids if self.labels is None else self.labels

    def to_dict(self):
        """``{original id or label: rank}`` (meant for small graphs)."""
        return dict(zip(self.vertices().tolist(), self.ranks.tolist()))

    def to_pandas(self):
        """A DataFrame with columns ``node`` (original ids or labels) and ``rank``."""
        from asapgraph.graph.convert import require

        pd = require("pandas")
        return pd.DataFrame({"node": self.vertices(), "rank": self.ranks})

    def top(self, k=10):
        """The ``k`` highest-ranked vertices as ``[(original_id, rank), ...]``, best first.

        Ties are broken by the smaller original id.
        """
        k = max(0, min(int(k), self.ranks.shape[0]))
        if k == 0:
            return []
        if k < self.ranks.shape[0]:
            cand = np.argpartition(-self.ranks, k - 1)[:k]
            # include every vertex tied with the k-th value so the tie-break is exact
            kth = self.ranks[cand].min()
            cand = np.flatnonzero(self.ranks >= kth)
        else:
            cand = np.arange(self.ranks.shape[0])
        order = np.lexsort((self.ids[cand], -self.ranks[cand]))[:k]
        sel = cand[order]
        if self.labels is not None:
            return list(zip(self.labels[sel].tolist(), self.ranks[sel].tolist()))
        return [(int(i), float(r)) for i, r in zip(self.ids[sel], self.ranks[sel])]

    def as_json(self, top=10):
        """A JSON-serialisable summary (no full rank vector)."""
        return {
            "algorithm": "pagerank",
            "n": int(self.ranks.shape[0]),
            "alpha": self.alpha,
            "tol": self.tol,
            "iterations": self.iterations,
            "converged": self.converged,
            "residual": self.residual,
            "error_bound": self.error_bound,
            "compute_seconds": self.compute_seconds,
            "seconds_per_iteration": (self.compute_seconds / self.iterations
                                      if self.iterations else 0.0),
            "method": self.method,
            "threads": self.threads,
            "rank_sum": float(self.ranks.sum()),
            "top": [[i, r] for i, r in self.top(top)],
        }


# ---------------------------------------------------------------------------- helpers
def _where(graph):
    return getattr(graph, "source", None) or "<graph>"


def _dense_of(graph, keys, name):
    """Dense ids of original ids ``keys`` (names, for a graph with ``labels``); InputError
    for ids not in the graph."""
    if getattr(graph, "labels", None) is not None:
        return label_positions(graph, list(keys), name)
    keys = np.asarray(keys)
    if keys.size and not np.issubdtype(keys.dtype, np.integer):
        raw = keys
        try:
            with np.errstate(invalid="ignore"):
                keys = keys.astype(np.int64)
        except OverflowError:   # a Python int past int64: no vertex has that id
            big = [k for k in keys.tolist() if isinstance(k, int) and not -2**63 <= k < 2**63]
            if not big:   # a float inf ("0 vertex id(s) not in the graph, e.g. []")
                inf = [k for k in keys.tolist() if k in (np.inf, -np.inf)]
                raise InputError(_where(graph), None, f"{name}: vertex ids must be "
                                                      f"integers, got {inf[:3]}") from None
            raise InputError(_where(graph), None,
                             f"{name}: {len(big)} vertex id(s) not in the graph, e.g. {big[:5]}") from None
        except (TypeError, ValueError):
            raise InputError(_where(graph), None,
                             f"{name}: vertex ids must be integers, got {keys[:3].tolist()}") from None
        # astype truncates: {3.7: 1} personalised vertex 3, and inf became some int64
        frac = ~np.asarray(keys == raw, dtype=bool)
        if np.any(frac):
            raise InputError(_where(graph), None, f"{name}: vertex ids must be integers, "
                                                  f"got {raw[frac][:3].tolist()}")
    keys = keys.astype(np.int64, copy=False)
    n = graph.n
    if graph.ids is None:
        bad = (keys < 0) | (keys >= n)
        dense = keys
    else:
        ids = np.asarray(graph.ids, dtype=np.int64)
        order = None
        if ids.size > 1 and not np.all(ids[1:] > ids[:-1]):
            order = np.argsort(ids, kind="stable")
            ids = ids[order]
        pos = np.searchsorted(ids, keys)
        pos_c = np.minimum(pos, max(n - 1, 0))
        bad = (pos >= n) | (ids[pos_c] != keys) if n else np.ones(keys.shape, bool)
        dense = pos_c if order is None else order[pos_c]
    if np.any(bad):
        missing = keys[bad][:5].tolist()
        raise InputError(_where(graph), None,
                         f"{name}: {int(bad.sum())} vertex id(s) not in the graph, e.g. {missing}")
    return dense


def _original_ids(graph):
    return graph.original_ids() if hasattr(graph, "original_ids") else (
        np.arange(graph.n, dtype=np.int64) if graph.ids is None else np.asarray(graph.ids))


def _distribution(graph, vec, name):
    """Normalised float64 vector over dense ids from a dict or array; None when ``vec`` is None."""
    if vec is None:
        return None
    n = graph.n
    if isinstance(vec, (str, os.PathLike)):
        # a node-value file ('-' standard input), read and checked as the command line and
        # asapgraph.engine.pagerank read it (a path was taken for an array: 'values must be
        # numbers'); names for a labelled graph
        labels = getattr(graph, "labels", None)
        path = os.fspath(vec)
        out = _options.dense_vertex_values(
            _original_ids(graph) if labels is None else np.zeros(n, dtype=np.int64),
            path if labels is None else _options.LabelledValues(path, labels))
        return safe_distribution(out)
    if isinstance(vec, dict):
        keys = np.fromiter(vec.keys(), dtype=object, count=len(vec))
        try:
            vals = np.array(list(vec.values()), dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(_where(graph), None, f"{name}: values must be numbers") from None
        out = np.zeros(n, dtype=np.float64)
        if len(vec):
            np.add.at(out, _dense_of(graph, keys, name), vals)
    else:
        try:
            out = np.array(vec, dtype=np.float64).ravel()
        except (TypeError, ValueError):
            raise InputError(_where(graph), None, f"{name}: values must be numbers") from None
        if out.shape[0] != n:
            raise InputError(_where(graph), None,
                             f"{name}: an array must have one value per vertex ({n}), got {out.shape[0]}")
    if not np.all(np.isfinite(out)):
        raise InputError(_where(graph), None, f"{name}: values must be finite")
    if np.any(out < 0):
        raise InputError(_where(graph), None, f"{name}: values must be >= 0")
    if not out.max(initial=0.0) > 0:
        raise InputError(_where(graph), None, f"{name}: values sum to 0 (need a positive sum)")
    return safe_distribution(out)  # 1e308 + 1e308 must not overflow


def _inverse_out(graph, weighted):
    """``1/out_weight`` per vertex (0 for dangling vertices) and the edge-weight array."""
    if weighted:
        ow = graph.out_weight
        if ow is None:
            ow = np.bincount(graph.indices, weights=graph.weights, minlength=graph.n)
        ow = np.asarray(ow, dtype=np.float64)
        # a sum that overflowed (1e308 + 1e308) or whose reciprocal would (subnormal
        # weights): that vertex's weights divided by its largest first, same ratios
        w, ow = rescale_out_weights(graph.indices, np.ascontiguousarray(graph.weights,
                                                                        dtype=np.float64), ow)
        inv = np.zeros(graph.n, dtype=np.float64)
        np.divide(1.0, ow, out=inv, where=ow != 0)
        return inv, np.ascontiguousarray(w, dtype=np.float64)
    deg = np.asarray(graph.out_degree)
    inv = np.zeros(graph.n, dtype=np.float64)
    np.divide(1.0, deg, out=inv, where=deg != 0)
    return inv, np.empty(0, dtype=np.float64)


def _has_locality(indptr, indices, samples=1 << 16):
    """True when most in-edges already come from nearby ids (crawl-ordered web graphs).

    Samples edges and checks ``|source - destination| < LOCALITY_WINDOW``.  cnr-2000: 0.71
    of the edges (its scipy matvec runs at 1.3 ns/nnz, and relabelling by degree made our
    sweep 3x slower); a randomly permuted R-MAT: ``2 * window / n``, 0.03 at rmat:18.
    """
    m = int(indptr[-1])
    if m == 0:
        return True
    k = np.random.default_rng(0x5EED).integers(0, m, min(samples, m))
    rows = np.searchsorted(indptr, k, side="right") - 1
    near = np.abs(indices[k].astype(np.int64) - rows) < LOCALITY_WINDOW
    return float(near.mean()) >= LOCALITY_MIN_FRACTION


def _scatter(vals, pos):
    out = np.empty_like(vals)
    out[pos] = vals
    return out


# ---------------------------------------------------------------------------- API
def pagerank(graph, alpha=0.85, personalization=None, dangling=None, tol=DEFAULT_TOL,
             max_iter=DEFAULT_MAX_ITER, weighted=None, threads=None, method="auto", progress=None,
             reorder=None, nstart=None, change_tol=None):
    """PageRank of a :class:`~asapgraph.graph.Graph` (networkx semantics, see module doc).

    Parameters
    ----------
    graph : Graph
        In-CSR graph; parallel edges and self-loops count like in a networkx MultiDiGraph.
    alpha : float, default 0.85
        Damping factor, ``0 <= alpha < 1``.
    personalization : dict, array-like or path, optional
        Teleport distribution: ``{original_id: value}`` (missing ids get 0), an array over
        dense ids, or a node-value file (lines ``node value``, as ``--personalization``
        reads it, with its refusals; ``'-'`` standard input).  Normalised to sum 1;
        values must be finite, ``>= 0``, with a positive sum.
        Default uniform.  Unlike networkx, ids that are not in the graph are an error.
    dangling : dict or array-like, optional
        Where the rank of dangling vertices goes (same forms); default ``personalization``.
    tol : float, default 1e-10
        Bound on the L1 error of the result: stop when ``alpha / (1 - alpha)`` times the
        L1 change between iterates is ``<= tol`` (networkx's ``tol`` is
        ``tol * (1 - alpha) / (alpha * n)``).
    change_tol : float, optional
        networkx's own stop rule instead of ``tol``: stop when the L1 change of a sweep is
        ``<= change_tol`` (the networkx backend passes ``n * tol_nx`` minus one ulp).  The
        result's ``error_bound`` is still the certified bound of the last change.
    max_iter : int, default 1000
        Maximum number of sweeps; when reached, ``converged`` is False (no exception).
        The change shrinks by about ``alpha`` per sweep in the worst case, so ``tol=1e-10``
        may need ``log(1e-10)/log(0.85) = 142`` sweeps (email-Eu-core needs 110): the
        networkx default of 100 would be too small for this tolerance.
    weighted : bool, optional
        Use edge weights (``W_uv / out-weight of u``); default: when the graph has weights.
    threads : int, optional
        OpenMP threads (default: all cores, ``OMP_NUM_THREADS`` respected, but one thread
        when ``m < PARALLEL_MIN_EDGES``: a short sweep does not pay for waking a thread,
        and on a loaded machine each barrier can cost a scheduler time slice).
        ``threads=1`` runs without any OpenMP region (what the distributed engine uses).
    method : {"auto", "jacobi", "gauss-seidel"}
        Sweep scheme; "auto" is the measured fastest: Jacobi.  Gauss-Seidel needs *more*
        sweeps on graphs with many dangling vertices (rmat:20: 41 vs 16 to reach L1 error
        1e-6; half of its vertices are dangling, and their mass moves Jacobi-style), see
        ``benchmarks/bench_pagerank.py``.
    progress : asapgraph.progress.Progress, optional
        Receives one ``iteration(k, residual)`` call per sweep.
    reorder : bool, optional
        Relabel vertices (rows and sources) by decreasing out-degree before iterating, so
        the contributions that most edges gather sit together in cache and the per-vertex
        writes are sequential.  Costs a copy of ``indices`` (4 bytes per edge) and about
        1.5 unordered sweeps of time (included in ``compute_seconds``); on rmat:20 it cut
        the sweep from 8.2 to 4.1 ns per edge (1 thread, loaded machine; prefetch on).
        Default: when ``m >= REORDER_MIN_EDGES`` and the given order does not already keep
        most in-edges near their destination (a crawl-ordered web graph such as cnr-2000
        is 3x slower per sweep after a degree relabelling).
    nstart : dict or array-like, optional
        Starting vector (same forms as ``personalization``, normalised to sum 1); default
        uniform ``1/n`` (networkx's ``nstart``).

    Returns
    -------
    PageRankResult

    Raises
    ------
    InputError
        Bad personalization / dangling vectors, negative edge weights.
    ValueError
        Bad ``alpha``, ``tol``, ``max_iter``, ``threads`` or ``method``.
    """
    _options.check_env()   # (as the command line's pagerank on one process: audit 24b)
    given = graph   # (a refusal of a negative weight names its place in it)
    from asapgraph.graph.convert import as_engine_graph

    graph = as_engine_graph(graph)   # networkx, scipy, pandas, an edge array ...: converted
    converted = graph is not given
    prog = _progress.get(progress)
    alpha = _options.check_alpha(alpha)
    tol = _options.check_tol(tol)
    max_iter = _options.check_max_iter(max_iter)
    if method == "auto":
        method = _AUTO
    if method not in METHODS:
        raise ValueError(f"method must be one of 'auto', {', '.join(map(repr, METHODS))}; got {method!r}")
    threads = _options.check_threads(threads)
    nthreads = _k.max_threads() if threads is None else threads
    if weighted is None:
        weighted = graph.weights is not None
    if weighted and graph.weights is None:
        if not converted:
            raise ValueError("weighted=True but the graph has no edge weights")
        # a converted graph whose weights are all 1 (the converters drop them) or that has
        # no edge: networkx counts a missing weight as 1, so these are the unit weights
        weighted = False

    t0 = time.perf_counter()
    n = graph.n
    ids = _original_ids(graph)
    labels = getattr(graph, "labels", None)
    if n == 0:
        return PageRankResult(np.zeros(0), np.asarray(ids, dtype=np.int64), 0, True, 0.0,
                              time.perf_counter() - t0, method, nthreads, tol, alpha,
                              labels=labels)
    if weighted and graph.m and not np.all(np.isfinite(graph.weights)):
        # (a file's weights are checked at their line when read; arrays, scipy, pandas
        # and networkx weights were not: NaN ranks after max_iter sweeps, no error)
        bad = float(graph.weights[~np.isfinite(graph.weights)][0])
        raise InputError(_where(graph), None, f"edge weight {bad!r} is not a finite number")
    if weighted and graph.m and np.min(graph.weights) < 0:
        from asapgraph.graph.convert import negative_weight_at

        where = _where(graph)   # a graph read from a file: the line of the first, as the
        path = where if not converted and os.path.isfile(where) else None   # CLI names it
        raise _options.negative_weights_error(where, path, getattr(graph, "weight_col", None),
                                              edge=negative_weight_at(given, graph),
                                              header=getattr(graph, "header", False))
    P = _distribution(graph, personalization, "personalization")
    X0 = _distribution(graph, nstart, "nstart")
    D = _distribution(graph, dangling, "dangling")
    if D is None:
        D = P  # networkx: dangling mass follows the personalization vector
    empty = np.empty(0, dtype=np.float64)
    Pk = empty if P is None else P
    Dk = empty if D is None else D
    inv_out, w = _inverse_out(graph, weighted)
    indptr = np.ascontiguousarray(graph.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(graph.indices)
    if indices.dtype not in (np.int32, np.int64):
        indices = indices.astype(np.int64)
    m = int(indptr[-1])
    if threads is None and m < PARALLEL_MIN_EDGES:
        nthreads = 1   # a sweep is too short to pay for waking (and waiting for) a thread

    if reorder is None:
        reorder = m >= REORDER_MIN_EDGES and not _has_locality(indptr, indices)
    new2old = None
    if reorder:
        # Rows and sources relabelled by decreasing out-degree (log2 buckets, stable): the
        # contributions gathered by most edges become one compact, cache-resident block
        # and every per-vertex access stays sequential.
        new2old = np.empty(n, dtype=indices.dtype)
        _k.degree_order(np.ascontiguousarray(graph.out_degree, dtype=np.int64), new2old)
        old2new = np.empty(n, dtype=indices.dtype)
        old2new[new2old] = np.arange(n, dtype=indices.dtype)
        nptr = np.empty(n + 1, dtype=np.int64)
        nind = np.empty(m + _PAD, dtype=indices.dtype)     # padding: prefetch look-ahead
        nw = np.empty(m if w.shape[0] else 0, dtype=np.float64)
        _k.permute_csr(indptr, indices, w, new2old, old2new, nptr, nind, nw, nthreads)
        del old2new
        indptr, indices, w = nptr, nind, (nw if w.shape[0] else w)
        inv_out = inv_out[new2old]
        Pk = Pk[new2old] if Pk.shape[0] else Pk
        X0 = None if X0 is None else X0[new2old]
        Dk = Dk[new2old] if Dk.shape[0] else Dk
    # prefetch pays once the contributions spill out of L2 (and needs the padded copy)
    prefetch = bool(reorder) and n * 8 > PREFETCH_MIN_BYTES
    x = np.full(n, 1.0 / n) if X0 is None else np.array(X0, dtype=np.float64)
    delta = float(x[inv_out == 0.0].sum())
    c = x * inv_out                      # contributions x * inv_out of the current x
    cbuf = None                          # second buffer for Jacobi sweeps
    nb = max(1, min(nthreads, n))
    bounds = _k.balanced_bounds(indptr, nb)
    stats = np.zeros((nb, _k.NSTATS))
    it = 0
    res = float("inf")
    converged = False
    it_times = []
    gs = method == "gauss-seidel"
    a = float(alpha)
    stop = _options.pagerank_change_tol(a, tol)   # L1 change certifying error <= tol
    if change_tol is not None:
        stop = _options.check_tol(change_tol)
    while it < max_iter:
        ts = time.perf_counter()
        if gs:
            _k.sweep(indptr, indices, w, inv_out, x, c, c, Pk, Dk, a, delta, bounds, stats,
                     prefetch)
        else:
            if cbuf is None:
                cbuf = np.empty(n)
            _k.sweep(indptr, indices, w, inv_out, x, c, cbuf, Pk, Dk, a, delta, bounds, stats,
                     prefetch)
            c, cbuf = cbuf, c
        it += 1
        res = float(stats[:, _k.STAT_CHANGE].sum())
        delta = float(stats[:, _k.STAT_DANGLING].sum())
        it_times.append(time.perf_counter() - ts)
        prog.iteration(it, res)
        if res <= stop:
            if gs:
                # A Gauss-Seidel change is not a bound on the error: confirm with Jacobi
                # sweeps, whose change bounds the error by alpha/(1-alpha) * change.
                gs = False
                continue
            converged = True
            break
    if new2old is not None:
        x = _scatter(x, new2old)
    # Jacobi sweeps keep sum(x) = 1, but after Gauss-Seidel sweeps (which do not) the sum
    # converges only at rate alpha: its last 1e-9 is removed here (the fixed point sums to 1)
    tot = float(x.sum())
    ranks = x / tot if tot > 0 else x
    return PageRankResult(ranks, np.asarray(ids, dtype=np.int64), it, converged, res,
                          time.perf_counter() - t0, method, nthreads, float(tol), float(alpha),
                          it_times, _options.pagerank_error_bound(a, res), labels)
