"""Small helpers shared by the algorithm modules (id lookup, per-vertex vectors)."""
from __future__ import annotations

import numpy as np

from asapgraph.errors import InputError
from asapgraph.options import plain_id
from asapgraph.graph.weights import TINY_SUM as _TINY_SUM  # (an out-weight's reciprocal)


def dense_id(graph, source, what="source"):
    """Dense id of the vertex whose original id is ``source``; InputError when absent."""
    labels = getattr(graph, "labels", None)
    if labels is not None:   # vertices named by strings, tuples, ...
        i = name_index(labels, source)
        if i is None:
            raise InputError(graph.source, None, f"{what} vertex {source!r} is not in the graph")
        return i
    if isinstance(source, str):   # as an edge list's ids (plain_id)
        try:
            source = plain_id(source)
        except ValueError as e:
            raise InputError(graph.source, None, f"{what} vertex id {source!r} has a sign "
                             "(ids are plain digits)" if str(e) == "has a sign" else
                             f"{what} vertex id must be an integer, got {source!r}") from None
    try:
        s = int(source)
        if isinstance(source, (float, np.floating)) and s != source:  # 0.5 is not vertex 0
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        shown = repr(float(source)) if isinstance(source, (float, np.floating)) else repr(source)
        raise InputError(graph.source, None,
                         f"{what} vertex id must be an integer, got {shown}") from None
    if graph.ids is None:
        if 0 <= s < graph.n:
            return s
    else:
        hit = np.flatnonzero(graph.ids == s)
        if hit.size:
            return int(hit[0])
    raise InputError(graph.source, None, f"{what} vertex {s} is not in the graph")


def name_index(labels, source):
    """Dense id of the vertex named ``source`` among ``labels`` (None: no such name).  The
    command line gives text, and a name that reads as a number arrives as an int."""
    names = labels.tolist() if hasattr(labels, "tolist") else list(labels)
    for key in (source, str(source)) if not isinstance(source, str) else (source,):
        try:
            return names.index(key)
        except ValueError:
            pass
    return None


def label_positions(graph, keys, name):
    """Dense ids of the labels ``keys`` of a graph whose vertices are named (``graph.labels``:
    ``--labels``, networkx or pandas labels); a number also finds the name that reads as
    it, as ``--source`` does.  InputError naming the keys that are not vertices."""
    names = graph.labels.tolist() if hasattr(graph.labels, "tolist") else list(graph.labels)
    index = {}
    for i, lab in enumerate(names):
        index.setdefault(lab, i)
    out = np.empty(len(keys), dtype=np.int64)
    missing = []
    for j, k in enumerate(keys):
        i = index.get(k)
        if i is None and not isinstance(k, str):
            i = index.get(str(k))
        if i is None:
            missing.append(k)
        else:
            out[j] = i
    if missing:
        raise InputError(graph.source, None, f"{name}: {len(missing)} vertex id(s) not in the "
                         f"graph, e.g. {missing[:5]}")
    return out


def vertex_vector(graph, spec, name, default=None):
    """A float64 per-vertex vector from None, a scalar, an array over dense ids or a dict
    ``{original id: value}`` (missing vertices get 0).  ``default`` is used for None."""
    if spec is None:
        return default
    if np.isscalar(spec):
        return np.full(graph.n, float(spec))
    if isinstance(spec, dict):
        out = np.zeros(graph.n)
        if spec and getattr(graph, "labels", None) is not None:   # named vertices
            vals = np.fromiter((float(v) for v in spec.values()), dtype=np.float64, count=len(spec))
            np.add.at(out, label_positions(graph, list(spec), name), vals)
        elif spec:
            keys = np.fromiter((int(k) for k in spec.keys()), dtype=np.int64, count=len(spec))
            vals = np.fromiter((float(v) for v in spec.values()), dtype=np.float64, count=len(spec))
            ids = graph.original_ids()
            order = np.argsort(ids, kind="stable")
            pos = np.searchsorted(ids, keys, sorter=order)
            pos = np.minimum(pos, max(graph.n - 1, 0))
            found = graph.n > 0 and ids[order[pos]] == keys
            if not np.all(found):
                missing = keys[~np.asarray(found, dtype=bool)][0] if graph.n else keys[0]
                raise InputError(graph.source, None, f"{name}: vertex {int(missing)} is not in the graph")
            np.add.at(out, order[pos], vals)
        return out
    arr = np.asarray(spec, dtype=np.float64)
    if arr.shape != (graph.n,):
        raise ValueError(f"{name}: expected {graph.n} values (one per vertex), got shape {arr.shape}")
    return arr


def normalized(vec, name):
    """``vec / vec.sum()``; ValueError when the sum is zero or any entry is negative."""
    if np.any(vec < 0):
        raise ValueError(f"{name}: values must be non-negative")
    if not float(np.max(vec, initial=0.0)) > 0:
        raise ValueError(f"{name}: values sum to zero")
    return safe_distribution(vec)  # 1e308 + 1e308 must not overflow


def safe_distribution(vec, allreduce=None):
    """``vec / vec.sum()`` for finite ``vec >= 0`` with a positive sum, without overflow:
    entries are first divided by the largest one (so the sum is at most ``len(vec)``
    and ``1e308 + 1e308`` does not become inf).  Exact where the plain sum is finite
    and normal (the max is then left out).  ``allreduce`` (a program context's,
    ``allreduce(value, op)``): ``vec`` is this rank's part and the sum and the largest
    value are the ranks' (the same decision on every rank)."""
    def total(v, op="sum"):
        return v if allreduce is None else allreduce(v, op)

    vec = np.asarray(vec, dtype=np.float64)
    with np.errstate(over="ignore"):
        s = total(float(vec.sum()))
    if not (np.isfinite(s) and s >= _TINY_SUM):
        vec = vec / total(float(vec.max(initial=0.0)), "max")
        s = total(float(vec.sum()))
    return vec / s


def unit_l2(vec, allreduce=None):
    """``vec / ||vec||_2`` (``vec`` itself when it is all 0) without overflow or underflow
    of the sum of squares: where it is not finite and normal, the entries are first
    divided by the largest magnitude (the plain sum overflows from entries of about
    1e154, which wrote all zeros, and underflows below about 1e-162, which wrote the
    values unnormalised; networkx's ``math.hypot`` scales).  Exact where the plain sum
    is finite and normal.  ``allreduce`` as in :func:`safe_distribution`."""
    def total(v, op="sum"):
        return v if allreduce is None else allreduce(v, op)

    vec = np.asarray(vec, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):
        s = total(float(np.dot(vec, vec)))
    if not (np.isfinite(s) and s >= np.finfo(np.float64).tiny):
        big = total(float(np.max(np.abs(vec), initial=0.0)), "max")
        if big > 0 and np.isfinite(big):
            vec = vec / big
            s = total(float(np.dot(vec, vec)))
    return vec / np.sqrt(s) if s > 0 else vec


def check_nonnegative_weights(graph, who, allreduce=None):
    """Refuse a negative (the line of the first, in a text file) or NaN edge weight of
    ``graph`` (one process's graph, or a rank's local graph); ``who`` names the program
    in the message (``sssp``, ``hits``).  ``allreduce`` (``ctx.allreduce``, collective):
    the smallest weight over all ranks, so that every rank refuses with the value one
    process names (the lowest refusing rank named its own smallest: -2 for -5)."""
    w = graph.weights
    lo = float(np.fmin.reduce(w)) if w is not None and w.size else np.inf  # (NaN aside)
    lo = np.inf if np.isnan(lo) else lo
    if allreduce is not None:
        lo = float(np.asarray(allreduce(np.array([lo]), "min")).reshape(-1)[0])
    if w is not None and w.size and float(w.min()) < 0:
        from asapgraph.graph.convert import in_memory, negative_weight_at
        from asapgraph.options import negative_weights_error

        src = graph.source
        # (standard input is no graph built in memory: its edge named on one process only,
        # by the graph's edge order, where K ranks, holding their shares, give the value)
        e = negative_weights_error(src, src, getattr(graph, "weight_col", None),
                                   f"{who} needs non-negative edge weights",
                                   negative_weight_at(None, graph)
                                   if in_memory(src) and src != "<stdin>" else None,
                                   header=getattr(graph, "header", False))
        if e.line is None and not e.message.startswith(("row ", "edge ")):  # not a text
            # file, .npy array (their line or row named) or graph given in memory (the
            # edge named; one process): the value, as a plain number
            e = InputError(src, None, f"{who} needs non-negative edge weights (found "
                                      f"{lo:g})")
        raise e
    if w is not None and np.isnan(w).any():
        raise InputError(graph.source, None, f"{who}: an edge weight is NaN")
