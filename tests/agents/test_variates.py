"""The compiled variates of ``bandit_gym.agents._variates`` (TTTS's posterior draws): the ziggurat's tables against
the equal-area construction, the compiled normal and Gamma draws against the algorithms written in plain Python
(bit for bit, through the ziggurat's rare steps), and their laws against scipy's."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from scipy import stats

from bandit_gym.agents._variates import (
    ZIGGURAT_F,
    ZIGGURAT_K,
    ZIGGURAT_R,
    ZIGGURAT_V,
    ZIGGURAT_W,
    gamma_constants,
    standard_gamma,
    standard_normal,
    sub_stream,
)

KEY = 20261128


MASK = 2**64 - 1


def splitmix(seed: int, j: int) -> int:
    """Draw j of the SplitMix64 stream seeded ``seed``, on Python integers."""
    z = (seed + (j + 1) * 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def unit(bits: int) -> float:
    return ((bits >> 11) + 0.5) * 2.0**-53


class SubStream:
    """The words of one sub-stream, in order."""

    def __init__(self, seed: int) -> None:
        self.seed, self.j = seed, 0

    def next(self) -> int:
        self.j += 1
        return splitmix(self.seed, self.j - 1)


def plain_normal(words: SubStream) -> float:
    """Marsaglia and Tsang's ziggurat, as written in their paper (with the package's tables)."""
    while True:
        bits = words.next()
        layer, mantissa, sign = bits & 0xFF, bits >> 12, -1.0 if (bits >> 8) & 1 else 1.0
        x = mantissa * float(ZIGGURAT_W[layer])
        if mantissa < int(ZIGGURAT_K[layer]):
            return sign * x
        if layer == 0:
            while True:
                tail = -math.log1p(-unit(words.next())) / ZIGGURAT_R
                if -2.0 * math.log1p(-unit(words.next())) > tail * tail:
                    return sign * (ZIGGURAT_R + tail)
        low, high = float(ZIGGURAT_F[layer]), float(ZIGGURAT_F[layer - 1])
        if low + (high - low) * unit(words.next()) < math.exp(-0.5 * x * x):
            return sign * x


def plain_gamma(shape: float, words: SubStream) -> float:
    """Marsaglia and Tsang's Gamma method with its squeeze."""
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = plain_normal(words)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = unit(words.next())
        if u < 1.0 - 0.0331 * (x * x) * (x * x) or math.log(u) < 0.5 * x * x + d * (1.0 - v + math.log(v)):
            return d * v




@numba.njit
def _normals(key, n):  # pragma: no cover (compiled)
    out, used = np.zeros(n), np.zeros(n, np.int64)
    for x in range(n):
        value, after = standard_normal(sub_stream(np.uint64(key), np.uint64(x)), np.uint64(0))
        out[x], used[x] = value, after
    return out, used


@numba.njit
def _gammas(key, shape, n):  # pragma: no cover (compiled)
    d, c = gamma_constants(shape)
    out = np.zeros(n)
    for x in range(n):
        out[x] = standard_gamma(d, c, sub_stream(np.uint64(key), np.uint64(x)))
    return out


def first_step(seed: int) -> str:
    """Where the first word of a sub-stream lands: ``rectangle``, ``wedge`` (a layer's edge) or ``tail`` (the
    base strip beyond its rectangle)."""
    bits = splitmix(seed, 0)
    layer, mantissa = bits & 0xFF, bits >> 12
    if mantissa < int(ZIGGURAT_K[layer]):
        return "rectangle"
    return "tail" if layer == 0 else "wedge"


# ------------------------------------------------------------------------------------------ the tables
def test_every_block_of_the_ziggurat_has_the_same_area():
    x, f = ZIGGURAT_W * 2.0**52, ZIGGURAT_F
    assert np.allclose(x[1:] * (f[:-1] - f[1:]), ZIGGURAT_V, rtol=1e-8, atol=0)  # 255 layers, the top one too
    base = ZIGGURAT_R * math.exp(-0.5 * ZIGGURAT_R**2) + math.sqrt(2 * math.pi) * stats.norm.sf(ZIGGURAT_R)
    assert base == pytest.approx(ZIGGURAT_V, rel=1e-9)  # the base strip and the tail
    assert x[255] == ZIGGURAT_R and f[0] == 1.0 and np.all(np.diff(x[1:]) > 0)
    # an abscissa below k_i lies under the layer above; the base strip's rectangle is r of its width q
    assert np.allclose(ZIGGURAT_K[2:].astype(float), x[1:-1] / x[2:] * 2.0**52, rtol=1e-15)
    assert float(ZIGGURAT_K[0]) * ZIGGURAT_W[0] == pytest.approx(ZIGGURAT_R, rel=1e-15)


# ------------------------------------------------------------------------------------------ bit for bit
def test_the_compiled_normals_are_the_ziggurat_written_in_plain_python():
    n = 30_000
    values, used = _normals(KEY, n)
    steps = {"rectangle": 0, "wedge": 0, "tail": 0}
    for x in range(n):
        seed = splitmix(KEY, x)
        steps[first_step(seed)] += 1
        words = SubStream(seed)
        assert values[x] == plain_normal(words), f"sub-stream {x}"
        assert used[x] == words.j, f"words used by sub-stream {x}"
    assert steps["wedge"] > 100 and steps["tail"] > 0  # the rare steps were taken


@pytest.mark.parametrize("shape", [1.0, 1.7, 30.0, 5000.0])
def test_the_compiled_gammas_are_marsaglia_and_tsang_s_method_written_in_plain_python(shape):
    n = 3000
    values = _gammas(KEY, shape, n)
    for x in range(n):
        assert values[x] == plain_gamma(shape, SubStream(splitmix(KEY, x))), f"sub-stream {x}"


# ------------------------------------------------------------------------------------------ the laws
def test_the_normals_are_standard_normal():
    values, _ = _normals(KEY + 1, 400_000)
    assert stats.kstest(values, "norm").pvalue > 1e-3
    tail = int(np.sum(np.abs(values) > ZIGGURAT_R))  # the draws that come from the tail algorithm
    assert stats.binomtest(tail, values.size, 2 * stats.norm.sf(ZIGGURAT_R)).pvalue > 1e-3
    far = int(np.sum(np.abs(values) > 4.5))
    assert stats.binomtest(far, values.size, 2 * stats.norm.sf(4.5)).pvalue > 1e-3


@pytest.mark.parametrize("shape", [1.0, 1.7, 30.0, 5000.0])
def test_the_gammas_have_their_law(shape):
    values = _gammas(KEY + 2, shape, 100_000)
    assert stats.kstest(values, stats.gamma(shape).cdf).pvalue > 1e-3


def test_neighbouring_sub_streams_are_uncorrelated():
    values, _ = _normals(KEY + 3, 200_000)
    assert abs(stats.pearsonr(values[:-1], values[1:]).statistic) < 4 / math.sqrt(values.size)
