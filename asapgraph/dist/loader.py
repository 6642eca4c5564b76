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

import numpy as np

from ..errors import InputError
from .comm import TAG_CHUNK, TAG_CHUNK_HDR, agree, alltoallv, allgatherv, mpi
from .partition import Partition, range_bounds

__all__ = ["load_partitioned", "LocalGraph", "read_local_edges"]

_COMPRESSED = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
_NUM = re.compile(rb"[ \t,;]+")


# ----------------------------------------------------------------------------- parsing


def _parse_text(buf, path, line0, weighted, weight_col=2):
    """Parse a text buffer of whole lines into ``(src, dst, w)``.

    Uses the compiled parser of :mod:`asapgraph.io` (same rules and messages as the
    single-process reader) when available, else :func:`_parse_text_numpy`.
    """
    try:
        from ..io import _parse as iop
        from ..io._text import feed_blocks
    except ImportError:  # pragma: no cover - io without its compiled parser
        return _parse_text_numpy(buf, path, line0, weighted, weight_col)
    acc = iop.EdgeAccumulator(1, 2, (weight_col + 1) if weighted else 0, False)
    for _ in feed_blocks(io.BytesIO(buf), acc, path, None, max(len(buf) + 1, 1 << 12),
                         line_offset=line0 - 1):
        pass
    s, d, w = acc.take()
    return (np.asarray(s, dtype=np.int64), np.asarray(d, dtype=np.int64),
            None if not weighted else np.asarray(w, dtype=np.float64))


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
    from .. import generators as gen

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
        if kind == "rmat":
            src, dst = gen.rmat_slice(p["scale"], p["edge_factor"], s, lo, hi)
        else:
            src, dst = gen.erdos_renyi_slice(p["n"], m, s, lo, hi)
        w = np.ones(len(src)) if weighted else None
        return src, dst, w, p["n"]
    path = os.fspath(source)
    if not os.path.exists(path):
        agree(comm, InputError(path, None, "no such file"))
    ext = os.path.splitext(path)[1].lower()
    if ext in _COMPRESSED:
        return (*_read_compressed(path, comm, weighted, weight_col, chunk_bytes), None)
    try:
        size = os.path.getsize(path)
        start, end = size * me // K, size * (me + 1) // K
        try:
            from ..io import parse_byte_range
        except ImportError:  # pragma: no cover
            parse_byte_range = None
        if parse_byte_range is not None:
            el = parse_byte_range(path, start, end, weighted=weighted,
                                  weight_col=(weight_col + 1) if weighted else None)
            out = (np.asarray(el.src, dtype=np.int64), np.asarray(el.dst, dtype=np.int64),
                   None if not weighted else np.asarray(el.weights, dtype=np.float64))
            data = None
        else:
            data, s = _read_byte_range(path, start, end)
    except Exception as e:  # noqa: BLE001
        err, data = e, None
    try:
        if data is not None:
            try:
                out = _parse_text(data, path, 1, weighted, weight_col)
            except InputError as e:  # renumber the line from the real file offset
                line0 = _count_newlines(path, s) + 1
                raise InputError(path, None if e.line is None else e.line - 1 + line0,
                                 e.message) from None
    except Exception as e:  # noqa: BLE001
        err = e
    agree(comm, err)
    return (*out, None)


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
                            parts.append(_parse_text(data, path, line, weighted, weight_col))
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
                    parts.append(_parse_text(buf.tobytes(), path, int(hdr[1]), weighted, weight_col))
                except InputError as e:
                    err = e
    agree(comm, err)
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), (np.zeros(0) if weighted else None)
    src = np.concatenate([p[0] for p in parts])
    dst = np.concatenate([p[1] for p in parts])
    w = np.concatenate([p[2] for p in parts]) if weighted else None
    return src, dst, w


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
        order = np.argsort(dense, kind="stable")
        ds = dense[order]
        dest = np.searchsorted(self.bases, ds, side="right") - 1
        counts = np.bincount(dest, minlength=self.comm.Get_size())
        q, qc = alltoallv(self.comm, ds, counts)
        ans = self.block[q - self.base]
        back, _ = alltoallv(self.comm, ans, qc)
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
    dense_u, _ = alltoallv(comm, ans.astype(np.int64), rcounts)
    vdt = np.int32 if n < 2**31 - 1 else np.int64
    dense_u = dense_u.astype(vdt)

    def lookup(a):  # in blocks: bounded int64 temporaries
        out = np.empty(len(a), dtype=vdt)
        for i in range(0, len(a), 1 << 20):
            out[i:i + (1 << 20)] = dense_u[np.searchsorted(uniq, a[i:i + (1 << 20)])]
        return out

    s = lookup(src)
    del src
    d = lookup(dst)
    del dst
    return s, d, n, IdMap(comm, block, base, n)


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
    indptr, tgt, coef : arrays
        Local out-CSR; ``tgt < nloc`` is an owned vertex, ``tgt >= nloc`` an outgoing slot.
    dangling : uint8 array
        1 for owned vertices with no out-weight.
    out_peers : int64 array
        Ranks this rank sends to; ``out_off[j]:out_off[j+1]`` their slots (relative to nloc).
    in_peers : int64 array
        Ranks that send to this rank; ``in_maps[j]`` maps their slots to local indices.
    """

    def stats(self):
        bnd = np.zeros(self.nloc, dtype=bool)
        for mp in self.in_maps:
            bnd[mp] = True
        rem = self.tgt >= self.nloc
        if rem.any():
            src_of = np.repeat(np.arange(self.nloc), np.diff(self.indptr))
            bnd[src_of[rem]] = True
        return {"vertices": int(self.nloc), "edges": int(self.mloc),
                "boundary_vertices": int(bnd.sum()),
                "remote_slots": int(self.nslots),
                "peers": int(len(set(self.out_peers.tolist()) | set(self.in_peers.tolist()))),
                "out_peers": self.out_peers.tolist(), "in_peers": self.in_peers.tolist()}


def build_local(comm, part, edges, n, weighted):
    """Shuffle edges to the owner of their source and build the :class:`LocalGraph`.

    ``edges`` is a list ``[src, dst, w]`` that is emptied here, so the arrays can be
    freed as soon as they are shuffled (peak memory).
    """
    MPI = mpi()
    K, me = comm.Get_size(), comm.Get_rank()
    src, dst, w = edges
    edges.clear()
    own = part.owner(src)
    order = np.argsort(own, kind="stable")
    counts = np.bincount(own, minlength=K)
    del own
    s, _ = alltoallv(comm, src[order], counts)
    del src
    d, _ = alltoallv(comm, dst[order], counts)
    del dst
    ww = alltoallv(comm, w[order], counts)[0] if weighted else None
    del order, w
    lg = LocalGraph()
    lg.n = n
    lg.m = int(comm.allreduce(len(s), op=MPI.SUM))
    lg.owned = part.owned(me)
    lg.nloc = nloc = len(lg.owned)
    lg.mloc = len(s)
    su = part.local_index(me, s, lg.owned)
    del s
    o = np.argsort(su, kind="stable")
    su, d = su[o], d[o]
    ww = None if ww is None else ww[o]
    del o
    deg = np.bincount(su, minlength=nloc).astype(np.int64)
    lg.indptr = np.zeros(nloc + 1, dtype=np.int64)
    np.cumsum(deg, out=lg.indptr[1:])
    if weighted:
        outw = np.bincount(su, weights=ww, minlength=nloc)
        with np.errstate(divide="ignore", invalid="ignore"):
            lg.coef = ww / outw[su]
        lg.dangling = (outw == 0).astype(np.uint8)
        lg.coef[~np.isfinite(lg.coef)] = 0.0
    else:
        lg.coef = (1.0 / np.maximum(deg, 1))[su]
        lg.dangling = (deg == 0).astype(np.uint8)
    lg.coef = np.ascontiguousarray(lg.coef, dtype=np.float64)
    del su, ww
    downer = part.owner(d)
    tgt = np.empty(len(d), dtype=np.int64)
    loc = downer == me
    tgt[loc] = part.local_index(me, d[loc], lg.owned)
    rem = np.flatnonzero(~loc)
    del loc
    # remote targets: one slot per (peer, vertex), ordered by peer then dense id
    key = downer[rem].astype(np.int64) * np.int64(n) + d[rem]
    del downer, d
    ukey, inv = np.unique(key, return_inverse=True)
    del key
    tgt[rem] = nloc + inv.reshape(-1)
    del inv, rem
    lg.tgt = tgt
    slot_peer = (ukey // n).astype(np.int64)
    slot_vertex = (ukey % n).astype(np.int64)
    del ukey
    lg.nslots = len(slot_vertex)
    pc = np.bincount(slot_peer, minlength=K).astype(np.int64)
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
                     weight_col=2, chunk_bytes=1 << 21, seed=None):
    """Read, map ids, partition and shuffle; collective over ``comm``.

    Returns
    -------
    lg : LocalGraph
    part : Partition
    idmap : object with ``original(dense) -> orig`` (collective)
    """
    MPI = mpi()
    K = comm.Get_size()
    src, dst, w, n_spec = read_local_edges(source, comm, weighted, weight_col, chunk_bytes, seed)
    if undirected:
        nl = src != dst
        src, dst = np.concatenate([src, dst[nl]]), np.concatenate([dst, src[nl]])
        if w is not None:
            w = np.concatenate([w, w[nl]])
    if n_spec is None:
        held = [src, dst]
        del src, dst
        src, dst, n, idmap = map_ids(comm, held)
    else:
        n, idmap = int(n_spec), _SpecIds(int(n_spec))
    if n == 0:
        agree(comm, InputError(source if isinstance(source, str) else None, None,
                               "the graph has no edges"))
    if partition == "range":
        # degree counts by id block: dense range [n*r/K, n*(r+1)/K) is held by rank r
        blk = np.array([n * r // K for r in range(K + 1)], dtype=np.int64)
        me = comm.Get_rank()
        us, uc = np.unique(src, return_counts=True)
        dest = np.searchsorted(blk, us, side="right") - 1
        cnt = np.bincount(dest, minlength=K)
        ids_r, _ = alltoallv(comm, us, cnt)
        cnt_r, _ = alltoallv(comm, uc.astype(np.int64), cnt)
        lo, hi = blk[me], blk[me + 1]
        deg = np.bincount(ids_r - lo, weights=cnt_r, minlength=hi - lo)
        alpha = 8.0 * (K - 1) if K > 1 else 1.0
        bounds = range_bounds(alpha + deg, int(lo), n, K, comm)
        part = Partition("range", K, n, bounds)
    else:
        part = Partition(partition, K, n)
    if n < 2**31 - 1:  # dense ids fit in int32: halve the shuffled volume
        src, dst = src.astype(np.int32), dst.astype(np.int32)
    edges = [src, dst, w]
    del src, dst, w
    lg = build_local(comm, part, edges, n, weighted)
    lg.orig = idmap.original(lg.owned)
    comm.Barrier()
    del MPI
    return lg, part, idmap
