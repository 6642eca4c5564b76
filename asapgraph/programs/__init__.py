"""Vertex programs: the public API (:class:`VertexProgram`, :func:`run`) and the
algorithm library written on it.

A program is a small Python class; see :mod:`asapgraph.engine.program` for the contract
and ``docs/tutorial.md`` for a walk-through.
"""
from asapgraph.engine.program import Context, VertexProgram, validate_program
from asapgraph.programs.components import WCCProgram, wcc
from asapgraph.programs.hits import HITSProgram, hits
from asapgraph.programs.katz import KatzProgram, katz
from asapgraph.programs.labelprop import LabelPropProgram, labelprop
from asapgraph.programs.loader import load_program
from asapgraph.programs.pagerank_program import PageRankProgram, pagerank_program
from asapgraph.engine.single import ProgramResult, run
from asapgraph.programs.sssp import BFSProgram, SSSPProgram, bfs, sssp

__all__ = ["VertexProgram", "Context", "ProgramResult", "run", "validate_program",
           "load_program", "pagerank_program", "katz", "wcc", "sssp", "bfs", "labelprop",
           "hits", "PageRankProgram", "KatzProgram", "WCCProgram", "SSSPProgram",
           "BFSProgram", "LabelPropProgram", "HITSProgram"]
