"""Commands on graphs themselves: ``info`` (counts and degree summary), ``convert`` (to
the binary ``.asg``) and ``generate`` (R-MAT / Erdős–Rényi edge lists)."""
from __future__ import annotations

import os
import sys
import time

from asapgraph._version import __version__
from asapgraph.cli.common import (EXIT_OK, flush_stdout, input_summary, load_input,
                                  progress_for, write_stdout)
from asapgraph.cli.options import (Formatter, add_input_options, add_one_process_np, nonneg_int,
                                   positive_int)
from asapgraph.errors import InputError

__all__ = ["graph_stats", "write_edge_list", "register_info", "cmd_info", "register_convert",
           "cmd_convert", "register_generate", "cmd_generate"]


def graph_stats(graph):
    """Counts of a graph, vectorised: self-loops, duplicates, dangling, degree summary.

    Returns
    -------
    dict
        ``vertices, edges, self_loops, duplicate_edges`` (edges whose ``(src, dst)`` pair
        occurred before), ``dangling`` (out-degree 0), ``in_degree``/``out_degree``
        ``{min, median, max}``, ``weighted``, ``original_id_min/max``.
    """
    import numpy as np

    n, m = graph.n, graph.m
    indptr = np.asarray(graph.indptr)
    dst = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    src = np.asarray(graph.indices, dtype=np.int64)
    loops = int(np.count_nonzero(src == dst))
    if m:
        key = src * np.int64(n) + dst if n < 3_037_000_499 else None
        if key is not None:
            uniq = np.unique(key).shape[0]
        else:
            uniq = np.unique(np.stack([src, dst], axis=1), axis=0).shape[0]
    else:
        uniq = 0
    indeg = np.diff(indptr)
    outdeg = np.asarray(graph.out_degree)

    def summ(d):
        if d.size == 0:
            return {"min": 0, "median": 0.0, "max": 0}
        return {"min": int(d.min()), "median": float(np.median(d)), "max": int(d.max())}

    ids = graph.original_ids()
    out = {
        "vertices": n, "edges": m, "self_loops": loops, "duplicate_edges": m - uniq,
        "dangling": int(np.count_nonzero(outdeg == 0)),
        "in_degree": summ(indeg), "out_degree": summ(outdeg),
        "weighted": graph.weights is not None,
        "original_id_min": int(ids.min()) if n else None,
        "original_id_max": int(ids.max()) if n else None,
    }
    if getattr(graph, "labels", None) is not None:  # --labels: names, not integer ids
        names = np.asarray(graph.labels)
        out["original_id_min"] = out["original_id_max"] = None
        out["labels"] = True
        out["label_first"] = str(names[0]) if n else None   # in sorted order
        out["label_last"] = str(names[-1]) if n else None
    return out


def register_info(sub):
    p = sub.add_parser("info", help="counts and degree summary of a graph",
                       formatter_class=Formatter,
                       description="Vertices, edges, self-loops, duplicate edges, dangling "
                                   "vertices, in/out-degree min/median/max, weighted or not.",
                       epilog="example:\n  asapgraph info datasets/rmat-12.txt.gz --json\n")
    add_input_options(p)
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    add_one_process_np(p)
    p.set_defaults(func=cmd_info)
    return p


def cmd_info(args):
    from asapgraph.graph.io.output import json_dumps

    prog = progress_for(args)
    graph, load_s = load_input(args, prog)
    # the input options read (--undirected, --weight-col, --labels), as every command's
    # --json shows them (info's had none: '--undirected' doubled 'edges' unsaid)
    st = {"input": args.input, **graph_stats(graph),
          **input_summary(args, graph.weights is not None), "load_seconds": load_s}
    # a binary graph saved weighted, read without --weighted: say that it holds weights
    # (it said "weighted: no", as if the file had none)
    st["stored_weights"] = st["weighted"] or _asg_weighted(args.input)
    if args.json:
        write_stdout(sys.stdout, json_dumps(st) + "\n")
    else:
        lines = [
            f"input:            {args.input}",
            f"vertices:         {st['vertices']:,}",
            f"edges:            {st['edges']:,}",
            f"self-loops:       {st['self_loops']:,}",
            f"duplicate edges:  {st['duplicate_edges']:,}",
            f"dangling:         {st['dangling']:,}",
            "in-degree:        min {min}  median {median:g}  max {max}".format(**st["in_degree"]),
            "out-degree:       min {min}  median {median:g}  max {max}".format(**st["out_degree"]),
            "weighted:         " + ("yes" if st["weighted"] else
                                    "no (the file stores weights: --weighted reads them)"
                                    if st["stored_weights"] else "no"),
            (f"vertex names:     {st['label_first']!r} .. {st['label_last']!r} (sorted)"
             if st.get("labels") else
             f"original ids:     {st['original_id_min']}..{st['original_id_max']}"),
        ]
        write_stdout(sys.stdout, "\n".join(lines) + "\n")
    flush_stdout(sys.stdout)
    return EXIT_OK


def _asg_weighted(path):
    """``path`` is a binary graph (.asg) saved with weights (header flag bit 0; any other
    input -- a text file, a generator spec, stdin -- is not)."""
    from asapgraph.graph.io._binary import read_header

    try:
        return bool(read_header(path)["flags"] & 1)
    except (OSError, InputError, TypeError):
        return False


# ----------------------------------------------------------------------------- convert


def register_convert(sub):
    p = sub.add_parser("convert", help="convert a graph to the binary .asg format",
                       formatter_class=Formatter,
                       description="Read any supported input and write asapgraph's binary "
                                   "format (.asg), which loads at memory speed.",
                       epilog="example:\n  asapgraph convert web.txt.gz web.asg\n")
    add_input_options(p)
    p.add_argument("out", metavar="OUT", help="output file, must end in .asg")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    add_one_process_np(p)
    p.set_defaults(func=cmd_convert)
    return p


def cmd_convert(args):
    from asapgraph.graph.io.atomic import refuse_directory

    refuse_directory(args.out, "out.asg")
    if not args.out.lower().endswith(".asg"):
        raise InputError(args.out, None, "the binary format needs the extension .asg")
    if getattr(args, "labels", False):  # (it wrote dense numbers and dropped the names)
        raise InputError("asapgraph convert", None, "--labels: the binary format stores "
                         "integer ids only, not vertex names; run the command on the text "
                         "file with --labels, or number the vertices first")
    from asapgraph.graph import io as _io
    from asapgraph.graph.io.output import check_output_dir

    check_output_dir(args.out)
    prog = progress_for(args)
    graph, load_s = load_input(args, prog)
    t0 = time.perf_counter()
    _io.save_binary(graph, args.out)   # temporary file + rename: never half-written
    prog.done(f"wrote {args.out}: {graph.n:,} vertices, {graph.m:,} edges "
              f"(load {load_s:.2f} s, write {time.perf_counter() - t0:.2f} s)")
    return EXIT_OK


# ----------------------------------------------------------------------------- generate

_TEXT_EXT = (".txt", ".el", ".tsv", ".edges")
_COMPRESS = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}


def register_generate(sub):
    p = sub.add_parser("generate", help="write a synthetic graph (R-MAT, Erdős–Rényi)",
                       formatter_class=Formatter,
                       description="Generate a graph from a seed and write it as a text "
                                   "edge list (.txt/.el/.tsv, optionally .gz/.bz2/.xz) or "
                                   "in the binary format (.asg).",
                       epilog="examples:\n"
                              "  asapgraph generate rmat --scale 20 -o rmat-20.txt.gz\n"
                              "  asapgraph generate er --vertices 1000000 --edges 16000000 "
                              "-o er.asg\n")
    gs = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    r = gs.add_parser("rmat", help="R-MAT / Graph500 Kronecker (a=0.57, b=0.19, c=0.19)",
                      formatter_class=Formatter)
    r.add_argument("--scale", type=nonneg_int, required=True, metavar="S",
                   help="2**S vertices")
    r.add_argument("--edge-factor", type=nonneg_int, default=16, metavar="EF",
                   help="EF * 2**S edges")
    e = gs.add_parser("er", help="Erdős–Rényi G(n, m), edges drawn with replacement",
                      formatter_class=Formatter)
    e.add_argument("--vertices", type=positive_int, required=True, metavar="N")
    e.add_argument("--edges", type=nonneg_int, required=True, metavar="M")
    for q in (r, e):
        q.add_argument("--seed", type=nonneg_int, default=0, metavar="N", help="random seed")
        q.add_argument("-o", "--output", required=True, metavar="FILE",
                       help="text edge list (.txt, .el, .tsv, + .gz/.bz2/.xz) or .asg")
        q.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
        add_one_process_np(q)
        q.set_defaults(func=cmd_generate)
    return p


def _generate_command_line(args):
    if args.model == "rmat":
        opts = f"--scale {args.scale} --edge-factor {args.edge_factor}"
    else:
        opts = f"--vertices {args.vertices} --edges {args.edges}"
    return (f"asapgraph generate {args.model} {opts} --seed {args.seed} "
            f"-o {os.path.basename(args.output)}")


def write_edge_list(path, src, dst, header_lines=(), compresslevel=9):
    """Write ``src<TAB>dst`` lines (with ``#`` header lines) atomically; compression by
    extension (.gz, .bz2, .xz; gzip with mtime 0 so the bytes are reproducible)."""
    import bz2
    import gzip
    import lzma

    from asapgraph.graph.io.output import atomic_write, format_rows

    low = path.lower()
    comp = next((c for ext, c in _COMPRESS.items() if low.endswith(ext)), None)
    with atomic_write(path, "wb") as raw:
        if comp == "gzip":
            f = gzip.GzipFile(filename="", fileobj=raw, mode="wb", compresslevel=compresslevel,
                              mtime=0)
        elif comp == "bz2":
            f = bz2.BZ2File(raw, "wb", compresslevel=compresslevel)
        elif comp == "xz":
            f = lzma.LZMAFile(raw, "wb")
        else:
            f = raw
        try:
            f.write("".join(f"# {h}\n" for h in header_lines).encode())
            step = 1 << 21
            for s in range(0, len(src), step):
                f.write(format_rows([src[s:s + step], dst[s:s + step]], sep="\t"))
        finally:
            if f is not raw:
                f.close()


def cmd_generate(args):
    from asapgraph.graph import generators
    from asapgraph.graph import io as _io
    from asapgraph.graph.core import Graph
    from asapgraph.graph.io.atomic import refuse_directory

    out = args.output
    refuse_directory(out, "out.txt")
    low = out.lower()
    base = low
    for ext in _COMPRESS:
        if base.endswith(ext):
            base = base[: -len(ext)]
    binary = low.endswith(".asg")
    if not binary and os.path.splitext(base)[1] not in _TEXT_EXT:
        raise InputError(out, None, "unknown output format; use .txt, .el, .tsv or .edges "
                                    "(optionally + .gz/.bz2/.xz) or .asg")
    from asapgraph.graph.io.output import check_output_dir

    check_output_dir(out)
    prog = progress_for(args)
    t0 = time.perf_counter()
    try:
        if args.model == "rmat":
            n = 1 << args.scale
            src, dst = generators.rmat(args.scale, args.edge_factor, args.seed)
            what = (f"R-MAT scale {args.scale} (Graph500 a=0.57 b=0.19 c=0.19, permuted ids), "
                    f"edge factor {args.edge_factor}, seed {args.seed}")
        else:
            n = args.vertices
            src, dst = generators.erdos_renyi(args.vertices, args.edges, args.seed)
            what = f"Erdős–Rényi G(n={n}, m={args.edges}) with replacement, seed {args.seed}"
    except ValueError as exc:
        raise InputError(f"generate {args.model}", None, str(exc)) from None
    if not binary and not len(src):  # (the readers refuse an edge list without edges)
        raise InputError(out, None, "no edges to write: a text edge list cannot hold vertices "
                                    "without edges (ask for edges, or write .asg, which "
                                    "keeps them)")
    prog.stage(f"generated {len(src):,} edges in {time.perf_counter() - t0:.2f} s; writing {out}")
    if binary:
        _io.save_binary(Graph.from_edges(src, dst, n=n, source=out), out)
    else:
        header = [
            f"Directed graph: {what}",
            f"Made by asapgraph {__version__}: {_generate_command_line(args)}",
            f"Nodes: {n} Edges: {len(src)} (duplicate edges and self-loops kept; vertices "
            "without edges do not appear)",
            "FromNodeId\tToNodeId",
        ]
        write_edge_list(out, src, dst, header)
    prog.done(f"wrote {out}: {n:,} vertices, {len(src):,} edges")
    return EXIT_OK

