"""The outcome of a vertex program run: values by vertex, ids, iterations, statistics.

Rationale
---------
One result type for every engine (the single-process one of
:mod:`asapgraph.engine.single` and the MPI engines of :mod:`asapgraph.engine.distributed`),
so callers (the algorithm library, the CLI emitter, the networkx backend) read the same
attributes whichever engine ran: values indexed by dense vertex id next to the original
ids (and labels, when the graph had them), plus the per-run statistics.
"""
from __future__ import annotations

__all__ = ["ProgramResult"]


class ProgramResult:
    """Outcome of :func:`run`.

    Attributes
    ----------
    values : ndarray or dict of ndarrays
        What the program's ``result`` returned, indexed by dense vertex id.
    ids : int64 array
        Original id of each vertex (``values[i]`` belongs to vertex ``ids[i]``).
    iterations : int
        Supersteps (BSP) or sweeps (ASAP) run.
    converged : bool
        The program's termination test was met before ``max_iter``.
    stats : dict
        ``mode``, ``seconds``, ``edges_scanned``, ``iteration_seconds`` (list),
        ``dense_steps``, ``sparse_steps``, ``residual`` (last one, when defined).
    """

    def __init__(self, values, ids, iterations, converged, stats, name="program"):
        self.values = values
        self.ids = ids
        self.iterations = iterations
        self.converged = converged
        self.stats = stats
        self.name = name
        #: vertex labels (strings, tuples, ...) when the graph had them (``Graph.labels``)
        self.labels = None

    def columns(self):
        """``{column name: array}`` of the result (one column named after the program)."""
        if isinstance(self.values, dict):
            return dict(self.values)
        return {self.name: self.values}

    def vertices(self):
        """Original label (or id) of every vertex, aligned with the values."""
        return self.ids if self.labels is None else self.labels

    def to_dict(self):
        """``{original id or label: value}`` (single-column results only)."""
        if isinstance(self.values, dict):
            raise ValueError("result has several columns; use columns()")
        return dict(zip(self.vertices().tolist(), self.values.tolist()))

    def to_pandas(self):
        """A DataFrame: column ``node`` (original ids or labels), then the result columns."""
        from asapgraph.graph.convert import require

        pd = require("pandas")
        return pd.DataFrame({"node": self.vertices(), **self.columns()})

    def __repr__(self):
        return (f"ProgramResult({self.name}, n={len(self.ids)}, iterations={self.iterations}, "
                f"converged={self.converged})")
