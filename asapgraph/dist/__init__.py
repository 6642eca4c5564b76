"""Distributed engines over MPI (mpi4py, imported lazily).

Public API: :func:`pagerank` (collective over a communicator), :class:`DistResult`,
:class:`Emulation`, and :func:`asapgraph.dist.cli.run_distributed` for the CLI.
See :mod:`.loader` (partitioned loading), :mod:`.partition`, :mod:`.bsp`, :mod:`.asap`,
:mod:`.emulation`, :mod:`.stats`, :mod:`.launch`.
"""
from .emulation import Emulation

__all__ = ["pagerank", "load", "LoadedGraph", "DistResult", "Emulation", "RankFailure"]


def __getattr__(name):
    if name in ("pagerank", "load", "LoadedGraph", "DistResult"):
        from . import api

        return getattr(api, name)
    if name == "RankFailure":
        from .comm import RankFailure

        return RankFailure
    raise AttributeError(name)
