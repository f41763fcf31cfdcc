r"""Thompson sampling for the classic \(K\)-armed bandit as a pure function: Beta posteriors (Bernoulli arms) or
Gaussian posteriors (Gaussian arms), drawn with ``jax.random``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import jax
import jax.numpy as jnp

from bandit_gym.jax.agents._base import Array, JaxAgent, Obs

DISTRIBUTIONS = ("bernoulli", "gaussian")


@dataclass(frozen=True)
class Thompson(JaxAgent):
    r"""Thompson sampling: draw a mean for every arm from its posterior, pull the arm of the largest draw.

    Papers: W. R. Thompson. Biometrika 25, 1933. S. Agrawal, N. Goyal. COLT 2012 (Algorithm 1, Beta priors) and
    AISTATS 2013 (Algorithm 2, Gaussian priors). E. Kaufmann, N. Korda, R. Munos. ALT 2012.

    Rule, with \(S_i\) the sum of arm \(i\)'s rewards and \(N_i\) its pulls:

    $$
    \begin{aligned}
    &\text{Bernoulli:} && \theta_i \sim \mathrm{Beta}(1 + S_i, 1 + N_i - S_i)
    && \text{(uniform prior } \mathrm{Beta}(1, 1))\\
    &\text{Gaussian:} && \theta_i \sim \mathcal{N}\big(S_i / (N_i + 1), \sigma^2 / (N_i + 1)\big)
    && \text{(prior } \mathcal{N}(0, \sigma^2) \text{, known } \sigma)\\
    &&& I_t = \operatorname*{arg\,max}_i \theta_i
    \end{aligned}
    $$

    Defaults: ``distribution="bernoulli"``, \(\sigma = 1\). Anytime. Equal in distribution to
    ``bandit_gym.agents.Thompson``: the draws come from the key handed to ``select`` (float32); ties have
    probability zero and go to the smallest index, as in the numpy agent (``tie_break`` is accepted for a
    uniform interface). Unlike the numpy agent, rewards outside \([0, 1]\) with ``distribution="bernoulli"`` raise
    nothing (a pure function cannot)."""

    families: ClassVar[tuple[str, ...]] = ("multi_armed",)
    numpy_agent: ClassVar[str] = "Thompson"
    distribution: str = "bernoulli"
    sigma: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.distribution not in DISTRIBUTIONS:
            raise ValueError(f"distribution={self.distribution!r} is not a distribution; allowed: {DISTRIBUTIONS}")
        if not self.sigma > 0:
            raise ValueError(f"sigma={self.sigma!r} must be a real > 0")

    def draws(self, obs: Obs, key: Array) -> Array:
        """One posterior draw of every arm's mean, ``(K,)``."""
        counts, sums = obs["counts"], obs["sums"]
        if self.distribution == "bernoulli":
            return jax.random.beta(key, 1.0 + sums, 1.0 + counts - sums)
        spread = self.sigma / jnp.sqrt(counts + 1.0)
        return sums / (counts + 1.0) + spread * jax.random.normal(key, counts.shape)

    def select(self, state: Any, obs: Obs, key: Array) -> tuple[Array, Any]:
        return jnp.argmax(self.draws(obs, key)).astype(jnp.int32), state
