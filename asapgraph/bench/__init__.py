"""Benchmark suite: BSP vs ASAP on an emulated cluster, peers, report (``asapgraph bench``).

Modules: :mod:`.scenarios` (run specs, the RQ1-RQ5 scenarios, grids), :mod:`.runner`
(``mpiexec`` batches, time-to-error scoring), :mod:`.worker` (runs under ``mpiexec``),
:mod:`.reference` (cached 1e-13 references and power-iteration error trajectories),
:mod:`.peers` (single-machine peers), :mod:`.report` (Markdown), :mod:`.plots` (PNG),
:mod:`.commands` (the ``bench`` subcommand: :func:`register`, :func:`main`).
Nothing here imports mpi4py or matplotlib at import time.
"""
__all__ = ["RunSpec", "CLUSTER", "LEVELS", "SCENARIOS", "scenario", "grid", "run_specs", "main",
           "register"]


def __getattr__(name):  # PEP 562: registering the ``bench`` subcommand imports nothing else
    if name in ("CLUSTER", "LEVELS", "SCENARIOS", "RunSpec", "grid", "scenario"):
        from asapgraph.bench import scenarios

        return getattr(scenarios, name)
    if name == "run_specs":
        from asapgraph.bench.runner import run_specs

        return run_specs
    if name in ("main", "register"):
        from asapgraph.bench import commands

        return getattr(commands, name)
    raise AttributeError(name)
