"""LSA, the Logarithmic-Sample Algorithm of tao2019, as a pure function."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax.numpy as jnp

from bandit_gym.jax.agents._base import Array, Obs
from bandit_gym.jax.agents._index import IndexAgent, gaps


@dataclass(frozen=True)
class LSA(IndexAgent):
    r"""Logarithmic-Sample Algorithm (tao2019 §3, Algorithm 1): pull each arm once, then

    $$
    \xi_i(t-1) = \alpha\, T_i(t-1)\, \hat\Delta_i(t-1)^2 + 0.5 \ln T_i(t-1), \qquad
    i_t = \operatorname*{arg\,min}_i \xi_i(t-1)
    $$

    Default \(\alpha = 1.35\) (tao2019 §5). Equal in distribution to ``bandit_gym.agents.LSA`` (the same initial
    round in the copy's arm order and tie rule); the index is computed in float32."""

    numpy_agent = "LSA"
    alpha: float = 1.35

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.alpha > 0:
            raise ValueError(f"alpha={self.alpha!r} must be a real > 0")

    def index(self, state: Any, obs: Obs) -> Array:
        counts = obs["counts"]
        xi = self.alpha * counts * gaps(obs) ** 2 + 0.5 * jnp.log(jnp.maximum(counts, 1.0))
        return jnp.where(counts < 1.0, -jnp.inf, xi)
