r"""Opt-KG, the optimistic knowledge gradient (Chen, Lin, Zhou 2015), a tao2019 baseline, as a pure function.

Float32 throughout; the posterior's numbers are arranged so that rounding stays at a few units in the last place
where the numpy agent (float64) keeps exact recurrences:

- \(\log c(a, b)\) is computed from the counts at every step in a form without cancellation (``log_c``): the
  Kullback-Leibler part with \(\mathrm{log1p}(x) - x\) and Stirling's remainders, never
  \(a \ln \theta - \ln B(a, b)\), whose two terms of size \((a + b) \ln 2\) cancel (an absolute error of order
  \(10^{-2}\) at counts of \(10^5\) in float32);
- \(I(a, b)\) is kept per arm as an unevaluated sum of two float32 numbers, from the prior's value (a power
  series) and the exact increments \(I(a+1, b) = I + c/a\), \(I(a, b+1) = I - c/b\), the numpy agent's
  recurrences (``jax.scipy.special.betainc`` in float32 is off by 0.08 at counts of \(10^5\));
- at \(\theta = 1/2\) the side of 1/2 on which \(I\) lies is that of \(a - b\) (the Beta density's symmetry),
  exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import gammaln

from bandit_gym.jax.agents._base import ArmOrder, Array, JaxAgent, Obs, first_maximum
from bandit_gym.jax.divergences import log1p_minus

HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
#: Stirling's series of ``ln Gamma(x) - ((x - 1/2) ln x - x + ln(2 pi) / 2)``: coefficients of x^-1, x^-3, ...
STIRLING = (1.0 / 12.0, -1.0 / 360.0, 1.0 / 1260.0, -1.0 / 1680.0, 1.0 / 1188.0, -691.0 / 360360.0, 1.0 / 156.0)
#: from this argument on, Stirling's series (7 terms) is exact in float32
STIRLING_FROM = 8.0


Table = tuple[tuple[float, ...], tuple[float, ...]]
"""Arguments and their Stirling remainders (``exact_remainders``)."""


class OptKGState(NamedTuple):
    r"""A copy's state: its arm order, and per arm the counts it has seen, \(I(a, b)\) (``p_hi + p_lo``),
    \(\log c(a, b)\) and \(\log R^+(a, b)\) at those counts."""

    order: ArmOrder
    counts: Array
    p_hi: Array
    p_lo: Array
    logc: Array
    #: ``log R+(a, b)`` of every arm
    gain: Array


def exact_remainders(*starts: float) -> Table:
    r"""The arguments below ``STIRLING_FROM`` of the form ``start + k`` (\(k = 0, 1, \dots\); as float32 computes
    them) and their Stirling remainders, computed in float64: ``stirling_remainder``'s table for counts added to a
    prior."""
    xs = sorted({float(np.float32(start) + np.float32(k)) for start in starts for k in range(int(STIRLING_FROM) + 1)
                 if 0 < np.float32(start) + np.float32(k) < STIRLING_FROM})
    return tuple(xs), tuple(math.lgamma(x) - ((x - 0.5) * math.log(x) - x + HALF_LOG_2PI) for x in xs)


def stirling_remainder(x: Array, table: Table = ((), ())) -> Array:
    r"""\(\ln \Gamma(x) - \big((x - 1/2) \ln x - x + \ln(2 \pi) / 2\big)\) for \(x > 0\) (about \(1/(12 x)\)):
    Stirling's series from ``STIRLING_FROM`` on, below it the float64 value of ``table`` (``exact_remainders``)
    where \(x\) is one of its arguments, else \(\ln \Gamma\) minus Stirling's formula (absolute error up to
    \(5 \cdot 10^{-6}\))."""
    big = jnp.maximum(x, STIRLING_FROM)
    inverse, inverse2 = 1.0 / big, 1.0 / (big * big)
    series = jnp.zeros_like(big)
    for coefficient in reversed(STIRLING):
        series = series * inverse2 + coefficient
    series = series * inverse
    small = jnp.minimum(x, STIRLING_FROM)
    direct = gammaln(small) - ((small - 0.5) * jnp.log(small) - small + HALF_LOG_2PI)
    for argument, remainder in zip(*table, strict=True):
        direct = jnp.where(x == argument, remainder, direct)
    return jnp.where(x >= STIRLING_FROM, series, direct)


def log_c(a: Array, b: Array, theta: Array, table: Table = ((), ())) -> Array:
    r"""\(\log c(a, b) = a \ln \theta + b \ln(1 - \theta) - \ln B(a, b)\), written as

    $$
    a f(d/a) + b f(-d/b) + \big(\ln a + \ln b - \ln(a + b)\big) / 2 - \ln(2 \pi) / 2 + s(a + b) - \big(s(a) + s(b)\big)
    $$

    with \(d = \theta b - (1 - \theta) a\), \(f(x) = \ln(1 + x) - x\) (``log1p_minus``) and \(s\) Stirling's
    remainder, so that every term is small where \(\log c\) is (no cancellation of terms of size \(a + b\)). It is
    symmetric: ``log_c(a, b, 1/2)`` and ``log_c(b, a, 1/2)`` are the same float. ``table``: the exact remainders
    of small arguments (``exact_remainders``)."""
    d = theta * b - (1.0 - theta) * a
    divergence = a * log1p_minus(d / a) + b * log1p_minus(-d / b)
    n = a + b
    return (divergence + 0.5 * ((jnp.log(a) + jnp.log(b)) - jnp.log(n)) - HALF_LOG_2PI
            + (stirling_remainder(n, table) - (stirling_remainder(a, table) + stirling_remainder(b, table))))


def upper_tail(a: Array, b: Array, theta: Array, logc: Array, terms: int = 200) -> Array:
    r"""\(I(a, b) = P(\vartheta \ge \theta)\) under \(\mathrm{Beta}(a, b)\) by the power series
    \(I_x(a, b) = \frac{x^a (1 - x)^b}{a B(a, b)} \sum_k \frac{(a + b)_k}{(a + 1)_k} x^k\) of the tail at the
    smaller of \(x = \theta\) and \(1 - \theta\): precise for the prior's small \((a_0, b_0)\) (its terms shrink by
    at most \(x (a + b + k) / (a + 1 + k)\)), where ``terms`` terms reach float32's precision
    (``OptKG.prior_terms``). ``logc``: \(\log c(a, b)\) at \(\theta\), the series' factor (\(c(b, a)\) at
    \(1 - \theta\) is the same)."""
    lower = theta <= 0.5  # the lower tail I_theta(a, b), else the upper one I_{1 - theta}(b, a) directly
    x = jnp.where(lower, theta, 1.0 - theta)
    p, q = jnp.where(lower, a, b), jnp.where(lower, b, a)

    def term(k: int, carry: tuple[Array, Array]) -> tuple[Array, Array]:
        value, total = carry
        value = value * x * (p + q + k) / (p + 1.0 + k)
        return value, total + value

    _, total = jax.lax.fori_loop(0, terms, term, (jnp.ones_like(p), jnp.ones_like(p)))
    tail = jnp.exp(logc - jnp.log(p)) * total
    return jnp.where(lower, 1.0 - tail, tail)


def two_sum(x: Array, y: Array) -> tuple[Array, Array]:
    r"""\(x + y\) as \((s, e)\) with \(s = \mathrm{fl}(x + y)\) and \(s + e = x + y\) exactly (Knuth)."""
    s = x + y
    z = s - x
    return s, (x - (s - z)) + (y - z)


def excess(p_hi: Array, p_lo: Array, a: Array, b: Array, theta: Array) -> Array:
    r"""\(u = I(a, b) - 1/2\) from \(I\) = ``p_hi + p_lo``; at \(\theta = 1/2\) with the sign of \(a - b\) (0 where
    \(a = b\)), exact by the symmetry of the Beta density, whatever the rounding of \(I\)."""
    u = (p_hi - 0.5) + p_lo
    side = jnp.where(a == b, 0.0, jnp.where(a > b, jnp.abs(u), -jnp.abs(u)))
    return jnp.where(theta == 0.5, side, u)


def log_optimistic_gain(a: Array, b: Array, u: Array, logc: Array) -> Array:
    r"""\(\log R^+(a, b)\) from \(u = I(a, b) - 1/2\) and \(\log c(a, b)\) (the numpy kernel's
    ``log_optimistic_gain``): \(\log(c/a)\) where \(I > 1/2\), \(\log(c/b)\) where \(I < 1/2\), their maximum at
    \(I = 1/2\), and at a crossing of 1/2 (\(I - c/b < 1/2 < I\) or \(I < 1/2 < I + c/a\))
    \(R^+ = \max(\lvert u + c/a \rvert - \lvert u \rvert, \lvert u - c/b \rvert - \lvert u \rvert)\) directly."""
    log_d1, log_d2 = logc - jnp.log(a), logc - jnp.log(b)
    d1, d2 = jnp.exp(log_d1), jnp.exp(log_d2)
    crossing = jnp.where(u > 0, u - d2 < 0, (u < 0) & (u + d1 > 0))
    gain = jnp.where(u > 0, log_d1, jnp.where(u < 0, log_d2, jnp.maximum(log_d1, log_d2)))
    direct = jnp.log(jnp.maximum(jnp.abs(u + d1) - jnp.abs(u), jnp.abs(u - d2) - jnp.abs(u)))
    return jnp.where(crossing, direct, gain)


@dataclass(frozen=True)
class OptKG(JaxAgent):
    r"""Optimistic knowledge gradient for Bernoulli arms with Beta priors.

    Paper: X. Chen, Q. Lin, D. Zhou. Statistical decision making for optimal budget allocation in crowd
    labeling. JMLR 16 (2015); baseline of tao2019 §5.

    Posterior \(\mathrm{Beta}(a_i, b_i)\), \(a_i = a_0 + \#\text{ones}\), \(b_i = b_0 + \#\text{zeros}\); with
    \(I(a, b) = P(\vartheta \ge \theta \mid \mathrm{Beta}(a, b))\) and \(h(x) = \max(x, 1 - x)\):

    $$
    R^+(a, b) = \max\big( h(I(a+1, b)) - h(I(a, b)),\ h(I(a, b+1)) - h(I(a, b)) \big), \qquad
    i_t = \operatorname*{arg\,max}_i \log R^+(a_i, b_i)
    $$

    (no initial pulls: at \(t = 1\) every arm ties), ties to the arm first in the copy's order. Answer, the Bayes
    decision: \(d_i = \mathbb{1}\{I(a_i, b_i) \ge 1/2\}\) (\(I = 1/2\) answered 1). Defaults ``a0 = b0 = 1``
    (tao2019 also uses the Jeffreys prior 0.5, 0.5), given by keyword (``tie_break`` is the first field, as in
    every JAX agent, where the numpy agent takes ``OptKG(a0, b0)``). Anytime. Bernoulli arms only; a pull counts
    as a one when its value exceeds 1/2. The readings where the papers are silent are the numpy agent's
    (threshold other than 1/2, no initial pulls, ties, the answer): see ``bandit_gym.agents.OptKG``.

    Equal in distribution to ``bandit_gym.agents.OptKG``: the same rule on \(\log R^+\), with \(\log c\) from the
    counts at every step and \(I\) kept per arm by the numpy agent's exact increments (module docstring), in
    float32. Remaining differences, all at the level of rounding:

    - \(\log R^+\) is within 8 float32 epsilons of \(\lvert \log R^+ \rvert + \ln(a + b)\) of the float64 value
      (measured: at most 6, on a grid to \(a + b = 10^5\); Stirling's remainders below 8 come from a float64 table
      of \(a_0 + k\), \(b_0 + k\), \(a_0 + b_0 + k\)), so two arms closer than that may be ordered otherwise; in
      particular posteriors whose \(R^+\) are equal in exact arithmetic (at \(\theta = 1/2\): mirrored \((a, b)\),
      \((b, a)\), which tie exactly here, and coincidences such as \(R^+(2, 1) = R^+(3, 2) = 1/8\)) are broken by
      each implementation's own rounding, which the numpy agent's recurrences make path dependent;
    - \(I\) carries the rounding of its float32 increments (each \(c/a\) to a few \(10^{-7}\) relative): measured
      against the float64 recurrence, within \(5 \cdot 10^{-7}\) over \(10^5\) pulls of an arm at
      \(\theta = 1/2\), within \(5 \cdot 10^{-6}\) at \(\theta = 0.3\) and 0.77. At \(\theta = 1/2\) this matters
      only at a crossing of 1/2, possible only when \(a_0 - b_0\) is not an integer (the side of 1/2 is exact
      there); for another \(\theta\) also for the answer and the branch where \(I\) is within that drift of 1/2,
      and at a crossing \(\log R^+\) is off by the drift over \(R^+\) (up to \(10^{-3}\) relative after \(10^5\)
      pulls). The numpy agent recomputes \(I\) with ``betaincc`` within \(10^{-9}\) of 1/2; nothing here does (at
      \(\theta = 1/2\), \(I = 1/2\) is exactly \(a = b\));
    - the state follows the episode one pull at a time (the numpy agent's ``pulled``) from the counts of
      ``init``'s observation, whose \(I\) comes from a power series precise for small counts (an episode starts
      from the prior): a state handed an observation more than one pull ahead, or initialised at large counts, is
      wrong.
    """

    families: ClassVar[tuple[str, ...]] = ("thresholding",)
    numpy_agent: ClassVar[str] = "OptKG"
    a0: float = 1.0
    b0: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("a0", "b0"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                raise ValueError(f"{name}={value!r} must be a real > 0")

    @property
    def table(self) -> Table:
        """The exact Stirling remainders of ``a0 + k``, ``b0 + k`` and ``a0 + b0 + k`` below ``STIRLING_FROM``."""
        return exact_remainders(self.a0, self.b0, float(np.float32(self.a0) + np.float32(self.b0)))

    @property
    def prior_terms(self) -> int:
        r"""Terms of ``upper_tail``'s series at the prior: its ratio \(x (a_0 + b_0 + k) / (a_0 + 1 + k)\),
        \(x \le 1/2\), falls below 3/4 after about \(2 (a_0 + b_0)\) terms."""
        return 48 + 8 * math.ceil(self.a0 + self.b0)

    def posterior(self, obs: Obs) -> tuple[Array, Array]:
        r"""\((a_i, b_i)\) of every arm."""
        ones = obs["sums"]
        return self.a0 + ones, self.b0 + (obs["counts"] - ones)

    def init(self, key: Array, obs: Obs) -> OptKGState:
        order = super().init(key, obs)
        a, b = self.posterior(obs)
        theta = obs["threshold"][0]
        logc = log_c(a, b, theta, self.table)
        p = upper_tail(a, b, theta, logc, self.prior_terms)
        gain = log_optimistic_gain(a, b, excess(p, jnp.zeros_like(p), a, b, theta), logc)
        return OptKGState(order=order, counts=obs["counts"], p_hi=p, p_lo=jnp.zeros_like(p), logc=logc, gain=gain)

    def advance(self, state: OptKGState, obs: Obs) -> tuple[Array, Array, Array, Array, Array]:
        r"""The arm pulled since ``state`` (if any; one at most), as a mask, its \((a, b)\) after the pull and its
        \(I\) = ``hi + lo`` updated in \(O(1)\) (the numpy agent's ``pulled``)."""
        a, b = self.posterior(obs)
        pulled = obs["counts"] != state.counts
        anything = jnp.any(pulled)

        def pick(values: Array) -> Array:  # the pulled arm's value (a sum of one-hot products, not a gather)
            return jnp.sum(jnp.where(pulled, values, 0.0))

        a1, b1 = jnp.where(anything, pick(a), 1.0), jnp.where(anything, pick(b), 1.0)
        one = obs["last_value"][0] > 0.5
        step = jnp.exp(pick(state.logc) - jnp.log(jnp.where(one, a1 - 1.0, b1 - 1.0)))  # c/a or c/b before it
        hi, error = two_sum(pick(state.p_hi), jnp.where(one, step, -step))
        hi, lo = two_sum(hi, pick(state.p_lo) + error)
        return pulled, a1, b1, hi, lo

    def update(self, state: OptKGState, obs: Obs) -> OptKGState:
        r"""The state at ``obs``'s counts (``advance``, and \(\log c\), \(\log R^+\) of the pulled arm)."""
        theta = obs["threshold"][0]
        pulled, a1, b1, hi, lo = self.advance(state, obs)
        logc = log_c(a1, b1, theta, self.table)
        gain = log_optimistic_gain(a1, b1, excess(hi, lo, a1, b1, theta), logc)
        return state._replace(counts=obs["counts"], p_hi=jnp.where(pulled, hi, state.p_hi),
                              p_lo=jnp.where(pulled, lo, state.p_lo), logc=jnp.where(pulled, logc, state.logc),
                              gain=jnp.where(pulled, gain, state.gain))

    def log_gains(self, state: OptKGState, obs: Obs) -> Array:
        r"""\(\log R^+\) of every arm at ``obs`` (``state`` at most one pull behind)."""
        return self.update(state, obs).gain

    def select(self, state: OptKGState, obs: Obs, key: Array) -> tuple[Array, OptKGState]:
        state = self.update(state, obs)
        return first_maximum(state.gain, state.order), state

    def answer(self, state: OptKGState, obs: Obs, key: Array) -> Array:
        r"""The Bayes decision \(\mathbb{1}\{I(a_i, b_i) \ge 1/2\}\)."""
        pulled, _, _, hi, lo = self.advance(state, obs)
        a, b = self.posterior(obs)
        u = excess(jnp.where(pulled, hi, state.p_hi), jnp.where(pulled, lo, state.p_lo), a, b, obs["threshold"][0])
        return (u >= 0).astype(jnp.int32)
