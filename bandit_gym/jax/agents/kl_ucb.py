"""KL-UCB (Garivier and Cappé 2011) as a pure function: the largest mean still plausible in Kullback-Leibler
divergence, found by Newton's method on every arm at once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import jax.numpy as jnp

from bandit_gym.jax.agents._base import Array, Obs
from bandit_gym.jax.agents.ucb1 import UpperIndexAgent, pulls_made
from bandit_gym.jax.divergences import bernoulli

DISTRIBUTIONS = ("bernoulli", "gaussian")

NEWTON_STEPS = 8
r"""Newton steps of the Bernoulli index (the numpy agent's count): in float32, from the numpy agent's start, they
reach the float64 root within \(9 \cdot 10^{-8}\) (1.5 float32 ulps at 0.5) on every \((s / n, \ln t / n)\) of a
grid of \(n = 1..10^6\) and \(t = 2..10^7\); more steps change nothing."""


def kl_ucb_bernoulli(mean: Array, level: Array, steps: int = NEWTON_STEPS) -> Array:
    r"""\(\max \{q \in [p, 1] : d(p, q) \le \text{level}\}\) elementwise for \(p\) = ``mean`` in \([0, 1]\)
    (``level = +inf`` gives 1) by ``steps`` Newton steps on every entry at once, float32
    (``bandit_gym.agents.multi_armed.kl_ucb.kl_ucb_bernoulli`` in float64).

    \(q \mapsto d(p, q)\) is convex and increasing on \([p, 1]\): Newton's steps from a point right of the root
    decrease to it. The start is the smaller of Pinsker's bound \(p + \sqrt{\text{level} / 2}\) and
    \(1 - \exp\big((h(p) - \text{level}) / (1 - p)\big)\) (\(h(p) = p \ln p + (1 - p) \ln(1 - p)\); tight near
    1)."""
    p = jnp.asarray(mean, dtype=jnp.float32)
    level = jnp.asarray(level, dtype=jnp.float32)
    h = jnp.where(p > 0, p * jnp.log(jnp.where(p > 0, p, 1.0)), 0.0) + jnp.where(p < 1, (1.0 - p) * jnp.log1p(-p),
                                                                                  0.0)
    near_one = -jnp.expm1((h - level) / (1.0 - p))  # p = 1: nan, which fmin drops
    q = jnp.fmin(jnp.minimum(p + jnp.sqrt(level / 2.0), 1.0), near_one)
    for _ in range(steps):
        excess = bernoulli(p, q) - level
        slope = (q - p) / (q * (1.0 - q))
        move = (excess > 0) & (q < 1.0) & (slope > 0)  # q = 1 only where the root is 1 to float32 precision
        q = jnp.where(move, jnp.maximum(q - excess / jnp.where(move, slope, 1.0), p), q)
    return q


@dataclass(frozen=True)
class KLUCB(UpperIndexAgent):
    r"""KL-UCB: the arm whose mean could be largest at the confidence level \(\ln t + c \ln \ln t\).

    Paper: A. Garivier, O. Cappé. The KL-UCB algorithm for bounded stochastic bandits and beyond. COLT 2011,
    Algorithm 1 and Theorem 1; Gaussian arms as in their §2.

    Rule at round \(t\) (1-based; \(t - 1\) pulls made), with \(N_i\) pulls and empirical mean \(\hat\mu_i\) of arm
    \(i\):

    $$
    I_t = \operatorname*{arg\,max}_i \max \{ q : N_i\, d(\hat\mu_i, q) \le \ln t + c \ln \max(\ln t, 1) \}
    \quad (+\infty \text{ for an arm never pulled})
    $$

    with \(d\) the Bernoulli divergence (``distribution="bernoulli"``; root by ``NEWTON_STEPS`` Newton steps,
    ``kl_ucb_bernoulli``) or the Gaussian one \((p - q)^2 / (2 \sigma^2)\), whose index is
    \(\hat\mu_i + \sigma \sqrt{2 (\ln t + c \ln \max(\ln t, 1)) / N_i}\).

    Defaults: \(c = 0\) (the paper's experiments), ``distribution="bernoulli"``, \(\sigma = 1\),
    ``tie_break="random"``. Anytime. Equal in distribution to ``bandit_gym.agents.KLUCB`` (the same level, initial
    rounds and tie rule); the index is computed in float32. Unlike the numpy agent, a Bernoulli KL-UCB given
    rewards outside \([0, 1]\) raises nothing (a pure function cannot): pass ``distribution="gaussian"`` on
    Gaussian arms."""

    numpy_agent: ClassVar[str] = "KLUCB"
    c: float = 0.0
    distribution: str = "bernoulli"
    sigma: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.c >= 0:
            raise ValueError(f"c={self.c!r} must be a real >= 0")
        if self.distribution not in DISTRIBUTIONS:
            raise ValueError(f"distribution={self.distribution!r} is not a distribution; allowed: {DISTRIBUTIONS}")
        if not self.sigma > 0:
            raise ValueError(f"sigma={self.sigma!r} must be a real > 0")

    def exploration(self, state: Any, obs: Obs) -> Array:
        r"""\(\ln t + c \ln \max(\ln t, 1)\), \(t\) the round about to be played (1-based)."""
        log_t = jnp.log(pulls_made(state, obs) + 1.0)
        return log_t + self.c * jnp.log(jnp.maximum(log_t, 1.0))

    def index(self, state: Any, obs: Obs) -> Array:
        counts = obs["counts"]
        level = self.exploration(state, obs) / jnp.maximum(counts, 1.0)
        if self.distribution == "gaussian":
            index = obs["means"] + self.sigma * jnp.sqrt(2.0 * level)
        else:
            index = kl_ucb_bernoulli(obs["means"], level)
        return jnp.where(counts > 0, index, jnp.inf)
