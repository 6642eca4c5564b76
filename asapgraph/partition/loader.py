"""Partitioned loading: every rank reads its own share, ids are mapped, edges shuffled.

Rationale
---------
No rank ever holds the whole edge list.

1. *Reading.*  An uncompressed text file is split into K byte ranges; a line belongs to
   the rank whose range contains its first byte (so ranges are aligned to line starts
   without communication).  A compressed file cannot be split: rank 0 decompresses it
   and streams bounded chunks (``chunk_bytes``, cut at line ends) round-robin to the
   ranks, each chunk carrying the number of the line it starts at (so errors name the
   right line).  A generator spec (``rmat:S``, ``er:N:M``) is produced per rank with the
   counter-based ``*_slice`` generators: rank r makes edges ``[r m/K, (r+1) m/K)``.
2. *Id mapping.*  Original int64 ids are mapped to dense ids equal to their rank in the
   global sorted order (the same numbering as :meth:`asapgraph.graph.Graph.from_original_ids`):
   a sample sort -- ranks sample their distinct ids, splitters are agreed with one
   allgather, ids go to the splitter owner (Alltoallv), owners sort-unique them, an
   exclusive scan gives each block's base, and answers go back (Alltoallv).  Generator
   specs already have dense ids ``0..n-1`` (isolated vertices included).
3. *Partitioning and shuffle.*  The owner function (:mod:`.partition`) is agreed, every
   edge is sent to the owner of its source (Alltoallv of typed arrays), and the local
   out-CSR with per-peer slots is built (:class:`LocalGraph`).

Bad input found by any rank is agreed collectively (:func:`.comm.agree`): every rank
raises the same one-line error, which the CLI prints once.
"""
from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
import time

import numpy as np

from asapgraph.errors import InputError
from asapgraph.comm.mpi import TAG_CHUNK, TAG_CHUNK_HDR, agree, alltoallv, allgatherv, mpi
from asapgraph.partition.partitioners import Partition, range_partition

__all__ = ["load_partitioned", "LocalGraph", "read_local_edges"]

_COMPRESSED = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
#: per-phase memory trace ``(label, rss_mb, peak_mb)`` when ASAPGRAPH_MEM_TRACE is set
MEM_TRACE = []


def _peak_mb():
    from asapgraph._rss import peak_rss_bytes

    return peak_rss_bytes() / 2**20


def _phase(progress, text, t0):
    """A loader phase on rank 0's progress stream (nothing when ``progress`` is None)."""
    if progress is not None:
        progress.stage(f"{text} ({time.perf_counter() - t0:.1f} s)")


def _mem(label):
    """Record current and peak RSS after a loader phase (only when tracing; tests/benchmarks)."""
    if not os.environ.get("ASAPGRAPH_MEM_TRACE"):
        return
    try:
        with open("/proc/self/statm") as f:
            rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # pragma: no cover - not Linux
        rss = float("nan")
    MEM_TRACE.append((label, rss, _peak_mb()))


_NUM = re.compile(rb"[ \t,;]+")
#: edges per block of the loops over a rank's edges: their temporaries (a few arrays of
#: this many int64) stay around 1 MB, well under the edge arrays themselves
_BLOCK = 1 << 16


_MALLOC_TUNED = []


def _tune_malloc():
    """Give big blocks back to the OS when freed (glibc; once per process).

    glibc raises its mmap threshold after a large block is freed, so later edge-sized
    arrays land on the heap and freeing them no longer lowers the resident size: the
    loader's short-lived temporaries would then all count towards the rank's peak.  A
    fixed threshold (1 MiB) keeps every array above it in its own mapping.
    """
    if _MALLOC_TUNED:
        return
    _MALLOC_TUNED.append(True)
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


def _trim_malloc():
    """Return free heap pages to the OS (glibc ``malloc_trim``); no-op elsewhere."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


# ----------------------------------------------------------------------------- parsing


def _parse_text(buf, path, line0, weighted, weight_col=2):
    """Parse a buffer of whole lines (bytes or a uint8 array) into ``(src, dst, w)``.

    Uses the compiled parser of :mod:`asapgraph.graph.io` (same rules and messages as the
    single-process reader) straight on ``buf``, without copying it, into int32 ids
    unless an id needs int64; without it, :func:`_parse_text_numpy`.
    """
    try:
        from asapgraph.kernels import _parse as iop
        from asapgraph.graph.io._text import display_name, error_message
    except ImportError:  # pragma: no cover - io without its compiled parser
        return _parse_text_numpy(bytes(buf), path, line0, weighted, weight_col)
    if line0 == 1 and bytes(buf[:3]) == b"\xef\xbb\xbf":  # UTF-8 byte order mark
        buf = b"   " + bytes(buf[3:])
    acc = iop.EdgeAccumulator(1, 2, (weight_col + 1) if weighted else 0, True)
    if len(buf) and acc.feed(buf, True) < 0:
        line, msg = error_message(acc.error)
        raise InputError(display_name(path), None if line is None else line + line0 - 1, msg)
    s, d, w = acc.take()
    return s, d, (w if weighted else None)


def _parse_text_numpy(buf, path, line0, weighted, weight_col=2):
    """Fallback parser (numpy.loadtxt; exact line numbers from a slow scan on error).

    ``line0`` is the 1-based number of the buffer's first line (for error messages).
    Comment lines start with ``#`` or ``%``; separators are blanks, tabs or commas.
    """
    ncols = (weight_col + 1) if weighted else 2
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0) if weighted else None)
    if not buf.strip():
        return empty
    text = buf.replace(b",", b" ").replace(b";", b" ")
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cols = tuple(range(ncols))
            a = np.loadtxt(io.BytesIO(text), comments=("#", "%"), usecols=cols, ndmin=2,
                           dtype=np.float64 if weighted else np.int64)
    except (ValueError, IndexError):
        a = None
    if a is not None and a.shape[0] and a.shape[1] >= 2:
        if weighted:
            s, d = a[:, 0], a[:, 1]
            bad = (s != np.floor(s)) | (d != np.floor(d)) | (s < 0) | (d < 0) | (np.abs(s) > 2**53)
            if not bad.any():
                w = a[:, weight_col].copy()
                if np.isfinite(w).all():
                    return s.astype(np.int64), d.astype(np.int64), w
        else:
            if (a[:, :2] >= 0).all():
                return a[:, 0].copy(), a[:, 1].copy(), None
    elif a is not None and a.shape[0] == 0:
        return empty
    _raise_first_bad(buf, path, line0, weighted, weight_col)
    return empty  # pragma: no cover (raises)


def _raise_first_bad(buf, path, line0, weighted, weight_col):
    """Slow path, only after the fast parser failed: find and report the first bad line."""
    for i, raw in enumerate(buf.split(b"\n")):
        line = raw.strip()
        if not line or line[:1] in (b"#", b"%"):
            continue
        f = [x for x in _NUM.split(line) if x]
        need = (weight_col + 1) if weighted else 2
        where = line0 + i
        if len(f) < need:
            raise InputError(path, where, f"expected {need} columns, got {len(f)}: "
                             f"{line[:60].decode('utf-8', 'replace')!r}")
        for tok in f[:2]:
            try:
                v = int(tok)
            except ValueError:
                raise InputError(path, where, f"vertex id is not an integer: "
                                 f"{tok[:40].decode('utf-8', 'replace')!r}") from None
            if v < 0:
                raise InputError(path, where, f"negative vertex id {v}")
            if v >= 2**63:
                raise InputError(path, where, f"vertex id {v} does not fit in int64")
        if weighted:
            try:
                w = float(f[weight_col])
            except ValueError:
                raise InputError(path, where, f"weight is not a number: "
                                 f"{f[weight_col][:40].decode('utf-8', 'replace')!r}") from None
            if not np.isfinite(w):
                raise InputError(path, where, f"weight is not finite: {w}")
    raise InputError(path, line0, "could not parse this part of the file")


def _count_newlines(path, end):
    """Number of ``\\n`` bytes in ``path[0:end]`` (used to number lines)."""
    n = 0
    with open(path, "rb") as f:
        left = end
        while left > 0:
            b = f.read(min(left, 1 << 24))
            if not b:
                break
            n += b.count(b"\n")
            left -= len(b)
    return n


def _read_byte_range(path, start, end):
    """Bytes of the lines whose first byte lies in ``[start, end)``, and that first offset."""
    with open(path, "rb") as f:
        if start > 0:
            f.seek(start - 1)
            prev = f.read(1)
            if prev != b"\n":
                f.readline()  # the line that started before `start` belongs to another rank
        s = f.tell()
        if s >= end:
            return b"", s
        data = f.read(end - s)
        if data and not data.endswith(b"\n"):
            data += f.readline()
    return data, s


# ----------------------------------------------------------------------------- reading


def read_local_edges(source, comm, weighted=False, weight_col=2, chunk_bytes=1 << 21, seed=None):
    """This rank's share of the input edges.

    Returns
    -------
    src, dst : int64 arrays (original ids)
    w : float64 array or None
    n_spec : int or None
        Vertex count of a generator spec (ids already dense), else None.
    """
    from asapgraph.graph import generators as gen

    K, me = comm.Get_size(), comm.Get_rank()
    chunk_bytes = int(os.environ.get("ASAPGRAPH_DIST_CHUNK_BYTES", chunk_bytes))  # tests
    err = None
    out = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0) if weighted else None)
    if isinstance(source, str) and gen.is_spec(source) and not os.path.exists(source):
        try:
            kind, p = gen.parse_spec(source)
        except Exception as e:  # noqa: BLE001
            agree(comm, e)
        agree(comm, None)
        s = p["seed"] if p["seed"] is not None else (0 if seed is None else seed)
        m = p["m"]
        lo, hi = m * me // K, m * (me + 1) // K
        dt = np.int32 if p["n"] < 2**31 - 1 else np.int64
        src, dst = np.empty(hi - lo, dtype=dt), np.empty(hi - lo, dtype=dt)
        step = max(1, int(chunk_bytes) // 8)  # edges per generated chunk (bounded int64 temps)
        for a in range(lo, hi, step):  # counter-based: chunks equal the one-shot slice
            b = min(hi, a + step)
            if kind == "rmat":
                cs, cd = gen.rmat_slice(p["scale"], p["edge_factor"], s, a, b)
            else:
                cs, cd = gen.erdos_renyi_slice(p["n"], m, s, a, b)
            src[a - lo:b - lo], dst[a - lo:b - lo] = cs, cd
            del cs, cd
        w = np.ones(len(src)) if weighted else None
        return src, dst, w, p["n"]
    path = os.fspath(source)
    if path == "-":
        agree(comm, InputError(path, None, "standard input cannot be split across ranks; "
                                           "save it to a file (or use --np 1)"))
    fmt, err = "text", None  # a missing/unreadable file: the reader's message, as on one process
    try:
        from asapgraph.graph.io import detect_format

        fmt = detect_format(path)
    except Exception as e:  # noqa: BLE001
        err = e
    agree(comm, err)
    if fmt == "mtx":
        agree(comm, InputError(path, None, "Matrix Market input is not split across ranks; "
                                           "convert it first (asapgraph convert IN OUT.asg)"))
    if fmt in ("binary", "npy"):
        out, err = None, None
        try:
            out = _read_array_slice(path, fmt, K, me, weighted, weight_col)
        except Exception as e:  # noqa: BLE001
            err = e
        agree(comm, err)
        return (*out, None)
    ext = os.path.splitext(path)[1].lower()
    if ext in _COMPRESSED:
        return (*_read_compressed(path, comm, weighted, weight_col, chunk_bytes), None)
    try:
        size = os.path.getsize(path)
        start, end = size * me // K, size * (me + 1) // K
        try:
            from asapgraph.graph.io import parse_byte_range
        except ImportError:  # pragma: no cover
            parse_byte_range = None
        if parse_byte_range is not None:
            parts = []
            step = max(1 << 16, 8 * int(chunk_bytes))  # sub-ranges compose (lines own bytes)
            for a in range(start, end, step):
                el = parse_byte_range(path, a, min(end, a + step), weighted=weighted,
                                      weight_col=(weight_col + 1) if weighted else None)
                parts.append(_narrow((el.src, el.dst, None if not weighted else el.weights)))
                del el
            out = _concat_parts(parts, weighted)
            del parts
            data = None
        else:
            data, s = _read_byte_range(path, start, end)
    except Exception as e:  # noqa: BLE001
        err, data = e, None
    try:
        if data is not None:
            try:
                out = _narrow(_parse_text(data, path, 1, weighted, weight_col))
            except InputError as e:  # renumber the line from the real file offset
                line0 = _count_newlines(path, s) + 1
                raise InputError(path, None if e.line is None else e.line - 1 + line0,
                                 e.message) from None
    except Exception as e:  # noqa: BLE001
        err = e
    agree(comm, err)
    return (*out, None)


def _read_array_slice(path, fmt, K, me, weighted, weight_col):
    """This rank's slice of the edges of a binary ``.asg`` graph or an ``.npy`` edge array.

    Both are memory-mapped, so a rank reads (pages in) only its own ``m/K`` edges.  Edges
    come back with original ids, exactly as the text path returns them.  A binary graph
    with isolated vertices (possible from a Matrix Market file) is refused: the
    distributed loader knows vertices only through their edges, so the answer would
    differ from the single-process one.
    """
    if fmt == "npy":
        try:
            a = np.load(path, mmap_mode="r")
        except Exception as e:  # noqa: BLE001
            raise InputError(path, None, f"not a valid .npy array: {e}") from None
        if a.ndim != 2 or a.shape[1] < 2:
            raise InputError(path, None, f".npy edge array must have shape (m, 2) or (m, 3), "
                                         f"got {a.shape}")
        m = a.shape[0]
        lo, hi = m * me // K, m * (me + 1) // K
        blk = np.asarray(a[lo:hi])
        ids = blk[:, :2]
        if ids.dtype.kind == "f":
            if not np.all(np.isfinite(ids)) or np.any(ids != np.floor(ids)):
                raise InputError(path, None, "vertex ids in a .npy edge array must be integers")
        ids = ids.astype(np.int64)
        if ids.size and int(ids.min()) < 0:
            raise InputError(path, None, "negative vertex id in the .npy edge array")
        w = None
        if weighted:
            col = 2 if weight_col is None else int(weight_col)
            if blk.shape[1] <= col:
                raise InputError(path, None, f".npy edge array has no weight column {col + 1}")
            w = np.ascontiguousarray(blk[:, col], dtype=np.float64)
            if not np.all(np.isfinite(w)):
                raise InputError(path, None, "weights must be finite numbers")
        return _narrow((np.ascontiguousarray(ids[:, 0]), np.ascontiguousarray(ids[:, 1]), w))
    from asapgraph.graph.io import load_binary

    g = load_binary(path, mmap=True)
    indeg = np.diff(g.indptr)
    if g.n and np.any((indeg == 0) & (np.asarray(g.out_degree) == 0)):
        raise InputError(path, None, "the binary graph has isolated vertices, which a "
                                     "distributed run cannot place; run it with --np 1")
    lo, hi = g.m * me // K, g.m * (me + 1) // K
    src = np.asarray(g.indices[lo:hi], dtype=np.int64)
    # in-CSR: the row of edge k is its destination
    dst = np.searchsorted(g.indptr, np.arange(lo, hi, dtype=np.int64), side="right") - 1
    if g.ids is not None:
        src, dst = np.asarray(g.ids[src]), np.asarray(g.ids[dst])
    w = None
    if weighted:
        w = np.ones(hi - lo) if g.weights is None else np.array(g.weights[lo:hi], dtype=np.float64)
    return _narrow((src, dst, w))


def _read_compressed(path, comm, weighted, weight_col, chunk_bytes):
    """Rank 0 decompresses and streams line-aligned chunks round-robin; all parse theirs."""
    MPI = mpi()
    K, me = comm.Get_size(), comm.Get_rank()
    parts, err = [], None
    hdr = np.zeros(2, dtype=np.int64)
    if me == 0:
        line = 1
        i = 0
        try:
            f = _COMPRESSED[os.path.splitext(path)[1].lower()](path, "rb")
        except OSError as e:
            f, err = None, InputError(path, None, f"cannot open: {e}")
        rest = b""
        while f is not None:
            try:
                blk = f.read(chunk_bytes)
            except (OSError, EOFError, lzma.LZMAError) as e:
                err = err or InputError(path, None, f"corrupt compressed file: {e}")
                blk = b""
            data = rest + blk
            if blk:
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    rest = data
                    continue
                data, rest = data[:cut], data[cut:]
            else:
                rest = b""
            if data:
                dest = i % K
                if dest == 0:
                    if err is None:
                        try:
                            parts.append(_narrow(_parse_text(data, path, line, weighted,
                                                             weight_col)))
                        except InputError as e:
                            err = e
                else:
                    hdr[0], hdr[1] = len(data), line
                    comm.Send([hdr, MPI.INT64_T], dest=dest, tag=TAG_CHUNK_HDR)
                    comm.Send([np.frombuffer(data, dtype=np.uint8), MPI.UINT8_T], dest=dest,
                              tag=TAG_CHUNK)
                line += data.count(b"\n")
                i += 1
            if not blk:
                break
        if f is not None:
            f.close()
        hdr[0], hdr[1] = -1, 0
        for dest in range(1, K):
            comm.Send([hdr, MPI.INT64_T], dest=dest, tag=TAG_CHUNK_HDR)
    else:
        while True:
            comm.Recv([hdr, MPI.INT64_T], source=0, tag=TAG_CHUNK_HDR)
            if hdr[0] < 0:
                break
            buf = np.empty(int(hdr[0]), dtype=np.uint8)
            comm.Recv([buf, MPI.UINT8_T], source=0, tag=TAG_CHUNK)
            if err is None:
                try:
                    parts.append(_narrow(_parse_text(buf, path, int(hdr[1]), weighted,
                                                     weight_col)))
                except InputError as e:
                    err = e
    agree(comm, err)
    return _concat_parts(parts, weighted)


def _narrow(part):
    """``(src, dst, w)`` with original ids as int32 when they fit (halves what is held)."""
    s, d, w = part
    s, d = np.asarray(s), np.asarray(d)
    if len(s) and max(int(s.max()), int(d.max())) < 2**31 - 1 and min(int(s.min()), int(d.min())) >= 0:
        s, d = s.astype(np.int32, copy=False), d.astype(np.int32, copy=False)
    else:
        s, d = s.astype(np.int64, copy=False), d.astype(np.int64, copy=False)
    return s, d, None if w is None else np.asarray(w, dtype=np.float64)


def _concat_parts(parts, weighted):
    """Concatenate parsed parts (int32 ids if every part has them); frees ``parts``."""
    if not parts:
        return np.zeros(0, np.int32), np.zeros(0, np.int32), (np.zeros(0) if weighted else None)
    dt = np.result_type(*[p[0].dtype for p in parts])
    out = []
    for j in range(2 + bool(weighted)):
        a = np.empty(sum(len(p[j]) for p in parts), dtype=dt if j < 2 else np.float64)
        o = 0
        for p in parts:
            a[o:o + len(p[j])] = p[j]
            o += len(p[j])
        out.append(a)
        for i, p in enumerate(parts):  # drop this column of every part at once
            parts[i] = tuple(None if k == j else x for k, x in enumerate(p))
    parts.clear()
    return out[0], out[1], (out[2] if weighted else None)


# ----------------------------------------------------------------------------- id mapping


class IdMap:
    """Distributed dense <-> original id map (sample-sorted blocks, one per rank)."""

    def __init__(self, comm, block, base, n):
        self.comm = comm
        self.block = block  # sorted original ids of dense ids base..base+len-1
        self.base = base
        self.n = n
        self.bases, _ = allgatherv(comm, np.array([base], dtype=np.int64))

    def original(self, dense):
        """Original ids of arbitrary dense ids (collective)."""
        dense = np.asarray(dense, dtype=np.int64)
        order = None  # owned ids come sorted: no permutation (peak memory)
        if len(dense) > 1 and not bool((dense[1:] >= dense[:-1]).all()):
            order = np.argsort(dense, kind="stable")
        ds = dense if order is None else dense[order]
        # rank r answers for [bases[r], bases[r+1]) (an empty block shares the next base)
        cuts = np.searchsorted(ds, self.bases, side="left")
        counts = np.diff(np.append(cuts, len(ds)))
        q, qc = alltoallv(self.comm, ds, counts)
        del ds
        q -= self.base
        ans = self.block[q].astype(np.int64, copy=False)
        del q
        back, _ = alltoallv(self.comm, ans, qc)
        del ans
        if order is None:
            return back
        out = np.empty_like(dense)
        out[order] = back
        return out


def map_ids(comm, edges):
    """Dense ids (global sorted rank of the original id) for local edges; collective.

    ``edges`` is a list ``[src, dst]`` of original ids, emptied here (peak memory).
    Returns ``(src_dense, dst_dense, n, idmap)``.
    """
    MPI = mpi()
    K = comm.Get_size()
    src, dst = edges
    edges.clear()
    uniq = np.union1d(np.unique(src), np.unique(dst))
    # original ids travel as int32 unless some rank holds one that needs int64
    wide = comm.allreduce(int(uniq.dtype == np.int64 and len(uniq) > 0), op=MPI.MAX)
    uniq = uniq.astype(np.int64 if wide else np.int32, copy=False)
    _mem("mi:uniq")
    ns = min(len(uniq), 64 * K)
    samp = uniq[np.linspace(0, len(uniq) - 1, ns).astype(np.int64)] if ns else uniq[:0]
    allsamp, _ = allgatherv(comm, samp)
    allsamp.sort()
    if len(allsamp):
        splitters = allsamp[(np.arange(1, K) * len(allsamp)) // K]
    else:
        splitters = np.zeros(K - 1, dtype=np.int64)
    dest = np.searchsorted(splitters, uniq, side="right")
    counts = np.bincount(dest, minlength=K)
    recv, rcounts = alltoallv(comm, uniq, counts)
    block = np.unique(recv)
    base = comm.exscan(len(block), op=MPI.SUM)
    base = 0 if comm.Get_rank() == 0 or base is None else int(base)
    n = int(comm.allreduce(len(block), op=MPI.SUM))
    ans = base + np.searchsorted(block, recv)
    vdt = np.int32 if n < 2**31 - 1 else np.int64
    dense_u, _ = alltoallv(comm, ans.astype(vdt), rcounts)
    del ans, recv
    _mem("mi:dense_u")

    def lookup(a):  # in place when the dtype allows; blocks bound the int64 temporaries
        out = a if a.dtype == vdt and a.flags.owndata and a.flags.writeable else \
            np.empty(len(a), dtype=vdt)
        for i in range(0, len(a), _BLOCK):
            out[i:i + _BLOCK] = dense_u[np.searchsorted(uniq, a[i:i + _BLOCK])]
        return out

    s = lookup(src)
    del src
    d = lookup(dst)
    del dst
    return s, d, n, IdMap(comm, block, base, n)


def read_dense_edges(source, comm, weighted, undirected, weight_col, chunk_bytes, seed,
                     progress=None):
    """This rank's edges with global dense ids (collective): ``(src, dst, w, n, idmap)``.

    Reads the rank's share (:func:`read_local_edges`), adds reverse edges when
    ``undirected`` (self-loops once), maps original ids to dense ones (generator specs
    already have them), and refuses a graph with no edges on every rank.  ``progress``
    (rank 0's :class:`asapgraph.progress.Progress`, None elsewhere) gets a line per phase.
    """
    t0 = time.perf_counter()
    src, dst, w, n_spec = read_local_edges(source, comm, weighted, weight_col, chunk_bytes, seed)
    _mem("read")
    _phase(progress, f"read {len(src):,} edges on rank 0", t0)
    if undirected:
        nl = src != dst
        src, dst = np.concatenate([src, dst[nl]]), np.concatenate([dst, src[nl]])
        if w is not None:
            w = np.concatenate([w, w[nl]])
    if n_spec is None:
        held = [src, dst]
        del src, dst
        src, dst, n, idmap = map_ids(comm, held)
        _mem("map_ids")
        _phase(progress, f"mapped ids: {n:,} vertices", t0)
    else:
        n, idmap = int(n_spec), _SpecIds(int(n_spec))
    if n == 0:
        agree(comm, InputError(os.fspath(source) if isinstance(source, (str, os.PathLike))
                               else None, None, "no edges found"))  # as on one process
    return src, dst, w, n, idmap


class _SpecIds:
    """Identity id map of a generator spec (ids are already 0..n-1)."""

    def __init__(self, n):
        self.n = n

    def original(self, dense):
        return np.asarray(dense, dtype=np.int64)


# ----------------------------------------------------------------------------- local graph


class LocalGraph:
    """One rank's share: owned vertices, their out-edges, per-peer slots.

    Attributes
    ----------
    n, m : int
        Global vertex and edge counts.
    nloc : int
        Owned vertices; ``owned`` their dense ids (sorted), ``orig`` their original ids.
    indptr, tgt : arrays
        Local out-CSR; ``tgt < nloc`` is an owned vertex, ``tgt >= nloc`` an outgoing slot
        (int32 when ``nloc + nslots < 2**31``, else int64).
    coef, vcoef : float64 arrays
        Edge coefficient ``w / outw[u]`` per edge (weighted graphs; None otherwise) and
        ``1 / outdeg[u]`` per owned vertex (what every edge of ``u`` carries unweighted):
        an unweighted rank stores 4-8 bytes per edge instead of 16.
    dangling : uint8 array
        1 for owned vertices with no out-weight.
    out_peers : int64 array
        Ranks this rank sends to; ``out_off[j]:out_off[j+1]`` their slots (relative to nloc).
    in_peers : int64 array
        Ranks that send to this rank; ``in_maps[j]`` maps their slots to local indices.
    """

    def stats(self):
        """Layout counters of this rank (computed once: rmat:20 on 4 ranks ~0.1 s)."""
        if getattr(self, "_stats", None) is None:
            self._stats = self._layout_stats()
        return dict(self._stats)

    def _layout_stats(self):
        bnd = np.zeros(self.nloc, dtype=bool)
        for mp in self.in_maps:
            bnd[mp] = True
        for a in range(0, self.mloc, _BLOCK):  # sources of edges to remote slots
            e = a + np.flatnonzero(self.tgt[a:a + _BLOCK] >= self.nloc)
            bnd[np.searchsorted(self.indptr, e, side="right") - 1] = True
        return {"vertices": int(self.nloc), "edges": int(self.mloc),
                "boundary_vertices": int(bnd.sum()),
                "remote_slots": int(self.nslots),
                "peers": int(len(set(self.out_peers.tolist()) | set(self.in_peers.tolist()))),
                "out_peers": self.out_peers.tolist(), "in_peers": self.in_peers.tolist()}


def _alltoallv_into(comm, sendbuf, sendcounts, recvcounts, out):
    """Alltoallv of ``sendbuf`` (ordered by destination) straight into the view ``out``."""
    from asapgraph.comm.mpi import _mpitype

    K = comm.Get_size()
    sdis = np.zeros(K, dtype=np.int64)
    np.cumsum(sendcounts[:-1], out=sdis[1:])
    rdis = np.zeros(K, dtype=np.int64)
    np.cumsum(recvcounts[:-1], out=rdis[1:])
    t = _mpitype(sendbuf.dtype)
    comm.Alltoallv([np.ascontiguousarray(sendbuf), (sendcounts, sdis), t],
                   [out, (recvcounts, rdis), t])


def _shuffle(comm, part, arrays, chunk=_BLOCK):
    """Send every edge to the owner of its source in bounded rounds; collective.

    ``arrays`` (``[src, dst]`` or ``[src, dst, w]``, aligned) is emptied here.  Each
    round sorts at most ``chunk`` local edges by owner and receives straight into the
    preallocated output arrays, so the only full-size temporaries are the outputs.
    """
    MPI = mpi()
    K = comm.Get_size()
    src = arrays[0]
    m = len(src)
    counts = np.zeros(K, dtype=np.int64)
    for a in range(0, m, chunk):
        counts += np.bincount(part.owner(src[a:a + chunk]), minlength=K)
    rtot = np.empty(K, dtype=np.int64)
    comm.Alltoall([counts, MPI.INT64_T], [rtot, MPI.INT64_T])
    out = [np.empty(int(rtot.sum()), dtype=x.dtype) for x in arrays]
    rounds = int(comm.allreduce(-(-m // chunk), op=MPI.MAX))
    pos = 0
    rc = np.empty(K, dtype=np.int64)
    for r in range(rounds):
        a, b = min(m, r * chunk), min(m, (r + 1) * chunk)
        own = part.owner(src[a:b])
        order = np.argsort(own, kind="stable")
        c = np.bincount(own, minlength=K).astype(np.int64)
        del own
        comm.Alltoall([c, MPI.INT64_T], [rc, MPI.INT64_T])
        got = int(rc.sum())
        for x, o in zip(arrays, out):
            _alltoallv_into(comm, x[a:b][order], c, rc, o[pos:pos + got])
        pos += got
    arrays.clear()
    return out


def build_local(comm, part, edges, n, weighted, progress=None):
    """Shuffle edges to the owner of their source and build the :class:`LocalGraph`.

    ``edges`` is a list ``[src, dst, w]`` that is emptied here, so the arrays can be
    freed as soon as they are shuffled (peak memory).  Dense ids should be int32 when
    ``n < 2**31`` (the caller narrows them).  The out-CSR is built by a counting sort
    (:func:`asapgraph.kernels._graph.build_in_csr` with the roles of source and target swapped),
    targets and sources are rewritten in place chunk by chunk, so the full-size arrays
    alive at the peak are: local sources and targets (ids), the sorted ``tgt`` and (weighted)
    ``coef``.
    """
    t_bl = time.perf_counter()
    from asapgraph.kernels import _graph

    build_in_csr = _graph.build_in_csr

    MPI = mpi()
    K, me = comm.Get_size(), comm.Get_rank()
    src, dst, w = edges
    edges.clear()
    held = [src, dst] + ([w] if weighted else [])
    del src, dst, w
    got = _shuffle(comm, part, held)
    s, d = got[0], got[1]
    ww = got[2] if weighted else None
    del got
    _mem("bl:shuffled")
    _phase(progress, "shuffled the edges to their owners", t_bl)
    lg = LocalGraph()
    lg.n = n
    lg.mloc = mloc = len(s)
    lg.m = int(comm.allreduce(mloc, op=MPI.SUM))
    lg.owned = part.owned(me)
    lg.nloc = nloc = len(lg.owned)
    C = _BLOCK
    # local source index, in place (values < nloc fit the id dtype)
    for a in range(0, mloc, C):
        s[a:a + C] = part.local_index(me, s[a:a + C], lg.owned)
    # remote targets: one slot per (peer, vertex), ordered by peer then dense id
    ur = [np.unique(x[part.owner(x) != me]) for x in (d[a:a + C] for a in range(0, mloc, C))]
    ukey = np.unique(np.concatenate(ur)) if ur else d[:0]
    del ur
    upeer = part.owner(ukey)
    so = np.argsort(upeer, kind="stable")
    slot_vertex, slot_peer = ukey[so], upeer[so]
    slot_of = np.empty(len(ukey), dtype=np.int64)
    slot_of[so] = np.arange(len(ukey), dtype=np.int64)
    del so, upeer
    lg.nslots = nslots = len(slot_vertex)
    tdt = np.int32 if nloc + nslots < 2**31 - 1 else np.int64
    tgt_u = np.empty(mloc, dtype=tdt)  # targets in received order
    for a in range(0, mloc, C):
        x = d[a:a + C]
        loc = part.owner(x) == me
        t = np.empty(len(x), dtype=tdt)
        t[loc] = part.local_index(me, x[loc], lg.owned)
        t[~loc] = nloc + slot_of[np.searchsorted(ukey, x[~loc])]
        tgt_u[a:a + C] = t
        del x, loc, t
    del d, ukey, slot_of
    _mem("bl:slots")
    _phase(progress, "mapped boundary vertices to slots", t_bl)
    _trim_malloc()  # the blocks' temporaries: not resident under the CSR build (the peak)
    deg = np.bincount(s, minlength=nloc).astype(np.int64)
    coef_u = None
    if weighted:  # coefficient per edge before sorting: w / out-weight of its source
        outw = np.bincount(s, weights=ww, minlength=nloc)
        with np.errstate(divide="ignore", invalid="ignore"):
            for a in range(0, mloc, C):
                c = ww[a:a + C] / outw[s[a:a + C]]
                c[~np.isfinite(c)] = 0.0
                ww[a:a + C] = c
        coef_u = ww
        lg.dangling = (outw == 0).astype(np.uint8)
        del outw
    else:
        lg.dangling = (deg == 0).astype(np.uint8)
    del ww
    if s.dtype != tdt:  # the kernel wants one id dtype
        s = s.astype(tdt)
    lg.tgt = np.empty(mloc, dtype=tdt)
    lg.coef = np.empty(mloc, dtype=np.float64) if weighted else None
    # counting sort by local source (stable: the received order within a row)
    indptr, _, _ = build_in_csr(tgt_u, s, nloc + nslots, lg.tgt, weights=coef_u,
                                wout=lg.coef, threads=1)
    del tgt_u, s, coef_u
    lg.indptr = np.ascontiguousarray(indptr[:nloc + 1])
    del indptr
    # unweighted: no per-edge coefficient, every edge of u carries 1 / outdeg(u)
    lg.vcoef = 1.0 / np.maximum(deg, 1)
    del deg
    _mem("bl:csr")
    pc = np.bincount(slot_peer, minlength=K).astype(np.int64)
    del slot_peer
    lg.out_peers = np.flatnonzero(pc).astype(np.int64)
    lg.out_off = np.concatenate([[0], np.cumsum(pc[lg.out_peers])]).astype(np.int64)
    # tell each peer which of its vertices our slots stand for (once)
    recv, rc = alltoallv(comm, slot_vertex, pc)
    lg.in_peers = np.flatnonzero(rc).astype(np.int64)
    roff = np.concatenate([[0], np.cumsum(rc)])
    lg.in_maps = [np.ascontiguousarray(part.local_index(me, recv[roff[q]:roff[q + 1]], lg.owned),
                                       dtype=np.int64)
                  for q in lg.in_peers]
    return lg


def load_partitioned(source, comm, partition="range", weighted=False, undirected=False,
                     weight_col=2, chunk_bytes=1 << 21, seed=None, progress=None):
    """Read, map ids, partition and shuffle; collective over ``comm``.  ``progress``: rank
    0's :class:`asapgraph.progress.Progress` (None elsewhere), a line per phase.

    Returns
    -------
    lg : LocalGraph
    part : Partition
    idmap : object with ``original(dense) -> orig`` (collective)
    """
    MPI = mpi()
    K = comm.Get_size()
    _tune_malloc()
    t0 = time.perf_counter()
    src, dst, w, n, idmap = read_dense_edges(source, comm, weighted, undirected, weight_col,
                                             chunk_bytes, seed, progress)
    if weighted:  # PageRank's loader: the check of the single-process pagerank, on all ranks
        from asapgraph.options import negative_weights_error

        neg = comm.allreduce(int(w is not None and w.size > 0 and float(w.min()) < 0), op=MPI.MAX)
        if neg:
            agree(comm, negative_weights_error(source if isinstance(source, str) else None))
    if partition == "range":
        part = range_partition(comm, src, n)
        _mem("range_bounds")
    else:
        part = Partition(partition, K, n)
    if n < 2**31 - 1:  # dense ids fit in int32: halve the shuffled volume
        src, dst = src.astype(np.int32, copy=False), dst.astype(np.int32, copy=False)
    edges = [src, dst, w]
    del src, dst, w
    _phase(progress, f"partitioned ({part.kind}) over {K} ranks", t0)
    lg = build_local(comm, part, edges, n, weighted, progress)
    _trim_malloc()
    _mem("build_local")
    _phase(progress, f"built the local graphs: rank 0 holds {lg.nloc:,} vertices, "
                     f"{lg.mloc:,} edges", t0)
    lg.orig = idmap.original(lg.owned)
    _mem("orig")
    comm.Barrier()
    del MPI
    return lg, part, idmap
