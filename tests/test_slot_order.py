"""The push layout's slot order (issue 14, unemulated 2-rank rmat:20).

A jacobi sweep adds into ``acc[tgt[e]]``; the owned targets are relabelled by degree so the
hot ones are compact, and since the twentieth session each out-peer's slots are too: by
decreasing count of the rank's edges into them (log2 buckets, stable), within the peer's
segment.  A segment's messages are then laid out in that order, so every receiver
rebuilds the order from one byte a slot (the bucket) and reorders its map of that peer's
slots (:func:`asapgraph.engine.asap_delta.exchange_slot_orders`).  The kernels are checked
against numpy here; the MPI runs (tests/mpi/test_dist_pagerank.py
``test_asap_relabelled_push_layout_equals_reference``, ``test_asap_slot_order_*``) check
that the answers stay the reference's.
"""
from types import SimpleNamespace

import numpy as np
import pytest

from asapgraph.engine import asap_delta
from asapgraph.kernels import _pagerank as K


def _buckets(cnt):
    return np.floor(np.log2(np.asarray(cnt, dtype=np.float64) + 1.0)).astype(np.int64)


def _stable_by_key_desc(key, off):
    out = np.empty(len(key), dtype=np.int64)
    for a, b in zip(off[:-1], off[1:]):
        out[a:b] = a + np.argsort(-np.asarray(key[a:b], dtype=np.int64), kind="stable")
    return out


@pytest.mark.parametrize("dt", [np.int32, np.int64])
@pytest.mark.parametrize("nloc,nslots,m", [(1, 0, 0), (50, 20, 300), (700, 300, 9000)])
def test_owned_degree_key_counts_slots_in_the_same_pass(rng, dt, nloc, nslots, m):
    src = np.sort(rng.integers(0, nloc, m))
    tgt = rng.integers(0, nloc + nslots, m).astype(dt)
    indptr = np.searchsorted(src, np.arange(nloc + 1)).astype(np.int64)
    slots = np.full(nslots, -7, dtype=np.int64)
    key = K.owned_degree_key(indptr, tgt, np.full(nloc, -5, dtype=np.int64), slots)
    cnt = np.bincount(tgt.astype(np.int64), minlength=nloc + nslots)
    assert np.array_equal(key, cnt[:nloc] + np.diff(indptr))
    assert np.array_equal(slots, cnt[nloc:])
    # without the slot counts: the key alone, as before
    assert np.array_equal(K.owned_degree_key(indptr, tgt, np.empty(nloc, np.int64)), key)
    if nslots:  # a target past the slots counted is refused
        with pytest.raises(ValueError):
            K.owned_degree_key(indptr, tgt, np.empty(nloc, np.int64), slots[:-1])


def test_log2_keys_slot_order_and_slot_map_match_numpy(rng):
    cnt = rng.integers(0, 5000, 3000) * (rng.random(3000) < 0.6)
    cnt[:4] = [0, 1, 2**40, 3]
    key = np.empty(len(cnt), np.uint8)
    K.log2_keys(cnt.astype(np.int64), key)
    assert np.array_equal(key, _buckets(cnt))
    off = np.array([0, 0, 1000, 1001, 2500, 3000], dtype=np.int64)  # empty segments too
    n2o = np.full(len(cnt), -1, dtype=np.int64)
    K.slot_order(key, off, n2o)
    assert np.array_equal(n2o, _stable_by_key_desc(key, off))
    assert np.array_equal(asap_delta.slot_orders(key, off), n2o)
    # ... the order degree_order gives on the counts themselves (what the layout uses)
    for a, b in zip(off[:-1], off[1:]):
        want = np.empty(b - a, np.int64)
        K.degree_order(cnt[a:b].astype(np.int64), want)
        assert np.array_equal(n2o[a:b] - a, want)
    # a receiver's map of one segment: o2n[mp[new2old]] in one pass
    seg = slice(1001, 2500)
    mp = np.sort(rng.choice(10_000, 1499, replace=False)).astype(np.int64)
    o2n = rng.permutation(10_000).astype(np.int64)
    got = np.empty(1499, np.int64)
    K.slot_map(np.ascontiguousarray(key[seg]), mp, o2n, got)
    assert np.array_equal(got, o2n[mp[n2o[seg] - 1001]])
    with pytest.raises(ValueError):
        K.slot_map(np.ascontiguousarray(key[seg]), mp + 10_000, o2n, got)
    with pytest.raises(ValueError):
        K.slot_order(key, np.array([0, 3001]), n2o)


@pytest.mark.parametrize("dt", [np.int32, np.int64])
def test_inverse_into(dt, rng):
    n2o = rng.permutation(500).astype(np.int64)
    o2n = np.full(600, -1, dtype=dt)
    K.inverse_into(n2o, o2n, 100)
    assert np.array_equal(o2n[:100], np.full(100, -1))
    assert np.array_equal(o2n[100 + n2o], 100 + np.arange(500))
    with pytest.raises(ValueError):
        K.inverse_into(n2o, o2n[:599], 100)


def _lg(rng, nloc, segs, m, weighted=False):
    nslots = int(sum(segs))
    src = np.sort(rng.integers(0, nloc, m))
    # skewed targets: a few hot slots and owned vertices
    tgt = (rng.zipf(1.6, m) - 1) % (nloc + nslots)
    tgt = rng.permutation(nloc + nslots)[tgt].astype(np.int32)
    indptr = np.searchsorted(src, np.arange(nloc + 1)).astype(np.int64)
    deg = np.diff(indptr)
    coef = rng.random(m) if weighted else None
    return SimpleNamespace(nloc=nloc, nslots=nslots, indptr=indptr, tgt=tgt, coef=coef,
                           vcoef=1.0 / np.maximum(deg, 1), dangling=(deg == 0).astype(np.uint8),
                           out_off=np.concatenate([[0], np.cumsum(segs)]).astype(np.int64))


@pytest.mark.parametrize("weighted", [False, True])
def test_push_layout_orders_each_segments_slots_by_their_edges(rng, weighted):
    nloc, segs = 400, [150, 0, 90, 1]
    lg = _lg(rng, nloc, segs, 6000, weighted)
    P = asap_delta.push_layout(lg, 8, slot_order=True)
    Q = asap_delta.push_layout(lg, 8, slot_order=False)
    assert Q.slot_new2old is None and Q.slot_key is None
    N = nloc + lg.nslots
    cnt = np.bincount(lg.tgt.astype(np.int64), minlength=N)[nloc:]
    assert np.array_equal(P.slot_key, _buckets(cnt))
    assert np.array_equal(P.slot_new2old, _stable_by_key_desc(P.slot_key, lg.out_off))
    m = len(lg.tgt)
    for L in (P, Q):  # the same edges (and coefficients) in either layout
        back = np.asarray(L.tgt[:m]).astype(np.int64)
        own = back < nloc
        back[own] = L.new2old[back[own]]
        if L.slot_new2old is not None:
            back[~own] = nloc + L.slot_new2old[back[~own] - nloc]
        srcs = np.repeat(L.new2old, np.diff(L.indptr))
        got = sorted(zip(srcs.tolist(), back.tolist(),
                         (L.coef if weighted else np.zeros(m)).tolist()))
        want_src = np.repeat(np.arange(nloc), np.diff(lg.indptr))
        want = sorted(zip(want_src.tolist(), lg.tgt.astype(np.int64).tolist(),
                          (lg.coef if weighted else np.zeros(m)).tolist()))
        assert got == want
    # the layout's slot targets: each segment's slots by non-increasing edge count, and
    # the slots stay in their segment
    new_cnt = np.bincount(np.asarray(P.tgt[:m]).astype(np.int64), minlength=N)[nloc:]
    for a, b in zip(lg.out_off[:-1], lg.out_off[1:]):
        k = _buckets(new_cnt[a:b])
        assert np.all(np.diff(k) <= 0)
        assert np.array_equal(np.sort(P.slot_new2old[a:b]), np.arange(a, b))


def test_push_layout_slot_order_env(rng, monkeypatch):
    lg = _lg(rng, 100, [40, 30], 1500)
    monkeypatch.setenv("ASAPGRAPH_ASAP_SLOT_ORDER", "0")
    assert asap_delta.push_layout(lg, 0).slot_new2old is None
    monkeypatch.setenv("ASAPGRAPH_ASAP_SLOT_ORDER", "1")
    assert asap_delta.push_layout(lg, 0).slot_new2old is not None
    monkeypatch.delenv("ASAPGRAPH_ASAP_SLOT_ORDER")
    assert (asap_delta.push_layout(lg, 0).slot_new2old is not None) == asap_delta.SLOT_ORDER
