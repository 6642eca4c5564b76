"""The asapgraph binary graph format (``.asg``): a versioned header + raw CSR arrays.

Layout (all integers little-endian)::

    offset  size  field
    0       8     magic  b"ASAPGRPH"
    8       4     u32 format version (FORMAT_VERSION)
    12      4     u32 header size in bytes (HEADER_SIZE)
    16      8     u64 flags: bit 0 weighted, bit 1 has original ids
    24      8     u64 n (vertices)
    32      8     u64 m (edges)
    40      4     u32 itemsize of indices (4: int32, 8: int64)
    44      4     u32 reserved (0)
    48      96    6 sections x (u64 offset, u64 nbytes): indptr (int64, n+1),
                  indices (m), weights (float64, m), out_degree (int64, n),
                  out_weight (float64, n), ids (int64, n); nbytes 0 = absent
    144     112   zero padding
    256     ...   sections, each starting at a multiple of 64 bytes

Loading maps the sections copy-on-write (``np.memmap(mode="c")``): no parsing, no
copy, pages come from the page cache on first touch and the arrays are writable
(private) for kernels that want mutable buffers.  A file with another magic is
"not an asapgraph binary graph"; a version newer than FORMAT_VERSION is refused
with a message naming both versions.

The contents are checked before anything uses them (:func:`check_contents`, one compiled
O(n + m) pass, :mod:`asapgraph.kernels._asgcheck`): the kernels index with the mapped
arrays unchecked, so a flipped byte would otherwise crash a run or change its answer.  A
corrupt file is refused with one ``InputError`` (``FILE: corrupt asapgraph binary graph:
WHAT``), the same on one process and on every rank.
"""
from __future__ import annotations

import os
import struct
import sys
import tempfile

import numpy as np

from asapgraph.errors import InputError

MAGIC = b"ASAPGRPH"
FORMAT_VERSION = 1
HEADER_SIZE = 256
EXTENSION = ".asg"
_ALIGN = 64
_HEAD = struct.Struct("<8sIIQQQII")
_SECTIONS = ("indptr", "indices", "weights", "out_degree", "out_weight", "ids")
_SEC = struct.Struct("<" + "QQ" * len(_SECTIONS))


def is_binary_graph(head):
    """True when ``head`` (the first bytes of a file) starts with the magic."""
    return head[:8] == MAGIC


def _le(a, dtype):
    return np.ascontiguousarray(a, dtype=np.dtype(dtype).newbyteorder("<"))


def _name_refusal(v):
    return (f"save_binary: the binary format stores vertex ids that are integers in "
            f"[0, 2**63), not the vertex name {v!r}; number the vertices first (e.g. "
            f"networkx.convert_node_labels_to_integers)")


def _saved_ids(graph):
    """The original ids to write: ``graph.ids``, or the vertex names when they are all
    integers the format holds; ValueError for other names (it wrote the dense numbers
    and dropped the names: 'a', 'b' came back as 0, 1, and names 10, 3, 7 as 0, 1, 2)."""
    labels = getattr(graph, "labels", None)
    if labels is None:
        return graph.ids
    arr = np.asarray(labels) if isinstance(labels, np.ndarray) else None
    if arr is not None and arr.dtype.kind in "iu" and arr.ndim == 1:  # (no loop)
        if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= 2**63):
            bad = arr[(arr < 0) | (arr > np.iinfo(np.int64).max)][0]
            raise ValueError(_name_refusal(bad.item()))
        return arr.astype(np.int64)
    names = labels.tolist() if hasattr(labels, "tolist") else list(labels)
    for v in names:
        if not (isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                and 0 <= v < 2**63):
            raise ValueError(_name_refusal(v))
    return np.array(names, dtype=np.int64)


def save_binary(graph, path):
    """Write ``graph`` to ``path`` in the binary format, atomically.

    The data goes to a temporary file in the same directory, which replaces
    ``path`` (``os.replace``) only once complete, so a failure never leaves a
    partial file behind.

    ``graph`` is anything :func:`asapgraph.pagerank` takes (a networkx graph, a scipy
    matrix, ... is converted first).  Vertices named by labels (``graph.labels``) are
    saved under their names when every name is an integer in ``[0, 2**63)`` (the format's
    original ids); other names (strings, tuples, negative numbers) are refused with a
    ValueError: the format has no place for them, and writing the dense numbers instead
    would rename the vertices.
    """
    from asapgraph.graph.convert import as_engine_graph

    path = os.fspath(path)
    graph = as_engine_graph(graph)
    ids = _saved_ids(graph)
    idx = graph.indices
    isz = idx.dtype.itemsize
    arrays = [
        _le(graph.indptr, np.int64),
        _le(idx, np.int32 if isz == 4 else np.int64),
        None if graph.weights is None else _le(graph.weights, np.float64),
        _le(graph.out_degree, np.int64),
        None if graph.out_weight is None else _le(graph.out_weight, np.float64),
        None if ids is None else _le(ids, np.int64),
    ]
    table = []
    pos = HEADER_SIZE
    for a in arrays:
        if a is None:
            table += [0, 0]
            continue
        table += [pos, a.nbytes]
        pos += -(-a.nbytes // _ALIGN) * _ALIGN
    flags = (1 if graph.weights is not None else 0) | (2 if ids is not None else 0)
    header = _HEAD.pack(MAGIC, FORMAT_VERSION, HEADER_SIZE, flags, graph.n, graph.m, isz, 0)
    header += _SEC.pack(*table)
    header += b"\0" * (HEADER_SIZE - len(header))
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".asapgraph-", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(header)
            at = HEADER_SIZE
            for a, off in zip(arrays, table[0::2]):
                if a is None:
                    continue
                if off > at:
                    f.write(b"\0" * (off - at))
                    at = off
                # large arrays: write in pieces to avoid a temporary bytes copy
                mv = memoryview(a.view(np.uint8).reshape(-1))
                step = 64 << 20
                for k in range(0, len(mv), step):
                    f.write(mv[k:k + step])
                at += a.nbytes
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def read_header(path):
    """Parse and validate the header: dict with n, m, flags, itemsize, sections."""
    name = os.fspath(path)
    try:
        with open(path, "rb") as f:
            head = f.read(HEADER_SIZE)
            size = os.fstat(f.fileno()).st_size
    except FileNotFoundError:
        raise InputError(name, None, "file not found") from None
    except PermissionError:
        raise InputError(name, None, "permission denied") from None
    except OSError as exc:
        raise InputError(name, None, f"cannot read: {exc.strerror or exc}") from None
    if head[:8] != MAGIC:
        raise InputError(name, None, "not an asapgraph binary graph (bad magic bytes)")
    if len(head) < _HEAD.size + _SEC.size:
        raise InputError(name, None, "truncated asapgraph binary graph (short header)")
    magic, version, hsize, flags, n, m, isz, _ = _HEAD.unpack_from(head)
    if version > FORMAT_VERSION:
        raise InputError(name, None,
                         f"binary graph format version {version} is newer than this "
                         f"asapgraph supports (version {FORMAT_VERSION}); upgrade asapgraph")
    if version < 1 or hsize < _HEAD.size + _SEC.size or isz not in (4, 8):
        raise InputError(name, None, "corrupt asapgraph binary graph header")
    vals = _SEC.unpack_from(head, _HEAD.size)
    secs = {}
    expect = {"indptr": (n + 1) * 8, "indices": m * isz, "weights": m * 8 if flags & 1 else 0,
              "out_degree": n * 8, "out_weight": n * 8 if flags & 1 else 0,
              "ids": n * 8 if flags & 2 else 0}
    for i, s in enumerate(_SECTIONS):
        off, nb = vals[2 * i], vals[2 * i + 1]
        if nb != expect[s] or (nb and (off < hsize or off % _ALIGN)):
            raise InputError(name, None, f"corrupt asapgraph binary graph header (section {s})")
        if nb and off + nb > size:
            raise InputError(name, None, "truncated asapgraph binary graph "
                             f"(file has {size} bytes, section {s} ends at {off + nb})")
        secs[s] = (off, nb)
    # sections are written aligned, one after the other: an offset with a flipped bit that
    # still lay in the file mapped another section's bytes (the ids read from out_weight's
    # doubles: unique, so accepted, every vertex renamed)
    present = sorted((off, nb, s) for s, (off, nb) in secs.items() if nb)
    for (o1, n1, s1), (o2, _, s2) in zip(present, present[1:]):
        if o2 < o1 + n1:
            raise InputError(name, None, f"corrupt asapgraph binary graph header (sections "
                             f"{s1} and {s2} overlap)")
    return {"version": version, "flags": flags, "n": n, "m": m, "itemsize": isz,
            "sections": secs, "size": size}


def load_binary(path, mmap=True):
    """Load a graph written by :func:`save_binary`.

    Parameters
    ----------
    path : str or path-like
    mmap : bool
        Map the arrays copy-on-write (default, near-instant); False reads them
        into memory.

    Raises
    ------
    InputError
        Missing/unreadable file, foreign magic, newer version, truncation, corrupt
        contents (:func:`check_contents`).
    """
    from asapgraph.graph.core import Graph

    if sys.byteorder != "little":  # pragma: no cover
        raise InputError(os.fspath(path), None, "binary graphs need a little-endian machine")
    h = read_header(path)
    n = h["n"]
    dtypes = {"indptr": np.int64, "indices": np.int32 if h["itemsize"] == 4 else np.int64,
              "weights": np.float64, "out_degree": np.int64, "out_weight": np.float64,
              "ids": np.int64}
    out = {}
    with open(path, "rb") as f:
        for s, (off, nb) in h["sections"].items():
            if nb == 0:
                out[s] = None if s in ("weights", "out_weight", "ids") else \
                    np.zeros(0, dtype=dtypes[s])
                continue
            count = nb // np.dtype(dtypes[s]).itemsize
            if mmap:
                out[s] = np.memmap(f, dtype=dtypes[s], mode="c", offset=off, shape=(count,))
            else:
                f.seek(off)
                a = np.empty(count, dtype=dtypes[s])
                f.readinto(memoryview(a).cast("B"))
                out[s] = a
    if out["indptr"].shape[0] != n + 1:
        raise InputError(os.fspath(path), None, "corrupt asapgraph binary graph (indptr)")
    check_contents(path, out)
    return Graph(out["indptr"], out["indices"], out["weights"], out["out_degree"],
                 out["out_weight"], out["ids"], source=os.fspath(path))


def check_contents(path, sections):
    """Refuse (``InputError``) a graph whose sections are inconsistent.

    ``sections``: the arrays :func:`load_binary` mapped (name -> array or None).  Checks
    indptr (starts at 0, non-decreasing, ends at m), the indices (in ``[0, n)``), the
    weights (finite), the redundant out_degree/out_weight sections (recomputed from the
    rows; out_weight to rounding), and the ids (non-negative and unique: one process
    and the distributed loader, which remaps by them, would otherwise disagree).  One sequential pass over the
    file's sections: the pages it maps in are the ones a run reads next.
    """
    from asapgraph.kernels import _asgcheck as c

    name = os.fspath(path)
    indptr, indices = sections["indptr"], sections["indices"]
    weights, ids = sections["weights"], sections["ids"]
    ow = sections["out_weight"]
    weighted, has_ids = weights is not None, ids is not None
    empty_f, empty_i = np.zeros(0), np.zeros(0, dtype=np.int64)
    code, where, value = c.check_csr(
        indptr, indices, weights if weighted else empty_f, sections["out_degree"],
        ow if ow is not None else empty_f, ids if has_ids else empty_i, weighted, has_ids)
    if code == c.BAD_IDS_ORDER:
        # unsorted ids (readers write them sorted; a graph built through the API with its
        # own ids need not be): fine if unique, which a sort tells (O(n log n), this case only)
        srt = np.sort(ids)
        dup = np.flatnonzero(srt[1:] == srt[:-1])
        if not dup.size:
            return
        value = int(srt[dup[0]])
    if code == c.OK:
        return
    n, m = len(indptr) - 1, len(indices)
    what = {
        c.BAD_INDPTR_START: f"indptr does not start at 0 (it starts at {value})",
        c.BAD_INDPTR_ORDER: f"indptr not non-decreasing at vertex {where}",
        c.BAD_INDPTR_END: f"indptr does not end at the edge count {m} (it ends at {value})",
        c.BAD_INDEX: f"indices out of range (edge {where} has source {value}; n = {n})",
        c.BAD_WEIGHT: f"non-finite edge weight (edge {where})",
        c.BAD_OUT_DEGREE: f"out_degree does not match the rows (vertex {where})",
        c.BAD_OUT_WEIGHT: f"out_weight does not match the rows (vertex {where})",
        c.BAD_IDS_NEGATIVE: f"negative original id {value} (vertex {where})",
        c.BAD_IDS_ORDER: f"duplicate original id {value} in the ids section",
    }[code]
    raise InputError(name, None, f"corrupt asapgraph binary graph: {what}")
