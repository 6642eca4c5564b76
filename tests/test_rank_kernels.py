"""Kernels of the partitioned loader against their plain forms: the bit-map id map
(``mark_bits``, ``bit_rank``, ``map_rank``, ``set_bits_slice``) against the byte map
(``mark_present``, ``dense_lookup``, ``map_dense``) and numpy, ``minmax`` against numpy,
and the rows' counting sort with int32 counters against int64 ones."""
import numpy as np
import pytest

from asapgraph.kernels import _graph, _rankbuild as rb
from asapgraph.kernels.tuning import omp_threads


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("m", [1, 7, 100, 300000])
def test_minmax_equals_numpy(rng, threads, dtype, m):
    for lo, hi in ((0, 50), (-(2**31), 2**31 - 1), (5, 6)):
        a = rng.integers(lo, hi, m).astype(dtype)
        with omp_threads(threads):
            assert _graph.minmax(a) == (a.min(), a.max())


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("out_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("N", [1, 63, 64, 65, 4096, 200003])
def test_bit_map_id_map_equals_byte_map(rng, threads, dtype, out_dtype, N):
    """Same dense ids as the byte map and lookup table (and as np.unique's ranks), same
    count, the same original ids of any slice of dense ids; sparse and full maps, ids 0
    and N-1 present or not, in place when int32."""
    for density in (0.003, 0.5, 1.0):
        k = max(1, int(N * density))
        ids = np.unique(rng.integers(0, N, k))
        if density == 1.0:
            ids = np.arange(N)
        m = 3 * len(ids) + 1000
        src = ids[rng.integers(0, len(ids), m)].astype(dtype)
        dst = ids[rng.integers(0, len(ids), m)].astype(dtype)
        src[:len(ids)] = ids[rng.permutation(len(ids))]  # every id present
        present = np.zeros(N, np.uint8)
        _graph.mark_present(src, present)
        _graph.mark_present(dst, present)
        lookup, n_ref = _graph.dense_lookup(present)
        bits = np.zeros((N + 63) // 64, np.uint64)
        with omp_threads(threads):
            _graph.mark_bits(src, bits)
            _graph.mark_bits(dst, bits)
            rank, n = _graph.bit_rank(bits)
            assert n == n_ref == len(ids)
            assert np.array_equal(np.flatnonzero(np.unpackbits(bits.view(np.uint8),
                                                               bitorder="little")), ids)
            for a in (src, dst):
                ref = np.empty(len(a), out_dtype)
                _graph.map_dense(a, lookup, ref)
                assert np.array_equal(ref, np.searchsorted(ids, a))
                out = np.empty(len(a), out_dtype)
                _graph.map_rank(a, bits, rank, out)
                assert out.dtype == out_dtype and np.array_equal(out, ref)
                if dtype == out_dtype == np.int32:
                    b = a.copy()
                    _graph.map_rank(b, bits, rank, b)  # in place
                    assert np.array_equal(b, ref)
        for lo, hi in ((0, n), (0, 0), (n, n), (n // 3, 2 * n // 3), (n - 1, n), (0, 1)):
            got = _graph.set_bits_slice(bits, rank, lo, hi)
            assert got.dtype == np.int64 and np.array_equal(got, ids[lo:hi])


def test_set_bits_slice_refuses_too_few_bits():
    bits = np.zeros(2, np.uint64)
    bits[1] = 5
    rank, n = _graph.bit_rank(bits)
    assert n == 2 and list(_graph.set_bits_slice(bits, rank, 0, 2)) == [64, 66]
    with pytest.raises(ValueError):
        _graph.set_bits_slice(bits, rank, 0, 3)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("keyed", [False, True])
def test_counting_sort_int32_counters_equal_int64(rng, dtype, keyed):
    """count_keys and place_by_key with int32 counters give the int64 counters' counts,
    offsets and placement (stable: a numpy stable argsort by key)."""
    n, m = 5000, 200000
    src = (rng.integers(0, n, m) ** 2 // n).astype(dtype)
    dst = rng.integers(0, n, m).astype(dtype)
    key = rng.permutation(n).astype(np.int32) if keyed else np.zeros(0, np.int32)
    outs = []
    for cdt in (np.int64, np.int32):
        pos = np.zeros(n + 1, cdt)
        rb.count_keys(src, key, pos)
        k = key[src] if keyed else src
        assert np.array_equal(pos[1:], np.bincount(k, minlength=n))
        np.cumsum(pos, out=pos)
        out = np.empty(m, dtype)
        rb.place_by_key(src, dst, key, pos, out)
        assert np.array_equal(pos[:-1], np.cumsum(np.bincount(k, minlength=n)))
        assert np.array_equal(out, dst[np.argsort(k, kind="stable")])
        outs.append(out)
    assert np.array_equal(outs[0], outs[1])


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("cdt", [np.int32, np.int64])
@pytest.mark.parametrize("K", [1, 2, 3, 5])
def test_merge_rows_tail_equals_merge_rows(rng, dtype, cdt, K):
    """merge_rows_tail (the own block read in place from the tail of the output, the
    others from recv) gives merge_rows's rows and offsets for every own rank, with the
    own block exactly at ``total - own_total`` or further back (a longer buffer), empty
    rows, empty blocks and single-edge rows included."""
    nloc = 300
    for trial in range(4):
        cnt = rng.integers(0, 4, (K, nloc)).astype(cdt)
        cnt[:, rng.integers(0, nloc, 40)] = 0          # empty rows
        cnt[rng.integers(0, K), :] = (trial == 1)       # an empty or all-ones block
        tot = cnt.sum(axis=1).astype(np.int64)
        total = int(tot.sum())
        blocks = [rng.integers(0, 10**6, int(t)).astype(dtype) for t in tot]
        start = np.zeros(K, np.int64)
        np.cumsum(tot[:-1], out=start[1:])
        ref = np.empty(total, dtype)
        ref_ptr = np.empty(nloc + 1, np.int64)
        rb.merge_rows(np.concatenate(blocks) if total else np.zeros(0, dtype), cnt, start,
                      ref, ref_ptr)
        for own in range(K):
            others = [b for q, b in enumerate(blocks) if q != own]
            recv = np.concatenate(others) if others else np.zeros(0, dtype)
            rdis = np.zeros(K, np.int64)
            np.cumsum(np.where(np.arange(K) == own, 0, tot)[:-1], out=rdis[1:])
            for extra in (0, 7):
                cap = total + extra
                buf = np.full(cap, -1, dtype)
                own_start = cap - int(tot[own])
                buf[own_start:] = blocks[own]
                ptr = np.empty(nloc + 1, np.int64)
                rb.merge_rows_tail(recv, cnt, rdis, buf, own, own_start, ptr)
                assert np.array_equal(ptr, ref_ptr)
                assert np.array_equal(buf[:total], ref)


def test_merge_rows_tail_refuses_an_own_block_that_would_be_overwritten():
    cnt = np.array([[2, 1], [1, 2]], np.int32)
    recv = np.arange(3, dtype=np.int32)
    buf = np.zeros(7, np.int32)
    ptr = np.empty(3, np.int64)
    start = np.zeros(2, np.int64)
    with pytest.raises(ValueError):  # own block (3 edges) must start at >= 6 - 3
        rb.merge_rows_tail(recv, cnt, start, buf, 0, 2, ptr)
    with pytest.raises(ValueError):  # and end within buf
        rb.merge_rows_tail(recv, cnt, start, buf, 0, 5, ptr)
    with pytest.raises(ValueError):  # the other block must lie in recv
        rb.merge_rows_tail(recv[:2], cnt, start, buf, 0, 3, ptr)
    rb.merge_rows_tail(recv, cnt, start, buf, 0, 3, ptr)
    assert list(ptr) == [0, 3, 6]


def test_place_by_key_into_a_longer_buffer(rng):
    """place_by_key writes at the offsets it is given, in a buffer longer than the
    slice (the rows path puts this rank's own rows at the buffer's tail)."""
    n, m = 50, 1000
    src = rng.integers(0, n, m).astype(np.int32)
    dst = rng.integers(0, n, m).astype(np.int32)
    pos = np.zeros(n + 1, np.int32)
    rb.count_keys(src, np.zeros(0, np.int32), pos)
    np.cumsum(pos, out=pos)
    pos[20:] += 100  # keys 20.. land 100 entries further
    out = np.full(m + 100, -1, np.int32)
    rb.place_by_key(src, dst, np.zeros(0, np.int32), pos, out)
    ref = dst[np.argsort(src, kind="stable")]
    cut = int((src < 20).sum())
    assert np.array_equal(out[:cut], ref[:cut]) and np.array_equal(out[cut + 100:], ref[cut:])
    assert (out[cut:cut + 100] == -1).all()
    with pytest.raises(ValueError):
        rb.place_by_key(src, dst, np.zeros(0, np.int32), pos, out[:m - 1])


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_mark_rows_reaching_equals_numpy(rng, dtype):
    """A rank's boundary rows (an edge to a slot ``>= nloc``): empty rows, rows whose
    only remote edge is the last, and rows without one, against a per-edge numpy form."""
    n, nloc = 2000, 1500
    deg = rng.integers(0, 6, n)
    deg[::7] = 0
    indptr = np.zeros(n + 1, np.int64)
    indptr[1:] = np.cumsum(deg)
    tgt = rng.integers(0, nloc + 40, int(indptr[-1])).astype(dtype)
    tgt[rng.random(len(tgt)) < 0.7] %= nloc  # most rows stay local
    want = np.zeros(n, bool)
    src = np.repeat(np.arange(n), deg)
    want[src[tgt >= nloc]] = True
    got = np.zeros(n, np.uint8)
    _graph.mark_rows_reaching(indptr, tgt, nloc, got)
    assert 0 < want.sum() < n - (deg == 0).sum()
    np.testing.assert_array_equal(got.astype(bool), want)
