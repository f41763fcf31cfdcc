r"""Counter-based sample streams for common random numbers (the papers do not say how their runs were paired).

With common random numbers, the \(s\)-th pull of arm \(i\) in copy \(n\) returns the \(s\)-th draw of a stream
owned by \((\text{key}_n, i)\), whatever the order of pulls, so two agents run from the same seed see the same
samples of every arm and a paired test over runs compares like with like. The streams are SplitMix64 sequences
(Steele, Lea, Flood, OOPSLA 2014; the generator behind Java's ``SplittableRandom``): the stream of arm \(i\) starts
at the \((i+1)\)-th SplitMix64 output of the copy's key, and its \(s\)-th draw is the \((s+1)\)-th output of the
generator seeded there. numpy's bit generators cannot be indexed per element in a vectorised way, hence these few
lines.
"""

from __future__ import annotations

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)


def _mix(z: np.ndarray) -> np.ndarray:
    r"""SplitMix64's output function (a bijection of 64-bit words); arithmetic wraps modulo \(2^{64}\)."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


def stream_seeds(keys: np.ndarray, num_arms: int) -> np.ndarray:
    r"""Seeds of the streams of arms ``0..K-1`` under each key, shape ``(len(keys), K)``: the \((i+1)\)-th
    SplitMix64 output of the key."""
    arms = np.arange(1, num_arms + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return _mix(keys[:, None] + arms[None, :] * _GOLDEN)


def stream_uniforms(seeds: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Uniforms in (0, 1): draw number ``draws`` (0-based) of the streams seeded ``seeds``."""
    with np.errstate(over="ignore"):
        bits = _mix(seeds + (draws.astype(np.uint64) + np.uint64(1)) * _GOLDEN)
    return ((bits >> _S11).astype(np.float64) + 0.5) * 2.0**-53
