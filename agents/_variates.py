r"""Exact normal and Gamma variates from counter-based streams, compiled: the posterior draws of ``TTTS``.

The words come from SplitMix64 *sub-streams*, the layout of ``bandit_gym.streams``: ``sub_stream(key, x)`` is the
\((x+1)\)-th SplitMix64 output of a copy's key, and ``word(s, j)`` is draw \(j\) (0-based) of the sub-stream seeded
\(s\), its \((j+1)\)-th output. Each variate reads the words of a sub-stream of its own from the start, so variates
drawn for different \(x\) are independent and none waits for another's words: a loop over the arms of a posterior draw
keeps several variates in flight at once on the CPU. A copy's variates depend on its key and on \(x\) alone, not on the
batch or on the other copies.

The algorithms are numpy's ``Generator`` ones (numpy draws from one bit generator, not per-copy streams, so they
are written out here):

- ``standard_normal``: Marsaglia and Tsang's ziggurat (Journal of Statistical Software 5(8), 2000) with 256
  layers and a 52-bit abscissa, as ``numpy.random.Generator.standard_normal``: one word gives the layer (its low 8
  bits), the sign (bit 8) and the abscissa (its top 52 bits); about 99% of draws end there, the others take the
  wedge test or Marsaglia's tail algorithm (1964) beyond \(r = 3.6541528853610088\) with further words.
- ``standard_gamma``: Marsaglia and Tsang's method for shape \(\ge 1\) (ACM Transactions on Mathematical Software
  26(3), 2000; ``Generator.standard_gamma``'s for shape \(> 1\)): with \(d = \text{shape} - 1/3\) and
  \(c = 1 / \sqrt{9 d}\), draw a normal \(X\) until \(V = (1 + c X)^3 > 0\), then a uniform \(U\); accept \(d V\) if
  \(U < 1 - 0.0331 X^4\) (the squeeze) or \(\ln U < X^2 / 2 + d (1 - V + \ln V)\), else start again.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bandit_gym.agents.ranking import jit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)

#: the ziggurat's rightmost layer edge and the area of each of its 256 blocks (Marsaglia and Tsang 2000, n = 256)
ZIGGURAT_R = 3.6541528853610088
ZIGGURAT_V = 0.00492867323399
#: the abscissa's bits
_SCALE = 2.0**52


def ziggurat_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""\((k, w, f)\), Marsaglia and Tsang's tables for 52-bit abscissas (their 32-bit construction with
    \(2^{52}\)): \(x_{255} = r\), \(x_{i-1} = f^{-1}\big(v / x_i + f(x_i)\big)\) down to \(x_0 = 0\) with
    \(f(x) = \exp(-x^2 / 2)\); \(w_i = x_i / 2^{52}\), \(f_i = f(x_i)\), \(k_i = (x_{i-1} / x_i)\, 2^{52}\) (an
    abscissa below \(k_i\) lies under the layer above: no test), and for the base strip \(w_0 = q / 2^{52}\),
    \(k_0 = (r / q)\, 2^{52}\) with \(q = v / f(r)\)."""
    r, v = ZIGGURAT_R, ZIGGURAT_V
    k, w, f = np.zeros(256, np.uint64), np.zeros(256), np.zeros(256)
    q = v / math.exp(-0.5 * r * r)
    k[0], w[0], f[0] = np.uint64((r / q) * _SCALE), q / _SCALE, 1.0
    w[255], f[255] = r / _SCALE, math.exp(-0.5 * r * r)
    upper = r
    for i in range(254, 0, -1):
        x = math.sqrt(-2.0 * math.log(v / upper + math.exp(-0.5 * upper * upper)))
        k[i + 1] = np.uint64((x / upper) * _SCALE)
        w[i], f[i] = x / _SCALE, math.exp(-0.5 * x * x)
        upper = x
    k[1] = 0  # x_0 = 0: every abscissa of the top layer takes the wedge test
    return k, w, f


ZIGGURAT_K, ZIGGURAT_W, ZIGGURAT_F = ziggurat_tables()


@jit
def word(seed: np.uint64, j: np.uint64) -> np.uint64:
    r"""Draw \(j\) (0-based) of the SplitMix64 sub-stream seeded ``seed``: its \((j+1)\)-th output."""
    z = seed + (j + np.uint64(1)) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@jit
def sub_stream(key: np.uint64, x: np.uint64) -> np.uint64:
    r"""The seed of sub-stream \(x\) of ``key``: the key's \((x+1)\)-th SplitMix64 output (``bandit_gym.streams``)."""
    return word(key, x)


@jit
def unit(bits: np.uint64) -> float:
    r"""The uniform in \((0, 1)\) of a word: its top 53 bits, centred (``bandit_gym.streams.stream_uniforms``)."""
    return (float(bits >> np.uint64(11)) + 0.5) * 2.0**-53


@numba.njit(error_model="numpy")
def _normal_beyond_the_rectangles(seed: np.uint64, j: np.uint64, bits: np.uint64) -> tuple[float, np.uint64]:
    r"""The ziggurat's rare steps for the word ``bits`` (draw \(j\)): the tail or the wedge test, and the draws that
    follow when they reject. Returns the normal and the next unused draw."""
    while True:
        layer = bits & np.uint64(0xFF)
        mantissa = bits >> np.uint64(12)
        negative = (bits >> np.uint64(8)) & np.uint64(1)
        x = float(mantissa) * ZIGGURAT_W[layer]
        if mantissa < ZIGGURAT_K[layer]:
            return (-x if negative else x), j + np.uint64(1)
        if layer == 0:  # the tail beyond r (Marsaglia 1964)
            while True:
                tail = -math.log1p(-unit(word(seed, j + np.uint64(1)))) / ZIGGURAT_R
                height = -math.log1p(-unit(word(seed, j + np.uint64(2))))
                j += np.uint64(2)
                if height + height > tail * tail:
                    x = ZIGGURAT_R + tail
                    return (-x if negative else x), j + np.uint64(1)
        j += np.uint64(1)
        height = ZIGGURAT_F[layer] + (ZIGGURAT_F[layer - 1] - ZIGGURAT_F[layer]) * unit(word(seed, j))
        if height < math.exp(-0.5 * x * x):
            return (-x if negative else x), j + np.uint64(1)
        j += np.uint64(1)
        bits = word(seed, j)


@jit
def standard_normal(seed: np.uint64, j: np.uint64) -> tuple[float, np.uint64]:
    r"""A standard normal from draws \(j, j + 1, \dots\) of sub-stream ``seed`` (the ziggurat), and the next unused
    draw."""
    bits = word(seed, j)
    layer = bits & np.uint64(0xFF)
    mantissa = bits >> np.uint64(12)
    if mantissa < ZIGGURAT_K[layer]:
        x = float(mantissa) * ZIGGURAT_W[layer]
        return (-x if (bits >> np.uint64(8)) & np.uint64(1) else x), j + np.uint64(1)
    return _normal_beyond_the_rectangles(seed, j, bits)


@jit
def gamma_constants(shape: float) -> tuple[float, float]:
    r"""\((d, c) = (\text{shape} - 1/3, 1 / \sqrt{9 d})\), Marsaglia and Tsang's constants of a shape \(\ge 1\)."""
    d = shape - 1.0 / 3.0
    return d, 1.0 / math.sqrt(9.0 * d)


@jit
def standard_gamma(d: float, c: float, seed: np.uint64) -> float:
    r"""A Gamma(shape, 1) variate, shape \(\ge 1\) given by ``gamma_constants``, from sub-stream ``seed``."""
    j = np.uint64(0)
    while True:
        x, j = standard_normal(seed, j)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = unit(word(seed, j))
        j += np.uint64(1)
        square = x * x
        if u < 1.0 - 0.0331 * square * square:
            return d * v
        if math.log(u) < 0.5 * square + d * (1.0 - v + math.log(v)):
            return d * v
