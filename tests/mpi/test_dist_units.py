"""Pure-numpy parts of the distributed engine (no mpiexec): schedule, partition, emulation."""
import numpy as np
import pytest

from asapgraph.engine.reduce import Schedule
from asapgraph.engine.emulation import Emulation, Emulator, parse_straggler
from asapgraph.partition.partitioners import Partition


@pytest.mark.parametrize("K,k", [(2, 1), (3, 1), (4, 2), (7, 2), (16, 3)])
def test_schedule_serves_every_peer_and_is_doubly_stochastic(K, k, seed):
    s = Schedule(K, k, seed)
    for r in range(K):
        for start in (0, 5, 17):  # any window of 2L rounds covers every peer
            seen = set()
            for t in range(start, start + 2 * s.L):
                seen.update(s.neighbours(r, t).tolist())
            assert seen == set(range(K)) - {r}
    for t in range(3):
        P = s.mixing_matrix(t)
        assert np.allclose(P.sum(0), 1) and np.allclose(P.sum(1), 1) and (P >= 0).all()
        sv = np.linalg.svd(P, compute_uv=False)
        assert s.spectral_gap(t) == pytest.approx(1 - sv[1])
        assert 0 <= s.spectral_gap(t) <= 1  # one round's circulant may be disconnected...
    prod = np.eye(K)  # ... but L consecutive rounds use every offset: the product mixes
    for t in range(s.L):
        prod = s.mixing_matrix(t) @ prod
    assert 1 - np.linalg.svd(prod, compute_uv=False)[1] > 0
    s2 = Schedule(K, k, seed)  # same seed, same round -> same graph (no communication)
    assert all(np.array_equal(s.offsets(t), s2.offsets(t)) for t in range(10))


@pytest.mark.parametrize("kind", ["range", "hash"])
def test_partition_owner_owned_local_index(kind, rng):
    n, K = 1000, 3
    bounds = np.array([0, 100, 100, n]) if kind == "range" else None
    if kind == "range":
        K = 3
    p = Partition(kind, K, n, bounds)
    v = np.arange(n)
    own = p.owner(v)
    allv = []
    for r in range(K):
        o = p.owned(r)
        assert np.array_equal(o, v[own == r])
        assert np.array_equal(p.local_index(r, o, o), np.arange(len(o)))
        allv.append(o)
    assert np.array_equal(np.sort(np.concatenate(allv)), v)
    if kind == "range":
        assert len(p.owned(1)) == 0  # an empty rank is allowed


def test_emulator_link_queue_and_straggler():
    cfg = Emulation(latency=0.01, bandwidth=1e6, jitter=0.0, straggler={"1": 3}, seed=1)
    e = Emulator(Emulation.from_any(cfg), 0, 2)
    t1 = e.stamp(1, 10_000)  # 10 ms of serialisation + 10 ms latency
    t2 = e.stamp(1, 10_000)  # queued behind the first one on the same link
    assert t2 - t1 == pytest.approx(0.01, abs=2e-3)
    assert parse_straggler("1:3,2:1.5") == {1: 3.0, 2: 1.5}
    with pytest.raises(ValueError):
        parse_straggler("1:0.5")
    assert not Emulation().active and Emulation(latency=1e-3).network


@pytest.mark.parametrize("density", [0.0005, 0.05, 0.3, 0.6, 1.0])
@pytest.mark.parametrize("quant", [False, True])
def test_message_encoding_roundtrip_is_exact(density, quant, rng):
    """ASAP messages: sparse/dense, float64/float32 with error feedback.

    What is delivered plus what stays buffered equals the sent buffer exactly (no mass
    created or lost), leftovers are non-negative and tiny, and the smaller form is used.
    """
    from asapgraph.engine import exchange
    from asapgraph.engine.exchange import HEADER

    m = 5000
    orig = np.where(rng.random(m) < density, rng.random(m) * 10.0 ** rng.uniform(-12, 0, m), 0.0)
    seg = orig.copy()
    buf = exchange.message_buffer(m)
    nbytes, form, mass, left = exchange.encode(seg, 0, m, buf,
                                               exchange.QUANT["f32" if quant else "off"])
    assert mass == pytest.approx(np.abs(orig).sum(), rel=1e-12)
    assert left == pytest.approx(np.abs(seg).sum(), rel=1e-12, abs=1e-300)
    buf[:8 * HEADER].view(np.float64)[1] = form
    nnz = int(np.count_nonzero(orig))
    per = (4 if quant else 8)
    expect = 8 * HEADER + min(per * m, (per + 4) * nnz) if nnz else 8 * HEADER
    if not (quant and 2 * nnz < m) and not (not quant and 12 * nnz < 8 * m):
        expect = 8 * HEADER + per * m
    assert nbytes == expect
    mp = rng.permutation(m).astype(np.int64)  # slot -> receiver-local index
    acc = np.zeros(m)
    exchange.decode(acc, mp, buf, nbytes)
    got = np.zeros(m)
    got[:] = acc[mp]
    assert (seg >= 0).all()
    np.testing.assert_array_equal(got + seg, orig)  # exact, bit for bit
    if quant:
        assert (seg <= orig * 2.0 ** -23).all()
        assert (got > 0).sum() == (orig >= np.finfo(np.float32).tiny).sum() or density == 0
    else:
        assert not seg.any()


@pytest.mark.parametrize("density", [0.0, 0.001, 0.05, 0.4, 1.0])
@pytest.mark.parametrize("signed", [False, True])
def test_q16_encoding_conserves_mass_exactly(density, signed, rng):
    """16-bit messages with a per-message step: delivered + left in the slot == original.

    Values below one step stay in the buffer (nothing is lost, only delayed); the
    remainders keep the sign of the value and are below one step; sparse or dense form,
    whichever is smaller; a buffer of zero slots (a pool-only peer) still encodes.
    """
    from asapgraph.engine import exchange
    from asapgraph.engine.exchange import HEADER

    m = 4000
    mag = 10.0 ** rng.uniform(-14, 0, m)
    sign = np.where(rng.random(m) < 0.5, -1.0, 1.0) if signed else 1.0
    orig = np.where(rng.random(m) < density, sign * mag, 0.0)
    seg = orig.copy()
    buf = np.zeros(8 * (HEADER + 1 + m), dtype=np.uint8)
    nbytes, form, _, left = exchange.encode(seg, 0, m, buf, exchange.QUANT["q16"])
    assert left == pytest.approx(np.abs(seg).sum(), rel=1e-12, abs=1e-300)
    assert form in (4, 5)
    buf[:8 * HEADER].view(np.float64)[1] = form
    mp = rng.permutation(m).astype(np.int64)
    acc = np.zeros(m)
    mass, dabs = exchange.decode(acc, mp, buf, nbytes)
    got = acc[mp]
    assert dabs == pytest.approx(np.abs(got).sum(), rel=1e-12, abs=1e-300)
    # on a receiver that held signed residuals: the change of sum |acc| it reports
    base = np.where(rng.random(m) < 0.5, rng.standard_normal(m) * 1e-3, 0.0)
    acc2 = base.copy()
    _, dabs2 = exchange.decode(acc2, mp, buf, nbytes)
    assert dabs2 == pytest.approx(np.abs(acc2).sum() - np.abs(base).sum(), rel=1e-9, abs=1e-15)
    np.testing.assert_array_equal(got + seg, orig)  # exact, bit for bit
    assert mass == pytest.approx(got.sum(), rel=1e-12, abs=1e-300)
    assert (seg * orig >= 0).all() and (got * orig >= 0).all()  # signs kept, never overshoot
    step = np.abs(orig).max() / 32767 if density else 0.0
    assert (np.abs(seg) < step + 1e-300).all() or not density
    sent = int(np.count_nonzero(got))
    h = 8 * HEADER + 8
    assert nbytes == (h + 6 * sent if form == 5 else h + 2 * m)
    big = np.abs(orig).max() if density else 0.0
    steps = int(np.count_nonzero(np.abs(orig) >= big / 32767)) if density else 0
    assert (form == 5) == (3 * steps < m)  # the smaller form
    assert sent <= steps
    # an empty buffer (peer that only receives pool mass)
    e = np.zeros(0)
    for qm in ("q16c", "q16"):
        nb, fe, me, le = exchange.encode(e, 0, 0, np.zeros(8 * (HEADER + 1), np.uint8),
                                         exchange.QUANT[qm])
        assert nb == 8 * HEADER + 8 and me == 0.0 and le == 0.0 and fe in (4, 5)


def _coded_case(kind, m, rng):
    """Slot buffers for the coded 16-bit form: power-law magnitudes (residuals)."""
    mag = rng.pareto(1.2, m) + 1e-3
    sign = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    if kind == "dense":
        return mag
    if kind == "signed":
        return sign * mag
    if kind == "sparse":
        return np.where(rng.random(m) < 0.02, sign * mag, 0.0)
    if kind == "one":  # one slot set (first, middle or last)
        v = np.zeros(m)
        v[rng.integers(m)] = 3.5
        return v
    if kind == "ends":
        v = np.zeros(m)
        v[0], v[-1] = -1.0, 2.0 ** -40
        return v
    if kind == "equal":  # every slot at full scale: the longest value codes
        return np.where(rng.random(m) < 0.5, -7.25, 7.25)
    if kind == "tiny":  # every slot below one step but one
        v = np.full(m, 1e-300)
        v[m // 2] = 1.0
        return v
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["dense", "signed", "sparse", "one", "ends", "equal", "tiny"])
@pytest.mark.parametrize("m", [1, 2, 7, 1000, 70000])
def test_coded_q16_delivers_what_the_plain_forms_deliver(kind, m, rng):
    """The Exp-Golomb coded 16-bit form (8) is lossless: the receiver adds bit for bit what
    the dense/sparse 16-bit forms would add, the same remainders stay (delivered + left
    == original exactly), its size is what the encoder reports and it is used only when
    smaller than both plain forms; the mass and ``sum |acc|`` change it reports are those
    of the plain forms.  The same for the byte-coded form (9, ``q16b``: an int8 per slot,
    an escape and an int16 beyond +-127), used when smaller than dense and sparse."""
    from asapgraph.engine import exchange
    from asapgraph.engine.exchange import FORM, HEADER

    orig = _coded_case(kind, m, rng)
    mp = rng.permutation(m).astype(np.int64)
    base = np.where(rng.random(m) < 0.3, rng.standard_normal(m), 0.0)
    out = {}
    for qm in ("q16c", "q16b", "q16"):
        seg = orig.copy()
        buf = exchange.message_buffer(m)
        nbytes, form, mass, left = exchange.encode(seg, 0, m, buf, exchange.QUANT[qm])
        assert mass == pytest.approx(np.abs(orig).sum(), rel=1e-12)
        assert left == pytest.approx(np.abs(seg).sum(), rel=1e-12, abs=1e-300)
        exchange.header(buf)[FORM] = form
        acc = np.zeros(m)
        tot, dabs = exchange.decode(acc, mp, buf.copy()[:nbytes + 8 * HEADER], nbytes)
        acc2 = base.copy()
        _, dabs2 = exchange.decode(acc2, mp, buf[:nbytes].copy(), nbytes)  # exactly nbytes
        got = acc[mp]
        np.testing.assert_array_equal(got + seg, orig)  # nothing created or lost
        # what the compute model charges the coding for: the values sent
        assert exchange.coded_values(buf, nbytes) == ((np.count_nonzero(got), 0) if form == 8
                                                      else (0, m) if form == 9 else (0, 0))
        if form == 9:  # its size: step, m, a byte per slot, two more per escape
            q = np.round((orig - seg) / (np.abs(orig).max() / 32767.0))
            assert nbytes == 8 * HEADER + 12 + m + 2 * int(np.count_nonzero(np.abs(q) > 127))
        out[qm] = (nbytes, form, got, seg, tot, dabs, acc2)
    c, r, b = out["q16c"], out["q16"], out["q16b"]
    for x in (2, 3, 6):
        np.testing.assert_array_equal(b[x], r[x])
    assert b[4] == pytest.approx(r[4], rel=1e-12, abs=1e-300)
    assert b[5] == pytest.approx(r[5], rel=1e-12, abs=1e-300)
    assert b[1] in (4, 5, 9) and b[0] <= r[0] and (b[1] == 9) == (b[0] < r[0])
    assert c[0] <= b[0]
    np.testing.assert_array_equal(c[2], r[2])  # the same values delivered ...
    np.testing.assert_array_equal(c[3], r[3])  # ... and left
    np.testing.assert_array_equal(c[6], r[6])
    assert c[4] == pytest.approx(r[4], rel=1e-12, abs=1e-300)
    assert c[5] == pytest.approx(r[5], rel=1e-12, abs=1e-300)
    assert r[1] in (4, 5) and c[1] in (4, 5, 8, 9)
    assert c[0] <= r[0] and (c[1] == 8) == (c[0] < b[0])
    if kind in ("dense", "signed") and m >= 1000:  # power-law residuals: the coded forms
        assert c[1] == 8 and c[0] < 0.75 * r[0]
        assert b[1] == 9 and b[0] < r[0]


def test_coded_q16_rejects_corrupt_messages(rng):
    """A truncated or padded coded message, or a bad header, raises instead of applying
    garbage."""
    from asapgraph.engine import exchange
    from asapgraph.engine.exchange import FORM, HEADER

    m = 3000
    seg = rng.pareto(1.2, m) + 1e-3
    buf = exchange.message_buffer(m)
    nbytes, form, _, _ = exchange.encode(seg, 0, m, buf, exchange.QUANT["q16c"])
    assert form == 8
    exchange.header(buf)[FORM] = form
    mp = np.arange(m, dtype=np.int64)
    for nb in (nbytes - 1, nbytes + 3, 8 * HEADER + 10):
        with pytest.raises(ValueError):
            exchange.decode(np.zeros(m), mp, buf, nb)
    bad = buf.copy()
    bad[8 * HEADER + 12] = 60  # an Exp-Golomb order out of range
    with pytest.raises(ValueError):
        exchange.decode(np.zeros(m), mp, bad, nbytes)
    with pytest.raises(ValueError):  # more slots than the receiver's map
        exchange.decode(np.zeros(m), mp[:m // 2], buf, nbytes)
    # the byte-coded form: truncated, padded, an escape cut off, too many slots
    seg = rng.pareto(1.2, m) + 1e-3
    buf = exchange.message_buffer(m)
    nbytes, form, _, _ = exchange.encode(seg, 0, m, buf, exchange.QUANT["q16b"])
    assert form == 9
    exchange.header(buf)[FORM] = form
    ok = np.zeros(m)
    exchange.decode(ok, mp, buf, nbytes)
    for nb in (nbytes - 1, nbytes + 1, 8 * HEADER + 11):
        with pytest.raises(ValueError):
            exchange.decode(np.zeros(m), mp, buf, nb)
    with pytest.raises(ValueError):
        exchange.decode(np.zeros(m), mp[:m // 2], buf, nbytes)
    bad = buf.copy()
    bad[nbytes - 1] = 0x80  # the last slot becomes an escape with no int16 after it
    with pytest.raises(ValueError):
        exchange.decode(np.zeros(m), mp, bad, nbytes)


@pytest.mark.parametrize("qm", ["q16c", "q16b", "q16"])
def test_q16_budget_sends_exactly_when_the_remainder_would_exceed_it(qm, rng):
    """``budget``: a 16-bit encode whose remainder would exceed it sends the segment exactly
    in float64 (nothing stays); within it, the remainder stays and is reported."""
    from asapgraph.engine import exchange
    from asapgraph.engine.exchange import FORM

    m = 5000
    orig = rng.pareto(1.2, m) + 1e-3
    seg = orig.copy()
    nb, form, mass, left = exchange.encode(seg, 0, m, exchange.message_buffer(m),
                                           exchange.QUANT[qm])
    assert form in (4, 5, 8, 9) and left > 0.0
    seg2 = orig.copy()
    nb2, form2, _, left2 = exchange.encode(seg2, 0, m, exchange.message_buffer(m),
                                           exchange.QUANT[qm], left * 1.01)
    assert (nb2, form2, left2) == (nb, form, left)
    np.testing.assert_array_equal(seg2, seg)
    seg3 = orig.copy()
    buf = exchange.message_buffer(m)
    nb3, form3, mass3, left3 = exchange.encode(seg3, 0, m, buf, exchange.QUANT[qm], left * 0.99)
    assert form3 in (0, 1) and left3 == 0.0 and not seg3.any() and mass3 == mass
    exchange.header(buf)[FORM] = form3
    acc = np.zeros(m)
    exchange.decode(acc, np.arange(m, dtype=np.int64), buf, nb3)
    np.testing.assert_array_equal(acc, orig)


@pytest.mark.parametrize("block", [1, 5, 16, 1000])
@pytest.mark.parametrize("theta", [0.0, 1e-3, 1e9])
def test_jacobi_sweep_blocks_push_or_keep_whole_blocks(block, theta, rng):
    """One block sweep against scipy: pushed blocks move r into x and alpha r W to the
    targets, skipped blocks keep r (+ their pool share), the pools get the rest, and
    the cap pushes at least the block of the largest mean |r| (theta = 1e9)."""
    import scipy.sparse as sp

    from asapgraph.kernels import _local

    n, nslots, alpha = 53, 7, 0.85
    m = 300
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n + nslots, m)
    src[src == 3] = 4  # vertex 3 is dangling
    order = np.argsort(src, kind="stable")
    src, dst = src[order], dst[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(indptr, src + 1, 1)
    indptr = np.cumsum(indptr)
    deg = np.diff(indptr)
    dangling = (deg == 0).astype(np.uint8)
    vcoef = 1.0 / np.maximum(deg, 1)
    W = sp.csr_matrix((vcoef[src], (src, dst)), shape=(n, n + nslots))
    r0 = rng.standard_normal(n)
    r0[10:20] = 0.0
    acc0 = np.concatenate([r0, rng.standard_normal(nslots)])
    bq = rng.random(n)
    bq /= bq.sum()
    pend = 0.25
    acc, x = acc0.copy(), np.zeros(n)
    rs = np.zeros(n)
    nb = -(-n // block)
    act, bsum = np.zeros(nb, np.int32), np.zeros(nb)
    nedge, dp, tot, tabs, left = _local.jacobi_push(
        indptr, dst.astype(np.int32), None, vcoef, x, acc, rs, act, bsum, dangling, alpha,
        pend, bq, 0.0, bq, theta, block)
    r = r0 + pend * bq
    np.testing.assert_allclose(rs, r, rtol=0, atol=1e-15)
    means = np.array([np.abs(r[b * block:(b + 1) * block]).mean() for b in range(nb)])
    th = min(theta, 0.5 * means.max())
    pushed = np.repeat(means > th, block)[:n]
    assert pushed.any()
    rp = np.where(pushed, r, 0.0)
    want = acc0.copy()
    want[:n] = np.where(pushed, 0.0, r)
    want += alpha * (W.T @ rp)
    np.testing.assert_allclose(acc, want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(x, rp, rtol=0, atol=0)
    assert nedge == int(deg[pushed].sum())
    assert dp == pytest.approx(alpha * rp[dangling.astype(bool)].sum(), abs=1e-14)
    assert tot == pytest.approx(rp.sum(), abs=1e-12)
    assert tabs == pytest.approx(np.abs(rp).sum(), abs=1e-12)
    assert left == pytest.approx(np.abs(want[:n]).sum(), rel=1e-12)


def _push_rows(rng, n, nslots, m):
    """Random push rows of ``n`` owned vertices into owned targets and ``nslots`` slots:
    ``(indptr, tgt, dangling, vcoef)``."""
    src = np.sort(rng.integers(0, n, m))
    tgt = rng.integers(0, n + nslots, m).astype(np.int32)
    indptr = np.searchsorted(src, np.arange(n + 1)).astype(np.int64)
    deg = np.diff(indptr)
    return indptr, tgt, (deg == 0).astype(np.uint8), 1.0 / np.maximum(deg, 1)


@pytest.mark.parametrize("weighted", [False, True])
def test_jacobi_sweep_prefetch_changes_nothing(weighted, rng):
    """The push rows' software prefetch (``prefetch`` = distance in edges; rows too close
    to the end of ``tgt`` go without) leaves every output bit for bit as without it."""
    from asapgraph.kernels import _local

    n, nslots, m = 200, 30, 1500
    indptr, tgt, dangling, vcoef = _push_rows(rng, n, nslots, m)
    coef = rng.random(m) if weighted else None
    acc0 = rng.standard_normal(n + nslots)
    bq = rng.random(n)
    bq /= bq.sum()
    outs = []
    for pf in (0, 1, 5, 64, 5000):
        acc, x, rs = acc0.copy(), np.zeros(n), np.zeros(n)
        nb = -(-n // 16)
        act, bsum = np.zeros(nb, np.int32), np.zeros(nb)
        r = _local.jacobi_push(indptr, tgt, coef, vcoef, x, acc, rs, act, bsum, dangling, 0.85,
                               0.3, bq, 0.1, bq, 1e-3, 16, 0.0, pf)
        outs.append((r, acc, x, rs))
    for r, acc, x, rs in outs[1:]:
        assert r == outs[0][0]
        for a, b in zip((acc, x, rs), outs[0][1:]):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("pend_d", [0.0, -0.2])
def test_jacobi_sweep_uniform_share_as_one_number(pend_d, rng):
    """A uniform share passed as one number (length-1 ``bq_p``/``bq_d``) and a zero
    dangling pool (``bq_d`` not read) give the same sweep, bit for bit (up to the sign
    of a zero residual)."""
    from asapgraph.kernels import _local

    n, nslots, m = 300, 20, 2000
    indptr, tgt, dangling, vcoef = _push_rows(rng, n, nslots, m)
    acc0 = rng.standard_normal(n + nslots)
    acc0[:50] = 0.0
    bq = np.full(n, 1.0 / n)
    bd = rng.random(n)
    bd /= bd.sum()
    outs = []
    for bp, bdd in ((bq, bd), (bq[:1], bd), (bq[:1], bd[:1] if pend_d == 0.0 else bd)):
        acc, x, rs = acc0.copy(), np.zeros(n), np.zeros(n)
        nb = -(-n // 16)
        act, bsum = np.zeros(nb, np.int32), np.zeros(nb)
        r = _local.jacobi_push(indptr, tgt, None, vcoef, x, acc, rs, act, bsum, dangling, 0.85,
                               -0.3, bp, pend_d, bdd, 1e-4, 16, 0.0, 0)
        outs.append((r, acc, x, rs, bsum))
    for o in outs[1:]:
        assert o[0] == outs[0][0]
        for a, b in zip(o[1:], outs[0][1:]):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError):
        _local.jacobi_push(indptr, tgt, None, vcoef, x, acc, rs, act, bsum, dangling, 0.85,
                           -0.3, bq[:2], pend_d, bd, 1e-4, 16, 0.0, 0)


@pytest.mark.parametrize("plain_before", [False, True])
@pytest.mark.parametrize("n,nslots", [(0, 5), (3, 0), (301, 40), (5000, 3000)])
@pytest.mark.parametrize("mass_tol", [0.0, 1e-9, 1e-3])
def test_jacobi_sweep_mass_sums(n, nslots, mass_tol, plain_before, rng):
    """``jacobi_push(mass=...)``: ``acc``'s signed sum before and after the sweep within the
    error bound it reports (against ``math.fsum``), compensated (bound 0) when the plain
    sum's bound exceeds ``mass_tol`` (``plain_before``: the sum before is taken in the
    snapshot, plain whatever its bound when ``mass_tol > 0``); the sweep itself is bit for
    bit the one without."""
    import math

    from asapgraph.kernels import _local

    indptr, tgt, dangling, vcoef = _push_rows(rng, n, nslots, 8 * n)
    acc0 = rng.standard_normal(n + nslots) * np.exp(rng.uniform(-30, 0, n + nslots))
    bq = rng.random(max(n, 1))
    bq /= bq.sum()
    nb = -(-n // 16)
    outs = []
    for mass in (None, np.full(4, np.nan)):
        acc, x, rs = acc0.copy(), np.zeros(n), np.zeros(n)
        act, bsum = np.zeros(nb, np.int32), np.zeros(nb)
        r = _local.jacobi_push(indptr, tgt, None, vcoef, x, acc, rs, act, bsum, dangling,
                               0.85, 0.3 if n else 0.0, bq[:max(n, 1)] if n else bq[:1], 0.0,
                               bq[:1], 1e-4, 16, 0.0, 0, mass, mass_tol, plain_before)
        outs.append((r, acc, x, rs, mass))
    assert outs[0][0] == outs[1][0]
    for a, b in zip(outs[0][1:4], outs[1][1:4]):
        np.testing.assert_array_equal(a, b)
    mass, acc = outs[1][4], outs[1][1]
    for i, (s, err, vec) in enumerate(((mass[0], mass[1], acc0), (mass[2], mass[3], acc))):
        ref = math.fsum(vec.tolist())
        scale = float(np.abs(vec).sum())
        if plain_before and mass_tol > 0.0 and i == 0:
            assert err == pytest.approx((528 + len(vec) / 2 ** 18) * 2.0 ** -53 * 1.01 * scale,
                                        rel=1e-9)
        else:
            assert 0.0 <= err <= max(mass_tol, 0.0)
        if err == 0.0:  # compensated: about one rounding of the result
            assert abs(s - ref) <= 4e-16 * abs(ref) + 1e-30 * scale
        else:
            assert abs(s - ref) <= err
            assert err >= 528 * 2.0 ** -53 * scale
    with pytest.raises(ValueError):
        _local.jacobi_push(indptr, tgt, None, vcoef, x, acc, rs, act, bsum, dangling, 0.85,
                           0.0, bq[:1], 0.0, bq[:1], 1e-4, 16, 0.0, 0, np.zeros(3), 1.0)


def test_jacobi_sweep_mass_plain_sum_blocking(rng):
    """The plain signed sum is blocked (few roundings per term): on values of one sign it
    stays far inside its bound, and the bound is the documented one."""
    from asapgraph.kernels import _local

    n = 1 << 20
    indptr = np.zeros(n + 1, dtype=np.int64)
    tgt = np.zeros(0, dtype=np.int32)
    acc = rng.random(n) + 1.0
    ref = float(np.sum(acc.astype(np.longdouble)))
    mass = np.zeros(4)
    _local.jacobi_push(indptr, tgt, None, np.ones(n), np.zeros(n), acc.copy(), np.zeros(n),
                       np.zeros(n // 16, np.int32), np.zeros(n // 16), np.zeros(n, np.uint8),
                       0.85, 0.0, np.ones(1), 0.0, np.ones(1), 1e300, 16, 0.0, 0, mass, 1.0)
    bound = (528 + n / 2 ** 18) * 2.0 ** -53 * 1.01 * acc.sum()
    assert mass[1] == pytest.approx(bound, rel=1e-9)
    assert abs(mass[0] - ref) <= bound


def test_oversubscribed_compares_ranks_per_host_with_usable_cores(monkeypatch):
    """The ASAP sweep gate is on only where ranks share cores: one rank on COMM_SELF is
    oversubscribed exactly when the process may run on no CPU at all (patched affinity)."""
    import os

    MPI = pytest.importorskip("mpi4py.MPI")
    from asapgraph.comm.mpi import oversubscribed

    assert oversubscribed(MPI.COMM_SELF) is False
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(), raising=False)
    assert oversubscribed(MPI.COMM_SELF) is True


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
@pytest.mark.parametrize("density", [0.0, 0.01, 0.5, 1.0])
def test_exact_offers_roundtrip(dtype, density, rng):
    """Min/max offers (payload forms 6 and 7 of engine.exchange): the changed slots
    arrive exactly, in the smaller of the dense and sparse forms."""
    from asapgraph.engine import exchange

    m = 3000
    seg = rng.integers(0, 10**12, m).astype(dtype)
    ch = np.flatnonzero(rng.random(m) < density)
    buf = exchange.message_buffer(m)
    nbytes, form = exchange.encode_exact(seg, ch, buf)
    exchange.header(buf)[exchange.FORM] = form
    sparse = 12 * len(ch) < 8 * m
    assert form == (exchange.SPARSE_EXACT if sparse else exchange.DENSE_EXACT)
    assert nbytes == 8 * exchange.HEADER + (12 * len(ch) if sparse else 8 * m)
    mp = rng.permutation(m).astype(np.int64)
    t, v = exchange.decode_exact(mp, buf, nbytes, np.dtype(dtype))
    assert v.dtype == dtype
    if sparse:
        np.testing.assert_array_equal(t, mp[ch])
        np.testing.assert_array_equal(v, seg[ch])
    else:
        np.testing.assert_array_equal(t, mp)
        np.testing.assert_array_equal(v, seg)
