"""How a program runs: on one process (:mod:`.single`) or across MPI ranks.

Public API: :func:`pagerank` (collective over a communicator), :class:`DistResult`,
:class:`Emulation`.  Modules: :mod:`.program` (the vertex-program contract),
:mod:`.single` (the single-process engine), :mod:`.distributed` (programs on MPI ranks),
:mod:`.bsp` and :mod:`.asap` (the PageRank engines), :mod:`.emulation` (network and
straggler emulation), :mod:`.stats` (traffic accounting).  Partitioned loading lives in
:mod:`asapgraph.partition`, communication in :mod:`asapgraph.comm`.
"""
from asapgraph.engine.emulation import Emulation

__all__ = ["pagerank", "load", "LoadedGraph", "DistResult", "Emulation", "RankFailure"]


def __getattr__(name):
    if name in ("pagerank", "load", "LoadedGraph", "DistResult"):
        from asapgraph.engine import api

        return getattr(api, name)
    if name == "RankFailure":
        from asapgraph.comm.mpi import RankFailure

        return RankFailure
    raise AttributeError(name)
