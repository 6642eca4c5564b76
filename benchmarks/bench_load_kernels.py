"""Where a rank's partitioned load goes, per kernel (issue 13, loading).

Usage::

    mpiexec -n 2 python benchmarks/bench_load_kernels.py FILE [--layout pull|push]
        [--partition range|hash]

Wraps the loader's compiled kernels (whichever of them the tree on ``PYTHONPATH`` has:
the byte-map id map of older trees or the bit-map one; ``merge_rows`` or the in-place
``merge_rows_tail``), the text parser and the rows' ``alltoallv`` (``alltoallv_remote``
where the own rows stay put) with wall-clock timers, runs ``load_partitioned(FILE, comm, ...)`` once and
prints, for every rank, the seconds spent in each and the load's wall and CPU seconds
(CPU: this process, MPI's busy waits included).  Run it for two trees in turn (each with
its own ``PYTHONPATH``) to compare them.
"""
from __future__ import annotations

import argparse
import time


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("--layout", default="pull", choices=("pull", "push"))
    ap.add_argument("--partition", default="range", choices=("range", "hash"))
    a = ap.parse_args(argv)

    from mpi4py import MPI

    import asapgraph.graph.io as gio
    import asapgraph.partition.idmap as idmap
    import asapgraph.partition.loader as loader
    import asapgraph.partition.reading as reading
    import asapgraph.partition.rows as rows
    from asapgraph.kernels import _graph, _rankbuild

    comm = MPI.COMM_WORLD
    acc = {}

    def wrap(mod, name, label=None):
        f = getattr(mod, name, None)
        if f is None:
            return

        def timed(*args, **kw):
            t = time.perf_counter()
            try:
                return f(*args, **kw)
            finally:
                key = label or name
                acc[key] = acc.get(key, 0.0) + time.perf_counter() - t

        setattr(mod, name, timed)

    wrap(gio, "parse_byte_range", "parse")
    wrap(reading, "_narrow")
    for n in ("minmax", "mark_present", "dense_lookup", "map_dense", "mark_bits", "bit_rank",
              "map_rank", "set_bits_slice"):
        wrap(_graph, n)
    for n in ("count_keys", "place_by_key", "merge_rows", "merge_rows_tail"):
        wrap(_rankbuild, n)
    wrap(rows, "alltoallv", "alltoallv(rows)")
    wrap(rows, "alltoallv_remote", "alltoallv_remote(rows)")
    del idmap  # imported so that its kernels are looked up through the wrapped module
    comm.Barrier()
    c0, t0 = time.process_time(), time.perf_counter()
    loader.load_partitioned(a.input, comm, a.partition, layout=a.layout)
    t1, c1 = time.perf_counter(), time.process_time()
    rec = {k: round(v, 3) for k, v in acc.items()}
    rec.update(total=round(t1 - t0, 3), cpu=round(c1 - c0, 3))
    out = comm.gather(rec, root=0)
    if comm.Get_rank() == 0:
        for r, o in enumerate(out):
            print(r, o)


if __name__ == "__main__":
    main()
