"""The readers behind :mod:`asapgraph.graph.io` (``read_edges``, ``load_graph``, byte
ranges for the ranks); the package documents the formats and re-exports these names."""
from __future__ import annotations

import io
import os
import re

import numpy as np

from asapgraph.errors import InputError
from asapgraph.progress import get as _get_progress
from asapgraph.kernels import _parse
from asapgraph.graph.io._binary import EXTENSION as BINARY_EXTENSION
from asapgraph.graph.io._binary import FORMAT_VERSION as BINARY_FORMAT_VERSION
from asapgraph.graph.io._binary import is_binary_graph, load_binary, save_binary
from asapgraph.graph.io._formats import read_mtx, read_npy
from asapgraph.graph.io._text import (CHUNK_BYTES,
    EdgeList,
    as_int64,
    compression_of,
    display_name,
    feed_blocks,
    open_binary,
    parse_mapped,
    read_text,
    sniff)

__all__ = ["EdgeList", "read_edges", "load_graph", "iter_edge_chunks", "parse_byte_range",
           "count_lines_before", "first_negative_weight", "save_binary", "load_binary",
           "detect_format", "BINARY_EXTENSION", "BINARY_FORMAT_VERSION", "CHUNK_BYTES"]

_NPY_MAGIC = b"\x93NUMPY"
_COMP_EXT = (".gz", ".bz2", ".xz")


def _strip_comp(name):
    low = name.lower()
    for e in _COMP_EXT:
        if low.endswith(e):
            return low[: -len(e)]
    return low


def detect_format(path):
    """``'binary'``, ``'npy'``, ``'mtx'`` or ``'text'`` for an input path (or ``'-'``).

    By magic bytes (binary graph, npy, ``%%MatrixMarket`` banner), then by the
    ``.mtx`` extension (also under .gz/.bz2/.xz); everything else is text.
    """
    if path == "-":
        return "text"
    head = sniff(path)
    if is_binary_graph(head):
        return "binary"
    if head.startswith(_NPY_MAGIC):
        return "npy"
    if head.startswith(_BOM):   # a byte order mark (Windows editors) before the banner
        head = sniff_n(path, len(_BOM) + 14)
    if _mtx_banner(head) or _strip_comp(os.fspath(path)).endswith(".mtx"):
        return "mtx"
    if compression_of(head) is not None and _mtx_banner(_decompressed_head(path, 17)):
        return "mtx"   # g.gz holding a Matrix Market file: its size line is not an edge
    return "text"


def is_parquet(path):
    """Whether ``path`` names a Parquet table: by its name (``.parquet``, also under
    .gz/.bz2/.xz), as every reader decides it; ``'-'`` is text."""
    return path != "-" and _strip_comp(os.fspath(path)).endswith(".parquet")


def whole_file_format(path):
    """``'mtx'`` or ``'parquet'`` for an input that MPI ranks do not split (rank 0 reads it
    whole and scatters it: :func:`asapgraph.partition.reading.scatter_whole_file`), else
    None.  Parquet by its name, as :func:`load_graph` decides it."""
    if path == "-":
        return None
    if is_parquet(path):
        return "parquet"
    return "mtx" if detect_format(path) == "mtx" else None


_BOM = b"\xef\xbb\xbf"


def _mtx_banner(head):
    """Whether ``head`` starts with the Matrix Market banner, after an optional UTF-8 byte
    order mark (a BOM'd file named .txt was read as an edge list: its size line '3 3 2'
    became an edge 3 -> 3, a wrong answer)."""
    return (head[len(_BOM):] if head.startswith(_BOM) else head).startswith(b"%%MatrixMarket")


_KONECT = re.compile(rb"\A(?:\xef\xbb\xbf)?%[ \t]*(sym|asym|bip)\b[^\n]*")


def konect_refusal(path, undirected):
    """InputError for a KONECT network that one reading would get wrong, else None.

    KONECT's first line names the network's kind: ``% sym ...`` is undirected with every
    edge listed once (read as directed it is a different graph: pass ``--undirected``),
    ``% bip ...`` is bipartite, its two columns numbering two different vertex sets (one
    graph would merge left vertex 1 with right vertex 1), ``% asym`` is directed."""
    if path == "-":   # (looked at, not read: the reader gets these bytes)
        from asapgraph.graph.io._text import stdin_head

        head = stdin_head(256)
    elif not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    else:
        head = (_decompressed_head(path, 256) if compression_of(sniff(path))
                else sniff_n(path, 256))
    m = _KONECT.match(head)
    if m is None:
        return None
    kind, line = m.group(1), m.group(0).decode("utf-8", "replace").lstrip("\ufeff").strip()
    name = display_name(path)
    if kind == b"sym" and not undirected:
        return InputError(name, 1, f"a KONECT undirected network ({line!r}: every edge is "
                          "listed once): pass --undirected (Python: undirected=True), or remove "
                          "that line to read the edges as directed")
    if kind == b"bip":
        return InputError(name, 1, f"a KONECT bipartite network ({line!r}): its two columns "
                          "number two different vertex sets, which one graph would merge; "
                          "renumber one side and remove that line")
    return None


def sniff_n(path, k):
    """The first ``k`` bytes of a file (b"" when unreadable: the reader reports it)."""
    try:
        with open(path, "rb") as f:
            return f.read(k)
    except OSError:
        return b""


def _decompressed_head(path, k=14):
    """The first ``k`` decompressed bytes of a compressed file (b"" when unreadable: the
    reader then reports the problem)."""
    try:
        stream = open_binary(path)[0]
    except (InputError, OSError):
        return b""
    try:
        return stream.read(k) or b""
    except Exception:  # noqa: BLE001 - corrupt data: reported by the reader
        return b""
    finally:
        stream.close()


def _is_column(c):
    """A column number is an integer (int() alone read weight_col=4.5 as column 4 and
    dst_col=4.9 as column 4, without a word, and 'x' as "invalid literal for int()")."""
    return isinstance(c, (int, np.integer)) and not isinstance(c, bool)


def _check_args(chunk_bytes=None, **flags):
    """The loaders' switches are booleans and ``chunk_bytes`` (None: not checked) a
    positive integer: a truthy string (``weighted="no"``) read a weight column, and
    ``chunk_bytes`` 0, -1 or 1.5 was taken without a word."""
    for k, v in flags.items():  # (None and the ints 0 and 1 pass, as False and True)
        if not (v is None or isinstance(v, (bool, np.bool_))
                or (isinstance(v, (int, np.integer)) and v in (0, 1))):
            raise TypeError(f"{k} must be True or False, got {v!r}")
    if chunk_bytes is None:
        return
    if isinstance(chunk_bytes, (bool, np.bool_)) or not isinstance(
            chunk_bytes, (int, np.integer)) or chunk_bytes < 1:
        raise ValueError(f"chunk_bytes must be a positive integer, got {chunk_bytes!r}")


def _weight_col(weighted, weight_col):
    if weight_col is None:
        return 3 if weighted else 0
    if not _is_column(weight_col) or weight_col < 1:
        raise ValueError(f"weight_col is 1-based (an integer >= 1), got {weight_col!r}")
    return int(weight_col)


def refuse_weight_col(name, kind, weight_col):
    """A binary graph or a Matrix Market file has one weight per edge: a ``weight_col``
    (1-based) other than 3 is refused (``--weight-col 4`` read the one weight anyway and
    ``--json`` said ``"weight_col": 4``: an option reported but not applied)."""
    if weight_col is not None and int(weight_col) != 3:
        raise InputError(name, None, f"a {kind} has one weight per edge: --weight-col "
                         f"{int(weight_col)} does not apply (use --weighted; Python: "
                         "weighted=True)")


#: what a header line of a text edge list is in the inputs that are not one (they describe
#: themselves): ``--header`` is refused with them, not ignored
_NOT_TEXT = {"mtx": "a Matrix Market file (its banner and size line are its header)",
             "binary": "an asapgraph binary graph (.asg)",
             "npy": "a .npy edge array",
             "parquet": "a Parquet table (its columns are named in its schema)",
             "spec": "a generator spec, which has no header line"}


def header_refusal(name, kind):
    """The refusal of ``--header`` (Python: ``header=True``) for an input of ``kind``
    (``'mtx'``, ``'binary'``, ``'npy'``, ``'parquet'``, ``'spec'``, or a description): it
    skips the header line of a text edge list, and these are none."""
    what = _NOT_TEXT.get(kind, kind)
    return InputError(name, None, f"--header applies to text edge lists, and this is {what}: "
                                  "drop --header (Python: header=False)")


def header_format(path):
    """The kind of input (as :func:`header_refusal` names it) that ``--header`` does not
    apply to, for the path or spec ``path``, else None (a text edge list, standard input,
    or a path that does not exist: its reader names the problem)."""
    if path == "-" or not isinstance(path, (str, os.PathLike)):
        return None
    path = os.fspath(path)
    if not os.path.exists(path):
        from asapgraph.graph import generators

        return "spec" if generators.is_spec(path) else None
    if is_parquet(path):
        return "parquet"
    if not os.path.isfile(path):
        return None
    try:
        fmt = detect_format(path)
    except InputError:
        return None
    return None if fmt == "text" else fmt


#: the largest column number the parser takes (a C int)
MAX_COLUMN = 2**31 - 1


def _check_cols(path, src_col, dst_col, wc):
    for what, c in (("src_col", src_col), ("dst_col", dst_col)):
        if not _is_column(c):
            raise ValueError(f"{what} is 1-based (an integer >= 1), got {c!r}")
    if max(src_col, dst_col, wc or 0) > MAX_COLUMN:
        raise InputError(display_name(path), None,
                         f"bad column choice: source {src_col}, destination {dst_col}, "
                         f"weight {wc or 'none'} (columns are at most {MAX_COLUMN})")
    if src_col < 1 or dst_col < 1 or src_col == dst_col or wc in (src_col, dst_col):
        raise InputError(display_name(path), None,
                         f"bad column choice: source {src_col}, destination {dst_col}, "
                         f"weight {wc or 'none'} (1-based, all different)")


def read_edges(path, *, weighted=False, weight_col=None, progress=None, src_col=1, dst_col=2,
               chunk_bytes=CHUNK_BYTES, header=False):
    """Read an edge list (text, .mtx, .npy; not generator specs) with original ids.

    Parameters
    ----------
    path : str or path-like
        File name, or ``'-'`` for standard input.
    weighted : bool
        Read a weight column (default column 3).
    weight_col : int, optional
        1-based column holding the weight (implies ``weighted``).
    progress : asapgraph.progress.Progress, optional
    src_col, dst_col : int
        1-based columns of the endpoints (default 1 and 2).
    header : bool
        The first line of a text edge list that is neither blank nor a comment is a
        header (``source,target,weight`` of ``DataFrame.to_csv(index=False)``), skipped
        whatever it holds; error messages keep the file's line numbers.  Refused for
        the inputs that are no text edge list (.mtx, .npy, binary graphs).

    Returns
    -------
    EdgeList
        ``src``, ``dst`` int64 original ids in file order, ``weights`` float64 or None.
        For ``.mtx`` the ids are the 1-based matrix indices and symmetric files
        get their mirror entries.

    Raises
    ------
    InputError
        Any problem with the input (``FILE:LINE: message``).
    """
    _check_args(chunk_bytes, weighted=weighted, header=header)
    path = path if path == "-" else os.fspath(path)
    wc = _weight_col(weighted, weight_col)
    _check_cols(path, src_col, dst_col, wc)
    fmt = detect_format(path)
    name = display_name(path)
    if header and fmt != "text":
        raise header_refusal(name, fmt)
    if fmt == "binary":
        refuse_weight_col(name, "binary graph", weight_col)
        g = load_binary(path)
        s, d, w = g.edges()
        ids = g.original_ids()
        return EdgeList(ids[s], ids[d], w if wc else None, name)
    if fmt == "npy":
        s, d, w = read_npy(path, weighted=bool(wc), weight_col=weight_col)
        return EdgeList(s, d, w, name)
    if fmt == "mtx":
        refuse_weight_col(name, "Matrix Market file", weight_col)
        s, d, w, _ = read_mtx(path, weighted=bool(wc), progress=progress,
                              chunk_bytes=chunk_bytes)
        return EdgeList(as_int64(s) + 1, as_int64(d) + 1, w, name)
    s, d, w, _ = read_text(path, weight_col=wc, src_col=src_col, dst_col=dst_col,
                           progress=progress, chunk_bytes=chunk_bytes, id32=False,
                           header=bool(header))
    return EdgeList(s, d, w, name)


def _names_spec(spec):
    """``spec`` is a generator spec :func:`load_graph` generates (no file of that name)."""
    if not isinstance(spec, str) or spec == "-" or os.path.exists(spec):
        return False
    from asapgraph.graph import generators

    return generators.is_spec(spec)


def load_graph(spec, *, weighted=False, undirected=False, weight_col=None, progress=None,
               seed=None, src_col=1, dst_col=2, chunk_bytes=CHUNK_BYTES, labels=False,
               header=False):
    """Load a graph from a file, standard input or a generator spec.

    Parameters
    ----------
    spec : str or path-like
        A text edge list (plain/.gz/.bz2/.xz), ``.mtx``, ``.npy`` (an (m, 2) or
        (m, 3) array), a binary graph written by :func:`save_binary` (any name),
        ``'-'`` for standard input, or a generator spec (``rmat:20``,
        ``rmat:20:16:SEED``, ``er:N:M``) when no file of that name exists.
    weighted, weight_col, src_col, dst_col :
        As in :func:`read_edges`.  For a binary graph, ``weighted=False`` drops
        stored weights.
    undirected : bool
        Add both directions of every edge (a self-loop once).
    progress : asapgraph.progress.Progress, optional
    seed : int, optional
        Seed for generator specs without one.
    labels : bool
        Text edge lists name vertices by arbitrary tokens (strings); they are mapped once
        to dense ids and kept in ``Graph.labels`` (see :mod:`asapgraph.graph.io.labelled`).
    header : bool
        A text edge list's first line that is neither blank nor a comment is a header
        (``source,target,weight``), skipped whatever it holds (as :func:`read_edges`);
        with ``labels`` too.  Refused for every other input (.mtx, .npy, .parquet, binary
        graphs, generator specs, graph objects).

    A ``.parquet`` file is read with pyarrow (columns ``source``/``target``/``weight`` when
    present, else by position); a networkx graph, scipy sparse matrix, pandas DataFrame,
    pyarrow Table or ``(m, 2|3)`` array is converted (:func:`asapgraph.graph.convert.as_graph`).
    Its weights (a ``weight`` column or edge attribute, the matrix values, the third array
    column) follow ``weighted`` as a file's do: dropped by default (every edge weighs 1),
    kept with ``weighted=True``.  The algorithms given the object itself use its weights,
    as networkx does: ``pagerank(df)`` equals ``pagerank(load_graph(df, weighted=True))``,
    not ``pagerank(load_graph(df))``.

    Returns
    -------
    asapgraph.graph.Graph

    Raises
    ------
    InputError
    """
    from asapgraph.graph.core import Graph

    _check_args(chunk_bytes, weighted=weighted, undirected=undirected, labels=labels,
                header=header)
    if seed is not None and not _names_spec(spec):
        # (it seeds a generator spec; a file's or an object's graph ignored it)
        name = display_name(os.fspath(spec)) if isinstance(spec, (str, os.PathLike)) \
            else type(spec).__name__
        raise InputError(name, None, "seed applies to generator specs (rmat:S, er:N:M), "
                                     "not to a file or a graph object")
    if header and not (isinstance(spec, (str, os.PathLike))):  # (a graph object)
        raise header_refusal(type(spec).__name__, f"a {type(spec).__name__} object, not a "
                                                  "file")
    if not isinstance(spec, (str, bytes, os.PathLike)):
        from asapgraph.graph.convert import as_graph

        return as_graph(spec, weighted=None if weighted else False, undirected=undirected)
    prog = _get_progress(progress)
    wc = _weight_col(weighted, weight_col)
    if isinstance(spec, str) and spec != "-" and not os.path.exists(spec):
        from asapgraph.graph import generators

        if generators.is_spec(spec):
            # as the command line refuses --weighted, --weight-col and --labels with a
            # spec: load_graph("er:10:20", weighted=True) returned an unweighted graph
            # and labels=True integer ids, without a word
            if header:
                raise header_refusal(spec, "spec")
            if wc or labels:
                what = ("labels=True: its vertices are the integer ids 0 .. n-1" if labels
                        else f"{'weighted=True' if weight_col is None else 'weight_col'}: "
                             f"every edge weighs 1")
                raise InputError(spec, None, f"a generator spec has no edge weights or "
                                             f"vertex names; drop {what}")
            prog.stage(f"generating {spec}")
            src, dst, n = generators.from_spec(spec, seed=seed)
            vdt = np.int32 if n < 2**31 - 1 else np.int64
            src = src.astype(vdt, copy=False)
            dst = dst.astype(vdt, copy=False)
            prog.stage("building CSR")
            return Graph.from_edges(src, dst, n=n, source=spec, undirected=undirected)
    path = spec if spec == "-" else os.fspath(spec)
    name = display_name(path)
    _check_cols(path, src_col, dst_col, wc)
    if header:
        kind = header_format(path)
        if kind is not None:
            raise header_refusal(name, kind)
    if is_parquet(path):
        if labels:
            from asapgraph.graph.io.labelled import labels_refusal

            raise labels_refusal(name, "parquet")
        return _load_parquet(path, name, wc, weight_col, src_col, dst_col, undirected)
    err = konect_refusal(path, undirected) if detect_format(path) == "text" else None
    if err is not None:
        raise err
    if labels:
        from asapgraph.graph.convert import from_labels
        from asapgraph.graph.io.labelled import read_labelled

        s, d, w = read_labelled(path, weight_col=wc, src_col=src_col, dst_col=dst_col,
                                header=bool(header))
        prog.stage(f"building CSR ({s.size:,} edges)")
        return from_labels(s, d, w, undirected=undirected, source=name)
    fmt = detect_format(path)
    if fmt == "binary":
        refuse_weight_col(name, "binary graph", weight_col)
        prog.stage(f"mapping {name}")
        g = load_binary(path)
        if wc:
            from asapgraph.graph.io._formats import check_finite_weights

            check_finite_weights(name, g.weights)
        if not wc and g.weights is not None:
            g = Graph(g.indptr, g.indices, None, g.out_degree, None, g.ids, source=g.source)
        if undirected:
            s, d, w = g.edges()
            g = Graph.from_edges(s, d, n=g.n, weights=w, ids=g.ids, source=name,
                                 undirected=True)
        return g
    if fmt == "npy":
        s, d, w = read_npy(path, weighted=bool(wc), weight_col=weight_col)
        prog.stage("building CSR")
        return Graph.from_original_ids(s, d, weights=w, undirected=undirected, source=name,
                                       inplace=True)
    if fmt == "mtx":
        refuse_weight_col(name, "Matrix Market file", weight_col)
        if undirected:
            _refuse_undirected_symmetric_mtx(path, name)
        s, d, w, n = read_mtx(path, weighted=bool(wc), progress=progress,
                              chunk_bytes=chunk_bytes)
        prog.stage("building CSR")
        return Graph.from_edges(s, d, n=n, weights=w, ids=np.arange(1, n + 1, dtype=np.int64),
                                source=name, undirected=undirected)
    s, d, w, info = read_text(path, weight_col=wc, src_col=src_col, dst_col=dst_col,
                              progress=progress, chunk_bytes=chunk_bytes, id32=True,
                              counts=not (wc or undirected), header=bool(header))
    prog.stage(f"building CSR ({s.size:,} edges)")
    if info.get("counts") is not None:
        from asapgraph.graph.core import counted_build

        g = counted_build(s, d, info.pop("counts"), info["max_id"], name)
        if g is not None:
            return g
    info.pop("counts", None)
    return Graph.from_original_ids(s, d, weights=w, undirected=undirected, source=name,
                                   inplace=True, max_id=info["max_id"], _consume=True)


def _refuse_undirected_symmetric_mtx(path, name):
    """``--undirected`` on a symmetric (or skew-symmetric) Matrix Market file: its entries
    already stand for both directions, and the mirrored arcs came twice while the diagonal
    came once -- a different graph from networkx's undirected one (a wrong answer)."""
    from asapgraph.graph.io._formats import mtx_info

    if path == "-":
        return
    sym = mtx_info(path)["symmetry"]
    if sym != "general":
        raise InputError(name, 1, f"a {sym} Matrix Market matrix is read in both directions "
                         "already (every off-diagonal entry gives its mirror): --undirected "
                         "would count each edge twice; drop --undirected (Python: "
                         "undirected=False)")


def _load_parquet(path, name, wc, weight_col, src_col, dst_col, undirected):
    """A Parquet edge table (needs pyarrow: ``pip install 'asapgraph[arrow]'``)."""
    from asapgraph.graph.convert import from_arrow, require

    pq = require("pyarrow.parquet")
    try:
        table = pq.read_table(path)
    except (OSError, ValueError, require("pyarrow").ArrowException) as exc:
        # (pyarrow's ArrowInvalid of a truncated file, 'Parquet magic bytes not found in
        # footer', was an internal error, exit 1; 'error on rank 0: ArrowInvalid' on ranks)
        raise InputError(name, None, f"cannot read Parquet: {exc}") from None
    if table.num_rows == 0:  # as a text edge list (it ran on an empty graph, exit 0; K
        raise InputError(name, None, "no edges found")  # ranks refused it so)
    cols = table.column_names
    named = src_col == 1 and dst_col == 2 and {"source", "target"} <= set(cols)
    src, dst = ("source", "target") if named else (src_col - 1, dst_col - 1)
    w = None
    if wc:
        w = "weight" if (weight_col is None and "weight" in cols) else wc - 1
    try:
        return from_arrow(table, source=src, target=dst, weight=w, undirected=undirected,
                          origin=name)
    except (KeyError, ValueError) as exc:
        raise InputError(name, None, str(exc).strip("'\"")) from None


def iter_edge_chunks(path, chunk_bytes=CHUNK_BYTES, *, weighted=False, weight_col=None,
                     src_col=1, dst_col=2, progress=None, header=False):
    """Stream a text edge list (any compression, or ``'-'``) as bounded EdgeList pieces.

    Each piece holds the edges of one block of about ``chunk_bytes`` bytes of
    (decompressed) text, in file order, with int64 original ids; ``first_line`` is
    the line number the block starts at.  Memory stays bounded by the block size.
    Errors are raised as in :func:`read_edges` when the offending block is reached;
    ``header`` as there.
    """
    _check_args(chunk_bytes, header=header, weighted=weighted)   # (0, -1, 1.5: refused)
    path = path if path == "-" else os.fspath(path)
    wc = _weight_col(weighted, weight_col)
    _check_cols(path, src_col, dst_col, wc)
    name = display_name(path)
    stream, kind, total = open_binary(path)
    acc = _parse.EdgeAccumulator(src_col, dst_col, wc, False)
    first_line = 1
    any_edges = False
    try:
        for a in feed_blocks(stream, acc, path, kind, chunk_bytes, total, progress,
                             header=bool(header)):
            if a.m:
                s, d, w = a.take()
                any_edges = True
                yield EdgeList(s, d, w, name, first_line)
            first_line = a.lines + 1
    finally:
        if path != "-":
            stream.close()
    if not any_edges:
        raise InputError(name, None, "no edges found")


def first_negative_weight(path, weight_col=None, src_col=1, dst_col=2, header=False):
    """``(line, token)`` of the first edge of the text edge list ``path`` (any
    compression) whose weight is negative, in file order; None when there is none or
    ``path`` is not such a file (``header``: its header line is none of its edges).  For
    error messages only: one pass of the compiled parser, then the lines of the block
    that holds the edge, one at a time."""
    if path == "-" or not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    wc = _weight_col(True, weight_col)
    skip = _header_line(path) if header else None
    try:
        for el in iter_edge_chunks(path, weighted=True, weight_col=weight_col,
                                   src_col=src_col, dst_col=dst_col, header=bool(header)):
            neg = np.flatnonzero(el.weights < 0)
            if neg.size:
                return _edge_line(path, el.first_line, int(neg[0]), wc, src_col, dst_col,
                                  skip)
    except InputError:  # vertices named by tokens (--labels): a plain scan of the lines
        return _labelled_negative_line(path, wc, skip)
    except (OSError, ValueError, EOFError):
        return None
    return None


def _numbered_lines(path, first=1):
    """``(line number, bytes)`` of the lines of the text file ``path`` (any compression)
    from line ``first`` on, read through a buffer (a plain file's handle from
    :func:`open_binary` is unbuffered: ``readline`` on it reads a byte per call).  A UTF-8
    byte order mark before line 1 is blanked out, as the readers blank it (it glued to
    the first id: line 1 was no edge, and the refusal of a negative weight there named
    the next edge's line and weight, ``g.txt:2: negative edge weight '3'``)."""
    import itertools

    stream = open_binary(path)[0]
    try:
        if not isinstance(stream, io.BufferedIOBase):
            stream = io.BufferedReader(stream, 1 << 20)
        lines = enumerate(itertools.islice(stream, first - 1, None), start=first)
        for no, raw in lines:
            if no == 1 and raw[:3] == b"\xef\xbb\xbf":
                raw = b"   " + raw[3:]
            yield no, raw
    finally:
        stream.close()


def _weight_token(raw, wc):
    """The ``wc``-th column of a line, split as the readers split it: at blanks and
    commas (a ';' is part of a --labels name: splitting there named a later line)."""
    import re

    return re.split(rb"[\s,]+", raw.strip())[wc - 1]


def _header_line(path):
    """The number of the header line of the text file ``path`` (``--header``: its first
    line that is neither blank nor a comment), None when it has none (error paths)."""
    from asapgraph.graph.io._text import header_span

    try:
        for no, raw in _numbered_lines(path):
            h, e = header_span(raw)
            if h < e:
                return no
    except (InputError, OSError, EOFError):
        return None
    return None


def _labelled_negative_line(path, wc, skip=None):
    try:
        for no, raw in _numbered_lines(path):
            f = raw.strip()
            if not f or f[:1] in (b"#", b"%") or no == skip:
                continue
            try:
                tok = _weight_token(raw, wc)
                if float(tok) < 0:
                    return no, tok.decode("utf-8", "backslashreplace")
            except (ValueError, IndexError):
                continue
    except (InputError, OSError, EOFError):
        return None
    return None


def _edge_line(path, first_line, j, wc, src_col, dst_col, skip=None):
    """``(line, weight token)`` of edge ``j`` of the block starting at line
    ``first_line`` (lines that hold no edge -- blank, comments, the header line ``skip``
    -- are skipped exactly as the parser skips them: each line is parsed on its own)."""
    for no, raw in _numbered_lines(path, first_line):
        if no == skip:
            continue
        acc = _parse.EdgeAccumulator(src_col, dst_col, wc, False)
        acc.feed(raw if raw.endswith(b"\n") else raw + b"\n", True)
        if acc.m:
            if j == 0:
                return no, _weight_token(raw, wc).decode("utf-8", "backslashreplace")
            j -= 1
    return None


def count_lines_before(path, offset):
    """Number of newlines in the first ``offset`` bytes of an uncompressed file.

    The line that starts at byte ``offset`` is line ``count_lines_before(path, offset) + 1``
    (1-based), which turns a byte-range-relative error line into a file line number.
    """
    n = 0
    left = int(offset)
    with open(path, "rb", buffering=0) as f:
        buf = bytearray(min(max(left, 1), 16 << 20))
        mv = memoryview(buf)
        while left > 0:
            k = f.readinto(mv[: min(left, len(buf))])
            if not k:
                break
            n += _parse.count_newlines(mv[:k])
            left -= k
    return n


def _line_start_at_or_after(f, pos, size):
    """First line start >= pos (pos itself when pos == 0 or byte pos-1 is '\\n')."""
    if pos <= 0:
        return 0
    if pos >= size:
        return size
    f.seek(pos - 1)
    step = 1 << 16
    at = pos - 1
    while at < size:
        chunk = f.read(step)
        if not chunk:
            break
        k = chunk.find(b"\n")
        if k >= 0:
            return at + k + 1
        at += len(chunk)
    return size


class _RangeReader:
    def __init__(self, f, begin, stop):
        self.f = f
        self.left = stop - begin
        f.seek(begin)

    def readinto(self, b):
        if self.left <= 0:
            return 0
        mv = memoryview(b)
        k = self.f.readinto(mv[: min(len(mv), self.left)])
        self.left -= k or 0
        return k or 0


def byte_range_bounds(path, start, end):
    """``(begin, stop)``: the byte span parsed by ``parse_byte_range(path, start, end)``."""
    size = os.path.getsize(path)
    start, end = max(0, int(start)), min(int(end), size)
    with open(path, "rb") as f:
        begin = _line_start_at_or_after(f, start, size)
        # the range ends with the line containing byte end-1
        stop = _line_start_at_or_after(f, end, size) if end > 0 else 0
    if stop < begin:
        stop = begin
    return begin, stop


def header_offset(path):
    """The byte offset of the header line of the uncompressed text file ``path``
    (``--header``: its first line that is neither blank nor a comment), or None when it
    has none.  Reads the file's leading blank and comment lines only."""
    from asapgraph.graph.io._text import (has_comment_line, header_bare_cr, header_edge_error,
                                          header_span, numeric_header)

    at, line, data, comments = 0, 1, b"", False
    with open(path, "rb") as f:
        while True:
            more = f.read(1 << 16)
            data += more
            if at == 0 and data[:3] == b"\xef\xbb\xbf":   # a byte order mark: blanks
                data = b"   " + data[3:]
            cut = len(data) if not more else data.rfind(b"\n") + 1
            span = header_span(data[:cut], True)
            if span[0] < span[1]:
                cr = header_bare_cr(data, span[1])
                if cr is not None:
                    from asapgraph.graph.io._text import BARE_CR_MESSAGE

                    raise InputError(display_name(path), line + data.count(b"\n", 0, cr),
                                     BARE_CR_MESSAGE)
                if numeric_header(data, *span, comments):
                    raise header_edge_error(display_name(path),
                                            line + data.count(b"\n", 0, span[0]), data, *span)
                return at + span[0]
            if not more:
                return None
            # only blank and comment lines up to cut: drop them
            comments = comments or has_comment_line(data, cut)
            at, line, data = at + cut, line + data.count(b"\n", 0, cut), data[cut:]


def parse_byte_range(path, start, end, *, weighted=False, weight_col=None, src_col=1,
                     dst_col=2, chunk_bytes=CHUNK_BYTES, id32=False, header=False):
    """Parse the lines of an uncompressed text edge list that belong to ``[start, end)``.

    Each line belongs to exactly one range: a range starts at the first line
    beginning at or after ``start`` (at 0 when ``start == 0``) and ends with the
    line containing byte ``end - 1``.  So for offsets ``0 = b0 < b1 < ... < bK =
    size`` the ranges ``[b_i, b_{i+1})`` together parse every line once, in order.

    Returns an EdgeList (int64 original ids, int32 with ``id32`` when they all fit;
    possibly empty — no "no edges" error here).  Error line numbers are file line numbers (computed with
    :func:`count_lines_before` only when an error occurs).  ``header``: the file's header
    line (:func:`header_offset`) is skipped by the range that holds its first byte.
    """
    path = os.fspath(path)
    name = display_name(path)
    wc = _weight_col(weighted, weight_col)
    _check_cols(path, src_col, dst_col, wc)
    if compression_of(sniff(path)) is not None:
        raise InputError(name, None, "byte ranges need an uncompressed file "
                         "(use iter_edge_chunks for compressed input)")
    try:
        begin, stop = byte_range_bounds(path, start, end)
        f = open(path, "rb", buffering=0)
    except OSError as exc:
        from asapgraph.graph.io._text import os_error

        raise os_error(name, exc) from None
    if begin > 0:  # the file's head, as one process looks at it (parse_mapped at 0)
        from asapgraph.graph.io._text import BINARY_HEAD, nul_refusal, os_error

        try:
            bad = nul_refusal(name, os.pread(f.fileno(), BINARY_HEAD, 0))
        except OSError as exc:
            bad = os_error(name, exc)
        if bad is not None:
            f.close()
            raise bad
    skip = False
    if header and stop > begin:  # the range that holds the header line's first byte skips it
        from asapgraph.graph.io._text import BINARY_HEAD, nul_refusal, os_error

        try:   # (the head's refusal first, as one process makes it)
            bad = nul_refusal(name, os.pread(f.fileno(), BINARY_HEAD, 0)) if begin == 0 \
                else None
            at = header_offset(path) if bad is None else None
        except OSError as exc:
            bad = os_error(name, exc)
        except InputError as exc:   # a bare CR up to it: every range refuses it alike
            bad = exc
        if bad is not None:
            f.close()
            raise bad
        skip = at is not None and begin <= at < stop
    acc = _parse.EdgeAccumulator(src_col, dst_col, wc, id32)
    try:
        if stop <= begin or not parse_mapped(f, acc, path, None, chunk_bytes, None, begin,
                                             stop, header=skip):
            for _ in feed_blocks(_RangeReader(f, begin, stop), acc, path, None, chunk_bytes,
                                 header=skip):
                pass
    except InputError as err:
        if err.line is not None and begin > 0:
            line0 = count_lines_before(path, begin) + 1
            if acc.error is not None:  # the message too (the header hint is line 1's)
                from asapgraph.graph.io._text import error_message

                raise InputError(err.path, *error_message(acc.error, line0)) from None
            raise InputError(err.path, err.line + line0 - 1, err.message) from None
        raise
    finally:
        f.close()
    first_line = None
    mx = acc.max_id
    s, d, w = acc.take()
    el = EdgeList(s, d, w, name, first_line)
    el.max_id = int(mx)  # the parser's: no pass over the ids to find it (the rank loader)
    return el
