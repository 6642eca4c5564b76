"""asapgraph.kernels._programs: one thread-count state for every program kernel module.

The kernels live in :mod:`asapgraph.kernels._edgemap` and :mod:`asapgraph.kernels._minmax`;
the cap set through ``_programs.set_num_threads`` (owned by ``_progthreads``) must bind
the kernels of both.  Checked in a fresh process by the threads the OpenMP runtime
starts: none with a cap of 1, one worker more with a cap of 2.
"""
import os
import subprocess
import sys

import pytest

from asapgraph.kernels import _programs as K

CODE = r"""
import os, sys
import numpy as np
from asapgraph.kernels import _programs as K
from asapgraph.kernels import _edgemap, _minmax

n = 50000
indptr = np.arange(0, 2 * n + 1, 2, dtype=np.int64)
indices = np.random.default_rng(0).integers(0, n, 2 * n).astype(np.int32)
K.set_parallel_threshold(0)
K.set_num_threads(int(sys.argv[2]))
if sys.argv[1] == "edgemap":
    out, has = np.empty(n), np.empty(n, dtype=np.uint8)
    _edgemap.gather_pull(indptr, indices, np.empty(0), np.ones(n), np.empty(0, np.uint8),
                         K.OP_COPY, K.COMB_SUM, 0.0, out, has)
    assert out.sum() == 2 * n
else:
    vals = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    comp = np.empty(n, dtype=np.int64)
    _minmax.union_find_fixpoint(indptr, indices, K.COMB_MIN, vals, np.arange(n), comp)
print(len(os.listdir("/proc/self/task")))
"""


def _tasks(module, cap, cwd):
    # cwd outside the source tree: ``python -c`` puts the cwd first on sys.path, and the
    # source tree has no compiled kernels when the package is installed (CI)
    env = dict(os.environ, OMP_NUM_THREADS="2")
    r = subprocess.run([sys.executable, "-c", CODE, module, str(cap)], env=env, cwd=cwd,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return int(r.stdout.split()[-1])


def test_reexports_every_kernel():
    for name in ("gather_pull", "push_sparse", "async_sweep_sum", "delta_select",
                 "delta_select_perm", "add_abs_sum", "scatter_perm", "relabel", "merge_csr",
                 "segment_mode", "async_sweep_minmax", "async_sweep_minmax_par",
                 "async_fixpoint_minmax", "union_find_fixpoint", "bsp_minmax",
                 "set_num_threads", "num_threads", "set_parallel_threshold"):
        assert callable(getattr(K, name)), name


def test_set_num_threads_is_one_state():
    old = K.set_num_threads(1)
    try:
        assert K.num_threads() == 1
        assert K.set_num_threads(3) == 1
        assert K.num_threads() == 3
    finally:
        K.set_num_threads(old)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or
                    os.environ.get("ASAPGRAPH_NO_OPENMP") == "1",
                    reason="needs Linux /proc and an OpenMP build")
@pytest.mark.parametrize("module", ["edgemap", "minmax"])
def test_thread_cap_binds_every_kernel_module(module, tmp_path):
    one, two = _tasks(module, 1, tmp_path), _tasks(module, 2, tmp_path)
    assert two == one + 1, (one, two)
