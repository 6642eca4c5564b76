"""Helpers shared by the command drivers: exit statuses, the MPI launcher's
environment, progress, loading the input, the early ``-o`` check, stderr lines."""
from __future__ import annotations

import sys
import time

from asapgraph.comm.launch import mpi_rank_from_env, mpi_world_size_from_env

__all__ = ["EXIT_OK", "EXIT_INTERNAL", "EXIT_INPUT", "EXIT_UNCONVERGED", "EXIT_INTERRUPTED",
           "EXIT_PIPE", "peak_rss_bytes", "mpi_world_size_from_env", "mpi_rank_from_env",
           "wants_distributed", "progress_for", "load_input", "check_output_path",
           "read_vertex_values", "dense_vector", "err"]

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT, EXIT_UNCONVERGED = 0, 1, 2, 3
EXIT_INTERRUPTED, EXIT_PIPE = 130, 141


def peak_rss_bytes():
    """Peak resident set size of this process, in bytes (see :mod:`asapgraph._rss`)."""
    from asapgraph._rss import peak_rss_bytes as peak

    return peak()


def wants_distributed(args, environ=None):
    """True when the run must go through :func:`asapgraph.cli.distributed.run_distributed`."""
    if getattr(args, "np", 1) > 1:
        return True
    size = mpi_world_size_from_env(environ)
    return size is not None and size > 1


def progress_for(args):
    from asapgraph.progress import Progress

    return Progress(quiet=getattr(args, "quiet", False))


def load_input(args, progress=None):
    """Load ``args.input`` with the input options; returns ``(graph, load_seconds)``."""
    from asapgraph.graph import io as _io

    weighted = bool(args.weighted or args.weight_col is not None)
    t0 = time.perf_counter()
    g = _io.load_graph(args.input, weighted=weighted, undirected=args.undirected,
                       weight_col=args.weight_col, progress=progress,
                       labels=getattr(args, "labels", False))
    if weighted and hasattr(g, "indptr"):  # where a refusal finds the weights' line
        g.weight_col = args.weight_col
    return g, time.perf_counter() - t0


def check_output_path(path):
    """Fail before any work when ``-o`` cannot be written (bad extension, no directory,
    not a directory, no file can be created there)."""
    if path is None:
        return
    from asapgraph.graph.io.atomic import check_output_dir, output_format

    output_format(path)
    check_output_dir(path)


def read_vertex_values(path):
    """Read a ``node value`` file; see :func:`asapgraph.options.read_vertex_values`."""
    from asapgraph.options import read_vertex_values as read

    return read(path)


def dense_vector(graph, path):
    """A node-value file as a dense float64 vector over the graph's vertices."""
    from asapgraph.options import LabelledValues, dense_vertex_values

    if getattr(graph, "labels", None) is not None:  # --labels: the file names vertices
        path = LabelledValues(path, graph.labels)
    return dense_vertex_values(graph.original_ids(), path)



def err(msg):
    try:
        sys.stderr.write(msg.replace("\n", " ") + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass

