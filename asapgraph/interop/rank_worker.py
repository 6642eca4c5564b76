"""One rank of a networkx-backend PageRank started by :mod:`asapgraph.interop.nx_ranks`.

``python -m asapgraph.interop.rank_worker DIR`` on K ranks (started by
:func:`asapgraph.comm.launch.run_ranks`): ``DIR`` holds ``params.json``, ``src.npy`` and
``dst.npy`` (dense ids) and optionally ``weights.npy``, ``personalization.npy`` and
``dangling.npy``.  Every rank memory-maps the edge arrays and takes its slice; rank 0
writes ``ranks.npy`` and ``result.json`` (through a temporary name, then a rename), or
``error.txt`` with the one-line reason when the input is refused.
"""
from __future__ import annotations

import io
import json
import os
import sys

import numpy as np


def _load(d, name, mmap=None):
    p = os.path.join(d, name + ".npy")
    return np.load(p, mmap_mode=mmap) if os.path.exists(p) else None


def _write(path, data):
    """``data`` (bytes) to ``path`` through a temporary name and a rename."""
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def main(d):
    from asapgraph.comm.mpi import RankFailure, mpi
    from asapgraph.errors import InputError
    from asapgraph.interop.nx_ranks import run_params
    from asapgraph.partition.reading import DenseEdges

    comm = mpi().COMM_WORLD
    with open(os.path.join(d, "params.json")) as f:
        params = json.load(f)
    edges = DenseEdges(_load(d, "src", "r"), _load(d, "dst", "r"), params["n"],
                       _load(d, "weights", "r"))
    try:
        res = run_params(edges, params, _load(d, "personalization"), _load(d, "dangling"),
                         comm)
    except (InputError, RankFailure, ValueError) as e:
        if comm.Get_rank() == 0:
            _write(os.path.join(d, "error.txt"), f"asapgraph backend: {e}\n".encode())
        return 2
    if comm.Get_rank() == 0:
        buf = io.BytesIO()
        np.save(buf, np.asarray(res.ranks, dtype=np.float64))
        _write(os.path.join(d, "ranks.npy"), buf.getvalue())
        out = {"converged": bool(res.converged), "error_bound": float(res.error_bound),
               "iterations": int(res.iterations),
               "stats": {k: res.stats.get(k) for k in ("bytes_sent", "messages_sent", "edges_visited")}}
        _write(os.path.join(d, "result.json"), json.dumps(out).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
