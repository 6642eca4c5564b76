"""A rank's share of the input edges, read without any rank holding the whole list.

Rationale
---------
Step 1 of the partitioned loader (:mod:`asapgraph.partition.loader`): every rank reads
only its own share, with original ids.

* An uncompressed text file is split into K byte ranges; a line belongs to the rank
  whose range contains its first byte (so ranges are aligned to line starts without
  communication), and each range is parsed by the compiled parser of
  :mod:`asapgraph.graph.io` in sub-ranges (lines own their bytes, so they compose).
* A compressed file cannot be split: rank 0 decompresses it and streams bounded chunks
  (``chunk_bytes``, cut at line ends) round-robin to the ranks, each chunk carrying the
  number of the line it starts at (so errors name the right line).  A text file that
  rank 0 can read and some other rank cannot (a file on rank 0's host only) is streamed
  from rank 0 the same way; a binary one is refused in one line.
* A binary ``.asg`` graph or an ``.npy`` edge array is memory-mapped and sliced by edge.
* A generator spec (``rmat:S``, ``er:N:M``) is produced per rank with the counter-based
  ``*_slice`` generators: rank r makes edges ``[r m/K, (r+1) m/K)``.
* A Matrix Market file is read whole by rank 0 with the single-process reader (its checks
  and messages, its isolated vertices, symmetric entries mirrored) and its edges are
  scattered, ``m / K`` consecutive ones to each rank, with the file's vertex ids
  (:func:`scatter_whole_file`, called by the loader before this step; Parquet too).
* :class:`DenseEdges` (edge arrays in memory or memory-mapped, ids already dense, the
  vertex count given, so vertices without edges keep their place, as in a generator
  spec): rank r takes edges ``[r m/K, (r+1) m/K)``.  The networkx backend's runs on
  ranks use it.

Ids are narrowed to int32 whenever they fit (half the memory held).  Bad input found by
any rank is agreed collectively (:func:`asapgraph.comm.mpi.agree`), so every rank raises
the same one-line error.
"""
from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass

import numpy as np

from asapgraph.errors import InputError
from asapgraph.comm.mpi import TAG_CHUNK, TAG_CHUNK_HDR, agree, mpi

__all__ = ["read_local_edges", "DenseEdges", "scatter_labelled", "scatter_graph",
           "scatter_whole_file"]


@dataclass
class DenseEdges:
    """Edges ``src[k] -> dst[k]`` over dense ids ``0..n-1`` (every rank holds the same
    arrays, or memory maps of the same files), optional float64 ``weights``; ``name`` is
    what messages call the input.  ``local``: the arrays are this rank's share of the
    edges already (:func:`scatter_labelled`, :func:`scatter_graph`), not the whole list.
    ``ids``: the original ids of the dense ones (every rank; None: the dense ids)."""

    src: object
    dst: object
    n: int
    weights: object = None
    name: str = "<in-memory graph>"
    local: bool = False
    ids: object = None

    def __fspath__(self):
        return self.name

    def __str__(self):  # progress lines name the input
        return self.name


def agree_konect(source, comm, undirected):
    """A KONECT edge list whose first line says ``% sym`` without ``undirected``, or
    ``% bip``: refused on every rank as one process refuses it
    (:func:`asapgraph.graph.io._readers.konect_refusal`; collective).  Rank 0 looks, at
    the file or at standard input's head (left for its reader): ``-`` is rank 0's alone,
    and the Python API reaches the ranks without the command line's check."""
    err = None
    if comm.Get_rank() == 0 and isinstance(source, (str, os.PathLike)):
        path = source if source == "-" else os.fspath(source)
        try:
            from asapgraph.graph.io._readers import detect_format, konect_refusal

            if path == "-" or (os.path.isfile(path) and detect_format(path) == "text"):
                err = konect_refusal(path, undirected)
        except OSError:   # (unreadable: its reader says so)
            err = None
    agree(comm, err)


def scatter_labelled(path, comm, weighted=False, weight_col=None, header=False,
                     undirected=False):
    """``--labels`` on K ranks (collective): rank 0 reads the text edge list whose vertices
    are named by tokens (:func:`asapgraph.graph.io.labelled.read_labelled`), numbers the
    names as one process does (sorted; :func:`asapgraph.graph.labels.factorize_pair`) and
    scatters ``m / K`` consecutive edges to each rank.  Returns ``(DenseEdges (local), the
    names of the dense ids on rank 0, None elsewhere)``.  Rank 0 holds the whole edge list
    once (the names need one global numbering); bad input is agreed by every rank.
    ``header``: the file's header line is skipped (as on one process); ``undirected``
    only decides whether a KONECT ``% sym`` first line is refused (:func:`agree_konect`)."""
    from asapgraph.graph.io._readers import _weight_col
    from asapgraph.graph.io._text import display_name
    from asapgraph.graph.io.labelled import read_labelled
    from asapgraph.graph.labels import factorize_pair

    agree_konect(path, comm, undirected)
    err, labels, meta, s, d, w = None, None, None, None, None, None
    if comm.Get_rank() == 0:
        try:
            s, d, w = read_labelled(path, weight_col=_weight_col(weighted, weight_col),
                                    header=bool(header))
            labels, s, d = factorize_pair(s, d)
            meta = (int(s.shape[0]), int(labels.shape[0]), w is not None)
        except Exception as e:  # noqa: BLE001 - agreed below
            err = e
    agree(comm, err)
    src, dst, wl, n = _scatter_edges(comm, meta, s, d, w)
    del s, d, w
    name = display_name(os.fspath(path))
    return DenseEdges(src, dst, n, wl, name=name, local=True), labels


def _scatter_edges(comm, meta, s, d, w):
    """Rank 0's edge arrays ``s, d, w`` (``meta = (m, n, has weights)`` there, None
    elsewhere), ``m / K`` consecutive edges to each rank (collective): ``(src, dst, w,
    n)``, ids int32 when they fit."""
    MPI = mpi()
    K, me = comm.Get_size(), comm.Get_rank()
    m, n, has_w = comm.bcast(meta, root=0)
    dt = np.int32 if n < 2**31 - 1 else np.int64
    counts = np.array([m * (r + 1) // K - m * r // K for r in range(K)], dtype=np.int64)
    displs = np.concatenate([[0], np.cumsum(counts)[:-1]])
    mine = int(counts[me])

    def scatter(a, dtype, mtype):
        out = np.empty(mine, dtype=dtype)
        send = [np.ascontiguousarray(a, dtype=dtype), (counts, displs), mtype] if me == 0 \
            else None
        comm.Scatterv(send, [out, mtype], root=0)
        return out

    itype = MPI.INT32_T if dt == np.int32 else MPI.INT64_T
    src = scatter(s, dt, itype)
    dst = scatter(d, dt, itype)
    wl = scatter(w, np.float64, MPI.DOUBLE) if has_w else None
    return src, dst, wl, n


def scatter_graph(g, comm, name):
    """A graph rank 0 holds (``g``, None elsewhere) on K ranks (collective): its edges,
    ``m / K`` consecutive ones to each rank, and its original ids (every rank: ``n``
    int64) as a local :class:`DenseEdges`, so vertices without edges keep their place."""
    meta, s, d, w = None, None, None, None
    if comm.Get_rank() == 0:
        s, d, w = g.edges()
        meta = (int(g.m), int(g.n), w is not None)
    src, dst, wl, n = _scatter_edges(comm, meta, s, d, w)
    del s, d, w
    has_ids = comm.bcast(None if comm.Get_rank() else g.ids is not None, root=0)
    ids = None
    if has_ids:
        ids = (np.ascontiguousarray(g.ids, dtype=np.int64) if comm.Get_rank() == 0
               else np.empty(n, dtype=np.int64))
        comm.Bcast(ids, root=0)
    return DenseEdges(src, dst, n, wl, name=name, local=True, ids=ids)


def scatter_whole_file(source, comm, weighted, undirected, weight_col, header=False):
    """A Matrix Market or Parquet file on K ranks (collective), or None when ``source`` is
    neither (rank 0 decides; an unreadable path is left to the ranks' reading, which names
    it).  Rank 0 reads it whole with the single-process reader -- its checks and lines,
    its isolated vertices, symmetric entries mirrored, ``undirected`` applied or refused
    as there -- and scatters it (:func:`scatter_graph`): only rank 0 needs the file, and
    it holds the whole graph once.  ``weight_col``: 0-based, as the loader's.  Before,
    ranks refused Matrix Market input ("not split across ranks") and Parquet ("binary
    data, not a text edge list") that one process read."""
    from asapgraph.graph.generators import is_spec
    from asapgraph.graph.io._text import display_name

    if isinstance(source, DenseEdges) or not isinstance(source, (str, os.PathLike)):
        return None  # (DenseEdges is path-like: its name)
    path = os.fspath(source)
    if path == "-" or (is_spec(path) and not os.path.exists(path)):
        return None
    whole = False
    if comm.Get_rank() == 0:
        try:
            from asapgraph.graph.io._readers import whole_file_format

            whole = os.path.isfile(path) and whole_file_format(path) is not None
        except Exception:  # noqa: BLE001 - the ranks' reading reports it
            whole = False
    if not comm.bcast(whole, root=0):
        return None
    err, g = None, None
    if comm.Get_rank() == 0:
        from asapgraph.graph.io import load_graph

        try:
            g = load_graph(path, weighted=weighted, undirected=undirected,
                           weight_col=None if weight_col is None else int(weight_col) + 1,
                           header=header)   # (refused: neither has a header line)
        except Exception as e:  # noqa: BLE001 - agreed: one line from rank 0
            err = e
    agree(comm, err)
    return scatter_graph(g, comm, display_name(path))


def _compression(path):
    """The file's compression by its magic bytes, as the single process decides it
    (:func:`asapgraph.graph.io._text.compression_of`: a gzip file named ``.txt`` is read
    as gzip, a plain file named ``.gz`` as text); None: plain or unreadable (the open
    that follows reports why)."""
    from asapgraph.graph.io._text import compression_of

    try:
        with open(path, "rb") as f:
            return compression_of(f.read(16))
    except OSError:
        return None


_NUM = re.compile(rb"[ \t,;]+")


# ----------------------------------------------------------------------------- parsing


def _parse_text(buf, path, line0, weighted, weight_col=2, header=False):
    """Parse a buffer of whole lines (bytes or a uint8 array) into ``(src, dst, w)``.

    Uses the compiled parser of :mod:`asapgraph.graph.io` (same rules and messages as the
    single-process reader) straight on ``buf``, without copying it, into int32 ids
    unless an id needs int64; without it, :func:`_parse_text_numpy`.  ``header``: the
    file's header line is in ``buf`` (only blank and comment lines before it): it is
    skipped (turned into a blank line; a copy of ``buf``).
    """
    if header:
        from asapgraph.graph.io._text import blank_header, display_name

        buf = blank_header(bytes(buf), True, display_name(path), line0)[0]
    try:
        from asapgraph.kernels import _parse as iop
        from asapgraph.graph.io._text import display_name, error_message
    except ImportError:  # pragma: no cover - io without its compiled parser
        return _parse_text_numpy(bytes(buf), path, line0, weighted, weight_col)
    if line0 == 1 and bytes(buf[:3]) == b"\xef\xbb\xbf":  # UTF-8 byte order mark
        buf = b"   " + bytes(buf[3:])
    acc = iop.EdgeAccumulator(1, 2, (weight_col + 1) if weighted else 0, True)
    if len(buf) and acc.feed(buf, True) < 0:
        line, msg = error_message(acc.error, line0)
        raise InputError(display_name(path), line, msg)
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


def read_local_edges(source, comm, weighted=False, weight_col=2, chunk_bytes=1 << 21, seed=None,
                     info=None, header=False):
    """This rank's share of the input edges.

    ``header``: a text edge list's first line that is neither blank nor a comment is a
    header, skipped (by the byte range that holds it, or by rank 0 before it deals the
    chunks of a stream); refused for every other input, as on one process.

    ``info`` (a dict, optional) gets ``"max_id"``, the largest original id of this rank's
    edges (-1 without edges), when the parser found it on the way (uncompressed text
    split by byte ranges: no pass over the ids for it later).

    Returns
    -------
    src, dst : int64 arrays (original ids)
    w : float64 array or None
    n_spec : int or None
        Vertex count of a generator spec or a binary graph (ids already dense: the
        binary graph's original ids in ``info["idmap"]``), else None.
    """
    from asapgraph.graph import generators as gen

    K, me = comm.Get_size(), comm.Get_rank()
    chunk_bytes = int(os.environ.get("ASAPGRAPH_DIST_CHUNK_BYTES", chunk_bytes))  # tests
    err = None
    out = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0) if weighted else None)
    if isinstance(source, DenseEdges) and source.local:  # this rank's share already
        dt = np.int32 if source.n < 2**31 - 1 else np.int64
        w = None
        if weighted:
            w = (np.ones(len(source.src)) if source.weights is None
                 else np.asarray(source.weights, dtype=np.float64))
        if source.ids is not None and info is not None:
            from asapgraph.partition.idmap import SpecIds

            info["idmap"] = SpecIds(int(source.n), source.ids)
        return (np.asarray(source.src, dtype=dt), np.asarray(source.dst, dtype=dt), w,
                int(source.n))
    if isinstance(source, DenseEdges):
        m = len(source.src)
        lo, hi = m * me // K, m * (me + 1) // K
        dt = np.int32 if source.n < 2**31 - 1 else np.int64
        src = np.ascontiguousarray(source.src[lo:hi], dtype=dt)
        dst = np.ascontiguousarray(source.dst[lo:hi], dtype=dt)
        w = None
        if weighted:
            w = (np.ones(hi - lo) if source.weights is None
                 else np.array(source.weights[lo:hi], dtype=np.float64))
        return src, dst, w, int(source.n)
    if isinstance(source, str) and gen.is_spec(source) and not os.path.exists(source):
        if header:
            from asapgraph.graph.io._readers import header_refusal

            agree(comm, header_refusal(source, "spec"))
        try:
            _, p = gen.parse_spec(source)
        except Exception as e:  # noqa: BLE001
            agree(comm, e)
        agree(comm, None)
        m = p["m"]
        # one thread per rank (ranks share the cores); ids as from_spec gives them, int32
        # when they fit, written straight into the outputs (no int64 chunks to copy)
        src, dst, _ = gen.spec_slice(source, m * me // K, m * (me + 1) // K, seed, threads=1)
        w = np.ones(len(src)) if weighted else None
        return src, dst, w, p["n"]
    path = os.fspath(source)
    if path == "-":  # standard input: rank 0 reads it and deals its lines
        return (*_stream_from_rank0(path, comm, weighted, weight_col, chunk_bytes, header),
                None)
    fmt, err = "text", None  # a missing/unreadable file: the reader's message, as on one process
    if K > 1 and _only_rank0_sees(comm, path):  # rank 0 reads it for everyone
        if me == 0:
            try:
                from asapgraph.graph.io import detect_format

                fmt = detect_format(path)
                if fmt != "text":
                    err = InputError(path, None, "only rank 0 can read this file: a binary "
                                     "or Matrix Market graph must be at the same path on "
                                     "every rank (a text edge list is streamed from rank 0)")
            except Exception as e:  # noqa: BLE001
                err = e
        agree(comm, err)
        return (*_stream_from_rank0(path, comm, weighted, weight_col, chunk_bytes, header),
                None)
    try:
        from asapgraph.graph.io import detect_format

        fmt = detect_format(path)
        if header and fmt != "text":
            from asapgraph.graph.io._readers import header_refusal

            err = header_refusal(path, fmt)
    except Exception as e:  # noqa: BLE001
        err = e
    agree(comm, err)
    if fmt == "mtx":  # (the loader scattered rank 0's Matrix Market file before this step:
        # :func:`scatter_whole_file`; here only when rank 0 saw another file at the path)
        agree(comm, InputError(path, None, "Matrix Market input is not split across ranks; "
                                           "convert it first (asapgraph convert IN OUT.asg)"))
    if fmt in ("binary", "npy"):
        out, err = None, None
        try:
            out = _read_array_slice(path, fmt, K, me, weighted, weight_col, info)
        except Exception as e:  # noqa: BLE001
            err = e
        agree(comm, err)
        return out
    if comm.bcast(_compression(path) if me == 0 else None, root=0) is not None:
        # compressed (magic bytes, whatever the name): rank 0 decompresses and streams
        return (*_stream_from_rank0(path, comm, weighted, weight_col, chunk_bytes, header),
                None)
    try:
        size = os.path.getsize(path)
        start, end = size * me // K, size * (me + 1) // K
        try:
            from asapgraph.graph.io import parse_byte_range
        except ImportError:  # pragma: no cover
            parse_byte_range = None
        if parse_byte_range is not None:
            parts = []
            # one range per rank: the parser's arrays grow in place (no parts to join);
            # sub-ranges compose (lines own their bytes), which the tests exercise
            step = max(1, end - start)
            if "ASAPGRAPH_DIST_CHUNK_BYTES" in os.environ:
                step = max(1 << 16, 8 * int(chunk_bytes))
            mx = -1
            for a in range(start, end, step):
                el = parse_byte_range(path, a, min(end, a + step), weighted=weighted,
                                      weight_col=(weight_col + 1) if weighted else None,
                                      id32=True, header=header)
                mx = None if mx is None or el.max_id is None else max(mx, el.max_id)
                parts.append(_narrow((el.src, el.dst, None if not weighted else el.weights),
                                     el.max_id))
                del el
            out = _concat_parts(parts, weighted)
            del parts
            if info is not None and mx is not None:
                info["max_id"] = mx
            data = None
        else:
            data, s = _read_byte_range(path, start, end)
            if header:   # (the range that holds the header line skips it)
                from asapgraph.graph.io._readers import header_offset

                at = header_offset(path)
                header = at is not None and s <= at < s + len(data)
    except Exception as e:  # noqa: BLE001
        err, data = e, None
    try:
        if data is not None:
            try:
                out = _narrow(_parse_text(data, path, 1, weighted, weight_col, header))
            except InputError:  # again, numbered from the real file offset (the line
                # and the message: the header hint belongs to line 1 of the file only)
                if s == 0:
                    raise
                _parse_text(data, path, _count_newlines(path, s) + 1, weighted, weight_col,
                            header)
                raise
    except Exception as e:  # noqa: BLE001
        err = e
    agree(comm, err)
    return (*out, None)


def _read_array_slice(path, fmt, K, me, weighted, weight_col, info=None):
    """This rank's slice of the edges of a binary ``.asg`` graph or an ``.npy`` edge array:
    ``(src, dst, w, n_spec)``.

    Both are memory-mapped, so a rank reads (pages in) only its own ``m/K`` edges.  An
    ``.npy`` array's edges come back with original ids (``n_spec`` None), exactly as the
    text path returns them.  A binary graph already has dense ids ``0..n-1``: its edges
    come back with them and ``n_spec = n``, so vertices without edges (a Matrix Market
    file's isolated vertices) keep their place, as in one process, and no id map is
    built; ``info["idmap"]`` gets the file's original ids
    (:class:`~asapgraph.partition.idmap.SpecIds`).
    """
    if fmt == "npy":
        try:
            a = np.load(path, mmap_mode="r")
        except Exception as e:  # noqa: BLE001
            raise InputError(path, None, f"not a valid .npy array: {e}") from None
        from asapgraph.graph.io._formats import check_npy_shape, npy_edges

        wc = (2 if weight_col is None else int(weight_col)) if weighted else None
        check_npy_shape(path, a, wc)  # the one-process checks and lines
        m = a.shape[0]
        return (*_narrow(npy_edges(path, a, m * me // K, m * (me + 1) // K, wc)), None)
    from asapgraph.graph.io import load_binary
    from asapgraph.graph.io._readers import refuse_weight_col
    from asapgraph.partition.idmap import SpecIds

    if weighted and weight_col is not None:  # (0-based here)
        refuse_weight_col(path, "binary graph", int(weight_col) + 1)
    g = load_binary(path, mmap=True)
    lo, hi = g.m * me // K, g.m * (me + 1) // K
    dt = np.int32 if g.n < 2**31 - 1 else np.int64
    src = np.asarray(g.indices[lo:hi], dtype=dt)
    # in-CSR: the row of edge k is its destination
    dst = (np.searchsorted(g.indptr, np.arange(lo, hi, dtype=np.int64), side="right")
           - 1).astype(dt, copy=False)
    w = None
    if weighted:
        w = np.ones(hi - lo) if g.weights is None else np.array(g.weights[lo:hi], dtype=np.float64)
        from asapgraph.graph.io._formats import check_finite_weights

        check_finite_weights(path, w)
    if info is not None:
        info["idmap"] = SpecIds(g.n, g.ids)
    return src, dst, w, int(g.n)


def _only_rank0_sees(comm, path):
    """True when rank 0 can read ``path`` and some other rank cannot (collective)."""
    sees = comm.allgather(bool(os.path.isfile(path) and os.access(path, os.R_OK)))
    return sees[0] and not all(sees)


def _stream_from_rank0(path, comm, weighted, weight_col, chunk_bytes, header=False):
    """Rank 0 reads, decompresses (by the file's magic bytes, as one process does) and
    streams line-aligned chunks round-robin; all ranks parse theirs.

    The error raised is the first in the file's order, as one process reports it: the
    chunks are dealt round-robin, so the lowest failing rank (:func:`agree`) may hold a
    later chunk than another failing rank (``--np 2``: rank 0's third chunk before rank
    1's second).  A truncated stream is refused as such unless a line before the cut is
    bad (then that line, as one process reports it whatever block the cut lies in: the
    lines the failed read lost are read again, :func:`before_damage`); corrupt data is
    refused as such before any line's error, as before.  A NUL byte in the first 64 KiB
    is refused before any line, as one process refuses it.  ``header``: rank 0 turns the
    header line into a blank line in the chunk that holds it, before dealing it."""
    from asapgraph.graph.io._text import (_DECOMP_ERRORS, BINARY_HEAD, MTX_IN_STREAM,
                                          before_damage, blank_header, damage_error,
                                          display_name, has_comment_line, nul_refusal,
                                          open_binary)

    MPI = mpi()
    K, me = comm.Get_size(), comm.Get_rank()
    parts, err, at = [], None, None   # at: where err lies in the file (a line)
    hdr = np.zeros(2, dtype=np.int64)
    comments = False   # comment lines dealt before the header line's chunk
    if me == 0:
        line = 1
        i = 0
        kind = None
        try:  # by magic bytes, as one process opens it
            f, kind, _ = open_binary(path)
        except InputError as e:
            f, err, at = None, e, 0
        rest = b""
        off = 0   # decompressed bytes read
        damage = None
        while f is not None:
            try:
                blk = f.read(chunk_bytes if line > 1 or rest else max(chunk_bytes, BINARY_HEAD))
            except (OSError, *_DECOMP_ERRORS) as exc:
                damage = damage_error(path, kind, exc)
                if not damage.truncated:  # corrupt: refused as such (see damage_error)
                    err, at, damage = damage, 0, None
                    blk = b""
                else:  # cut short: the lines before the cut first (the failed read lost
                    # them), a bad one is the first problem in the file's order
                    blk = before_damage(path, off)
                    blk = blk[:blk.rfind(b"\n") + 1]
            off += len(blk)
            if line == 1 and not rest and err is None:  # the head, as one process reads it
                bad = nul_refusal(display_name(path), blk)
                if bad is None and path == "-" and blk[:14] == b"%%MatrixMarket":
                    bad = InputError(display_name(path), 1, MTX_IN_STREAM)  # (a file's is
                    # recognised before: detect_format)
                if bad is not None:
                    err, at, blk = bad, -1, b""
            data = rest + blk
            if blk or damage is not None:  # (damaged: the cut line after its whole lines)
                cut = data.rfind(b"\n") + 1
                if cut == 0 and damage is None:
                    rest = data
                    continue
                data, rest = data[:cut], data[cut:]
            else:
                rest = b""
            if data and header and err is None:   # (whole lines: the header ends in data)
                try:
                    data, found = blank_header(data, True, path, line, comments=comments)
                    header = not found
                    comments = comments or (header and has_comment_line(data, len(data)))
                except InputError as e:
                    err, at, header = e, e.line, False
            if data:
                dest = i % K
                if dest == 0:
                    if err is None:
                        try:
                            parts.append(_narrow(_parse_text(data, path, line, weighted,
                                                             weight_col)))
                        except InputError as e:
                            err, at = e, (line if e.line is None else e.line)
                else:
                    hdr[0], hdr[1] = len(data), line
                    comm.Send([hdr, MPI.INT64_T], dest=dest, tag=TAG_CHUNK_HDR)
                    comm.Send([np.frombuffer(data, dtype=np.uint8), MPI.UINT8_T], dest=dest,
                              tag=TAG_CHUNK)
                line += data.count(b"\n")
                i += 1
            if damage is not None:
                if err is None:  # at its line: a later rank's earlier bad line goes first
                    err, at = damage, line
                break
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
                    err, at = e, (int(hdr[1]) if e.line is None else e.line)
    where = comm.allgather(None if err is None else (at, me))
    agree(comm, err if err is not None and (at, me) == min(w for w in where if w) else None)
    return _concat_parts(parts, weighted)


def _narrow(part, max_id=None):
    """``(src, dst, w)`` with original ids as int32 when they fit (halves what is held).

    ``max_id``: the largest id when the parser found it (its ids are never negative), so
    no pass over the ids finds it again."""
    s, d, w = part
    s, d = np.asarray(s), np.asarray(d)
    if max_id is not None:
        fit = len(s) and max_id < 2**31 - 1
    else:
        fit = len(s) and max(int(s.max()), int(d.max())) < 2**31 - 1 and \
            min(int(s.min()), int(d.min())) >= 0
    if fit:
        s, d = s.astype(np.int32, copy=False), d.astype(np.int32, copy=False)
    else:
        s, d = s.astype(np.int64, copy=False), d.astype(np.int64, copy=False)
    return s, d, None if w is None else np.asarray(w, dtype=np.float64)


def _concat_parts(parts, weighted):
    """Concatenate parsed parts (int32 ids if every part has them); frees ``parts``."""
    if not parts:
        return np.zeros(0, np.int32), np.zeros(0, np.int32), (np.zeros(0) if weighted else None)
    if len(parts) == 1:  # nothing to join
        s, d, w = parts.pop()
        return s, d, (w if weighted else None)
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

