"""Writing per-vertex results: CSV/TSV (optionally gzipped), ``.npy``, ``.parquet``.

Rationale
---------
Results are one row per vertex (``node`` = original id, then one or more value
columns); the format is chosen by the extension (:func:`output_format`) and checked
before anything is computed.  Three properties matter, each owned by its own module:

* **Atomicity** (:mod:`asapgraph.graph.io.atomic`): the file appears by a rename of a
  temporary file next to it, only on success; that module also checks a path up front
  (:func:`output_format`, :func:`check_output_dir`) without loading numpy.
* **Exact floats, fast** (:mod:`asapgraph.graph.io.rowformat`): text rows use ``%.17g``
  (round-trips every float64), formatted in numpy with no per-row Python loop.
* **Summaries** (:mod:`asapgraph.graph.io.tables`): the ``--top`` table and one-line JSON.

This module owns the file formats (:func:`write_values`) and re-exports the public names
of the three, so ``from asapgraph.graph.io.output import ...`` keeps working.
"""
from __future__ import annotations

import gzip

import numpy as np

from asapgraph.graph.io.atomic import FORMATS, atomic_write, check_output_dir, output_format
from asapgraph.graph.io.tables import format_top, json_dumps, top_order

__all__ = [
    "atomic_write",
    "write_values",
    "format_rows",
    "format_top",
    "top_order",
    "json_dumps",
    "output_format",
    "check_output_dir",
    "FORMATS",
]

# ----------------------------------------------------------------------------- files


def write_values(path, ids, columns, fsync=False):
    """Write one row per vertex to ``path``, the format chosen by the extension.

    Parameters
    ----------
    path : str or path-like
        ``.csv`` (comma, header line), ``.tsv`` (tab, header line), either with
        ``.gz`` appended for gzip; ``.npy`` (a structured array with fields
        ``node`` and the column names); ``.parquet`` (needs pyarrow).
    ids : int array, shape (n,)
        Original vertex ids (first column, named ``node``).
    columns : dict of str to array, shape (n,)
        Value columns in order, e.g. ``{"rank": ranks}``.
    fsync : bool
        Flush to stable storage before the final rename.

    Raises
    ------
    InputError
        Unknown extension, or ``.parquet`` without pyarrow; nothing is written then.

    Notes
    -----
    The file appears atomically (see :func:`atomic_write`); floats in text formats
    are written with ``%.17g`` so they read back bit-for-bit.
    """
    fmt, gz = output_format(path)
    ids = _node_column(ids)
    # (a column of names -- components of a graph whose vertices are named by text, read
    # from Parquet or networkx as objects -- is written as the node column is: it raised
    # "cannot format a column of dtype object")
    cols = {k: _node_column(v) if np.asarray(v).dtype.kind == "O" else np.asarray(v)
            for k, v in columns.items()}
    for k, v in cols.items():
        if v.shape != ids.shape:
            raise ValueError(f"column {k!r} has shape {v.shape}, ids have {ids.shape}")
    names = ["node", *cols]
    if fmt in ("csv", "tsv"):
        from asapgraph.graph.io.rowformat import format_rows  # its tables cost ~10 ms

        sep = "," if fmt == "csv" else "\t"
        with atomic_write(path, "wb", fsync=fsync) as raw:
            f = (gzip.GzipFile(filename="", fileobj=raw, mode="wb", compresslevel=6, mtime=0)
                 if gz else raw)
            try:
                f.write((sep.join(names) + "\n").encode())
                data = [ids, *cols.values()]
                step = 1 << 20
                for s in range(0, ids.shape[0], step):
                    if ids.dtype.kind in "iu":
                        f.write(format_rows([c[s:s + step] for c in data], sep=sep))
                    else:
                        f.write(_labelled_rows(ids[s:s + step], [c[s:s + step] for c in data[1:]],
                                               sep))
            finally:
                if gz:
                    f.close()
    elif fmt == "npy":
        dt = np.dtype([("node", ids.dtype)] + [(k, v.dtype) for k, v in cols.items()])
        rec = np.empty(ids.shape[0], dtype=dt)
        rec["node"] = ids
        for k, v in cols.items():
            rec[k] = v
        with atomic_write(path, "wb", fsync=fsync) as f:
            np.save(f, rec, allow_pickle=False)
    else:  # parquet
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table({"node": ids, **cols})
        with atomic_write(path, "wb", fsync=fsync) as f:
            pq.write_table(table, f)


def _node_column(ids):
    """The ``node`` column: integer ids as int64, anything else (``--labels`` names,
    networkx/pandas labels: strings, tuples, floats, ints past int64) as text.  A float
    or object label was cast to int64 (4.5 written as 4) or raised TypeError."""
    ids = np.asarray(ids)
    if ids.dtype.kind == "u" and ids.size and int(ids.max()) >= 2**63:
        return ids.astype(str)  # (uint64 labels, e.g. a Parquet column: 2**64-1 was -1)
    if ids.dtype.kind in "iub":
        return ids.astype(np.int64)
    if ids.dtype.kind in "US":
        return ids
    vals = ids.tolist()
    if all(type(v) is int and -2**63 <= v < 2**63 for v in vals):
        return np.array(vals, dtype=np.int64).reshape(ids.shape)
    return np.array(list(map(str, vals)), dtype=str).reshape(ids.shape)


def _quoted(texts, sep):
    """CSV quoting (RFC 4180, as Python's ``csv`` and pandas read it) of the texts that
    need it: a separator, a quote, a line break, or surrounding blanks."""
    if not texts:
        return texts
    joined = "".join(texts)
    if sep not in joined and '"' not in joined and "\n" not in joined and "\r" not in joined \
            and not any(t[:1].isspace() or t[-1:].isspace() for t in texts):
        return texts
    special = (sep, '"', "\n", "\r")
    return ['"' + t.replace('"', '""') + '"'
            if any(c in t for c in special) or t[:1].isspace() or t[-1:].isspace() or t == ""
            else t for t in texts]


def _labelled_rows(labels, cols, sep):
    """CSV/TSV lines ``label<sep>values...`` (labels as text; no per-row Python code)."""
    from asapgraph.graph.io.rowformat import format_rows

    if any(c.dtype.kind in "US" for c in cols):  # names as values (components of --labels)
        text = [_quoted(c.astype(str).tolist(), sep) if c.dtype.kind in "US" else
                format_rows([c], sep=sep).decode().split("\n")[:-1] for c in cols]
        vals = list(map(sep.join, zip(*text)))
    else:
        vals = (format_rows(cols, sep=sep).decode().split("\n")[:-1] if cols
                else [""] * len(labels))
    names = _quoted(labels.astype(str).tolist(), sep)
    lines = map(sep.join, zip(names, vals)) if cols else names
    return ("\n".join(lines) + "\n").encode() if len(labels) else b""


def __getattr__(name):  # ``format_rows`` is re-exported, imported on first use
    if name == "format_rows":
        from asapgraph.graph.io.rowformat import format_rows

        return format_rows
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
