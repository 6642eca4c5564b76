"""Edge-weight arithmetic shared by one process and the ranks' loader."""
from __future__ import annotations

import numpy as np

__all__ = ["TINY_SUM", "rescale_out_weights"]

#: below this an out-weight's reciprocal overflows (1 / 5.6e-309 > the largest double)
TINY_SUM = 1.0 / np.finfo(np.float64).max


def rescale_out_weights(src, w, outw):
    """Edge weights ``w`` (sources ``src``) and per-vertex sums ``outw`` such that
    ``w / outw[src]`` can be computed without overflow: the weights of a vertex whose sum
    overflowed to inf (``1e308 + 1e308``) or is so small that its reciprocal would
    (subnormal weights) are divided by that vertex's largest weight first -- the ratios
    ``w_uv / out_weight_u`` are unchanged, the sum now lies in ``[1, out-degree]``.  Other
    vertices keep their weights bit for bit.  Returns ``(w, outw)`` (``w`` copied if
    changed)."""
    outw = np.asarray(outw, dtype=np.float64)
    bad = np.isposinf(outw) | ((outw > 0) & (outw < TINY_SUM))  # (NaN: not ours to fix)
    if not bad.any():
        return w, outw
    src = np.asarray(src)
    sel = np.flatnonzero(bad[src])
    mx = np.zeros(outw.shape[0], dtype=np.float64)
    np.maximum.at(mx, src[sel], w[sel])
    w = np.array(w, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        w[sel] = w[sel] / mx[src[sel]]
    outw = outw.copy()
    outw[bad] = np.bincount(src[sel], weights=w[sel], minlength=outw.shape[0])[bad]
    return w, outw
