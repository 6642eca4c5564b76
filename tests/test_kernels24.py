"""The message kernels' compiled passes (twenty-fourth session: four-lane sums, no branch
per value): every length (the lanes' tails), zeros, values at the quantisation step, and
a slot map that repeats a target."""
import numpy as np
import pytest

from asapgraph.engine import exchange as ex

H = 8 * ex.HEADER


def _buf(m):
    return np.zeros(H + 16 * m + 64, dtype=np.uint8)


@pytest.mark.parametrize("m", [0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 64, 1001])
@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_float64_roundtrip_every_length(m, density):
    rng = np.random.default_rng(m * 7 + int(density * 10))
    orig = np.where(rng.random(m) < density, rng.standard_normal(m), 0.0)
    seg = orig.copy()
    buf = _buf(m)
    nb, form, mass, left = ex.encode(seg, 0, m, buf, ex.QUANT["off"])
    nnz = int(np.count_nonzero(orig))
    assert form == (1 if 12 * nnz < 8 * m else 0)
    assert mass == pytest.approx(np.abs(orig).sum(), rel=1e-14, abs=0.0)
    assert left == 0.0 and not seg.any()  # the slots are emptied
    ex.header(buf)[ex.FORM] = form
    mp = rng.permutation(m).astype(np.int64)
    base = rng.standard_normal(m)
    acc = base.copy()
    tot, dabs = ex.decode(acc, mp, buf, nb)
    want = base.copy()
    want[mp] += orig
    np.testing.assert_array_equal(acc, want)
    assert tot == pytest.approx(orig.sum(), rel=1e-12, abs=1e-15)
    assert dabs == pytest.approx(np.abs(want).sum() - np.abs(base).sum(), rel=1e-9, abs=1e-12)


def test_dense_decode_repeated_target_in_order():
    """A map that sends two slots to one target adds both, in slot order."""
    m = 6
    orig = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    buf = _buf(m)
    nb, form, _, _ = ex.encode(orig.copy(), 0, m, buf, ex.QUANT["off"])
    assert form == 0
    ex.header(buf)[ex.FORM] = form
    acc = np.zeros(3)
    tot, dabs = ex.decode(acc, np.array([0, 0, 1, 1, 2, 0], dtype=np.int64), buf, nb)
    np.testing.assert_array_equal(acc, [1.0 + 2.0 + 6.0, 7.0, 5.0])
    assert tot == 21.0 and dabs == 21.0


@pytest.mark.parametrize("qm", ["q16", "q16b", "q16c"])
@pytest.mark.parametrize("m", [8, 9, 13, 400])
def test_quantised_values_at_the_step(qm, m):
    """Values at, just below and just above the step, and at the clamp: what is delivered
    plus what stays is the original bit for bit, what stays is below one step, and
    nothing changes sign."""
    rng = np.random.default_rng(m)
    big = 3.0
    step = big / 32767.0
    orig = rng.standard_normal(m) * step * rng.choice([0.5, 1.0, 3.0, 200.0], m)
    orig[0] = big
    orig[1] = step
    orig[2] = np.nextafter(step, 0.0)
    orig[3] = -step
    orig[4] = np.nextafter(-step, 0.0)
    orig[5] = 0.0
    orig[6] = -big
    orig[7] = 128 * step
    seg = orig.copy()
    buf = _buf(m)
    nb, form, mass, left = ex.encode(seg, 0, m, buf, ex.QUANT[qm])
    assert mass == pytest.approx(np.abs(orig).sum(), rel=1e-14)
    assert left == pytest.approx(np.abs(seg).sum(), rel=1e-12, abs=1e-300)
    assert (np.abs(seg) < step).all()
    ex.header(buf)[ex.FORM] = form
    acc = np.zeros(m)
    ex.decode(acc, np.arange(m, dtype=np.int64), buf, nb)
    np.testing.assert_array_equal(acc + seg, orig)
    assert (acc * orig >= 0).all() and (seg * orig >= 0).all()
    assert acc[1] == step and acc[2] == 0.0 and acc[3] == -step and acc[5] == 0.0
