"""Text edge lists whose vertices are named by arbitrary tokens (``--labels``).

Rationale
---------
The compiled parser of :mod:`asapgraph.graph.io` reads integer ids only.  A labelled file is read
whole (decompressed like any input), comment and blank lines are dropped, and the tokens are
split by ``bytes.split`` (C) after turning commas into blanks; when every line has the same
number of columns the tokens are one reshaped numpy bytes array, so no Python code runs per
edge.  Endpoint columns are factorized once (``np.unique``, sorted labels) and the weight
column parsed by numpy.  Errors name ``FILE:LINE``.
"""
from __future__ import annotations

import numpy as np

from asapgraph.errors import InputError
from asapgraph.graph.io._text import display_name, open_binary, os_error

__all__ = ["read_labelled"]


def _read_all(path):
    name = display_name(path)
    try:
        stream, _kind, _total = open_binary(path)
        try:
            return stream.read()
        finally:
            if path != "-":
                stream.close()
    except OSError as exc:
        raise os_error(name, exc) from None


def read_labelled(path, *, weight_col=0, src_col=1, dst_col=2):
    """``(src, dst, weights or None)``: label arrays (str) and float64 weights.

    ``weight_col``: 1-based column of the weight, 0 for none.
    """
    name = display_name(path)
    data = _read_all(path)
    lines = data.replace(b",", b" ").splitlines()
    keep = [i for i, ln in enumerate(lines) if ln.strip() and ln.lstrip()[:1] not in (b"#", b"%")] \
        if (b"#" in data or b"%" in data or b"\n\n" in data) else None
    if keep is not None:
        kept = [lines[i] for i in keep]
        lineno = np.asarray(keep, dtype=np.int64) + 1
    else:
        kept = [ln for ln in lines if ln.strip()]
        lineno = None
    if not kept:
        raise InputError(name, None, "no edges found")
    ncol = np.fromiter(map(len, map(bytes.split, kept)), dtype=np.int64, count=len(kept))
    need = max(src_col, dst_col, weight_col)
    k = int(ncol[0])
    bad = np.flatnonzero((ncol != k) | (ncol < need))
    if bad.size:
        i = int(bad[0])
        line = int(lineno[i]) if lineno is not None else i + 1
        raise InputError(name, line, f"expected {max(k, need)} columns, got {int(ncol[i])}")
    tok = np.array(b" ".join(kept).split()).reshape(-1, k)
    src = tok[:, src_col - 1].astype(str)
    dst = tok[:, dst_col - 1].astype(str)
    w = None
    if weight_col:
        try:
            w = tok[:, weight_col - 1].astype(np.float64)
        except ValueError:
            col = tok[:, weight_col - 1]
            ok = np.array([_is_float(x) for x in col.tolist()])
            i = int(np.flatnonzero(~ok)[0])
            line = int(lineno[i]) if lineno is not None else i + 1
            raise InputError(name, line, f"bad weight {col[i].decode(errors='replace')!r}") from None
    return src, dst, w


def _is_float(x):
    try:
        float(x)
        return True
    except ValueError:
        return False
