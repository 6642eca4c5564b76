"""Graphs in from scipy sparse matrices, pandas DataFrames, pyarrow Tables, label arrays and
networkx graphs (:func:`as_graph`, what every public entry point accepts as a graph).

Rationale
---------
Every converter ends in the engine's own builders (``Graph.from_edges`` /
``Graph.from_original_ids``: a compiled counting sort, no argsort) or, for scipy, takes the
CSC arrays of the matrix as the in-CSR directly (the in-CSR of ``A`` *is* the CSC of ``A``),
so no converter loops over edges in Python.  Semantics are the engine's (networkx
``MultiDiGraph``): every row of a table is one edge, duplicate rows are parallel edges whose
weights add up, self-loops are kept.  A scipy matrix is an adjacency matrix: ``A[u, v]`` is
the (summed) weight of ``u -> v``; duplicate COO entries are summed by scipy.

Vertex labels: non-negative integer columns keep their ids (``Graph.ids``); any other
column (strings, floats, tuples, ...) is factorized once (:mod:`asapgraph.graph.labels`) and
the labels are kept in ``Graph.labels``.

pandas and pyarrow are optional: a missing one raises ``ImportError`` with one line naming
the extra to install.
"""
from __future__ import annotations

import os

import numpy as np

from asapgraph.graph.core import Graph
from asapgraph.graph.labels import factorize_pair, object_array
from asapgraph.graph.nxcsr import LabelledCSR, nodes_are_range, read_networkx

__all__ = ["from_scipy", "from_pandas", "from_arrow", "from_labels", "from_edge_array",
           "as_graph", "as_engine_graph", "require", "in_memory", "negative_weight_at"]

_EXTRA = {"pandas": "pandas", "pyarrow": "arrow", "networkx": "networkx"}


def require(module):
    """Import an optional dependency, or raise a one-line ImportError naming the extra."""
    from importlib import import_module

    try:
        return import_module(module)
    except ImportError:
        top = module.split(".")[0]
        raise ImportError(f"{top} is not installed: pip install 'asapgraph[{_EXTRA.get(top, top)}]'"
                          ) from None


def _real_weights(w):
    """float64 weights; complex ones are refused (numpy kept the real part, with only a
    ComplexWarning: ``1j`` became weight 0, a wrong answer)."""
    if np.iscomplexobj(w):
        raise ValueError("edge weights are complex numbers; asapgraph needs real weights "
                         "(take .real or abs() first)")
    return np.asarray(w, dtype=np.float64)


def _weights_or_none(w, weighted):
    """float64 weights, or None when ``weighted`` is False (or None and all are 1)."""
    if w is None or weighted is False:
        return None
    w = _real_weights(w)
    if weighted is None and (w.size == 0 or bool(np.all(w == 1.0))):
        return None
    return w


def from_scipy(matrix, *, weighted=None, source=None):
    """Graph of a square scipy sparse matrix (csr/csc/coo/..., ``*_matrix`` or ``*_array``).

    ``A[u, v]`` is the weight of edge ``u -> v`` (vertex ids are the row/column indices
    ``0..n-1``); every stored entry is one edge (explicit zeros included), duplicate COO
    entries are summed.  ``weighted=None`` keeps the data as weights unless every entry
    is 1; ``False`` drops them.

    No Python loop: a CSC matrix is used as the in-CSR as it is (indices narrowed to int32
    when they fit); a CSR matrix is transposed by the engine's counting sort, threaded by
    result rows (:func:`asapgraph.kernels._graph.transpose_csr_par`), which moves 4-byte
    ids and the weights only when there are some (scipy's ``tocsc`` moves int64 ids and
    the data, on one core: measured 2-4x slower on 16M entries); column indices are
    checked to be in range first (one parallel min/max pass); other formats go through
    scipy's ``tocsc``.
    """
    import scipy.sparse as sp

    if not sp.issparse(matrix):
        raise TypeError(f"from_scipy expects a scipy.sparse matrix or array, got "
                        f"{type(matrix).__name__}")
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"from_scipy needs a square adjacency matrix, got shape {matrix.shape}")
    # out-degrees are the row lengths of a CSR: free here, a bincount pass otherwise
    out_degree = np.diff(matrix.indptr).astype(np.int64) if matrix.format == "csr" else None
    if matrix.format == "csr":
        return _from_csr(matrix, out_degree, weighted, source)
    csc = matrix if matrix.format == "csc" else matrix.tocsc()
    if matrix.format == "coo":
        csc.sum_duplicates()
    n = csc.shape[0]
    indptr = np.asarray(csc.indptr, dtype=np.int64)
    indices = csc.indices
    if n < 2**31 - 1 and indices.dtype != np.int32:
        indices = indices.astype(np.int32)
    w = _weights_or_none(csc.data, weighted)
    return Graph(indptr, np.ascontiguousarray(indices), w, out_degree,
                 source=source or "<scipy>")


def _from_csr(A, out_degree, weighted, source):
    """:func:`from_scipy` of a CSR (the out-CSR): its in-CSR by one counting sort."""
    from asapgraph.kernels import _graph

    n = A.shape[0]
    vdt = np.int32 if n < 2**31 - 1 else np.int64
    idx = np.ascontiguousarray(A.indices, dtype=vdt)
    w = _weights_or_none(A.data, weighted)
    if idx.shape[0]:
        lo, hi = _graph.minmax(idx)
        if lo < 0 or hi >= n:
            raise ValueError(f"column index {lo if lo < 0 else hi} out of range for a "
                             f"{n} x {n} matrix")
    counts = np.zeros(n, dtype=np.int64)
    _graph.count_ids(idx, counts)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    del counts
    indices = np.empty(idx.shape[0], dtype=vdt)
    wout = None if w is None else np.empty(idx.shape[0])
    _graph.transpose_csr_par(np.ascontiguousarray(A.indptr, dtype=np.int64), idx, indptr,
                             indices, weights=None if w is None else np.ascontiguousarray(w),
                             wout=wout)
    return Graph(indptr, indices, wout, out_degree, source=source or "<scipy>")


def _column(df, name, what):
    if name not in df.columns:
        raise KeyError(f"{what} column {name!r} not in the DataFrame (columns: "
                       f"{list(df.columns)[:8]})")
    return df[name].to_numpy()


def from_labels(src, dst, weights=None, *, undirected=False, source=None):
    """Graph of edges ``src[i] -> dst[i]`` between labels of any hashable type.

    Non-negative integers keep their ids (``Graph.ids``); strings, floats, negative
    integers, tuples and other objects are mapped once to dense ids (``Graph.labels``).
    """
    src = np.asarray(src) if not isinstance(src, np.ndarray) else src
    dst = np.asarray(dst) if not isinstance(dst, np.ndarray) else dst
    if src.ndim != 1 or dst.ndim != 1:   # e.g. tuples turned into rows by np.asarray
        src, dst = object_array(src.tolist()), object_array(dst.tolist())
    if src.shape != dst.shape:
        raise ValueError(f"source and target have different lengths ({src.shape[0]} and "
                         f"{dst.shape[0]})")
    w = None if weights is None else _real_weights(weights)
    if w is not None and np.isnan(w).any():
        raise ValueError("edge weights contain NaN (missing values); fill them first")
    if (src.dtype.kind in "iu" and dst.dtype.kind in "iu"
            and (src.size == 0 or (src.min() >= 0 and dst.min() >= 0
                                   and max(int(src.max()), int(dst.max())) < 2**63))):
        # (uint64 ids past int64: labels, as networkx keys past int64 are; they were
        # cast to negative int64 and refused as 'vertex ids must be >= 0, got -92...')
        return Graph.from_original_ids(src, dst, weights=w, undirected=undirected,
                                       source=source)
    labels, s, d = factorize_pair(src, dst)
    g = Graph.from_edges(s, d, n=labels.shape[0], weights=w, source=source,
                         undirected=undirected)
    g.labels = labels
    return g


def from_pandas(df, source="source", target="target", weight=None, *, undirected=False):
    """Graph of a pandas DataFrame with one edge per row (networkx's
    ``from_pandas_edgelist`` column names by default).

    ``weight`` names the weight column (None: unweighted).  Labels of any dtype.
    """
    pd = require("pandas")
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"from_pandas expects a pandas DataFrame, got {type(df).__name__}")
    s = _column(df, source, "source")
    d = _column(df, target, "target")
    w = None if weight is None else _column(df, weight, "weight")
    if s.dtype == object or d.dtype == object or s.dtype != d.dtype:
        codes, uniques = pd.factorize(pd.concat([df[source], df[target]], ignore_index=True))
        if (codes < 0).any():
            raise ValueError("source/target columns contain missing values")
        codes = codes.astype(np.int64, copy=False)
        labels = uniques.to_numpy() if uniques.dtype != object else object_array(
            uniques.tolist())
        wa = None if w is None else np.asarray(w, dtype=np.float64)
        if wa is not None and np.isnan(wa).any():
            raise ValueError("edge weights contain NaN (missing values); fill them first")
        g = Graph.from_edges(codes[: len(df)], codes[len(df):], n=len(uniques), weights=wa,
                             source="<DataFrame>", undirected=undirected)
        g.labels = labels
        return g
    return from_labels(s, d, w, undirected=undirected, source="<DataFrame>")


def _arrow_column(table, key, default_pos, what):
    if key is None:
        key = default_pos
    if isinstance(key, int):
        if not 0 <= key < table.num_columns:
            raise KeyError(f"{what} column {key} out of range ({table.num_columns} columns)")
        return table.column(key)
    if key not in table.column_names:
        raise KeyError(f"{what} column {key!r} not in the table (columns: "
                       f"{table.column_names[:8]})")
    return table.column(key)


def _arrow_numpy(col):
    """numpy view of a numeric arrow column (zero-copy for one chunk without nulls)."""
    if col.null_count:
        raise ValueError(f"column has {col.null_count} missing values")
    if col.num_chunks == 1:
        return col.chunk(0).to_numpy(zero_copy_only=False)
    return col.to_numpy()


def from_arrow(table, source=None, target=None, weight=None, *, undirected=False,
               origin="<arrow>"):
    """Graph of a pyarrow Table with one edge per row.

    ``source``/``target``/``weight``: column names or 0-based positions (default: the
    columns named ``source``/``target``, else the first two; no weight).  Numeric columns
    of a single chunk are read without a copy; string columns are dictionary-encoded by
    Arrow's compute kernels (compiled), and the dictionary becomes ``Graph.labels``.
    """
    pa = require("pyarrow")
    if not isinstance(table, pa.Table):
        raise TypeError(f"from_arrow expects a pyarrow Table, got {type(table).__name__}")
    names = table.column_names
    if source is None and "source" in names and "target" in names:
        source, target = "source", "target"
    sc = _arrow_column(table, source, 0, "source")
    dc = _arrow_column(table, target, 1, "target")
    w = None
    if weight is not None:
        w = np.asarray(_arrow_numpy(_arrow_column(table, weight, 2, "weight")),
                       dtype=np.float64)
    numeric = pa.types.is_integer(sc.type) and pa.types.is_integer(dc.type)
    if numeric:
        return from_labels(_arrow_numpy(sc), _arrow_numpy(dc), w, undirected=undirected,
                           source=origin)
    import pyarrow.compute as pc

    if sc.null_count or dc.null_count:
        raise ValueError("source/target columns contain missing values")
    if sc.type != dc.type:
        sc, dc = sc.cast(pa.string()), dc.cast(pa.string())
    both = pa.chunked_array(sc.chunks + dc.chunks, type=sc.type)
    enc = pc.dictionary_encode(both).combine_chunks()
    codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    labels = enc.dictionary.to_numpy(zero_copy_only=False)
    m = len(table)
    g = Graph.from_edges(codes[:m], codes[m:], n=len(labels), weights=w, source=origin,
                         undirected=undirected)
    g.labels = labels
    return g


def from_edge_array(a, *, weighted=None, undirected=False, source="<ndarray>"):
    """Graph of an ``(m, 2)`` or ``(m, 3)`` numpy array of edges (third column: weight).

    The first two columns are vertex ids: integers ``>= 0`` (a negative one is refused,
    :class:`~asapgraph.errors.InputError`, as in a text edge list); other labels go
    through :func:`from_labels`."""
    a = np.asarray(a)
    if a.ndim != 2 or a.shape[1] not in (2, 3):
        raise ValueError(f"an edge array must have shape (m, 2) or (m, 3), got {a.shape}; "
                         "for an adjacency matrix use Graph.from_scipy(scipy.sparse.csr_array(a))")
    if np.iscomplexobj(a):
        raise ValueError("edge array: complex numbers; vertex ids and weights must be real")
    w = None
    if a.shape[1] == 3 and weighted is not False:
        w = a[:, 2].astype(np.float64)
    s, d = a[:, 0], a[:, 1]
    if a.dtype.kind == "f":
        if not (np.all(s == np.floor(s)) and np.all(d == np.floor(d))):
            raise ValueError("edge array: vertex ids in the first two columns must be integers")
        big = np.flatnonzero((np.abs(s) >= 2.0**63) | (np.abs(d) >= 2.0**63))
        if big.size:   # astype(int64) made them -2^63, another vertex (a wrong answer)
            i = int(big[0])
            v = s[i] if abs(s[i]) >= 2.0**63 else d[i]
            raise ValueError(f"edge array: vertex id {float(v)!r} (row {i}) does not fit in int64")
        s, d = s.astype(np.int64), d.astype(np.int64)
    if s.dtype.kind == "i" and s.size and (s.min() < 0 or d.min() < 0):
        # vertex ids, as in a text edge list or a .npy file, which refuse a negative one
        # (here it was taken as a label: audit 24)
        raise _negative_id_error(s, d, source)
    return from_labels(np.ascontiguousarray(s), np.ascontiguousarray(d), w,
                       undirected=undirected, source=source)


def _negative_id_error(s, d, source):
    """The :class:`InputError` naming the first negative vertex id of an edge array (its
    0-based row and column, as a ``.npy`` edge list's rows are named)."""
    from asapgraph.errors import InputError

    i = int(np.argmax((s < 0) | (d < 0)))
    c = 0 if s[i] < 0 else 1
    v = int(s[i] if c == 0 else d[i])
    return InputError(source, None, f"row {i}: negative vertex id {v} in column {c} (ids "
                      "must be >= 0; Graph.from_labels takes any labels)")


def _shown(v):
    """A vertex label or a weight as the user wrote it (``3``, ``-0.5``, ``'a'``)."""
    if isinstance(v, (bool, np.bool_)):
        return repr(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return repr(v.item() if isinstance(v, np.generic) else v)


def _first_negative(w):
    """Index of the first negative value of ``w`` (float64), or None."""
    neg = np.asarray(w, dtype=np.float64) < 0   # (NaN: not negative)
    return int(np.argmax(neg)) if neg.any() else None


def _row_edge(i, s, d, w, row=None):
    """``(where, value)`` of edge ``i`` of columns ``s``, ``d``, ``w`` (input row ``row``,
    default ``i``)."""
    return (f"row {i if row is None else row} (edge {_shown(s[i])} -> {_shown(d[i])})",
            _shown(w[i]))


def in_memory(source):
    """Whether a graph's ``source`` names no file: a graph built in memory (``None``,
    ``"<ndarray>"``, ``"<DataFrame>"``, ...)."""
    return source is None or (isinstance(source, str) and source.startswith("<"))


def negative_weight_at(obj, graph):
    """Where a negative edge weight of ``graph`` is, for its refusal: ``(where, value)``
    (None when it has none).  ``obj`` is what was given to the API and converted to
    ``graph`` (:func:`as_graph`): the first negative weight in the order of an edge array,
    a DataFrame or a Table, named by its 0-based row and its endpoints ("row 17 (edge 3 ->
    9)", as a ``.npy`` file's refusals name rows); of anything else (a Graph, whose input
    order is not kept, a networkx graph, a scipy matrix), the first in the graph's edge
    order, by its endpoints ("edge 3 -> 9").  An error path: one pass over the weights."""
    try:
        if isinstance(obj, np.ndarray) and obj.ndim == 2 and obj.shape[1] == 3:
            i = _first_negative(obj[:, 2])
            if i is not None:   # (integral float ids shown as the integers they are)
                ids = obj[i, :2].astype(np.int64) if obj.dtype.kind == "f" else obj[i, :2]
                return _row_edge(0, ids[:1], ids[1:], obj[i:, 2], row=i)
        mod = _module(obj)
        if mod in ("pandas", "pyarrow") and hasattr(obj, "columns" if mod == "pandas"
                                                     else "column_names"):
            cols = list(obj.columns) if mod == "pandas" else list(obj.column_names)
            s, t = ("source", "target") if {"source", "target"} <= set(cols) else cols[:2]
            if "weight" in cols:   # (as_graph's choice of columns)
                col = ((lambda c: obj[c].to_numpy()) if mod == "pandas"
                       else (lambda c: obj.column(c).to_numpy()))
                w = np.asarray(col("weight"), dtype=np.float64)
                i = _first_negative(w)
                if i is not None:
                    return _row_edge(i, col(s), col(t), w)
    except Exception:  # noqa: BLE001 -- a foreign object we could not read back: the
        pass           # graph's own edges below
    if getattr(graph, "weights", None) is None or not hasattr(graph, "vertex_labels"):
        return None
    src, dst, w = graph.edges()
    k = _first_negative(w)
    if k is None:
        return None
    lab = graph.vertex_labels()
    return f"edge {_shown(lab[src[k]])} -> {_shown(lab[dst[k]])}", _shown(w[k])


def _module(obj):
    return type(obj).__module__.split(".")[0]


#: What the Python API accepts as a graph, for the one-line error.
EXPECTED = ("an asapgraph.Graph, a networkx graph, a scipy.sparse matrix, a pandas DataFrame "
            "(source, target[, weight] columns), a pyarrow Table or an (m, 2|3) edge array")


def as_engine_graph(obj):
    """``obj`` as the engines take it: a Graph (or a rank's graph: anything with
    ``indptr`` and ``weights``) as is, else :func:`as_graph` of it (edge array, networkx,
    scipy, DataFrame, ...).  ``run``, ``pagerank`` and the programs' convenience functions
    convert with it, so a source vertex or a per-vertex vector is looked up in the graph
    the engine will see."""
    if hasattr(obj, "indptr") and hasattr(obj, "weights"):
        return obj
    return as_graph(obj)


def as_graph(obj, *, weighted=None, undirected=False):
    """An :class:`asapgraph.Graph` from any supported foreign graph object.

    networkx graphs keep their node objects as labels (``weight`` attribute used when
    ``weighted`` is not False and some edge has it); scipy matrices are adjacency
    matrices; DataFrames/Tables use the ``source``/``target`` columns (else the first two)
    and a ``weight`` column when present; arrays are edge lists.  Anything else raises a
    one-line ``TypeError`` naming what is expected and the converters.
    """
    if isinstance(obj, Graph):
        return obj
    mod = _module(obj)
    g = None
    if isinstance(obj, LabelledCSR) or (mod == "networkx" and hasattr(obj, "_adj")):
        nxg = obj if isinstance(obj, LabelledCSR) else read_networkx(
            obj, weight=None if weighted is False else "weight")
        use = "weight" if (weighted is not False and nxg.edge_data.get("weight") is not None) else None
        g = nxg.engine_graph(use)
        if not nodes_are_range(nxg.nodes):
            g.labels = nxg.node_array()
        if undirected and nxg.is_directed():
            s, d, w = g.edges()
            lab = g.labels
            g = Graph.from_edges(s, d, n=g.n, weights=w, undirected=True, source=g.source)
            g.labels = lab
        return g
    if mod == "scipy":
        import scipy.sparse as sp

        if sp.issparse(obj):
            g = from_scipy(obj, weighted=weighted)
    elif mod == "pandas" and hasattr(obj, "columns"):
        cols = list(obj.columns)
        s, t = ("source", "target") if {"source", "target"} <= set(cols) else (cols[0], cols[1]) \
            if len(cols) >= 2 else (None, None)
        if s is None:
            raise TypeError("a DataFrame graph needs source and target columns")
        w = "weight" if ("weight" in cols and weighted is not False) else None
        return from_pandas(obj, source=s, target=t, weight=w, undirected=undirected)
    elif mod == "pyarrow" and hasattr(obj, "column_names"):
        w = "weight" if ("weight" in obj.column_names and weighted is not False) else None
        return from_arrow(obj, weight=w, undirected=undirected)
    elif isinstance(obj, np.ndarray):
        return from_edge_array(obj, weighted=weighted, undirected=undirected)
    if g is None and isinstance(obj, (str, os.PathLike)):   # a file or generator spec
        raise TypeError(f"expected {EXPECTED}; got the path or spec {os.fspath(obj)!r}: "
                        "read it first, g = asapgraph.load_graph(path) (weighted=True for "
                        "its weights), then pass g")
    if g is None:
        raise TypeError(f"expected {EXPECTED}; got {type(obj).__module__}.{type(obj).__name__}"
                        " (build one with Graph.from_edges, Graph.from_labels, "
                        "Graph.from_scipy, Graph.from_pandas or asapgraph.from_networkx)")
    if undirected:
        s, d, w = g.edges()
        g = Graph.from_edges(s, d, n=g.n, weights=w, undirected=True, source=g.source)
    return g
