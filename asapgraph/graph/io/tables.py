"""Result summaries for people and programs: the top-k table and one-line JSON.

Rationale
---------
``--top K`` prints the best vertices without sorting all of them: :func:`top_order`
selects candidates with ``argpartition`` (O(n)) and sorts only those, ties broken by the
smaller id (or label) so the order is reproducible; :func:`format_top` lays them out as
an aligned table.  :func:`json_dumps` gives the one-line JSON of ``--json`` with numpy
scalars and arrays converted and non-finite floats as ``null`` (JSON has no inf/nan).
"""
from __future__ import annotations

import json
import math
import os

import numpy as np

__all__ = ["top_order", "format_top", "json_dumps"]


def _tie_keys(ids):
    """Tie-break keys for ordering: the ids, or the labels when vertices are named by text."""
    ids = np.asarray(ids)
    return ids if ids.dtype.kind in "iuUS" else np.arange(ids.shape[0])


#: significant digits of the printed values (``%.10g``): values that print alike are ties
PRINTED_DIGITS = 10


def _as_printed(values):
    """``values`` rounded to :data:`PRINTED_DIGITS` significant digits (non-finite kept)."""
    v = np.asarray(values, dtype=np.float64)
    out = v.copy()
    ok = np.isfinite(v) & (v != 0)
    if ok.any():
        scale = 10.0 ** (np.floor(np.log10(np.abs(v[ok]))) - (PRINTED_DIGITS - 1))
        out[ok] = np.round(v[ok] / scale) * scale
    return out


def top_order(ids, values, k):
    """Indices of the ``k`` largest ``values``, best first, ties broken by smaller id.

    Values that agree to the printed precision (:data:`PRINTED_DIGITS` significant
    digits) are ties: results equal in exact arithmetic differ in their last bits between
    modes and rank counts (a PageRank on a cycle gives every vertex 1/n up to rounding),
    and the order must not depend on those bits.  Uses ``argpartition`` (O(n)) and sorts
    only the candidates.
    """
    ids = _tie_keys(ids)
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[0]
    k = max(0, min(int(k), n))
    if k == 0:
        return np.zeros(0, dtype=np.intp)
    if k < n:
        cand = np.argpartition(-values, k - 1)[:k]
        kth = values[cand].min()
        # every value that may print like the k-th (rounding moves a value by less than
        # 1e-8 of itself), then sort; a NaN among the k best (fewer than k numbers): all,
        # the NaN last
        cand = (np.arange(n) if np.isnan(kth)
                else np.flatnonzero(values >= kth - abs(kth) * 1e-8) if np.isfinite(kth)
                else np.flatnonzero(values >= kth))
    else:
        cand = np.arange(n)
    return cand[np.lexsort((ids[cand], -_as_printed(values[cand])))][:k]


def format_top(ids, values, k, name="rank"):
    """The ``k`` highest values as an aligned text table (``rank  node  <name>``).

    Parameters
    ----------
    ids : int array, shape (n,)
        Original vertex ids.
    values : float array, shape (n,)
        Scores; ties are broken by smaller id (a stable, reproducible order).
    k : int
        How many rows (all of them when ``k >= n``).
    name : str
        Heading of the value column.

    Returns
    -------
    str
        The table, ending with a newline (empty when ``k == 0``); values printed with
        ``%.10g``.
    """
    ids = np.asarray(ids)
    values = np.asarray(values, dtype=np.float64)
    order = top_order(ids, values, k)
    if order.size == 0:
        return ""
    rows = [(str(i + 1), str(ids[o]), "%.10g" % values[o]) for i, o in enumerate(order)]
    head = ("rank", "node", name)
    w = [max(len(head[c]), *(len(r[c]) for r in rows)) for c in range(3)]
    lines = ["  ".join(h.rjust(w[c]) for c, h in enumerate(head))]
    lines += ["  ".join(r[c].rjust(w[c]) for c in range(3)) for r in rows]
    return "\n".join(lines) + "\n"


def _jsonable(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, os.PathLike):
        return os.fspath(o)
    raise TypeError(f"{type(o).__name__} is not JSON serialisable")


def _clean(o):
    """Replace non-finite floats by None (JSON has no inf/nan)."""
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    return o


def json_dumps(obj):
    """One-line JSON (numpy scalars/arrays converted; inf/nan become null)."""
    obj = json.loads(json.dumps(obj, default=_jsonable))  # normalise numpy types first
    return json.dumps(_clean(obj), separators=(", ", ": "), allow_nan=False)
