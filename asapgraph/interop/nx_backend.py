"""The ``asapgraph`` networkx backend: ``nx.pagerank(G, backend="asapgraph")``.

Rationale
---------
networkx (3.2+) dispatches a function to an installed backend named by the
``networkx.backends`` entry point; the backend converts the graph (``convert_from_nx``),
runs its implementation with networkx's exact signature, and returns networkx's result
types (dicts keyed by node objects, generators of sets).  Semantics here are networkx's, to
its own stop rules: PageRank stops when the L1 change is ``< n * tol`` (the engine's rule is
``<= tol``, so it is given ``n * tol`` rounded down one ulp), Katz runs networkx's Jacobi
iteration with its ``< n * tol`` rule, HITS runs the power iteration networkx documents
(ARPACK where it does not converge), and an unreached ``max_iter`` raises
``PowerIterationFailedConvergence``.
Arguments the engine cannot honour exactly (negative weights or vector entries, a callable
``weight``, PageRank weights whose out-weight sums networkx cannot invert in float64) are
declined (``can_run``, or NotImplementedError from the call) so networkx runs its own code
(``nx.config.fallback_to_nx``, ``backend_priority``) instead of a different answer; a
zero-sum ``dangling``/``nstart`` raises PowerIterationFailedConvergence, as networkx's NaN
iteration does.

Configuration: ``nx.config.backends.asapgraph.threads`` (OpenMP threads; None: all cores),
``nx.config.backends.asapgraph.hits_method`` (``"auto"``, the default: networkx's power
iteration on the engine's kernel, networkx's ARPACK call where that does not converge;
``"power"``; ``"svds"``: always the ARPACK call), ``nx.config.backends.asapgraph.np`` and
``.mode`` (PageRank on K MPI ranks, BSP or ASAP: :mod:`asapgraph.interop.nx_ranks`; the
other functions run in this process).  Every function refuses a bad value of ``threads``,
``np`` or ``mode`` (ValueError naming the setting), whether or not it reads it.

Counting for tests: with ``ASAPGRAPH_NX_CALL_LOG=<file>`` every call that runs the
asapgraph implementation appends ``<PYTEST_CURRENT_TEST>\\t<function>`` to that file, so a
test run can count the networkx tests that exercised the backend (not the fallback).
"""
from __future__ import annotations

import functools
import operator
import os

import numpy as np

from asapgraph.interop import nx_ranks
from asapgraph.interop.nxgraph import NxGraph, from_networkx

__all__ = ["BackendInterface", "get_info", "FUNCTIONS"]

#: ``nx.config.backends.asapgraph.hits_method`` values (see ``_DOCS["hits"]``)
HITS_METHODS = ("auto", "power", "svds")

#: name -> implementation (filled by ``_implements``)
FUNCTIONS = {}

_DOCS = {
    "pagerank": "The engine's OpenMP pull kernel (Jacobi sweeps) with networkx's stop rule "
                "(L1 change < n * tol); negative weights or vector entries, weights whose "
                "out-weight sums overflow or whose reciprocals do (networkx's normalisation "
                "is then not plain arithmetic) and ``alpha`` outside [0, 1) fall back to "
                "networkx; a zero-sum ``dangling`` or ``nstart`` raises "
                "PowerIterationFailedConvergence, as in networkx.  "
                "With ``nx.config.backends.asapgraph.np = K`` (K ranks started with mpiexec) "
                "or under ``mpiexec -n K`` (every rank calls it: collective), the distributed "
                "engine runs in ``mode`` 'bsp' (default; stops at the same superstep as "
                "networkx) or 'asap' (stops when its certified L1 error bound is within "
                "alpha / (1 - alpha) * n * tol, the bound networkx's rule certifies); "
                "``nstart`` is refused there.",
    "hits": "By default (``hits_method = 'auto'``) the iteration networkx's docstring "
            "describes and its ``_hits_python`` runs: max-normalised power iteration, "
            "stopping when the L1 change of the hubs is < tol, on the engine's OpenMP pull "
            "kernel (same vectors as networkx's ARPACK call to about tol where the top "
            "singular value is simple: 3e-13 L1 on rmat:18; where it is repeated both "
            "answers are arbitrary vectors of that subspace); if it does not converge within ``max_iter`` (a small spectral gap), "
            "networkx's own ARPACK ``svds`` call decides, so a graph networkx solves is "
            "solved.  ``'svds'`` always makes networkx's ARPACK call (products by the "
            "engine's kernel); ``'power'`` never falls back.",
    "katz_centrality": "networkx's Jacobi iteration (stop at L1 change < n * tol) with the "
                       "engine's OpenMP pull kernel for ``A^T x``; an ``nstart`` without a "
                       "value for every node falls back to networkx.",
    "weakly_connected_components": "Lock-free union-find over the converted CSR, the sets "
                                   "of node objects built in C; components are yielded "
                                   "in the order of their first node, as networkx does.",
    "number_weakly_connected_components": "Lock-free union-find (components counted in C).",
    "is_weakly_connected": "Lock-free union-find.",
    "connected_components": "Lock-free union-find on the symmetric adjacency (each edge "
                            "linked once), the sets built in C; networkx's order.",
    "number_connected_components": "Lock-free union-find (components counted in C).",
    "is_connected": "Lock-free union-find.",
    "node_connected_component": "Lock-free union-find.",
    "single_source_shortest_path_length": "The engine's direction-optimising BFS; the dict "
                                          "is ordered by distance.",
    "single_source_dijkstra_path_length": "The engine's SSSP (Bellman-Ford supersteps, "
                                          "lightest parallel edge); int weights give int "
                                          "distances, float weights floats; a "
                                          "callable ``weight``, negative weights or int "
                                          "distances of 2**53 or more (not exact in a "
                                          "double) fall back.",
}


def _log_call(name):
    path = os.environ.get("ASAPGRAPH_NX_CALL_LOG")
    if path:
        test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
        with open(path, "a") as f:
            f.write(f"{test}\t{name}\n")


def _implements(func):
    name = func.__name__

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _log_call(name)
        _check_config()
        return func(*args, **kwargs)

    FUNCTIONS[name] = wrapper
    return wrapper


def _config(key, default=None):
    try:
        import networkx as nx

        return getattr(nx.config.backends.asapgraph, key, default)
    except AttributeError:
        return default


def _threads():
    """``nx.config.backends.asapgraph.threads`` checked as the Python API checks
    ``threads``: every function refuses a bad value.  ``int(t)`` (and ``if threads``
    before the kernels) ran katz, hits and the components with 0 or -1 on all cores, 1.5
    and True on one thread, and 'x' raised "invalid literal for int()"; pagerank, bfs and
    dijkstra refused 0 but not 1.5."""
    from asapgraph.options import check_threads

    t = _config("threads")
    try:
        return check_threads(t)
    except ValueError:
        raise ValueError(f"nx.config.backends.asapgraph.threads must be a positive integer "
                         f"or None, got {t!r}") from None


def _check_config():
    """Every function refuses a bad ``threads``, ``np`` or ``mode`` value (ValueError
    naming the setting), whether or not it reads it: only pagerank checked ``np`` and
    ``mode``, and katz, hits and the components ran with ``threads`` 0 or -1."""
    _threads()
    nx_ranks.check_config(_config("np"), _config("mode"))


def _nx():
    import networkx as nx

    return nx


def _nonneg_finite(vec):
    return bool(np.all(np.isfinite(vec)) and np.all(vec >= 0))


# ---------------------------------------------------------------------- link analysis
@_implements
def pagerank(G, alpha=0.85, personalization=None, max_iter=100, tol=1.0e-6, nstart=None,
             weight="weight", dangling=None):
    from asapgraph.programs.pagerank import pagerank as _pagerank

    nx = _nx()
    n = len(G)
    if n == 0:
        return {}
    g = G.engine_graph(weight)
    if g.weights is not None and not _nonneg_finite(g.weights):
        raise NotImplementedError("pagerank: negative or non-finite edge weights")
    P = D = X0 = None
    if personalization is not None:
        P = G.vector(personalization)
        if P.sum() == 0:
            raise ZeroDivisionError
        if not _nonneg_finite(P):
            raise NotImplementedError("pagerank: negative personalization values")
    if dangling is not None:
        D = G.vector(dangling)
        if not _nonneg_finite(D):
            raise NotImplementedError("pagerank: dangling must be finite and >= 0")
    if nstart is not None:
        X0 = G.vector(nstart)
        if not _nonneg_finite(X0):
            raise NotImplementedError("pagerank: nstart must be finite and >= 0")
    # networkx divides a zero-sum dangling or nstart by its sum (0 / 0: NaN in every
    # entry, whether or not a node is dangling) and its loop never meets err < n * tol: it
    # always raises PowerIterationFailedConvergence (below, after its max_iter TypeError);
    # the backend declined, so an explicit backend="asapgraph" was a NotImplementedError
    nan_vector = (D is not None and not D.sum() > 0) or (X0 is not None and not X0.sum() > 0)
    if g.weights is not None and not _normalisable(g):
        raise NotImplementedError("pagerank: edge weights whose out-weight sums are not "
                                  "normal doubles (networkx's 1 / sum overflows)")
    limit = n * float(tol)
    # networkx stops at err < n*tol, the engine at residual <= its tol
    etol = float(np.nextafter(limit, 0.0)) if limit > 0 else 0.0
    where = nx_ranks.placement(_config("np"), _config("mode"))
    # networkx loops over range(max_iter): a float max_iter is a TypeError, and
    # max_iter <= 0 (as n * tol <= 0: err < 0 is never met) raises
    # PowerIterationFailedConvergence, not the engine's ValueError
    max_iter = operator.index(max_iter)
    if not (limit > 0) or max_iter <= 0 or nan_vector:
        raise nx.PowerIterationFailedConvergence(max_iter)
    if where is not None and nstart is not None:
        raise ValueError("asapgraph backend: nstart is not supported on MPI ranks (the "
                         "engines start from the uniform vector); unset it, or "
                         "nx.config.backends.asapgraph.np / mpiexec")
    if where is not None:
        x, conv = nx_ranks.pagerank_on_ranks(where, g, alpha, P, D, etol, max_iter,
                                             _threads())
    else:
        res = _pagerank(g, alpha=alpha, personalization=P, dangling=D, change_tol=etol,
                        max_iter=max_iter, weighted=g.weights is not None,
                        threads=_threads(), method="jacobi", nstart=X0)
        x, conv = res.ranks, res.converged
    if not conv:
        raise nx.PowerIterationFailedConvergence(max_iter)
    return dict(zip(G.nodes, np.asarray(x).tolist()))


def _normalisable(g):
    """Whether networkx's row normalisation of PageRank is plain arithmetic for the
    converted graph ``g`` (non-negative finite weights): it scales row ``u`` by
    ``1 / S[u]`` (``S[u]`` the out-weight sum), which is ``inf`` for ``S[u]`` below
    ``1 / DBL_MAX`` (weights 5e-320: inf x 5e-320 is inf, then NaN, and networkx raises
    PowerIterationFailedConvergence) and 0 for an ``S[u]`` that overflowed (1e308 + 1e308:
    the row's mass is lost, not dangling).  The engine divides each weight by the sum and
    answered the mathematical PageRank instead of networkx's.  Every positive ``S[u]``
    lies between the smallest positive weight and the total, so two reductions decide
    almost every graph; only where they cannot are the sums formed (one ``bincount``)."""
    w = g.weights
    big = np.finfo(np.float64).max
    with np.errstate(over="ignore"):
        total = float(w.sum())
    pos = w[w > 0]
    if np.isfinite(total) and (pos.size == 0 or float(pos.min()) * big > 1.0):
        return True
    with np.errstate(over="ignore"):
        S = np.bincount(g.indices, weights=w, minlength=g.n)   # in-CSR: sources
    S = S[S > 0]
    return bool(np.all(np.isfinite(S)) and (S.size == 0 or float(S.min()) * big > 1.0))


def _adjacency_products(G, wname):
    """``(A x, A^T x)`` as two functions over the engine's OpenMP pull kernel
    (``A[u, v]`` = weight of ``u -> v``): ``A x`` gathers over the out-CSR, ``A^T x`` over
    the in-CSR the graph already holds (scipy's ``csr.T @ x`` scatters instead: measured
    2.4x the gather on rmat:18).  ``nx.config.backends.asapgraph.threads`` applies."""
    from asapgraph.engine.program import COMBINERS, EDGE_OPS
    from asapgraph.kernels import _programs as K

    n = len(G)
    g = G.engine_graph(wname)
    iptr, iind, iw = g.indptr, g.indices, g.weights
    optr, oind, ow = G.out_csr(wname)
    oind = np.ascontiguousarray(oind, dtype=iind.dtype)
    iw = np.empty(0) if iw is None else iw
    ow = np.empty(0) if ow is None else ow
    has, empty = np.empty(n, dtype=np.uint8), np.empty(0, dtype=np.uint8)
    op, comb = EDGE_OPS["mul"], COMBINERS["sum"]
    threads = _threads()

    def product(ptr, ind, w):
        def f(x, out=None):
            x = np.ascontiguousarray(np.asarray(x).real.reshape(-1), dtype=np.float64)
            y = np.empty(n) if out is None else out
            old = K.set_num_threads(threads) if threads else None
            try:
                K.gather_pull(ptr, ind, w, x, empty, op, comb, 0.0, y, has)
            finally:
                if old is not None:
                    K.set_num_threads(old)
            return y
        return f

    return product(optr, oind, ow), product(iptr, iind, iw)


def _hits_power(G, max_iter, tol, nstart, normalized):
    """networkx's ``_hits_python`` iteration (max-normalised, stop at L1 change of the hubs
    ``< tol``) with the engine's pull kernel for ``A^T h`` and ``A a``."""
    n = len(G)
    A, AT = _adjacency_products(G, "weight" if "weight" in G.edge_data else None)
    h = None if nstart is None else G.vector(nstart)
    if h is None or not bool(np.all(h > 0)):
        # networkx's answer (its ARPACK call) does not depend on nstart; a start with a
        # zero entry can be orthogonal to the principal singular vector, where the power
        # iteration would converge to another one: start uniform (positive) instead
        h = np.full(n, 1.0 / n)
    else:
        h /= h.sum()
    a, hn = np.empty(n), np.empty(n)
    for _ in range(max_iter):
        AT(h, a)        # a = A^T h
        A(a, hn)        # h = A a
        hmax, amax = hn.max(), a.max()
        hn /= hmax if hmax != 0 else 1.0
        a /= amax if amax != 0 else 1.0
        err = float(np.abs(hn - h).sum())
        h, hn = hn, h
        if err < tol:
            break
    else:
        raise _nx().PowerIterationFailedConvergence(max_iter)
    if not (h.any() and a.any()):  # A = 0 (no edge of non-zero weight): no hub vector; NaN
        # from the normalisation would be a wrong answer -- networkx's own code decides
        # (it raises) when the backend was not named, as for every declined call
        raise NotImplementedError("hits: the adjacency matrix is zero (no edge of non-zero "
                                  "weight), HITS is undefined")
    if normalized:
        h /= h.sum()
        a /= a.sum()
    else:   # networkx's scale (its ARPACK call): a the unit singular vector, h = A a
        a /= float(np.sqrt(np.dot(a, a)))
        A(a, hn)
        h = hn
    return dict(zip(G.nodes, h.tolist())), dict(zip(G.nodes, a.tolist()))


def _adjacency_operator(G, wname):
    """The adjacency matrix as a scipy ``LinearOperator`` over
    :func:`_adjacency_products` (ARPACK's ``svds`` does one ``A x`` and one ``A^T x`` per
    step; the operator gives scipy's products up to summation order)."""
    import scipy as sp
    import scipy.sparse.linalg  # noqa: F401

    n = len(G)
    A, AT = _adjacency_products(G, wname)
    return sp.sparse.linalg.LinearOperator((n, n), matvec=A, rmatvec=AT, dtype=np.float64)


def _check_nstart_keys(G, nstart):
    """networkx's hits raises ValueError when ``nstart`` has not one value per node (its
    ARPACK start vector has the wrong shape); the power iteration read the dict by node,
    so extra keys were ignored and missing nodes started at 0 without a word."""
    keys = set(nstart)
    extra = [k for k in nstart if k not in G]
    if extra or len(keys) != len(G):
        missing = [] if extra else [v for v in G.nodes if v not in keys][:3]
        what = (f"keys that are not nodes of G: {extra[:3]!r}" if extra else
                f"no value for node(s) {missing!r}")
        raise ValueError(f"hits: nstart must give one value per node of G ({len(G)}), "
                         f"it has {what}")


@_implements
def hits(G, max_iter=100, tol=1.0e-8, nstart=None, normalized=True):
    import scipy as sp
    import scipy.sparse.linalg  # noqa: F401

    nx = _nx()
    if len(G) == 0:
        return {}, {}
    method = _config("hits_method", "auto")
    if method not in HITS_METHODS:
        raise ValueError(f"nx.config.backends.asapgraph.hits_method must be one of "
                         f"{', '.join(HITS_METHODS)}, not {method!r}")
    if max_iter <= 0:
        raise nx.PowerIterationFailedConvergence(max_iter)
    if "weight" in G.edge_data:  # a negative weight: the max-normalised iteration divided
        # by sums of mixed signs and returned inf and NaN scores; networkx's code decides
        w = G.engine_graph("weight").weights
        if w is not None and not _nonneg_finite(w):
            raise NotImplementedError("hits: negative or non-finite edge weights")
    if nstart is not None:
        _check_nstart_keys(G, nstart)
    if method != "svds":
        try:
            return _hits_power(G, max_iter, tol, nstart, normalized)
        except nx.PowerIterationFailedConvergence:
            if method == "power":
                raise
            # "auto": the power method's rate is (sigma2 / sigma1)^2 per iteration; where
            # that is too slow for max_iter, networkx's ARPACK call decides, as in networkx
    A = _adjacency_operator(G, "weight" if "weight" in G.edge_data else None)
    if nstart is not None:  # by node (networkx passes the values in the dict's order)
        nstart = G.vector(nstart)
    try:
        _, _, vt = sp.sparse.linalg.svds(A, k=1, v0=nstart, maxiter=max_iter, tol=tol)
    except sp.sparse.linalg.ArpackNoConvergence as exc:
        raise nx.PowerIterationFailedConvergence(max_iter) from exc
    a = vt.flatten().real
    h = A @ a
    if normalized:
        h /= h.sum()
        a /= a.sum()
    return dict(zip(G.nodes, h.tolist())), dict(zip(G.nodes, a.tolist()))


@_implements
def katz_centrality(G, alpha=0.1, beta=1.0, max_iter=1000, tol=1.0e-6, nstart=None,
                    normalized=True, weight=None):
    from asapgraph.kernels import _programs as K
    from asapgraph.engine.program import COMBINERS, EDGE_OPS

    nx = _nx()
    n = len(G)
    if n == 0:
        return {}
    try:
        b = np.full(n, float(beta))
    except (TypeError, ValueError, AttributeError) as err:
        if set(beta) != set(G.nodes):
            raise nx.NetworkXError("beta dictionary must have a value for every node") from err
        b = np.fromiter(map(beta.__getitem__, G.nodes), dtype=np.float64, count=n)
    if nstart is None:
        x = np.zeros(n)
    else:
        extra = next((k for k in nstart if k not in G.index), _NONE)
        if extra is not _NONE:   # a key that is not a node: networkx's G[key] is a KeyError
            raise KeyError(extra)
        if len(nstart) != n:
            # nodes without a value: networkx iterates over nstart's keys only, so it
            # raises KeyError for the first successor of a key that has no value, and
            # where the keys are closed under successors it returns a dict of those keys
            # alone (Katz of that subgraph, stopped at len(G) * tol); the backend raised
            # KeyError for the first node in G's order -- networkx's own code decides
            raise NotImplementedError("katz_centrality: nstart has no value for some nodes")
        x = np.fromiter(map(nstart.__getitem__, G.nodes), dtype=np.float64, count=n)
    g = G.engine_graph(weight)
    w = np.empty(0) if g.weights is None else g.weights
    empty = np.empty(0, dtype=np.uint8)
    y = np.empty(n)
    has = np.empty(n, dtype=np.uint8)
    op, comb = EDGE_OPS["mul"], COMBINERS["sum"]
    threads = _threads()
    old = K.set_num_threads(threads) if threads else None
    try:
        for _ in range(max_iter):
            K.gather_pull(g.indptr, g.indices, w, x, empty, op, comb, 0.0, y, has)
            xnew = alpha * y + b
            err = float(np.abs(xnew - x).sum())
            x = xnew
            if err < n * tol:
                if normalized:
                    from asapgraph.programs._util import unit_l2

                    x = unit_l2(x)
                return dict(zip(G.nodes, x.tolist()))
    finally:
        if old is not None:
            K.set_num_threads(old)
    raise nx.PowerIterationFailedConvergence(max_iter)


#: a marker no ``nstart`` key can be
_NONE = object()


# ---------------------------------------------------------------------- components
def _components(G):
    """``(labels, count)``: per dense id the smallest dense id of its (weak) component
    (an array of the CSR's id dtype), and the number of components.

    The union-find kernel is called directly (not through the engine's WCC program, whose
    value/delta arrays and result object cost more than the union-find itself on rmat:18);
    ``nx.config.backends.asapgraph.threads`` applies.  An undirected graph's CSR lists
    each edge twice, so only one direction is linked.
    """
    from asapgraph.kernels import _components as KC
    from asapgraph.kernels import _programs as K

    g = G.engine_graph(None)
    labels = np.empty(g.n, dtype=g.indices.dtype)
    threads = _threads()
    old = K.set_num_threads(threads) if threads else None
    try:
        count = KC.component_labels(g.indptr, g.indices, labels,
                                    symmetric=not G.is_directed())
    finally:
        if old is not None:
            K.set_num_threads(old)
    return labels, count


def _component_sets(G):
    """An iterator over one ``set`` of node objects per component (networkx's output),
    in the order of each component's first node (networkx's order: it starts a component
    at each node not yet seen, in node order).

    Labels are the smallest dense id of each component, so that order is the order of the
    labels; the sets are built in C (:func:`asapgraph.kernels._components.component_sets`:
    ``PySet_New``/``PySet_Add`` on the node objects in one pass over the labels, the
    cyclic garbage collector paused) and handed over as an iterator over the list made on
    the call (a generator would resume a Python frame per set).
    """
    from asapgraph.kernels import _components as KC

    labels, _ = _components(G)
    return iter(KC.component_sets(labels, G.nodes))


def _n_components(G):
    return _components(G)[1]


def _check_null(G):
    if len(G) == 0:
        raise _nx().NetworkXPointlessConcept("Connectivity is undefined for the null graph.")


@_implements
def weakly_connected_components(G):
    return _component_sets(G)


@_implements
def number_weakly_connected_components(G):
    return _n_components(G)


@_implements
def is_weakly_connected(G):
    _check_null(G)
    return _n_components(G) == 1


def _undirected_twin(name, func):
    """Register ``func`` under the undirected name too (same code, symmetric adjacency)."""
    def twin(G):
        return func(G)

    twin.__name__ = twin.__qualname__ = name
    return _implements(twin)


connected_components = _undirected_twin("connected_components",
                                        weakly_connected_components.__wrapped__)
number_connected_components = _undirected_twin("number_connected_components",
                                               number_weakly_connected_components.__wrapped__)
is_connected = _undirected_twin("is_connected", is_weakly_connected.__wrapped__)


@_implements
def node_connected_component(G, n):
    i = G.index[n]
    labels, _ = _components(G)
    return set(G.node_array()[labels == labels[i]].tolist())


# ---------------------------------------------------------------------- shortest paths
def _by_distance(G, dist, keep, as_int=False, source=None):
    idx = np.flatnonzero(keep)
    idx = idx[np.argsort(dist[idx], kind="stable")]
    if isinstance(as_int, np.ndarray):   # per vertex (ints and floats mixed)
        d = [int(x) if i else x for x, i in zip(dist[idx].tolist(), as_int[idx].tolist())]
    else:
        d = (dist[idx].astype(np.int64) if as_int else dist[idx]).tolist()
    out = dict(zip(G.node_array()[idx].tolist(), d))
    if source is not None:   # networkx starts from the int 0, whatever the weights
        out[source] = 0
    return out


@_implements
def single_source_shortest_path_length(G, source, cutoff=None):
    from asapgraph.programs.sssp import bfs

    if source not in G:
        raise _nx().NodeNotFound(f"Source {source} is not in G")
    s = G.index[source]
    lv = np.asarray(bfs(G.engine_graph(None), s, threads=_threads()).values)
    keep = lv >= 0
    if cutoff is not None:
        # networkx expands level L + 1 while ``cutoff > L``: level L is listed when
        # ``L - 1 < cutoff`` (``L <= cutoff`` only for an integer cutoff; 1.5 lists 2)
        keep &= lv - 1 < cutoff
        keep[s] = True
    return _by_distance(G, lv, keep)


@_implements
def single_source_dijkstra_path_length(G, source, cutoff=None, weight="weight"):
    from asapgraph.programs.sssp import sssp

    # networkx puts the source in a set first: an unhashable source is its TypeError
    # ("unhashable type"), not NodeNotFound
    hash(source)
    if source not in G:
        raise _nx().NodeNotFound(f"Node {source} not found in graph")
    g = G.engine_graph(weight)
    if g.weights is not None and not _nonneg_finite(g.weights):
        raise NotImplementedError("single_source_dijkstra_path_length: negative weights")
    s = G.index[source]
    d = np.asarray(sssp(g, s, threads=_threads()).values)
    keep = np.isfinite(d)
    if cutoff is not None:
        # networkx skips a vertex when ``dist > cutoff``: a NaN cutoff skips none
        # (``d <= nan`` kept the source alone)
        keep &= ~(d > cutoff)
        keep[s] = True    # networkx lists the source whatever the cutoff (-1 too)
    # int weights (the values' type, as networkx adds them up): int distances; float
    # weights (2.0 too, all 1.0 too): floats; both: ints where a path of ints is shortest
    integral = G.edge_integral.get(weight, True)
    mixed = getattr(G, "edge_mixed", {}).get(weight)
    if mixed is not None and not integral:
        integral = _int_reached(g, s, d, mixed)
    ints = d[keep & integral] if isinstance(integral, np.ndarray) else d[keep] if integral \
        else d[:0]
    if ints.size and float(ints.max()) >= _EXACT_INT:
        # networkx adds int weights exactly; the engine's doubles round past 2**53 (an int
        # weight 2**60 + 1 is 2**60 already): a wrong int, not networkx's -- its code decides
        raise NotImplementedError("single_source_dijkstra_path_length: int distances of "
                                  "2**53 or more, not exact in double precision")
    return _by_distance(G, d, keep, as_int=integral, source=source)


#: every integer below it is exact in a double (a distance of 2**53 may be 2**53 + 1
#: rounded: refused too)
_EXACT_INT = float(2**53)


def _int_reached(g, s, d, int_edges):
    """Where networkx's distance is an int on a graph mixing int and float weights
    (``int_edges``): the vertices whose shortest distance a path of int-weighted edges
    reaches (every float edge made longer than any simple path; ties between an int and a
    float path of one length are equal either way)."""
    from asapgraph.graph.core import Graph
    from asapgraph.programs.sssp import sssp

    w = np.ones(g.m) if g.weights is None else g.weights
    big = 2.0 * float(w.sum()) + 1.0
    if not np.isfinite(big):
        raise NotImplementedError("single_source_dijkstra_path_length: int and float "
                                  "weights mixed, summing past the largest double")
    gi = Graph(g.indptr, g.indices, np.where(int_edges, w, big), source="<networkx>")
    di = np.asarray(sssp(gi, s, threads=_threads()).values)
    return di == d


# ---------------------------------------------------------------------- the interface
def _bind(name, args, kwargs):
    import inspect

    bound = inspect.signature(FUNCTIONS[name]).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.arguments


def _vec_ok(d):
    if d is None:
        return True
    try:
        v = np.fromiter(d.values(), dtype=np.float64, count=len(d))
    except (TypeError, ValueError):
        return False
    return bool(np.all(np.isfinite(v)) and np.all(v >= 0))


class BackendInterface:
    """What the ``networkx.backends`` entry point loads."""

    @staticmethod
    def convert_from_nx(graph, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False,
                        preserve_node_attrs=False, preserve_graph_attrs=False, name=None,
                        graph_name=None):
        if isinstance(graph, NxGraph):
            return graph
        if node_attrs:
            raise NotImplementedError("asapgraph does not convert node attributes")
        if preserve_edge_attrs is True:
            edge_attrs = True
        elif isinstance(edge_attrs, str):
            edge_attrs = {edge_attrs: 1}
        elif edge_attrs is None:
            edge_attrs = {}
        return from_networkx(graph, weight=None, edge_attrs=edge_attrs)

    @staticmethod
    def convert_to_nx(obj, *, name=None):
        if isinstance(obj, NxGraph):
            return obj.to_networkx()
        return obj

    @staticmethod
    def can_run(name, args, kwargs):
        if name not in FUNCTIONS:
            return False
        a = _bind(name, args, kwargs)
        if name == "pagerank":
            if not 0 <= a["alpha"] < 1:
                return "alpha outside [0, 1)"
            for k in ("personalization", "nstart", "dangling"):
                if not _vec_ok(a[k]):
                    return f"{k} has negative or non-numeric values"
        if name in ("single_source_dijkstra_path_length", "katz_centrality", "pagerank"):
            if callable(a.get("weight")):
                return "a callable weight"
        return True

    @staticmethod
    def should_run(name, args, kwargs):
        return True

    @staticmethod
    def on_start_tests(items):
        """Nothing to skip: every test either runs our implementation or falls back."""


for _name, _f in FUNCTIONS.items():
    setattr(BackendInterface, _name, staticmethod(_f))


def get_info():
    """The ``networkx.backend_info`` entry point."""
    return {
        "backend_name": "asapgraph",
        "project": "asapgraph",
        "package": "asapgraph",
        "url": "https://github.com/asapgraph/asapgraph",
        "short_summary": "OpenMP graph kernels (PageRank, Katz, WCC, BFS, SSSP) over CSR arrays.",
        "default_config": {"threads": None, "np": None, "mode": None,
                           "hits_method": os.environ.get("ASAPGRAPH_NX_HITS_METHOD", "auto")},
        "functions": {name: {"additional_docs": doc} for name, doc in _DOCS.items()},
    }
