"""Dense ids for arbitrary vertex labels, computed once and without a per-edge Python loop.

Rationale
---------
Three cases, cheapest first:

* non-negative integers: the engine's own remapping (:func:`asapgraph.graph.remap_ids`,
  compiled; dense ids follow the original ids, which stay in ``Graph.ids``);
* fixed-width numpy dtypes (strings, bytes, floats, negative integers): ``np.unique`` with
  ``return_inverse`` on both endpoint columns at once (a sort, in C); dense ids follow the
  sorted labels;
* anything else (tuples, mixed types, arbitrary hashables in an object array): a dict built
  by ``dict.fromkeys`` over both columns (first-seen order, as ``pandas.factorize``) and
  ``np.fromiter(map(d.__getitem__, column))`` -- C-level iteration, no Python bytecode per
  edge.

The labels end up in ``Graph.labels`` and every result is reported with them.
"""
from __future__ import annotations

from itertools import chain

import numpy as np

__all__ = ["object_array", "factorize_pair"]


def object_array(seq, n=None):
    """1-d object array of the items of ``seq`` (tuples stay items, not rows)."""
    if n is None:
        seq = list(seq)
        n = len(seq)
    return np.fromiter(seq, dtype=object, count=n)


def _is_plain(a):
    return isinstance(a, np.ndarray) and a.ndim == 1 and a.dtype.kind in "iufUSb"


def factorize_pair(src, dst):
    """Dense ids of two label columns.

    Returns
    -------
    labels : ndarray (n,)
        Label of every dense id (numpy dtype when the columns had one, else object).
    s, d : int64 arrays
        Dense ids of ``src`` and ``dst``.
    """
    if _is_plain(src) and _is_plain(dst):
        both = np.concatenate([src, dst]) if src.dtype == dst.dtype else None
        if both is not None:
            labels, inv = np.unique(both, return_inverse=True)
            inv = inv.astype(np.int64, copy=False).ravel()
            return labels, inv[: src.shape[0]], inv[src.shape[0]:]
    src = src.tolist() if isinstance(src, np.ndarray) else list(src)
    dst = dst.tolist() if isinstance(dst, np.ndarray) else list(dst)
    first = dict.fromkeys(chain(src, dst))
    index = dict(zip(first, range(len(first))))
    labels = object_array(index, len(index))
    s = np.fromiter(map(index.__getitem__, src), dtype=np.int64, count=len(src))
    d = np.fromiter(map(index.__getitem__, dst), dtype=np.int64, count=len(dst))
    return labels, s, d
