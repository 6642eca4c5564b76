"""asapgraph.graph.generators: determinism, slicing, distributions, spec parsing."""
import numpy as np
import pytest

from asapgraph.graph import generators as g
from asapgraph.errors import InputError


def test_rmat_shape_range_and_determinism():
    src, dst = g.rmat(12, 8, seed=5)
    assert src.dtype == dst.dtype == np.int64
    assert src.size == dst.size == 8 << 12
    assert src.min() >= 0 and src.max() < 1 << 12 and dst.min() >= 0 and dst.max() < 1 << 12
    s2, d2 = g.rmat(12, 8, seed=5)
    assert np.array_equal(src, s2) and np.array_equal(dst, d2)
    s3, _ = g.rmat(12, 8, seed=6)
    assert not np.array_equal(src, s3)


@pytest.mark.parametrize("pieces", [1, 2, 3, 7])
def test_rmat_is_concatenation_of_slices(pieces):
    scale, ef, seed = 11, 5, 9
    full_s, full_d = g.rmat(scale, ef, seed)
    m = full_s.size
    cuts = np.linspace(0, m, pieces + 1).astype(int)
    parts = [g.rmat_slice(scale, ef, seed, a, b) for a, b in zip(cuts[:-1], cuts[1:])]
    assert np.array_equal(np.concatenate([p[0] for p in parts]), full_s)
    assert np.array_equal(np.concatenate([p[1] for p in parts]), full_d)


def test_rmat_result_independent_of_threads(tmp_path):
    import os
    import subprocess
    import sys

    code = ("import numpy as np, hashlib; from asapgraph.graph.generators import rmat;"
            "s, d = rmat(14, 4, 3); print(hashlib.sha1(s.tobytes() + d.tobytes()).hexdigest())")
    outs = set()
    for t in ("1", "2"):
        env = dict(os.environ, OMP_NUM_THREADS=t)
        outs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                text=True, check=True, cwd=tmp_path).stdout)
    assert len(outs) == 1


def test_rmat_unpermuted_quadrant_frequencies():
    """Top-level bits follow a, b, c, d (binomial tolerance, 6 sigma)."""
    a, b, c = 0.57, 0.19, 0.19
    scale = 10
    src, dst = g.rmat(scale, 64, seed=1, permute=False)
    hi = 1 << (scale - 1)
    top = (src >= hi) * 2 + (dst >= hi)
    freq = np.bincount(top, minlength=4) / src.size
    expect = np.array([a, b, c, 1 - a - b - c])
    sigma = np.sqrt(expect * (1 - expect) / src.size)
    assert np.all(np.abs(freq - expect) <= 6 * sigma), (freq, expect)
    # every level is an independent draw with the same law: check the lowest bit too
    low = (src & 1) * 2 + (dst & 1)
    freq = np.bincount(low, minlength=4) / src.size
    assert np.all(np.abs(freq - expect) <= 6 * sigma), (freq, expect)


def test_rmat_permutation_is_a_bijection_and_applied():
    scale, seed = 13, 4
    p = g.rmat_permutation(np.arange(1 << scale), scale, seed)
    assert np.array_equal(np.sort(p), np.arange(1 << scale))
    assert not np.array_equal(p, np.arange(1 << scale))
    s0, d0 = g.rmat(scale, 2, seed, permute=False)
    s1, d1 = g.rmat(scale, 2, seed, permute=True)
    assert np.array_equal(p[s0], s1) and np.array_equal(p[d0], d1)
    # degree skew is preserved by the relabelling
    assert np.array_equal(np.sort(np.bincount(s0, minlength=1 << scale)),
                          np.sort(np.bincount(s1, minlength=1 << scale)))


def test_erdos_renyi_uniform_and_sliced():
    n, m = 1000, 200_000
    src, dst = g.erdos_renyi(n, m, seed=2)
    assert src.min() >= 0 and src.max() < n and dst.min() >= 0 and dst.max() < n
    counts = np.bincount(src, minlength=n)
    # chi-square of the out-degree histogram against uniform: mean n-1, sd sqrt(2(n-1))
    chi2 = ((counts - m / n) ** 2 / (m / n)).sum()
    assert abs(chi2 - (n - 1)) < 6 * np.sqrt(2 * (n - 1))
    assert abs(np.corrcoef(src, dst)[0, 1]) < 0.02
    a = g.erdos_renyi_slice(n, m, 2, 1234, 99999)
    assert np.array_equal(a[0], src[1234:99999]) and np.array_equal(a[1], dst[1234:99999])
    loops = (src == dst).sum()
    assert abs(loops - m / n) < 6 * np.sqrt(m / n)  # self-loops are allowed and kept


def test_from_spec():
    s, d, n = g.from_spec("rmat:8")
    assert n == 256 and s.size == 16 * 256
    s2, d2, _ = g.from_spec("rmat:8:16:0")
    assert np.array_equal(s, s2) and np.array_equal(d, d2)
    s3, _, _ = g.from_spec("rmat:8", seed=4)
    assert np.array_equal(s3, g.rmat(8, 16, 4)[0])
    s4, _, _ = g.from_spec("rmat:8:16:7", seed=4)  # the spec's seed wins
    assert np.array_equal(s4, g.rmat(8, 16, 7)[0])
    s, d, n = g.from_spec("er:100:1000:3")
    assert n == 100 and s.size == 1000
    assert np.array_equal(s, g.erdos_renyi(100, 1000, 3)[0])
    assert g.is_spec("rmat:20") and g.is_spec("er:1:2") and not g.is_spec("graph.txt")


@pytest.mark.parametrize("spec, msg", [
    ("rmat", "expected rmat"),
    ("rmat:x", "SCALE must be an integer"),
    ("rmat:20:-1", ">= 0"),
    ("rmat:99", "SCALE must be <="),
    ("rmat:1:2:3:4", "expected rmat"),
    ("er:10", "expected er"),
    ("er:0:5", "N must be >= 1"),
    ("kron:10", "unknown generator"),
])
def test_bad_specs(spec, msg):
    with pytest.raises(InputError, match=msg) as e:
        g.from_spec(spec)
    assert str(e.value).startswith(spec + ":")


def test_graph_from_generated_edges():
    from asapgraph.graph.core import Graph

    src, dst, n = g.from_spec("rmat:10:4:1")
    G = Graph.from_edges(src, dst, n=n)
    assert G.n == 1024 and G.m == 4096
    assert (G.out_degree == 0).sum() > 0  # R-MAT leaves many vertices without out-edges


# ----------------------------------------------------------------------------- fast kernels
def _rmat_numpy(scale, seed, start, cnt, a=0.57, b=0.19, c=0.19):
    """Independent numpy implementation of the documented counter-based R-MAT bits."""
    G = np.uint64(0x9E3779B97F4A7C15)

    def mix(z):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))

    with np.errstate(over="ignore"):
        base = mix(np.uint64(seed) ^ np.uint64(0x5851F42D4C957F2D))
        words = (scale + 3) // 4
        e = np.arange(start, start + cnt, dtype=np.uint64)
        ta, tab, tabc = (int(t * 65536 + 0.5) for t in (a, a + b, a + b + c))
        s = np.zeros(cnt, np.uint64)
        d = np.zeros(cnt, np.uint64)
        level = 0
        for j in range(1, words + 1):
            h = mix(base + (e * np.uint64(words) + np.uint64(j)) * G)
            for k in range(4):
                if level == scale:
                    break
                u = (h >> np.uint64(48 - 16 * k)) & np.uint64(0xFFFF)
                s = (s << np.uint64(1)) | (u >= tab).astype(np.uint64)
                d = (d << np.uint64(1)) | ((u >= ta) ^ (u >= tab) ^ (u >= tabc)).astype(np.uint64)
                level += 1
    return s.astype(np.int64), d.astype(np.int64)


@pytest.mark.parametrize("scale, start, cnt", [(20, 123457, 5000), (7, 0, 3000), (1, 5, 100),
                                               (31, 2**40, 2000), (13, 0, 70001)])
def test_rmat_block_kernel_matches_numpy_definition(scale, start, cnt):
    s, d = g.rmat_slice(scale, 1 << 30, 7, start, start + cnt, permute=False)
    rs, rd = _rmat_numpy(scale, 7, start, cnt)
    assert np.array_equal(s, rs) and np.array_equal(d, rd)


@pytest.mark.parametrize("scale", [3, 12, 20, 32, 33])
@pytest.mark.parametrize("abc", [(0.57, 0.19, 0.19), (0.0, 0.0, 0.0), (1.0, 0.0, 0.0),
                                 (0.25, 0.25, 0.5)])
def test_rmat_block_kernel_equals_scalar_reference(scale, abc):
    from asapgraph.kernels import _generators as _g

    cnt = 20000 if scale < 33 else 2000
    for permute in (False, True):
        s1, d1 = (np.empty(cnt, np.int64) for _ in range(2))
        s2, d2 = (np.empty(cnt, np.int64) for _ in range(2))
        _g.rmat_fill(s1, d1, scale, 11, 977, *abc, permute)
        _g.rmat_fill_scalar(s2, d2, scale, 11, 977, *abc, permute)
        assert np.array_equal(s1, s2) and np.array_equal(d1, d2)


def test_int32_output_equals_int64():
    a = g.rmat(14, 4, 2)
    b = g.rmat(14, 4, 2, dtype=np.int32)
    assert b[0].dtype == b[1].dtype == np.int32
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    a = g.erdos_renyi(1000, 5000, 2)
    b = g.erdos_renyi(1000, 5000, 2, dtype="int32")
    assert b[0].dtype == np.int32 and np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    s, d, n = g.from_spec("rmat:9")
    assert s.dtype == np.int32 and np.array_equal(s, g.rmat(9)[0])
    s, _, _ = g.from_spec("rmat:9", dtype=np.int64)
    assert s.dtype == np.int64
    with pytest.raises(ValueError):
        g.rmat(4, dtype=np.int16)
