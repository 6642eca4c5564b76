"""Vertex programs: the public API (:class:`VertexProgram`, :func:`run`) and the
algorithm library written on it.

A program is a small Python class; see :mod:`asapgraph.programs.base` for the contract
and ``docs/tutorial.md`` for a walk-through.
"""
from .base import Context, VertexProgram, validate_program
from .components import WCCProgram, wcc
from .hits import HITSProgram, hits
from .katz import KatzProgram, katz
from .labelprop import LabelPropProgram, labelprop
from .loader import load_program
from .pagerank_program import PageRankProgram, pagerank_program
from .runner import ProgramResult, run
from .sssp import BFSProgram, SSSPProgram, bfs, sssp

__all__ = ["VertexProgram", "Context", "ProgramResult", "run", "validate_program",
           "load_program", "pagerank_program", "katz", "wcc", "sssp", "bfs", "labelprop",
           "hits", "PageRankProgram", "KatzProgram", "WCCProgram", "SSSPProgram",
           "BFSProgram", "LabelPropProgram", "HITSProgram"]
