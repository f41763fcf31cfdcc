r"""The divergences of the arms' families in JAX, float32, written once: the forms of ``bandit_gym.divergences`` (the
numpy / scipy reference) that every JAX agent uses (the stopping rules, the optimal allocation \(w^*\), KL-UCB's
index and the KL-LUCB stop's bounds, ``kl_bernoulli_bound``, Opt-KG's Beta tails), tested against the reference
point by point (``tests/test_divergences.py``, over a grid with means 0 and 1, equal means and means one float32
step apart).

Float32 keeps a divergence's relative precision only where it is computed from differences taken directly, not
from a subtraction of nearly equal numbers. So ``bernoulli`` takes, beside the two means, their difference and their
complements where a caller knows them more precisely than a float32 subtraction gives them (the Track-and-Stop
oracle's mean of two arms, the GLR statistic's gaps), and computes the divergence from them:

$$
d(p, q) = \frac{g^2}{q \bar q} + p\, f\!\left(\frac{g}{q}\right) + \bar p\, f\!\left(-\frac{g}{\bar q}\right)
\quad (g = p - q,\ \bar p = 1 - p,\ \bar q = 1 - q,\ f(x) = \ln(1 + x) - x)
$$

where both arguments of \(f\) lie within \(1/4\) of 0 (the two first-order terms of the logarithms cancel in closed
form, and ``log1p_minus`` has no cancellation), and \(p \ln(1 + g / q) + \bar p \ln(1 - g / \bar q)\) elsewhere,
each logarithm by ``log1p`` where its argument is within \(1/2\) of 0 and of the ratio \(p / q\) (\(\bar p / \bar q\))
otherwise.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

Array = jax.Array

NEAR = 0.25
r"""\(\lvert g / q \rvert\) and \(\lvert g / \bar q \rvert\) below which ``bernoulli`` sums its closed form."""
_SERIES_FROM = 0.5  # |x| below which log1p_minus sums its series


def _series(x: Array, last: int = 19) -> Array:
    r"""\(\ln(1 + x) - x\) for \(\lvert x \rvert \le 1/2\) through \(r = x / (2 + x)\)
    (\(\ln(1 + x) = 2 \operatorname{atanh} r\)): \(-x^2 / (2 + x) + 2 (r^3/3 + r^5/5 + \dots + r^{\text{last}} /
    \text{last})\). The first term left out is below \(10^{-9}\) of the sum with ``last`` 19 for
    \(\lvert x \rvert \le 1/2\) (\(\lvert r \rvert \le 1/3\)), and with ``last`` 11 for \(\lvert x \rvert \le
    1/4\) (\(\lvert r \rvert \le 1/7\))."""
    r = x / (2.0 + x)
    r2 = r * r
    odd = jnp.zeros_like(r)
    for k in range(last, 1, -2):  # r^2/3 + r^4/5 + ... + r^(last-1)/last, times r below
        odd = (odd + 1.0 / k) * r2
    return -x * x / (2.0 + x) + 2.0 * r * odd


def log1p_minus(x: Any) -> Array:
    r"""\(f(x) = \ln(1 + x) - x\) for \(x > -1\), elementwise, to float32's relative precision: its series
    (``_series``) for \(\lvert x \rvert < 1/2\), where the difference of the two would cancel, the difference
    elsewhere."""
    x = jnp.asarray(x, jnp.float32)
    return jnp.where(jnp.abs(x) < _SERIES_FROM, _series(jnp.clip(x, -_SERIES_FROM, _SERIES_FROM)), jnp.log1p(x) - x)


def bernoulli(p: Any, q: Any, gap: Any = None, p_comp: Any = None, q_comp: Any = None) -> Array:
    r"""The Bernoulli divergence \(d(p, q) = p \ln(p / q) + (1 - p) \ln\big((1 - p) / (1 - q)\big)\), elementwise
    (broadcasts), float32: \(0 \ln 0 = 0\); \(+\infty\) where \(q\) is 0 or 1 and \(p\) is not. ``gap`` \(= p - q\),
    ``p_comp`` \(= 1 - p\) and ``q_comp`` \(= 1 - q\) are computed from ``p`` and ``q`` unless given (give them
    where they are known more precisely than a float32 subtraction gives them). The form: the module's docstring."""
    p, q = jnp.asarray(p, jnp.float32), jnp.asarray(q, jnp.float32)
    gap = p - q if gap is None else jnp.asarray(gap, jnp.float32)
    p_comp = 1.0 - p if p_comp is None else jnp.asarray(p_comp, jnp.float32)
    q_comp = 1.0 - q if q_comp is None else jnp.asarray(q_comp, jnp.float32)
    inside = (q > 0.0) & (q_comp > 0.0)
    # the untaken side of each ``where`` never reaches the value: its arguments are guarded so that it makes no nan
    q_safe, q_comp_safe = jnp.where(inside, q, 1.0), jnp.where(inside, q_comp, 1.0)
    a, b = gap / q_safe, -gap / q_comp_safe
    near = inside & (jnp.abs(a) < NEAR) & (jnp.abs(b) < NEAR)
    close = gap * gap / (q_safe * q_comp_safe) + p * _series(jnp.where(near, a, 0.0), 11) + p_comp * _series(
        jnp.where(near, b, 0.0), 11)
    up = jnp.where(jnp.abs(a) < 0.5, jnp.log1p(jnp.clip(a, -0.5, 0.5)), jnp.log(jnp.where(p > 0.0, p, 1.0) / q_safe))
    down = jnp.where(jnp.abs(b) < 0.5, jnp.log1p(jnp.clip(b, -0.5, 0.5)),
                     jnp.log(jnp.where(p_comp > 0.0, p_comp, 1.0) / q_comp_safe))
    far = jnp.where(p > 0.0, p * up, 0.0) + jnp.where(p_comp > 0.0, p_comp * down, 0.0)
    return jnp.where(inside, jnp.where(near, close, far), jnp.where(gap == 0.0, 0.0, jnp.inf))


def gaussian(gap: Any, sigma: Any) -> Array:
    r"""The Gaussian divergence \((p - q)^2 / (2 \sigma^2)\) from ``gap`` \(= p - q\), elementwise, float32."""
    gap = jnp.asarray(gap, jnp.float32)
    return gap * gap / (2.0 * jnp.asarray(sigma, jnp.float32) ** 2)


def divergence(p: Any, q: Any, is_gaussian: bool, sigma: Any, gap: Any = None, p_comp: Any = None,
               q_comp: Any = None) -> Array:
    r"""\(d(p, q)\) of the arms' family: ``gaussian`` of standard deviation ``sigma`` where ``is_gaussian`` (a Python
    bool, fixed at trace time), else ``bernoulli`` (``sigma``, ``p_comp`` and ``q_comp`` unused for Gaussian
    arms). ``gap`` \(= p - q\) unless given."""
    if is_gaussian:
        return gaussian(jnp.asarray(p, jnp.float32) - jnp.asarray(q, jnp.float32) if gap is None else gap, sigma)
    return bernoulli(p, q, gap, p_comp, q_comp)


NEWTON_STEPS = 8
r"""Newton steps of the Bernoulli index (the numpy agent's count): in float32, from the numpy agent's start, they
reach the float64 root within \(9 \cdot 10^{-8}\) (1.5 float32 ulps at 0.5) on every \((s / n, \ln t / n)\) of a
grid of \(n = 1..10^6\) and \(t = 2..10^7\); more steps change nothing."""


def kl_bernoulli_bound(mean: Any, level: Any, upper: bool, steps: int = NEWTON_STEPS) -> Array:
    r"""The Bernoulli KL confidence bound at ``level``, elementwise for \(p\) = ``mean`` in \([0, 1]\):
    \(\max \{q \in [p, 1] : d(p, q) \le \text{level}\}\) where ``upper`` (a Python bool, fixed at trace time),
    \(\min \{q \in [0, p] : d(p, q) \le \text{level}\}\) otherwise (``level = +inf`` gives 1 or 0), by ``steps``
    Newton steps on every entry at once, float32 (``bandit_gym.agents.multi_armed.kl_ucb.kl_ucb_bernoulli`` is the
    upper one in float64): KL-UCB's index, and the confidence bounds of the KL-LUCB stop
    (``jax.agents._stopping.kl_bound``).

    \(q \mapsto d(p, q)\) is convex, increasing on \([p, 1]\) and decreasing on \([0, p]\): Newton's steps from a
    point beyond the root move monotonically to it. The upper start is the smaller of Pinsker's bound
    \(p + \sqrt{\text{level} / 2}\) and \(1 - \exp\big((h(p) - \text{level}) / (1 - p)\big)\)
    (\(h(p) = p \ln p + (1 - p) \ln(1 - p)\); tight near 1); the lower one, by the symmetry
    \(d(p, q) = d(1 - p, 1 - q)\), the larger of \(p - \sqrt{\text{level} / 2}\) and
    \(\exp\big((h(p) - \text{level}) / p\big)\) (tight near 0)."""
    p = jnp.asarray(mean, dtype=jnp.float32)
    level = jnp.asarray(level, dtype=jnp.float32)
    h = jnp.where(p > 0, p * jnp.log(jnp.where(p > 0, p, 1.0)), 0.0) + jnp.where(p < 1, (1.0 - p) * jnp.log1p(-p),
                                                                                  0.0)
    if upper:
        edge = -jnp.expm1((h - level) / (1.0 - p))  # p = 1: nan, which fmin drops
        q = jnp.fmin(jnp.minimum(p + jnp.sqrt(level / 2.0), 1.0), edge)
    else:
        edge = jnp.exp((h - level) / p)  # p = 0: nan, which fmax drops
        q = jnp.fmax(jnp.maximum(p - jnp.sqrt(level / 2.0), 0.0), edge)
    def newton(_: int, q: Array) -> Array:
        excess = bernoulli(p, q) - level
        slope = (q - p) / (q * (1.0 - q))
        if upper:  # q = 1 only where the root is 1 to float32 precision
            move = (excess > 0) & (q < 1.0) & (slope > 0)
            return jnp.where(move, jnp.maximum(q - excess / jnp.where(move, slope, 1.0), p), q)
        move = (excess > 0) & (q > 0.0) & (slope < 0)
        return jnp.where(move, jnp.minimum(q - excess / jnp.where(move, slope, -1.0), p), q)

    q = jax.lax.fori_loop(0, steps, newton, q)
    return q


def kl_ucb_bernoulli(mean: Any, level: Any, steps: int = NEWTON_STEPS) -> Array:
    r"""KL-UCB's Bernoulli index, \(\max \{q \in [p, 1] : d(p, q) \le \text{level}\}\): the upper
    ``kl_bernoulli_bound``."""
    return kl_bernoulli_bound(mean, level, True, steps)
