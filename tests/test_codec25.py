"""The message coder against a plain reference of the format (twenty-fifth session: the
16-bit quantisation by a reciprocal, the byte-coded form written without a branch per
value, its decode in two lanes).

``_ref_encode`` restates :func:`._local.encode_segment` with numpy (and Python loops
where the format is a bit stream): the same statistics in the same order of additions,
the same choice of form, the same payload bytes and the same remainders.  Every segment
is encoded by the kernel and by the reference; the payload bytes, the form, the size,
the slots after encoding and the returned ``mass`` and ``left`` must agree bit for bit
(``left`` decides the ``budget`` fallback, so its rounding is part of the format).
Decoding is checked the same way: ``acc`` bit for bit (slot order, a map may repeat a
target), the returned sums to 1e-12 of the sum of their terms' magnitudes (the kernel
adds in lanes).  Not covered: NaN and infinite slot values (not residuals).
"""
import math

import numpy as np
import pytest

from asapgraph.engine import exchange as ex

H = 8 * ex.HEADER
BYTE_ESC = 0x80


# ---------------------------------------------------------------- the reference
def _lane_sum(x):
    """``_seg_stats`` / ``_left_sum``'s order: four lanes over whole blocks of four, the
    tail added to lane 0, then ``(l0 + l1) + (l2 + l3)``."""
    n4 = len(x) // 4 * 4
    lanes = [0.0, 0.0, 0.0, 0.0]
    if n4:
        cols = np.add.accumulate(x[:n4].reshape(-1, 4), axis=0)[-1]
        lanes = [float(c) for c in cols]
    l0 = lanes[0]
    for t in x[n4:]:
        l0 += float(t)
    return (l0 + lanes[1]) + (lanes[2] + lanes[3])


def _seq_sum(x):
    """One chain of additions in slot order."""
    return float(np.add.accumulate(x)[-1]) if len(x) else 0.0


def _q16(v, step):
    """``trunc(v / step)`` clamped to +-32767, then moved toward zero while
    ``|q step| > |v|`` (the kernel's definition, by division)."""
    v = np.asarray(v, dtype=np.float64)
    with np.errstate(all="ignore"):
        q = np.clip(np.trunc(v / step), -32767, 32767).astype(np.int64)
    while True:
        bad = np.abs(q * step) > np.abs(v)
        if not bad.any():
            return q
        q[bad] -= np.sign(q[bad])


def _eg_order(mean):
    k = int(math.floor(math.log2(mean * 0.5 + 1.0)))
    return min(max(k, 0), 24)


def _eg_bits(n, k):
    x = n + (1 << k)
    return "0" * (x.bit_length() - k - 1) + format(x, "b")


def _zigzag(q):
    return 2 * q - 1 if q > 0 else -2 * q - 2


def _ref_encode(orig, quant, budget=np.inf):
    """``(payload bytes, form, payload size, slots after, mass, left)``."""
    a = orig.copy()
    m = len(a)
    av = np.abs(a)
    mass = _lane_sum(av)
    nnz = int(np.count_nonzero(av != 0.0))
    big = float(av.max()) if m else 0.0
    left = 0.0
    if quant in (2, 3, 4):
        step = big / 32767.0
        qs_path = quant in (2, 4) and m >= 8
        q = np.zeros(m, dtype=np.int64)
        if step > 0.0:
            if qs_path:
                q = _q16(a, step)
                left = _lane_sum(np.abs(a - q * step))
            else:
                sel = av >= step
                q[sel] = _q16(a[sel], step)
                left = _seq_sum(np.where(sel, np.abs(a - q * step), av))
        k = int(np.count_nonzero(q))
        nesc = int(np.count_nonzero(np.abs(q) > 127))
        if left > budget:
            quant, left = 0, 0.0
    if quant in (2, 3, 4):
        head = np.array([step]).tobytes()
        nplain = min(8 + 2 * m, 8 + 6 * k)
        nbyte = 12 + m + 2 * nesc
        use_bytes = quant in (2, 4) and nbyte < nplain
        if use_bytes:
            nplain = nbyte
        if quant == 2 and qs_path and k > 0:
            nzs = np.flatnonzero(q)
            gaps = np.diff(np.concatenate([[-1], nzs])) - 1
            zz = [_zigzag(int(x)) for x in q[nzs]]
            kg = _eg_order(float(int(gaps.sum())) / k)
            kv = _eg_order(float(sum(zz)) / k)
            bits = "".join(_eg_bits(int(g), kg) + _eg_bits(z, kv) for g, z in zip(gaps, zz))
            nbits = -(-len(bits) // 8)
            if nbits < nplain - 16:
                bits += "0" * (8 * nbits - len(bits))
                body = int(bits, 2).to_bytes(nbits, "big")
                pay = (head + np.array([k], np.uint32).tobytes() + bytes([kg, kv, 0, 0])
                       + body)
                return pay, 8, len(pay), a - q * step, mass, left
        if use_bytes:
            out = bytearray(head + np.array([m], np.uint32).tobytes())
            for x in q.tolist():
                if -127 <= x <= 127:
                    out.append(x & 0xFF)
                else:
                    out += bytes([BYTE_ESC, x & 0xFF, (x >> 8) & 0xFF])
            return bytes(out), 9, len(out), a - q * step, mass, left
        if 3 * k < m:
            nzs = np.flatnonzero(q)
            a[nzs] = a[nzs] - q[nzs] * step
            pay = (head + nzs.astype(np.int32).tobytes()
                   + q[nzs].astype(np.int16).tobytes())
            return pay, 5, len(pay), a, mass, left
        pay = head + q.astype(np.int16).tobytes()
        return pay, 4, len(pay), a - q * step, mass, left
    w = 4 if quant == 1 else 8
    nzs = np.flatnonzero(av != 0.0)
    sparse = (w + 4) * nnz < w * m
    idx = nzs if sparse else np.arange(m)
    if quant == 1:
        with np.errstate(over="ignore"):
            f = a[idx].astype(np.float32)
        over = np.abs(f.astype(np.float64)) > np.abs(a[idx])
        f[over] = np.nextafter(f[over], np.float32(0.0))
        a[idx] = a[idx] - f.astype(np.float64)
        left = _seq_sum(np.abs(a[idx]))
        vals = f.tobytes()
    else:
        vals = a[idx].tobytes()
        a[idx] = 0.0
    pay = vals + (idx.astype(np.int32).tobytes() if sparse else b"")
    return pay, (3 if sparse else 2) if quant == 1 else (1 if sparse else 0), len(pay), a, \
        mass, left


def _ref_values(pay, form, m):
    """``(slots, values)`` a payload delivers, in the order they are added."""
    if form == 9:
        step = np.frombuffer(pay[:8], np.float64)[0]
        assert np.frombuffer(pay[8:12], np.uint32)[0] == m
        out, i = [], 12
        while i < len(pay):
            if pay[i] == BYTE_ESC:
                out.append(int(np.frombuffer(pay[i + 1:i + 3], np.int16)[0]))
                i += 3
            else:
                out.append(int(np.int8(np.uint8(pay[i]))))
                i += 1
        assert len(out) == m
        return np.arange(m), np.array(out, dtype=np.float64) * step
    if form == 8:
        step = np.frombuffer(pay[:8], np.float64)[0]
        k = int(np.frombuffer(pay[8:12], np.uint32)[0])
        kg, kv = pay[12], pay[13]
        bits = "".join(format(b, "08b") for b in pay[16:])
        pos, s, slots, vals = 0, -1, [], []

        def rd(kk):
            nonlocal pos
            z = 0
            while bits[pos + z] == "0":
                z += 1
            x = int(bits[pos + z:pos + 2 * z + kk + 1], 2)
            pos += 2 * z + kk + 1
            return x - (1 << kk)
        for _ in range(k):
            s += rd(kg) + 1
            zz = rd(kv) + 1
            slots.append(s)
            vals.append(-((zz + 1) >> 1) if zz & 1 else zz >> 1)
        return np.array(slots, dtype=np.int64), np.array(vals, dtype=np.float64) * step
    if form in (4, 5):
        step = np.frombuffer(pay[:8], np.float64)[0]
        if form == 4:
            return np.arange(m), np.frombuffer(pay[8:], np.int16) * step
        k = (len(pay) - 8) // 6
        return (np.frombuffer(pay[8:8 + 4 * k], np.int32).astype(np.int64),
                np.frombuffer(pay[8 + 4 * k:], np.int16) * step)
    w = 4 if form in (2, 3) else 8
    dt = np.float32 if w == 4 else np.float64
    if form in (0, 2):
        return np.arange(m), np.frombuffer(pay, dt).astype(np.float64)
    k = len(pay) // (w + 4)
    return (np.frombuffer(pay[w * k:], np.int32).astype(np.int64),
            np.frombuffer(pay[:w * k], dt).astype(np.float64))


def _ref_decode(acc, mp, slots, vals):
    """``acc[mp[s]] += v`` in order; ``(tot, dabs, scale)``, ``scale`` the sum of the
    terms' magnitudes (the tolerance of a reordered sum)."""
    tgt = mp[slots]
    if len(np.unique(tgt)) == len(tgt):
        old = acc[tgt].copy()
        acc[tgt] = old + vals
        new = acc[tgt]
    else:
        old, new = np.empty(len(tgt)), np.empty(len(tgt))
        for i, (t, v) in enumerate(zip(tgt.tolist(), vals.tolist())):
            old[i] = acc[t]
            acc[t] = old[i] + v
            new[i] = acc[t]
    d = np.abs(new) - np.abs(old)
    return float(np.sum(vals)), float(np.sum(d)), float(np.abs(vals).sum() + np.abs(d).sum())


# ---------------------------------------------------------------- the comparison
def _bits(x):
    return np.asarray(x, dtype=np.float64).view(np.int64)


def _check(orig, quant, budget=np.inf, rng=None, repeat=False):
    orig = np.ascontiguousarray(orig, dtype=np.float64)
    m = len(orig)
    pay, form, npay, slots, mass, left = _ref_encode(orig, quant, budget)
    seg = orig.copy()
    buf = np.full(H + 8 + 8 * m, 0xA5, dtype=np.uint8)  # the least the kernel accepts
    nb, kform, kmass, kleft = ex.encode(seg, 0, m, buf, quant, budget)
    ctx = f"quant {quant} m {m} budget {budget}"
    assert (kform, nb) == (form, H + npay), ctx
    assert bytes(buf[H:nb]) == pay, ctx
    np.testing.assert_array_equal(_bits(seg), _bits(slots), err_msg=ctx)
    assert _bits(kmass) == _bits(mass) and _bits(kleft) == _bits(left), ctx
    # decode: through a map (a permutation, or one that repeats targets) onto a base
    rng = rng or np.random.default_rng(m)
    n = max(m, 1)
    mp = (rng.integers(0, max(n // 3, 1), m) if repeat else rng.permutation(m)).astype(np.int64)
    base = rng.standard_normal(n) * rng.choice([0.0, 1e-9, 1.0], n)
    acc = base.copy()
    ex.header(buf)[ex.FORM] = form
    tot, dabs = ex.decode(acc, mp, buf, nb)
    want = base.copy()
    wtot, wdabs, scale = _ref_decode(want, mp, *_ref_values(pay, form, m))
    np.testing.assert_array_equal(_bits(acc), _bits(want), err_msg=ctx)
    assert abs(tot - wtot) <= 1e-12 * scale and abs(dabs - wdabs) <= 1e-12 * scale, ctx
    return form


def _segments(rng, m):
    """Random and adversarial segments of ``m`` slots."""
    big = float(rng.choice([1.0, 3e-7, 1e300, 1e-305, 2.2e-308 * 1000]))
    step = big / 32767.0
    out = {"zero": np.zeros(m), "negzero": -np.zeros(m)}
    u = rng.random(m)
    sign = rng.choice([-1.0, 1.0], m)
    out["skewed"] = u ** 6 * big * (rng.random(m) < 0.7) * sign
    out["uniform"] = u * big
    out["small"] = (u * 127 * step) * sign  # nothing escapes (beyond the max)
    out["escape"] = (128 + u * 32000) * step * sign  # every slot escapes
    mult = rng.integers(-32767, 32768, m).astype(np.float64)
    out["multiples"] = mult * step  # exact multiples of the step (the ambiguous case)
    near = rng.choice([-128, -127, -126, -1, 0, 1, 126, 127, 128, 129, 32766, 32767], m)
    x = near * step
    out["edges"] = np.where(rng.random(m) < 0.5, x,
                            np.nextafter(x, rng.choice([-np.inf, np.inf], m)))
    out["denormal"] = rng.random(m) * 1e-310 * sign
    out["mixed_scales"] = sign * 10.0 ** rng.uniform(-320, 0, m)
    for s in out.values():
        if m:
            s[rng.integers(m)] = big if s is not out["denormal"] else s[0]
    return out


@pytest.mark.parametrize("quant", [0, 1, 2, 3, 4])
def test_every_length_and_kind(quant):
    """m = 0..40 (every tail of the four lanes, both sides of the m >= 8 switch) and
    larger, every kind of segment."""
    rng = np.random.default_rng(25 + quant)
    forms = set()
    for m in list(range(41)) + [63, 64, 65, 127, 1000, 4099]:
        for _, seg in _segments(rng, m).items():
            forms.add(_check(seg, quant, rng=rng))
    want = {0: {0, 1}, 1: {2, 3}, 2: {4, 5, 8, 9}, 3: {4, 5}, 4: {4, 5, 9}}[quant]
    assert forms == want


@pytest.mark.parametrize("quant", [2, 3, 4])
def test_budget_fallback(quant):
    """Budgets around what would stay: at it the segment is quantised, just below it goes
    out exactly in float64."""
    rng = np.random.default_rng(7 + quant)
    for m in (1, 5, 8, 9, 33, 500):
        for seg in _segments(rng, m).values():
            _, _, _, _, _, left = _ref_encode(seg, quant)
            for b in (0.0, left, np.nextafter(left, 0.0), left * 0.5, 2 * left + 1e-300):
                _check(seg, quant, budget=b, rng=rng)


@pytest.mark.parametrize("quant", [0, 2, 3, 4])
def test_repeated_targets(quant):
    """A slot map that repeats targets: the adds land in slot order."""
    rng = np.random.default_rng(11)
    for m in (3, 8, 17, 40, 301):
        for seg in _segments(rng, m).values():
            _check(seg, quant, rng=rng, repeat=True)


def test_large_skewed_segments():
    """Large residual-like segments (the benchmark's), every 16-bit mode."""
    rng = np.random.default_rng(3)
    for m in (60000, 60001, 60003):
        seg = rng.random(m) ** 6 * 1e-7 * (rng.random(m) < 0.7)
        for quant in (2, 3, 4):
            _check(seg, quant, rng=rng)


def test_quantisation_many_steps():
    """The quantiser over many steps and values: random magnitudes over the whole range,
    exact multiples of the step and their neighbours, values near the clamp, the step's
    own neighbours (each segment's step is its largest |value| / 32767)."""
    rng = np.random.default_rng(2025)
    for _ in range(300):
        m = 256
        big = float(np.ldexp(rng.random() + 0.5, int(rng.integers(-1070, 1020))))
        step = big / 32767.0
        k = rng.integers(-32767, 32768, m).astype(np.float64)
        x = k * step
        kind = rng.integers(0, 5, m)
        x = np.where(kind == 1, np.nextafter(x, np.inf), x)
        x = np.where(kind == 2, np.nextafter(x, -np.inf), x)
        x = np.where(kind == 3, rng.uniform(-1, 1, m) * big, x)
        x = np.where(kind == 4, (k + rng.choice([-1e-9, 1e-9, 0.5], m)) * step, x)
        x = np.clip(x, -big, big)
        x[0] = big if rng.random() < 0.5 else -big
        _check(x, 4, rng=rng)
        _check(x, 3, rng=rng)


def test_truncated_byte_coded_message_refused():
    """A byte-coded payload cut short, or with bytes to spare, is refused."""
    m = 40
    seg = np.linspace(-1.0, 1.0, m) * 3e-3  # within +-127 steps but the largest
    seg[0] = 1.0
    buf = np.zeros(H + 8 + 8 * m, dtype=np.uint8)
    nb, form, _, _ = ex.encode(seg, 0, m, buf, 4)
    assert form == 9
    ex.header(buf)[ex.FORM] = form
    mp = np.arange(m, dtype=np.int64)
    for bad in (nb - 1, nb - 2, nb + 1):
        with pytest.raises(ValueError):
            ex.decode(np.zeros(m), mp, buf, bad)
