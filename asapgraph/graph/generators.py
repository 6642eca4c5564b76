"""Synthetic graphs from a seed: R-MAT (Graph500 Kronecker) and Erdős–Rényi, and spec strings.

Every command accepts a *spec* in place of a file (like GAPBS's ``-g``/``-u``)::

    rmat:S            R-MAT, 2**S vertices, 16 * 2**S edges, seed 0
    rmat:S:EF         edge factor EF (edges = EF * 2**S)
    rmat:S:EF:SEED
    er:N:M            Erdős–Rényi G(n, m) with replacement: N vertices, M directed edges
    er:N:M:SEED

Generation is counter-based (see :mod:`asapgraph.kernels._generators`): edge ``e`` depends only on
``(seed, e)``, so :func:`rmat_slice` / :func:`erdos_renyi_slice` produce any range of edges
without producing the rest, the result is the same for any number of threads or MPI ranks,
and :func:`rmat` is exactly the concatenation of its slices.  The R-MAT vertex permutation
is a bijective hash (:func:`rmat_permutation`), so no rank needs an ``n``-entry table.

Graphs are returned as dense int64 ``(src, dst)`` arrays; edges keep multigraph semantics
(duplicates and self-loops are edges, as in :class:`asapgraph.graph.Graph`).
"""
from __future__ import annotations

import numpy as np

from asapgraph.kernels import _generators as _g
from asapgraph.errors import InputError

__all__ = ["rmat", "rmat_slice", "rmat_permutation", "erdos_renyi", "erdos_renyi_slice",
           "from_spec", "is_spec", "spec_slice", "GRAPH500"]

#: Graph500 R-MAT quadrant probabilities (d = 1 - a - b - c = 0.05).
GRAPH500 = (0.57, 0.19, 0.19)

_MAX_SCALE = 40
#: the most vertices (``er:N``: as many as ``rmat:40`` has) and edges (``er:N:M``, and
#: ``rmat``'s ``EDGE_FACTOR x 2**SCALE``) of a spec: beyond them the sizes overflowed the
#: arrays' int64 shapes, "internal error: OverflowError / ValueError: Maximum allowed
#: dimension exceeded ... (this is a bug)", exit 1, on one process and on K ranks (within
#: them a spec fails as any graph too large for the memory does: "out of memory")
_MAX_SPEC_N = 1 << _MAX_SCALE
_MAX_SPEC_M = 1 << 50


def _check_rmat(scale, edge_factor, a, b, c):
    if not (0 <= int(scale) <= _MAX_SCALE):
        raise ValueError(f"rmat scale must be in 0..{_MAX_SCALE}, got {scale}")
    if edge_factor < 0:
        raise ValueError(f"rmat edge factor must be >= 0, got {edge_factor}")
    if min(a, b, c) < 0 or a + b + c > 1:
        raise ValueError(f"rmat probabilities need a, b, c >= 0 and a+b+c <= 1, got {a}, {b}, {c}")


def _seed64(seed):
    """A generator seed: an integer >= 0 (None: 0).  ``int(seed)`` alone read 1.5 as 1
    and True as 1, and 'x' failed as "invalid literal for int() with base 10"."""
    if seed is None:
        seed = 0
    try:
        ok = not isinstance(seed, (bool, np.bool_, str, bytes)) and int(seed) == seed
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return seed & 0xFFFFFFFFFFFFFFFF


def _out_dtype(dtype, n):
    if dtype is None:
        return np.dtype(np.int64)
    dt = np.dtype(dtype)
    if dt == np.int32:
        if n > 2**31 - 1:
            raise ValueError(f"int32 output cannot hold vertex ids of a graph with {n} vertices")
        return dt
    if dt != np.int64:
        raise ValueError(f"dtype must be int32 or int64, got {dt}")
    return dt


def rmat_slice(scale, edge_factor=16, seed=0, start=0, stop=None, a=0.57, b=0.19, c=0.19,
               permute=True, dtype=None, threads=0):
    """Edges ``start..stop-1`` of the R-MAT graph ``rmat(scale, edge_factor, seed, ...)``.

    Parameters
    ----------
    scale : int
        ``n = 2**scale`` vertices.
    edge_factor : int
        ``m = edge_factor * n`` edges in the whole graph.
    seed : int
        Non-negative seed; the graph is a pure function of all arguments.
    start, stop : int
        Edge range (``stop=None``: up to ``m``); clipped to ``0..m``.
    a, b, c : float
        Quadrant probabilities (Graph500 defaults; ``d = 1-a-b-c``).
    permute : bool
        Relabel vertices with :func:`rmat_permutation` (Graph500 does so).
    dtype : {None, "int64", "int32"}
        Output dtype (default int64); int32 halves the memory and needs ``scale <= 31``.
    threads : int
        OpenMP threads (0: ``OMP_NUM_THREADS`` / all cores); the edges do not depend on it.

    Returns
    -------
    src, dst : int64 (or ``dtype``) arrays of length ``stop - start``
    """
    _check_rmat(scale, edge_factor, a, b, c)
    dt = _out_dtype(dtype, 1 << int(scale))
    m = int(edge_factor) * (1 << int(scale))
    stop = m if stop is None else min(int(stop), m)
    start = max(0, min(int(start), stop))
    cnt = stop - start
    src = np.empty(cnt, dtype=dt)
    dst = np.empty(cnt, dtype=dt)
    if cnt:
        _g.rmat_fill(src, dst, int(scale), _seed64(seed), start, float(a), float(b), float(c),
                     bool(permute), int(threads))
    return src, dst


def rmat(scale, edge_factor=16, seed=0, a=0.57, b=0.19, c=0.19, permute=True, dtype=None):
    """R-MAT / Kronecker graph with Graph500 parameters.

    Parameters
    ----------
    scale : int
        ``n = 2**scale`` vertices (ids ``0..n-1``; some may have no edges).
    edge_factor : int, default 16
        ``m = edge_factor * n`` directed edges (duplicates and self-loops included).
    seed : int, default 0
    a, b, c : float
        Quadrant probabilities, default Graph500 ``0.57, 0.19, 0.19`` (``d = 0.05``).
    permute : bool, default True
        Apply the seeded vertex permutation (:func:`rmat_permutation`).
    dtype : {None, "int64", "int32"}
        Output dtype (default int64); int32 needs ``scale <= 31``.

    Returns
    -------
    src, dst : int64 (or ``dtype``) arrays of length ``m``
        Identical to the concatenation of :func:`rmat_slice` over any split of ``0..m``.

    Notes
    -----
    About 130 instructions per edge at scale 20 (4x fewer than a per-edge loop; see
    :mod:`asapgraph.kernels._generators`); ``rmat(24, dtype="int32")`` (268 M edges) needs only
    the two output arrays (2.1 GB; 4.3 GB as int64).
    """
    return rmat_slice(scale, edge_factor, seed, 0, None, a, b, c, permute, dtype)


def rmat_permutation(ids, scale, seed=0):
    """Apply the R-MAT vertex permutation of ``(scale, seed)`` to unpermuted ids.

    A bijection of ``0..2**scale-1`` computed per id (no table).  Returns a new int64 array.
    """
    out = np.array(ids, dtype=np.int64, copy=True).ravel()
    if out.size and (out.min() < 0 or out.max() >= (1 << int(scale))):
        raise ValueError("ids must be in 0..2**scale-1")
    _g.permute_fill(out, int(scale), _seed64(seed))
    return out


def erdos_renyi_slice(n, m, seed=0, start=0, stop=None, dtype=None, threads=0):
    """Edges ``start..stop-1`` of :func:`erdos_renyi(n, m, seed) <erdos_renyi>`
    (``threads``: OpenMP threads, 0 for all; the edges do not depend on it)."""
    n = int(n)
    dt = _out_dtype(dtype, n)
    m = int(m)
    if n < 1 and m > 0:
        raise ValueError("an Erdős–Rényi graph with edges needs n >= 1")
    if m < 0:
        raise ValueError(f"m must be >= 0, got {m}")
    stop = m if stop is None else min(int(stop), m)
    start = max(0, min(int(start), stop))
    cnt = stop - start
    src = np.empty(cnt, dtype=dt)
    dst = np.empty(cnt, dtype=dt)
    if cnt:
        _g.er_fill(src, dst, n, _seed64(seed), start, int(threads))
    return src, dst


def erdos_renyi(n, m, seed=0, dtype=None):
    """Uniform random directed multigraph ``G(n, m)`` with replacement.

    Each of the ``m`` edges has its source and destination drawn independently and
    uniformly from ``0..n-1``: duplicate edges and self-loops are allowed and kept
    (expected number of self-loops ``m/n``; of duplicates about ``m**2 / (2 n**2)``).

    dtype : {None, "int64", "int32"}
        Output dtype (default int64); int32 needs ``n < 2**31``.

    Returns
    -------
    src, dst : int64 (or ``dtype``) arrays of length ``m``
    """
    return erdos_renyi_slice(n, m, seed, 0, None, dtype)


def is_spec(text):
    """True when ``text`` looks like a generator spec (``rmat:...`` or ``er:...``)."""
    return isinstance(text, str) and text.split(":", 1)[0].lower() in ("rmat", "er") and ":" in text


def _ints(spec, parts, names):
    vals = []
    for p, name in zip(parts, names):
        try:
            v = int(p.replace("_", ""), 10)
        except ValueError:
            raise InputError(spec, None, f"{name} must be an integer, got {p!r}") from None
        if v < 0:
            raise InputError(spec, None, f"{name} must be >= 0, got {v}")
        vals.append(v)
    return vals


def parse_spec(spec):
    """Parse a spec into ``(kind, params dict)`` without generating anything."""
    if not isinstance(spec, str):
        raise InputError(spec, None, "a generator spec must be a string like rmat:20 or er:N:M")
    parts = spec.strip().split(":")
    kind = parts[0].lower()
    args = parts[1:]
    if kind == "rmat":
        if not 1 <= len(args) <= 3:
            raise InputError(spec, None, "expected rmat:SCALE[:EDGE_FACTOR[:SEED]]")
        vals = _ints(spec, args, ["SCALE", "EDGE_FACTOR", "SEED"])
        scale = vals[0]
        if scale > _MAX_SCALE:
            raise InputError(spec, None, f"SCALE must be <= {_MAX_SCALE}, got {scale}")
        ef = vals[1] if len(vals) > 1 else 16
        if ef << scale > _MAX_SPEC_M:
            raise InputError(spec, None, f"EDGE_FACTOR x 2**SCALE must be <= 2**50 edges, "
                             f"got {ef} x 2**{scale}")
        seed = vals[2] if len(vals) > 2 else None
        return "rmat", {"scale": scale, "edge_factor": ef, "seed": seed, "n": 1 << scale,
                        "m": ef << scale}
    if kind == "er":
        if not 2 <= len(args) <= 3:
            raise InputError(spec, None, "expected er:N:M[:SEED]")
        vals = _ints(spec, args, ["N", "M", "SEED"])
        n, m = vals[0], vals[1]
        if n < 1:
            raise InputError(spec, None, "N must be >= 1")
        if n > _MAX_SPEC_N:
            raise InputError(spec, None, f"N must be <= 2**{_MAX_SCALE} (the vertices of "
                             f"rmat:{_MAX_SCALE}), got {n}")
        if m > _MAX_SPEC_M:
            raise InputError(spec, None, f"M must be <= 2**50, got {m}")
        seed = vals[2] if len(vals) > 2 else None
        return "er", {"n": n, "m": m, "seed": seed}
    raise InputError(spec, None, f"unknown generator {parts[0]!r}: expected rmat:SCALE[:EF[:SEED]] "
                                 "or er:N:M[:SEED]")


def from_spec(spec, seed=None, dtype="auto"):
    """Generate the graph named by a spec string.

    Parameters
    ----------
    spec : str
        ``rmat:S``, ``rmat:S:EF``, ``rmat:S:EF:SEED``, ``er:N:M`` or ``er:N:M:SEED``.
    seed : int, optional
        Used when the spec has no seed (default 0); a seed inside the spec wins.
    dtype : {"auto", "int64", "int32"}
        Id dtype; "auto" (default) is int32 when ``n < 2**31 - 1`` (the Graph's vertex
        dtype, so loading needs no conversion copy: 8 instead of 16 bytes per edge), else
        int64.

    Returns
    -------
    src, dst : int32 or int64 arrays
    n : int
        Number of vertices (``2**S`` or ``N``; isolated vertices count).

    Raises
    ------
    InputError
        ``InputError(spec, None, message)`` for a malformed spec.
    """
    kind, p = parse_spec(spec)
    s = p["seed"] if p["seed"] is not None else (0 if seed is None else seed)
    if dtype == "auto":
        dtype = np.int32 if p["n"] < 2**31 - 1 else np.int64
    if kind == "rmat":
        src, dst = rmat(p["scale"], p["edge_factor"], s, dtype=dtype)
        return src, dst, p["n"]
    src, dst = erdos_renyi(p["n"], p["m"], s, dtype=dtype)
    return src, dst, p["n"]


def spec_slice(spec, start, stop, seed=None, threads=0):
    """Edges ``start..stop-1`` of the graph named by ``spec`` (what :func:`from_spec` returns
    for those edges: the same ids and dtype), without generating the others.

    ``threads``: OpenMP threads (0: ``OMP_NUM_THREADS`` / all cores; MPI ranks sharing a
    host pass 1).  Returns ``src, dst, n``.
    """
    kind, p = parse_spec(spec)
    s = p["seed"] if p["seed"] is not None else (0 if seed is None else seed)
    dtype = np.int32 if p["n"] < 2**31 - 1 else np.int64
    if kind == "rmat":
        src, dst = rmat_slice(p["scale"], p["edge_factor"], s, start, stop, dtype=dtype,
                              threads=threads)
    else:
        src, dst = erdos_renyi_slice(p["n"], p["m"], s, start, stop, dtype=dtype,
                                     threads=threads)
    return src, dst, p["n"]
