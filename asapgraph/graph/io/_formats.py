"""Matrix Market (``.mtx``) and ``.npy`` edge arrays.

Matrix Market: ``coordinate`` matrices, field ``pattern``, ``integer`` or ``real``,
symmetry ``general``, ``symmetric`` or ``skew-symmetric``.  Entry ``(i, j)`` is the
edge ``i -> j`` (row = source, as in ``scipy.io.mmread(...)[i-1, j-1]``).  Vertices
are the ``N = max(rows, cols)`` matrix indices; their original ids are the 1-based
indices of the file (``Graph.ids == 1..N``), isolated vertices included.  A
symmetric file stores one triangle: the mirror of every off-diagonal entry is added
(negated for skew-symmetric).  The body is streamed through the same C parser as
text edge lists.
"""
from __future__ import annotations

import io
import os

import numpy as np

from asapgraph.errors import InputError
from asapgraph.kernels import _parse
from asapgraph.graph.io._text import CHUNK_BYTES, display_name, open_binary, parse_stream


def _mtx_header(stream, name):
    """Read the banner, comments and size line; ``(info, lines_read, leftover_bytes)``."""
    # read a first block and split lines in Python (the header is tiny)
    data = b""
    lines = 0
    banner = None
    while True:
        nl = data.find(b"\n")
        while nl < 0:
            more = stream.read(1 << 16)
            if not more:
                break
            data += more
            nl = data.find(b"\n")
        if nl < 0:
            line, data = data, b""
            if not line.strip():
                raise InputError(name, None, "Matrix Market file has no size line")
        else:
            line, data = data[:nl], data[nl + 1:]
        lines += 1
        if banner is None and line.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark
            line = line[3:]
        text = line.decode("ascii", "replace").strip()
        if banner is None:
            parts = text.lower().split()
            if len(parts) != 5 or parts[0] != "%%matrixmarket":
                raise InputError(name, 1, "not a Matrix Market file (expected "
                                 "'%%MatrixMarket matrix coordinate <field> <symmetry>')")
            _, obj, fmt, field, sym = parts
            if obj != "matrix" or fmt != "coordinate":
                raise InputError(name, 1, f"only 'matrix coordinate' Matrix Market files are "
                                 f"supported, not '{obj} {fmt}'")
            if field not in ("pattern", "real", "integer", "double"):
                raise InputError(name, 1, f"unsupported Matrix Market field '{field}'")
            if sym not in ("general", "symmetric", "skew-symmetric"):
                raise InputError(name, 1, f"unsupported Matrix Market symmetry '{sym}'")
            banner = (field, sym)
            continue
        if not text or text.startswith("%"):
            continue
        parts = text.split()
        try:
            rows, cols, nnz = (int(x) for x in parts)
            if min(rows, cols, nnz) < 0:
                raise ValueError
        except ValueError:
            raise InputError(name, lines, f"bad Matrix Market size line {text!r} "
                             "(expected 'rows cols entries')") from None
        return {"field": banner[0], "symmetry": banner[1], "rows": rows, "cols": cols,
                "nnz": nnz}, lines, data


class _Prefixed:
    """A stream with some bytes put back in front."""

    def __init__(self, head, stream):
        self.head = memoryview(head)
        self.stream = stream

    def readinto(self, b):
        if len(self.head):
            k = min(len(b), len(self.head))
            b[:k] = self.head[:k]
            self.head = self.head[k:]
            return k
        return self.stream.readinto(b)


def mtx_field(path):
    """The field of a Matrix Market file's banner (``'real'``, ``'integer'``,
    ``'pattern'``), read through its compression; an error as :func:`read_mtx` has it."""
    return mtx_info(path)["field"]


def mtx_info(path):
    """The banner and size line of a Matrix Market file (``field``, ``symmetry``,
    ``rows``, ``cols``, ``nnz``), read through its compression; an error as
    :func:`read_mtx` has it."""
    name = display_name(path)
    stream, kind, _ = open_binary(path)
    try:
        return _mtx_header(stream, name)[0]
    except (EOFError, OSError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(name, None, f"corrupt or truncated {kind} data") from None
    finally:
        stream.close()


def _entry_line(path, header_lines, i):
    """Line number of entry ``i`` (0-based) of a Matrix Market file whose header took
    ``header_lines`` lines (an error path: the file is read again; None for stdin)."""
    if path == "-":
        return None
    stream, _, _ = open_binary(path)
    try:
        lineno, k = 0, -1
        lines = io.BufferedReader(stream, 1 << 16) if isinstance(stream, io.RawIOBase) else stream
        for line in lines:
            lineno += 1
            if lineno <= header_lines:
                continue
            t = line.strip()
            if t and not t.startswith((b"%", b"#")):
                k += 1
                if k == i:
                    return lineno
    except (EOFError, OSError):
        pass
    finally:
        stream.close()
    return None


def read_mtx(path, *, weighted=False, progress=None, chunk_bytes=CHUNK_BYTES):
    """Read a Matrix Market coordinate file.

    Returns ``(src, dst, weights, n)`` with 0-based dense ids (``n`` = max(rows,
    cols); original ids are ``1..n``) and the symmetric mirror entries added.
    """
    name = display_name(path)
    stream, kind, total = open_binary(path)
    try:
        try:
            info, hlines, rest = _mtx_header(stream, name)
        except (EOFError, OSError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(name, None, f"corrupt or truncated {kind} data") from None
        wcol = 3 if (weighted and info["field"] != "pattern") else 0
        acc = _parse.EdgeAccumulator(1, 2, wcol, True)
        parse_stream(_Prefixed(rest, stream), acc, path, kind, chunk_bytes, total, progress,
                     line_offset=hlines)
    finally:
        if path != "-":
            stream.close()
    if acc.m != info["nnz"]:
        extra = acc.m > info["nnz"]   # the first entry past the count names its line
        raise InputError(name, _entry_line(path, hlines, info["nnz"]) if extra else None,
                         f"Matrix Market size line announces {info['nnz']} entries, "
                         f"found {acc.m}")
    n = max(info["rows"], info["cols"])
    src, dst, w = acc.take()
    if acc.m == 0 and n == 0:
        raise InputError(name, None, "no edges found")
    if src.size:
        from asapgraph.kernels import _graph

        lo = min(_graph.minmax(src)[0], _graph.minmax(dst)[0])
        if lo < 1 or _graph.minmax(src)[1] > info["rows"] or _graph.minmax(dst)[1] > info["cols"]:
            bad = (src < 1) | (src > info["rows"]) | (dst < 1) | (dst > info["cols"])
            i = int(np.flatnonzero(bad)[0])
            raise InputError(name, _entry_line(path, hlines, i),
                             f"Matrix Market entry ({int(src[i])}, {int(dst[i])}) is out of "
                             f"range (rows 1..{info['rows']}, columns 1..{info['cols']})")
        src -= 1
        dst -= 1
    if info["symmetry"] != "general":
        off = src != dst
        s2, d2 = dst[off], src[off]
        if w is not None:
            w2 = w[off]
            if info["symmetry"] == "skew-symmetric":
                w2 = -w2
            w = np.concatenate([w, w2])
        src, dst = np.concatenate([src, s2]), np.concatenate([dst, d2])
    return src, dst, w, n


def read_npy(path, *, weighted=False, weight_col=None):
    """Read an ``(m, 2)`` or ``(m, k>=3)`` ``.npy`` array: ``(src, dst, weights)``.

    Columns 0 and 1 are the original ids (integers, or integral floats), the
    weight is column 2 (or ``weight_col - 1``) when ``weighted``.
    """
    name = os.fspath(path)
    try:
        a = np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError:
        raise InputError(name, None, "file not found") from None
    except PermissionError:
        raise InputError(name, None, "permission denied") from None
    except (ValueError, OSError) as exc:
        raise InputError(name, None, f"not a valid .npy array: {exc}") from None
    wc = None if not (weighted or weight_col is not None) else (weight_col or 3) - 1
    check_npy_shape(name, a, wc)
    return npy_edges(name, a, 0, a.shape[0], wc)


def check_finite_weights(name, w):
    """Refuse the first non-finite weight of ``w`` (a binary graph's, in edge order: one
    process the whole array, each rank its slice, the lowest rank's wins)."""
    if w is not None and w.size and not np.isfinite(w).all():
        i = int(np.flatnonzero(~np.isfinite(w))[0])
        raise InputError(name, None, f"edge weight {_plain(w[i])} is not a finite number")


def _plain(v):
    """A numpy scalar as the user wrote it: ``0.5``, ``nan``, ``18446744073709551615``
    (not ``np.float64(0.5)``)."""
    return repr(float(v)) if isinstance(v, (float, np.floating)) else str(int(v))


def check_npy_shape(name, a, wc):
    """The checks of a ``.npy`` edge array that need only its header: ``(m, 2)`` or
    ``(m, k >= 3)`` (columns: source, destination, then the weight is column ``wc``,
    0-based, default 2 -- further columns are ignored, like a text file's), integer or
    float ids, at least one edge.  One process and every rank alike."""
    if a.ndim != 2 or a.shape[1] < 2:
        raise InputError(name, None, f".npy edge array must have shape (m, 2), or (m, k >= 3) "
                         f"with the weights in column 3 or --weight-col; got {a.shape}")
    if a.dtype.kind not in "iuf":
        raise InputError(name, None, f"vertex ids must be integers, got dtype {a.dtype}")
    if a.shape[0] == 0:
        raise InputError(name, None, "no edges found")
    if wc is not None and (wc < 2 or wc >= a.shape[1]):
        raise InputError(name, None, f"no weight column {wc + 1} in an array of shape {a.shape}")


def npy_edges(name, a, lo, hi, wc):
    """Checked ``(src int64, dst int64, weights float64 or None)`` of rows ``lo:hi`` of
    the ``.npy`` edge array ``a`` (after :func:`check_npy_shape`).  The first bad row in
    file order is refused (0-based ``row R: ...``), so one process and K ranks (each its
    slice; :func:`asapgraph.comm.mpi.agree` keeps the lowest rank's) give the same line."""
    blk = np.asarray(a[lo:hi])
    ids = blk[:, :2]
    k = ids.dtype.kind
    if k == "f":   # (over: 2.0 ** 63 is inf in a float16 array, a RuntimeWarning per rank)
        with np.errstate(invalid="ignore", over="ignore"):
            nonint = ~np.isfinite(ids) | (ids != np.floor(ids))
            big = ~nonint & (ids >= 2.0 ** 63)
            neg = ~nonint & (ids < 0)
    else:
        nonint = np.zeros(ids.shape, bool)
        big = (ids >= 2 ** 63) if (k == "u" and ids.dtype.itemsize == 8) else nonint
        neg = (ids < 0) if k == "i" else nonint
    w = wbad = None
    if wc is not None:
        w = np.ascontiguousarray(blk[:, wc], dtype=np.float64)
        wbad = ~np.isfinite(w)
    bad = (nonint | big | neg).any(axis=1)
    if wbad is not None:
        bad |= wbad
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        r = lo + i
        for c in (0, 1):
            v = _plain(ids[i, c])
            if nonint[i, c]:
                raise InputError(name, None, f"row {r}: vertex id {v} is not an integer")
            if big[i, c]:
                raise InputError(name, None, f"row {r}: vertex id {v} does not fit in int64")
            if neg[i, c]:
                raise InputError(name, None, f"row {r}: negative vertex id {v}")
        raise InputError(name, None, f"row {r}: weight {_plain(w[i])} is not a finite number")
    return (np.ascontiguousarray(ids[:, 0], dtype=np.int64),
            np.ascontiguousarray(ids[:, 1], dtype=np.int64), w)
