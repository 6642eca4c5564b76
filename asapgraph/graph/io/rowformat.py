"""Per-vertex results as text rows, ``%.17g`` exact, with no per-row Python loop.

Rationale
---------
Text output (CSV/TSV files of :mod:`asapgraph.graph.io.output`, ``asapgraph convert``)
must be exact and fast:

* **Exact floats.**  Text output uses ``%.17g`` (17 significant digits, trailing
  zeros stripped, exactly C's ``printf`` layout), which always parses back to the
  same float64.
* **Speed without a per-row Python loop.**  ``printf``-style formatting from
  Python costs about 1 us per value (``numpy.savetxt`` is slower still, and
  ``repr``/``astype(str)`` are no faster).  :func:`format_rows` formats in numpy:

  1. For a value ``v`` with decimal exponent ``X = floor(log10|v|)`` the 17-digit
     mantissa ``M = rint(|v| * 10**(16 - X))`` is computed in double-double
     arithmetic (Dekker's exact product with a double-double table of powers of
     ten built from exact rationals), relative error about ``2**-104``, so ``M`` is
     the correctly rounded mantissa unless the product is within ``1e-6`` of a
     rounding tie.  ``X`` off by one near powers of ten is detected from the range
     of ``M`` and recomputed.
  2. Digits come four at a time from a 10**4-entry table of ASCII quadruples;
     trailing zeros (which ``%g`` strips) are counted with a second table.
  3. Fast layout: each row is a few ``uint64`` words of NUL-padded ASCII
     (``[sep][sign]["0."][zeros][d0][.][d1..d16][e+XX][\n]``), every word built by a
     1-D integer operation; deleting all NUL bytes of the row-major buffer
     (``bytes.translate``) leaves the exact text.  Positional values ``>= 10`` use a
     general byte-slot layout (a ``[.]`` slot after every digit), and zeros,
     non-finite values, subnormal or huge magnitudes and near-ties use Python's
     ``'%.17g' %``.

  Invariant: the output of :func:`format_rows` is byte-identical to
  ``"".join(f"{i},{v:.17g}\n" ...)`` (tested on random, adversarial and
  hypothesis-generated values, with both layouts).  About 170 ns of CPU per
  ``(int, float)`` row on one core (~6 M rows/s), blocks of rows run on threads.

References: C11 7.21.6.1 (``%g`` conversion); D. Goldberg, "What every computer
scientist should know about floating-point arithmetic", ACM CSUR 23(1), 1991
(17 significant digits round-trip binary64).
"""
from __future__ import annotations

import sys

import numpy as np

__all__ = ["format_rows"]

_CHUNK = 1 << 16  # rows formatted per block (keeps the byte matrix in cache)
_force_slots = False  # tests: exercise the general (byte-slot) layout everywhere

# ----------------------------------------------------------------------------- text formatting

def _pow10_table(lo=-300, hi=300):
    """Double-double ``10**k = H + L`` for ``k`` in ``[lo, hi]``, from exact rationals."""
    from fractions import Fraction

    ks = range(lo, hi + 1)
    H = np.empty(len(ks))
    L = np.empty(len(ks))
    for i, k in enumerate(ks):
        e = Fraction(10) ** k
        H[i] = float(e)
        L[i] = float(e - Fraction(H[i]))
    return H, L


_KMIN, _KMAX = -300, 300
_P10H, _P10L = _pow10_table(_KMIN, _KMAX)
_SPLIT = 134217729.0  # 2**27 + 1 (Dekker)
_P10H_HI = _P10H * _SPLIT - (_P10H * _SPLIT - _P10H)
_P10H_LO = _P10H - _P10H_HI
_P10TAB = np.stack([_P10H, _P10L, _P10H_HI, _P10H_LO], axis=1)  # one gather per value
_ZERO, _DOT, _MINUS, _PLUS, _E = (ord(c) for c in "0.-+e")
# ASCII of "0000".."9999" as uint32 (bytes in string order), and trailing zeros of each
_LUT4 = np.array([b"%04d" % i for i in range(10000)], dtype="S4").view(np.uint32)
_TZ4 = np.array([4] + [len(s) - len(s.rstrip("0")) for s in ("%04d" % i for i in range(1, 10000))],
                dtype=np.int64)
_J17 = np.arange(17)
# row k: 0xFF for the first k of 17 digit slots (then 0); row p+1: "." after digit p
_KEEPMASK = np.where(_J17[None, :] < np.arange(18)[:, None], 0xFF, 0).astype(np.uint8)
_POINTROW = np.where(_J17[None, :] == np.arange(-1, 17)[:, None], _DOT, 0).astype(np.uint8)
_P10 = 10 ** np.arange(1, 19, dtype=np.int64)  # 10 .. 10**18

# slot layout of one formatted float (width _FW), see the module docstring
_S_SIGN, _S_LEAD0, _S_LEADPT, _S_Z = 0, 1, 2, 3  # _S_Z.._S_Z+2: up to three zeros after "0."
_S_D = 6  # digit j at _S_D + 2*j, optional point after it at _S_D + 2*j + 1
_S_E = _S_D + 34  # 'e', sign, 3 exponent digits
_FW = _S_E + 5


def _fallback(v):
    """``%.17g`` of each value in Python, as a (len, _FW) uint8 block (NUL padded)."""
    b = np.array([("%.17g" % x).encode() for x in v.tolist()], dtype=f"S{_FW}")
    return b.view(np.uint8).reshape(len(v), _FW)


def _scaled(a, X):
    """``a * 10**(16 - X)`` as a double-double ``(xh, xl)`` (error about 2**-104 relative).

    Dekker's exact product of ``a`` and the high part of the power, plus ``a`` times
    its low part; plain IEEE double operations only (no FMA needed).
    """
    tab = _P10TAB[16 - _KMIN - X]
    bh, bl, bhh, bhl = tab[:, 0], tab[:, 1], tab[:, 2], tab[:, 3]
    t = a * _SPLIT
    ah = t - (t - a)
    al = a - ah
    p = a * bh
    e = ((ah * bhh - p) + ah * bhl + al * bhh) + al * bhl
    e += a * bl
    xh = p + e
    xl = e - (xh - p)
    return xh, xl


def _round17(a, X):
    """17-digit mantissa ``M`` of ``a`` at exponent ``X``, with range/tie diagnostics.

    ``below``/``above``: the exact value is under ``1e16`` / at least ``1e17`` (``X`` is
    off by one; near there doubles are 2 or 16 apart, so the low part decides when the
    high part sits on the boundary).  ``tie``: too close to a rounding tie.
    """
    xh, xl = _scaled(a, X)
    r = np.rint(xh)
    d = (xh - r) + xl  # exact difference of xh and r, plus the low part
    rd = np.rint(d)
    tie = np.abs(d - rd) > 0.5 - 1e-6
    Mi = r.astype(np.int64)
    Mi += rd.astype(np.int64)
    below = (xh < 1e16) | ((xh == 1e16) & (xl < 0))
    above = (xh > 1e17) | ((xh == 1e17) & (xl >= 0))
    return Mi, tie, below, above


def _decompose(v):
    """``(X, Mi, ok)``: decimal exponent and 17-digit mantissa of each value.

    ``ok`` is False where the value must be formatted by Python (0, inf, nan,
    subnormal or huge magnitudes, near-ties); ``Mi`` is 0 there.
    """
    a = np.abs(v)
    fast = (a > 1e-280) & (a < 1e280)  # excludes 0, inf, nan, subnormals
    with np.errstate(all="ignore"):
        aa = np.where(fast, a, 1.0)
        X = np.floor(np.log10(aa)).astype(np.int64)
        Mi, tie, below, above = _round17(aa, X)
        bad = below | above  # log10 can be one off near powers of ten
        if bad.any():
            X[bad] += np.where(above[bad], 1, -1)
            Mi2, tie2, below2, above2 = _round17(aa[bad], X[bad])
            Mi[bad], tie[bad] = Mi2, tie2 | below2 | above2
    ok = fast & ~tie
    carry = Mi >= 10**17  # rounds up to the next power of ten
    Mi[carry] = 10**16
    X += carry
    Mi[~ok] = 0
    return X, Mi, ok


def _format_floats(v):
    """``%.17g`` of every float64 in ``v`` as a (len, _FW) uint8 slot matrix.

    The general layout (any exponent); :func:`_float_words` is the fast path.
    """
    n = v.shape[0]
    out = np.zeros((n, _FW), dtype=np.uint8)
    if n == 0:
        return out
    X, Mi, ok = _decompose(v)
    # the 17 digits as ASCII, four at a time through a 10**4-entry table
    g = np.empty((n, 5), dtype=np.int64)
    q = Mi
    for k in range(4, 0, -1):
        q2 = q // 10000
        g[:, k] = q - q2 * 10000
        q = q2
    g[:, 0] = q  # the leading digit (Mi < 10**17)
    D32 = _LUT4[g]  # (n, 5) uint32 = 20 ASCII bytes per row: "000d" + 16 digits
    D8 = D32.view(np.uint8).reshape(n, 20)[:, 3:]
    tz = _TZ4[g[:, 4]]
    z = g[:, 4] == 0
    for k in (3, 2, 1):
        tz += z * _TZ4[g[:, k]]
        z &= g[:, k] == 0
    nd = 17 - tz  # digits up to the last non-zero one
    positional = (X >= -4) & (X < 17)
    out[:, _S_SIGN] = np.where(v < 0, _MINUS, 0)
    neg_pos = positional & (X < 0)
    out[:, _S_LEAD0] = np.where(neg_pos, _ZERO, 0)
    out[:, _S_LEADPT] = np.where(neg_pos, _DOT, 0)
    nz = -X - 1
    for z in range(3):
        out[:, _S_Z + z] = np.where(neg_pos & (nz > z), _ZERO, 0)
    ipos = positional & (X >= 0)
    # digit j is written when j < keep (significant, or part of the integer part)
    keep = np.maximum(nd, np.where(ipos, X + 1, 0))
    # the decimal point follows digit ppos (-1: no point)
    ppos = np.where(ipos & (nd > X + 1), X, np.where(~positional & (nd > 1), 0, -1))
    out[:, _S_D:_S_D + 34:2] = D8 & _KEEPMASK[keep]
    out[:, _S_D + 1:_S_D + 34:2] = _POINTROW[ppos + 1]
    sci = ~positional
    ax = np.abs(X)
    out[:, _S_E] = np.where(sci, _E, 0)
    out[:, _S_E + 1] = np.where(sci, np.where(X < 0, _MINUS, _PLUS), 0)
    out[:, _S_E + 2] = np.where(sci & (ax >= 100), ax // 100 + _ZERO, 0)
    out[:, _S_E + 3] = np.where(sci, (ax // 10) % 10 + _ZERO, 0)
    out[:, _S_E + 4] = np.where(sci, ax % 10 + _ZERO, 0)
    rest = np.flatnonzero(~ok)
    if rest.size:
        out[rest] = _fallback(v[rest])
    return out


# ---- fast path: every row as a few uint64 words of NUL-padded ASCII (little-endian)

_LITTLE = sys.byteorder == "little"
_U64 = np.uint64


def _bytes_word(bs):
    """The uint64 whose little-endian bytes are ``bs`` (at most 8, NUL padded)."""
    return int.from_bytes(bytes(bs).ljust(8, b"\0"), "little")


_LUT4_64 = _LUT4.astype(_U64)
# LOWMASK[t]: bytes 0..t-1 kept; HIGHMASK[t]: bytes t..7 kept
_LOWMASK = np.array([(1 << (8 * t)) - 1 for t in range(9)], dtype=_U64)
_HIGHMASK = np.array([((1 << 64) - 1) ^ ((1 << (8 * t)) - 1) for t in range(9)], dtype=_U64)
# "0." + c zeros at bytes 2.. of the first word (c = -X - 1 for X = -1..-4), 0 otherwise
_LEAD = np.array([_bytes_word(b"\0\0" + b"0." + b"0" * c) for c in range(4)] + [0], dtype=_U64)
_EXP_OFF = 400
_EXPW = np.array([_bytes_word(("e%+03d" % x).encode()) for x in range(-_EXP_OFF, _EXP_OFF + 1)],
                 dtype=_U64)


def _text_words(texts, nwords):
    """Python strings (already with separator/newline) as (len, nwords) uint64 rows."""
    b = np.array([t.encode() for t in texts], dtype=f"S{8 * nwords}")
    return b.view(_U64).reshape(len(texts), nwords)


def _float_words(v, pre, nl):
    """``%.17g`` text of ``v`` as 4 uint64 words per row, after byte ``pre`` (or 0) and
    followed by byte ``nl`` (or 0).

    Layout (bytes): ``[pre][sign]["0."][3 zeros][d0][.][d1 .. d16][e+XXX][nl]`` with unused
    slots NUL.  Rows that need another layout (positional values >= 10, Python fallbacks)
    are left-packed from :func:`_format_floats`.
    """
    n = v.shape[0]
    X, Mi, ok = _decompose(v)
    g = []
    q = Mi
    for _ in range(4):
        q2 = q // 10000
        g.append(q - q2 * 10000)
        q = q2
    g4, g3, g2, g1 = g
    g0 = q
    tz = _TZ4[g4]
    z = g4 == 0
    for gk in (g3, g2, g1):
        tz += z * _TZ4[gk]
        z &= gk == 0
    nd = 17 - tz
    positional = (X >= -4) & (X < 17)
    negpos = positional & (X < 0)
    A = _LUT4_64[g1] | (_LUT4_64[g2] << _U64(32))  # digits 1..8
    B = _LUT4_64[g3] | (_LUT4_64[g4] << _U64(32))  # digits 9..16
    A &= _LOWMASK[np.clip(nd - 1, 0, 8)]
    B &= _LOWMASK[np.clip(nd - 9, 0, 8)]
    w = np.empty((n, 4), dtype=_U64)
    lead = np.where(negpos, np.clip(-X - 1, 0, 3), 4)
    w[:, 0] = _LEAD[lead] | (v < 0).astype(_U64) * _U64(_MINUS << 8) | _U64(pre)
    pt = (~negpos & (nd > 1)).astype(_U64) * _U64(_DOT << 8)
    w[:, 1] = (g0 + _ZERO).astype(_U64) | pt | (A << _U64(16))
    w[:, 2] = (A >> _U64(48)) | (B << _U64(16))
    expw = np.where(positional, _U64(0), _EXPW[np.clip(X + _EXP_OFF, 0, 2 * _EXP_OFF)])
    w[:, 3] = (B >> _U64(48)) | (expw << _U64(16)) | _U64(nl << 56)
    gen = np.flatnonzero(~ok | (positional & (X >= 1)))
    if gen.size:
        slots = _format_floats(v[gen])
        order = np.argsort(slots == 0, axis=1, kind="stable")
        packed = np.take_along_axis(slots, order, axis=1)[:, :30]
        rows = np.zeros((gen.size, 32), dtype=np.uint8)
        rows[:, 0] = pre
        rows[:, 1:31] = packed
        rows[:, 31] = nl
        w[gen] = rows.view(_U64)
    return w


def _int_words(a, pre, nl):
    """Decimal text of int64 ``a`` as uint64 words per row (``pre``/``nl`` as above)."""
    n = a.shape[0]
    if a.min() == np.iinfo(np.int64).min:  # |min| overflows: let Python do it
        p = chr(pre) if pre else ""
        e = chr(nl) if nl else ""
        return _text_words([f"{p}{x}{e}" for x in a.tolist()], 4)
    mag = np.abs(a)
    ng = (len(str(int(mag.max()))) + 3) // 4
    nw = (ng + 1) // 2
    g = []
    q = mag
    for _ in range(2 * nw):
        q2 = q // 10000
        g.append(q - q2 * 10000)
        q = q2
    ndig = np.searchsorted(_P10, mag, side="right") + 1
    width = 8 * nw
    cols = []
    neg = a < 0
    if pre or neg.any():
        cols.append(neg.astype(_U64) * _U64(_MINUS << 8) | _U64(pre))
    for k in range(nw):  # word k from the left holds groups 2(nw-1-k)+1 and 2(nw-1-k)
        lo = 2 * (nw - 1 - k)
        word = _LUT4_64[g[lo + 1]] | (_LUT4_64[g[lo]] << _U64(32))
        word &= _HIGHMASK[np.clip(width - ndig - 8 * k, 0, 8)]
        cols.append(word)
    if nl:
        cols.append(np.full(n, nl, dtype=_U64))
    return np.stack(cols, axis=1)


def _column_words(c, pre, nl):
    if c.dtype.kind in "iub":
        return _int_words(c.astype(np.int64), pre, nl)
    if c.dtype.kind == "f":
        return _float_words(c.astype(np.float64), pre, nl)
    raise TypeError(f"cannot format a column of dtype {c.dtype}")


def _format_ints(a):
    """Decimal text of every int64 in ``a`` as a (len, width) uint8 matrix (NUL padded)."""
    a = np.asarray(a, dtype=np.int64)
    n = a.shape[0]
    if n == 0:
        return np.zeros((0, 1), dtype=np.uint8)
    if a.min() == np.iinfo(np.int64).min:  # |min| overflows; rare enough for Python
        b = np.array([str(x).encode() for x in a.tolist()], dtype="S20")
        return b.view(np.uint8).reshape(n, 20)
    mag = np.abs(a)
    ngroups = (len(str(int(mag.max()))) + 3) // 4
    g = np.empty((n, ngroups), dtype=np.int64)
    q = mag
    for k in range(ngroups - 1, -1, -1):
        q2 = q // 10000
        g[:, k] = q - q2 * 10000
        q = q2
    width = 4 * ngroups
    digits = _LUT4[g].view(np.uint8).reshape(n, width)
    ndig = np.searchsorted(_P10, mag, side="right") + 1  # decimal digits (0 has one)
    out = np.empty((n, width + 1), dtype=np.uint8)
    out[:, 0] = np.where(a < 0, _MINUS, 0)
    out[:, 1:] = digits * (np.arange(width)[None, :] >= (width - ndig)[:, None])
    return out


def _format_column(a):
    a = np.asarray(a)
    if a.dtype.kind in "iub":
        return _format_ints(a.astype(np.int64))
    if a.dtype.kind == "f":
        return _format_floats(a.astype(np.float64))
    raise TypeError(f"cannot format a column of dtype {a.dtype}")


def format_rows(columns, sep=",", threads=None):
    """Format equal-length columns as text lines, with no per-row Python loop.

    Parameters
    ----------
    columns : sequence of 1-D arrays
        Integer columns are written in decimal, float columns with ``%.17g``.
    sep : str
        One-character field separator.
    threads : int, optional
        Blocks of rows formatted in parallel (default: CPU count, at most 4).

    Returns
    -------
    bytes
        ``sep``-separated rows, each ending with ``\\n``; byte-identical to
        ``"".join(sep.join(...) + "\\n")`` with Python's ``str(int)`` and
        ``"%.17g" % float``.
    """
    cols = [np.asarray(c) for c in columns]
    n = cols[0].shape[0] if cols else 0
    if any(c.shape != (n,) for c in cols):
        raise ValueError("all columns must be 1-D arrays of the same length")
    sepb = sep.encode()
    if len(sepb) != 1 or sepb in b"\0\n":
        raise ValueError("sep must be one printable character")
    last = len(cols) - 1

    def block_words(s):
        parts = [_column_words(c[s:s + _CHUNK], sepb[0] if i else 0, 10 if i == last else 0)
                 for i, c in enumerate(cols)]
        m = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
        return m.tobytes().translate(None, b"\0")  # drop the NUL padding

    def block_slots(s):
        parts = [_format_column(c[s:s + _CHUNK]) for c in cols]
        rows = parts[0].shape[0]
        width = sum(p.shape[1] for p in parts) + len(parts)
        m = np.empty((rows, width), dtype=np.uint8)
        at = 0
        for i, p in enumerate(parts):
            m[:, at:at + p.shape[1]] = p
            at += p.shape[1]
            m[:, at] = sepb[0] if i < len(parts) - 1 else 10
            at += 1
        return m.tobytes().translate(None, b"\0")  # drop the NUL padding

    block = block_words if _LITTLE and not _force_slots else block_slots
    starts = range(0, n, _CHUNK)
    if threads is None:  # OpenMP's default (``--threads``), at most 4
        from asapgraph.kernels import _graph

        threads = min(_graph.max_threads(), 4)
    if threads > 1 and len(starts) > 1:
        # numpy releases the GIL inside each operation, so blocks format in parallel
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(threads) as ex:
            blocks = list(ex.map(block, starts))
    else:
        blocks = [block(s) for s in starts]
    return b"".join(blocks)

