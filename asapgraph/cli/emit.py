"""The one emitter of results: ``-o`` (atomic file), then ``--json`` / ``--top`` / the
default summary on stdout, for PageRank (:func:`emit_results`) and the vertex programs
(:func:`emit_program`: result columns, ``--top`` tables by value, group or reach)."""
from __future__ import annotations

import sys
import time

from asapgraph.cli.common import flush_stdout, peak_rss_bytes, write_stdout
from asapgraph.options import env_knobs

__all__ = ["emit_results", "emit_program", "result_columns", "named_groups"]


def _node(x):
    """A vertex id or label as a plain Python value (int for ids, str for text labels)."""
    import numpy as np

    return int(x) if isinstance(x, (int, np.integer)) else (x.item() if hasattr(x, "item") else x)



def emit_results(args, ids, values, name, summary, out=None, score_name=None):
    """Write ``-o``, then print ``--json`` / ``--top`` / the default summary on stdout.

    Parameters
    ----------
    args : argparse.Namespace
        With ``output``, ``top``, ``json`` (see :func:`add_output_options`).
    ids, values : arrays of length n
        Original vertex ids and the per-vertex result.
    name : str
        Name of the value column in files (``rank``, ``distance`` ...).
    summary : dict
        Figures of the run; printed as JSON with ``--json`` (plus ``output`` and
        ``write_seconds``), else as ``key: value`` lines before the default top 10.
    out : file, optional
        Stream for stdout output (default ``sys.stdout``).
    score_name : str, optional
        Heading of the value column in the printed table (default ``name``).
    """
    from asapgraph.graph.io.output import format_top, json_dumps, top_order, write_values

    out = sys.stdout if out is None else out
    score_name = name if score_name is None else score_name
    summary = dict(summary)
    if args.output is not None:
        t0 = time.perf_counter()
        write_values(args.output, ids, {name: values})
        summary["output"] = args.output
        summary["write_seconds"] = time.perf_counter() - t0
    if args.json:
        if args.top is not None:  # --top 0 too: "top": [] (it was left out, as if not given)
            sel = top_order(ids, values, args.top)
            summary["top"] = [[_node(i), float(v)] for i, v in zip(ids[sel], values[sel])]
        summary["peak_rss_bytes"] = peak_rss_bytes()
        summary["env"] = env_knobs()
        write_stdout(out, json_dumps(summary) + "\n")
    elif args.top is not None:
        write_stdout(out, format_top(ids, values, args.top, score_name))
    elif args.output is None:
        for k in ("input", "vertices", "edges", "iterations", "converged", "residual",
                  "load_seconds", "compute_seconds"):
            if k in summary:
                v = summary[k]
                write_stdout(out, f"{k}: {v:.3g}\n" if isinstance(v, float) else f"{k}: {v}\n")
        write_stdout(out, format_top(ids, values, 10, score_name))
    flush_stdout(out)



def _format_table(head, rows):
    """Right-aligned text table from string rows (ends with a newline)."""
    if not rows:
        return ""
    w = [max(len(head[c]), *(len(r[c]) for r in rows)) for c in range(len(head))]
    lines = ["  ".join(h.rjust(w[c]) for c, h in enumerate(head))]
    lines += ["  ".join(r[c].rjust(w[c]) for c in range(len(head))) for r in rows]
    return "\n".join(lines) + "\n"


def _fmt(v):
    import numpy as np

    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return "%.10g" % float(v)


def _top_rows(algo, ids, columns, k):
    """``(heading, json_rows, table_rows)`` of the ``--top`` selection.

    * ``values``: the K highest values of the first column (ties: smaller id), every
      column shown;
    * ``groups``: the K largest groups of equal value (components, communities):
      ``label, size`` (ties: smaller label);
    * ``reachable``: the K farthest reachable vertices (unreachable ones excluded).
    """
    import numpy as np

    from asapgraph.graph.io.output import top_order

    names = list(columns)
    first = np.asarray(columns[names[0]])
    if algo.top == "groups":
        labels, sizes = np.unique(first, return_counts=True)
        sel = top_order(labels, sizes.astype(np.float64), k)
        head = ("rank", names[0], "size")
        js = [[_node(labels[i]), int(sizes[i])] for i in sel]
        rows = [(str(r + 1), str(_node(labels[i])), str(int(sizes[i])))
                for r, i in enumerate(sel)]
        return head, js, rows
    idx = np.arange(first.shape[0])
    if algo.top == "reachable":
        idx = idx[np.isfinite(first) & (first >= 0)]
    sel = idx[top_order(ids[idx], first[idx].astype(np.float64), k)]
    head = ("rank", "node", *names)
    js = [[_node(ids[i]), *(np.asarray(columns[c])[i].item() for c in names)] for i in sel]
    rows = [(str(r + 1), str(_node(ids[i])), *(_fmt(np.asarray(columns[c])[i]) for c in names))
            for r, i in enumerate(sel)]
    return head, js, rows


def emit_program(args, algo, ids, columns, summary, out=None):
    """``-o`` then ``--json`` / ``--top`` / default summary, as :func:`emit_results`."""
    from asapgraph.graph.io.output import json_dumps, write_values

    out = sys.stdout if out is None else out
    summary = dict(summary)
    if args.output is not None:
        t0 = time.perf_counter()
        write_values(args.output, ids, columns)
        summary["output"] = args.output
        summary["write_seconds"] = time.perf_counter() - t0
    if args.json:
        if args.top is not None:  # --top 0: "top": [], as emit_results
            summary["top"] = _top_rows(algo, ids, columns, args.top)[1]
        summary["peak_rss_bytes"] = peak_rss_bytes()
        summary["env"] = env_knobs()
        write_stdout(out, json_dumps(summary) + "\n")
    elif args.top is not None:
        head, _, rows = _top_rows(algo, ids, columns, args.top)
        write_stdout(out, _format_table(head, rows))
    elif args.output is None:
        keys = ("input", "vertices", "edges", "source", "components", "largest_component",
                "communities", "largest_community", "reachable", "max_distance", "max_level",
                "iterations", "converged", "residual", "load_seconds", "compute_seconds")
        for k in keys:
            if k in summary and summary[k] is not None:
                v = summary[k]
                write_stdout(out, f"{k}: {v:.3g}\n" if isinstance(v, float) else f"{k}: {v}\n")
        head, _, rows = _top_rows(algo, ids, columns, 10)
        write_stdout(out, _format_table(head, rows))
    flush_stdout(out)


def result_columns(algo, res):
    cols = res.columns()
    if algo.columns is not None:
        missing = [c for c in algo.columns if c not in cols]
        if missing:  # single-column programs name their column after the program
            if len(cols) == 1 and len(algo.columns) == 1:
                cols = {algo.columns[0]: next(iter(cols.values()))}
            else:
                raise RuntimeError(f"{algo.command}: result has columns {list(cols)}, "
                                   f"expected {algo.columns}")
        cols = {c: cols[c] for c in algo.columns}
    import numpy as np

    return {k: np.asarray(v) for k, v in cols.items()}



def named_groups(names, columns, ids=None):
    """Group columns (components, communities) hold the original id of a vertex; with
    ``--labels`` that id numbers the vertex densely (``ids``: the graph's original ids,
    when not ``0..n-1``): write the vertex's name instead (one process and K ranks)."""
    import numpy as np

    names = np.asarray(names)
    out = {}
    for k, v in columns.items():
        v = np.asarray(v, dtype=np.int64)
        out[k] = names[v if ids is None else np.searchsorted(ids, v)]
    return out
