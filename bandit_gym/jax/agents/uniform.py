"""Uniform (round robin), the non-adaptive baseline of every family, as a pure function."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import jax.numpy as jnp

from bandit_gym.agents.uniform import round_robin_arm
from bandit_gym.jax.agents._base import Array, JaxAgent, Obs, arm_at


@dataclass(frozen=True)
class Uniform(JaxAgent):
    r"""Round robin in the copy's arm order: \(i_t = \sigma\big((t - 1) \bmod K\big)\), the empirical answer at
    every step.

    Paper: tao2019 §5. Equal in distribution to ``bandit_gym.agents.Uniform`` (same arm order rule: a random
    permutation per copy and episode, or the identity with ``tie_break="index"``)."""

    families: ClassVar[tuple[str, ...]] = ("thresholding", "threshold", "best_arm", "top_k", "multi_armed")
    numpy_agent: ClassVar[str] = "Uniform"

    def select(self, state: Any, obs: Obs, key: Array) -> tuple[Array, Any]:
        order = self.order(state)
        k = obs["counts"].shape[-1]
        pulls = jnp.sum(obs["counts"]).astype(jnp.int32)
        return arm_at(order, round_robin_arm(pulls, k)), state
