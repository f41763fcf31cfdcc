"""UCB-E adapted to the thresholding bandit (tao2019's UCBE baseline), as a pure function."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import jax.numpy as jnp

from bandit_gym.jax.agents._base import Array, Obs
from bandit_gym.jax.agents._index import IndexAgent, gaps


@dataclass(frozen=True)
class UCBE(IndexAgent):
    r"""UCB-E for thresholding with the oracle exploration parameter (Audibert, Bubeck, Munos 2010; tao2019 §5):
    pull each arm once, then

    $$
    i_t = \operatorname*{arg\,min}_i \hat\Delta_i(t-1) - \sqrt{a / T_i(t-1)}, \qquad a = 4^b \max(T - K, 0) / H
    $$

    with \(H = \sum_i 1 / \Delta_i^2\) of the true instance (an oracle parameter). Equal in distribution to
    ``bandit_gym.agents.UCBE``."""

    numpy_agent = "UCBE"
    oracle_parameters: ClassVar[tuple[str, ...]] = ("H",)
    b: float = 0.0
    H: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.H is None or not self.H > 0:
            raise ValueError(f"H={self.H!r}: UCBE needs the oracle complexity H = sum_i 1/Delta_i^2 of the instance "
                             "(bandit_gym.instances.complexity(means, threshold)); pass H > 0")

    def index(self, state: Any, obs: Obs) -> Array:
        k = obs["counts"].shape[-1]
        a = 4.0**self.b * jnp.maximum(self.order(state).total - k, 0) / self.H
        return gaps(obs) - jnp.sqrt(a / jnp.maximum(obs["counts"], 1.0))
