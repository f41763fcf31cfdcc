"""The thresholding agents that pull ``argmin_i index_i`` after one pull of each arm (``bandit_gym.agents.
thresholding._index``), as pure functions: the index of every arm is recomputed from the observation at each
step (K values per copy, the natural shape of a vectorised step on an accelerator)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import jax.numpy as jnp

from bandit_gym.agents.uniform import round_robin_arm
from bandit_gym.jax.agents._base import ArmOrder, Array, JaxAgent, Obs, arm_at, first_minimum


@dataclass(frozen=True)
class IndexAgent(JaxAgent):
    """Pull each arm once in the copy's arm order (rounds 1..K), then the arm of smallest ``index`` (ties: the
    arm first in the order)."""

    families: ClassVar[tuple[str, ...]] = ("thresholding",)

    def index(self, state: Any, obs: Obs) -> Array:
        """The index of every arm, ``(K,)`` (smaller is pulled first)."""
        raise NotImplementedError

    def select(self, state: Any, obs: Obs, key: Array) -> tuple[Array, Any]:
        order: ArmOrder = self.order(state)
        k = obs["counts"].shape[-1]
        pulls = order.total - obs["budget_left"][0].astype(jnp.int32)
        initial = arm_at(order, round_robin_arm(jnp.minimum(pulls, k - 1), k))
        return jnp.where(pulls < k, initial, first_minimum(self.index(state, obs), order)), state


def gaps(obs: Obs) -> Array:
    """``Delta_hat_i = |theta_hat_i - theta|`` of every arm (theta_hat_i = 0 for an arm never pulled)."""
    return jnp.abs(obs["means"] - obs["threshold"][0])
