"""Graph input/output: text edge lists, Matrix Market, ``.npy``, the binary ``.asg`` format.

Text edge lists (SNAP style)
----------------------------
One edge per line, ``src dst [weight] [more columns...]``; columns separated by
tabs, spaces or commas (runs of them count as one separator); lines starting with
``#`` or ``%`` are comments; blank lines, CRLF endings and trailing blanks are
fine.  Files compressed with gzip, bzip2 or xz are recognised by their magic bytes
(so the usual ``.gz``/``.bz2``/``.xz`` names work, and so does a misnamed file);
``-`` reads standard input (compressed or not).  ``header=True`` (CLI ``--header``): the
first line that is neither blank nor a comment is a header (``source,target,weight``),
skipped whatever it holds; the other lines keep their numbers in messages.

Ids are any integers in ``0..2**63-1``, sparse and in any order; they are remapped to
dense internal ids ``0..n-1`` in increasing order of original id, and every output
reports original ids.  The weight is column 3 (``weight_col`` selects another
1-based column; extra columns such as SNAP timestamps are ignored).

Semantics (networkx ``MultiDiGraph`` and igraph): **every line is one edge**.
Duplicate lines are parallel edges (their weights add up in every algorithm),
self-loops are kept.  ``undirected=True`` adds both directions of every edge (a
self-loop once).

Loading streams: the input is read in 32 MiB blocks, parsed in parallel by a C
parser straight into growable int32 arrays (int64 only when an id needs it), so
peak memory is about the final graph, not the text.

Errors: every problem with the input raises :class:`asapgraph.errors.InputError`
whose text is ``FILE:LINE: message`` (1-based physical line of the decompressed
file; no line when it makes no sense).

Public functions
----------------
read_edges, load_graph, iter_edge_chunks, parse_byte_range, count_lines_before,
first_negative_weight,
save_binary, load_binary, detect_format, EdgeList.
"""
from __future__ import annotations

__all__ = ["EdgeList", "read_edges", "load_graph", "iter_edge_chunks", "parse_byte_range",
           "count_lines_before", "first_negative_weight", "save_binary", "load_binary",
           "detect_format", "BINARY_EXTENSION", "BINARY_FORMAT_VERSION", "CHUNK_BYTES"]

#: Where each public name lives, imported on first use (PEP 562): importing this package
#: (or a light submodule such as :mod:`.atomic`, which the command line's up-front ``-o``
#: check needs before it starts ``mpiexec``) loads neither numpy nor a kernel.
_HOME = {"EdgeList": "_text", "CHUNK_BYTES": "_text", "save_binary": "_binary",
         "load_binary": "_binary", "BINARY_EXTENSION": "_binary",
         "BINARY_FORMAT_VERSION": "_binary"}


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    mod = import_module(f".{_HOME.get(name, '_readers')}", __name__)
    attr = {"BINARY_EXTENSION": "EXTENSION", "BINARY_FORMAT_VERSION": "FORMAT_VERSION"}
    try:
        value = getattr(mod, attr.get(name, name))
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
