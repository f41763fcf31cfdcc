"""APT, Anytime Parameter-free Thresholding (Locatelli et al. 2016), as a pure function."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax.numpy as jnp

from bandit_gym.jax.agents._base import Array, Obs
from bandit_gym.jax.agents._index import IndexAgent, gaps


@dataclass(frozen=True)
class APT(IndexAgent):
    r"""APT with precision \(\epsilon\) (Locatelli, Gutzeit, Carpentier, ICML 2016; tao2019 §1): pull each arm once,
    then

    $$
    B_i(t) = \sqrt{T_i(t-1)} \big( \lvert \hat\theta_i(t-1) - \theta \rvert + \epsilon \big), \qquad
    i_t = \operatorname*{arg\,min}_i B_i(t)
    $$

    Default \(\epsilon = 0\). Equal in distribution to ``bandit_gym.agents.APT``."""

    numpy_agent = "APT"
    epsilon: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.epsilon >= 0:
            raise ValueError(f"epsilon={self.epsilon!r} must be a real >= 0")

    def index(self, state: Any, obs: Obs) -> Array:
        return jnp.sqrt(obs["counts"]) * (gaps(obs) + self.epsilon)
