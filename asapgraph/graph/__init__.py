"""Graphs on one process: the :class:`Graph` type, readers and writers (:mod:`.io`),
generators.  No MPI here.  ``Graph`` and ``remap_ids`` are imported on first use (PEP 562),
so that a light submodule (:mod:`.io.atomic`) loads without numpy."""

__all__ = ["Graph", "remap_ids"]


def __getattr__(name):
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from asapgraph.graph import core

    value = getattr(core, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
