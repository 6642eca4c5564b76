"""The in-rows setup kernels of a BSP rank's pull layout against numpy, without MPI.

:func:`asapgraph.kernels._pull.map_rows` counts each rank's cut edges and the rows it
reaches in registers up to ``SEG_FAST`` ranks and with a binary search above: both
paths, relabelled and not, must give numpy's counts; :func:`row_setup` the inverse
permutation, the label order and ``inv_out``.
"""
import numpy as np
import pytest

from asapgraph.kernels import _pull


def _case(rng, K, nloc=300, ncols_ghost=400):
    """Rows of ``nloc`` owned vertices whose columns are owned (< nloc) or a ghost of one of
    K ranks (segment starts ``seg_lo``, some empty), through a random ``lookup``."""
    sizes = rng.integers(0, 60, K)
    sizes[rng.random(K) < 0.25] = 0          # ranks with no ghost here
    seg_lo = np.empty(K + 1, dtype=np.int64)
    seg_lo[0] = nloc
    seg_lo[1:] = nloc + np.cumsum(sizes + np.where(sizes > 0, 4, 0))  # a header per segment
    cols = np.concatenate([np.arange(nloc)] + [np.arange(seg_lo[j] + 4, seg_lo[j + 1])
                                                for j in range(K) if sizes[j]])
    nid = len(cols) + 50                     # dense ids; lookup defined where read
    ids = rng.permutation(nid)[:len(cols)]
    lookup = np.full(nid, -1, dtype=np.int32)
    lookup[ids] = cols
    deg = rng.integers(0, 40, nloc)
    deg[rng.random(nloc) < 0.1] = 0
    deg[0] = 700                              # a row longer than any in-register field
    indptr = np.zeros(nloc + 1, dtype=np.int64)
    np.cumsum(deg, out=indptr[1:])
    src = ids[rng.integers(0, len(ids), indptr[-1])].astype(np.int32)
    return indptr, src, lookup, seg_lo


@pytest.mark.parametrize("K", [1, 2, 3, 8, 9, 13])
@pytest.mark.parametrize("relabel", [False, True])
def test_map_rows_matches_numpy(K, relabel):
    rng = np.random.default_rng(K * 10 + relabel)
    indptr, src, lookup, seg_lo = _case(rng, K)
    n, m = len(indptr) - 1, int(indptr[-1])
    if relabel:
        new2old = rng.permutation(n).astype(np.int64)
        old2new = np.empty(n, dtype=np.int64)
        old2new[new2old] = np.arange(n)
    else:
        new2old = old2new = np.zeros(0, dtype=np.int64)
    out_ptr = np.empty(n + 1, dtype=np.int64)
    out = np.empty(m, dtype=np.int32)
    nq, ne = np.zeros(K, dtype=np.int64), np.zeros(K, dtype=np.int64)
    ghosted = np.zeros(n, dtype=np.uint8)
    assert _pull.map_rows(indptr, src, new2old, old2new, lookup, seg_lo, out_ptr, out, nq,
                          ne, ghosted) == m
    order = new2old if relabel else np.arange(n)
    rows = [lookup[src[indptr[o]:indptr[o + 1]]] for o in order]
    assert np.array_equal(out_ptr, np.concatenate([[0], np.cumsum([len(r) for r in rows])]))
    assert np.array_equal(out, np.concatenate(rows))
    seg = [np.searchsorted(seg_lo, r, side="right") - 1 for r in rows]  # -1: owned
    for j in range(K):
        assert ne[j] == sum(int((s == j).sum()) for s in seg), j
        assert nq[j] == sum(int((s == j).any()) for s in seg), j
    assert np.array_equal(ghosted, [int((s >= 0).any()) for s in seg])


@pytest.mark.parametrize("relabel", [False, True])
def test_row_setup(relabel):
    rng = np.random.default_rng(7)
    n = 500
    outdeg = rng.integers(0, 5, n).astype(np.int64)
    dangling = (outdeg == 0).astype(np.uint8)
    owned = np.sort(rng.choice(10 * n, n, replace=False)).astype(np.int64)
    new2old = rng.permutation(n).astype(np.int64) if relabel else np.zeros(0, np.int64)
    old2new = np.full(n if relabel else 0, -1, dtype=np.int64)
    labels, inv = np.empty(n, dtype=np.int32), np.empty(n)
    _pull.row_setup(outdeg, dangling, new2old, owned, old2new, labels, inv)
    order = new2old if relabel else np.arange(n)
    assert np.array_equal(labels, owned[order])
    assert np.array_equal(inv, np.where(dangling[order] > 0, 0.0,
                                        1.0 / np.maximum(outdeg[order], 1)))
    if relabel:
        assert np.array_equal(old2new[new2old], np.arange(n))
    with pytest.raises(ValueError):
        _pull.row_setup(outdeg[:-1], dangling, new2old, owned, old2new, labels, inv)
