"""KL-UCB (Garivier and Cappé 2011) as a pure function: the largest mean still plausible in Kullback-Leibler
divergence, found by Newton's method on every arm at once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import jax.numpy as jnp

from bandit_gym.jax.agents._base import Array, Obs
from bandit_gym.jax.agents.ucb1 import UpperIndexAgent, pulls_made
from bandit_gym.jax.divergences import NEWTON_STEPS as NEWTON_STEPS
from bandit_gym.jax.divergences import kl_ucb_bernoulli

DISTRIBUTIONS = ("bernoulli", "gaussian")

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
