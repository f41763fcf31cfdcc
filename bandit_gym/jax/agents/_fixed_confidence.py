"""What the JAX fixed-confidence agents share (the numpy ``FixedConfidenceAgent``): the stopping component's
parameters and their checks, the empirical-best leader, the opening, and the stop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import jax.numpy as jnp
import numpy as np

from bandit_gym.jax.agents import _stopping
from bandit_gym.jax.agents._base import ArmOrder, Array, JaxAgent, Obs, first_maximum


def pulls_made(state: Any, obs: Obs) -> Array:
    """The pulls made so far: the episode's budget less the pulls left (int32)."""
    order = state if isinstance(state, ArmOrder) else state.order
    return order.total - obs["budget_left"][0].astype(jnp.int32)


@dataclass(frozen=True)
class FixedConfidenceAgent(JaxAgent):
    """A sampling rule stopped by a stopping component: ``delta`` in (0, 1), ``stopping`` (``"glr"``, ``"lucb"``,
    ``"kllucb"``), ``threshold`` (``"gk2016"``, ``"ls2020"``, ``"heuristic"``; None: the distribution's
    default), ``distribution`` (``"bernoulli"``, ``"gaussian"``) and ``sigma``, checked with the numpy agent's
    messages. Each arm is pulled once first (the opening, in the copy's order, no stopping test); then the rule
    stops when the component does, and answers the empirical best arm."""

    families: ClassVar[tuple[str, ...]] = ("best_arm",)
    delta: float = 0.05
    stopping: str = "glr"
    threshold: str | None = None
    distribution: str = "bernoulli"
    sigma: float = 1.0

    #: the rule identifies the best arm only (m = 1), as its paper defines it (both JAX rules: Track-and-Stop, EB-TCI)
    best_arm_only: ClassVar[bool] = True

    def __post_init__(self) -> None:
        super().__post_init__()
        checked = _stopping.check_agent_stopping(type(self).__name__, self.delta, self.stopping, self.threshold,
                                                 self.distribution, self.sigma)
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    def check_env(self, env: Any, params: Any) -> None:
        """The numpy agent's refusals, with its messages: arms of another family than the stopping component's
        (or another sigma), m != 1, and epsilon != 0 for the GLR rule."""
        name = type(self).__name__
        env_sigma = np.float32(params.sigma)  # the params' float32, compared with the agent's sigma in float32
        same = np.float32(self.sigma) == env_sigma
        _stopping.check_arms(name, "gaussian" if env.gaussian else "bernoulli", self.sigma if same else env_sigma,
                             self.stopping, self.distribution, self.sigma)
        m = int(params.m)
        if self.best_arm_only and m != 1:
            raise ValueError(f"{name} identifies the best arm (m = 1); the env has m = {m}")
        _stopping.check_glr_epsilon(self.stopping, np.float32(params.epsilon))

    @property
    def gaussian(self) -> bool:
        return self.distribution == "gaussian"

    def leader(self, state: Any, obs: Obs) -> Array:
        """The empirical best arm (ties: the first in the copy's order)."""
        means = obs["sums"] / jnp.maximum(obs["counts"], 1.0)
        return first_maximum(means, self.order(state))

    def decide(self, state: Any, obs: Obs, key: Array) -> tuple[Array, Array, Any]:
        """``stop`` and ``select`` of the step in one call: the rollout then asks once per step (its pending
        decision), and the compiler computes once what the two share (the empirical best arm, the statistics; for
        EB-TCI under the GLR rule, the transportation costs to the leader). The same decisions as the two calls,
        bit for bit; the speed-up is measured in the speed section of docs/jax.md."""
        arm, next_state = self.select(state, obs, key)
        return self.stop(state, obs), arm, next_state

    def stop(self, state: Any, obs: Obs) -> Array:
        """The stopping rule, from the end of the opening on (no test while an arm was never pulled)."""
        opened = pulls_made(state, obs) >= obs["counts"].shape[-1]
        threshold = self.threshold if self.threshold is not None else "gk2016"
        rule = _stopping.stopped(obs, self.leader(state, obs), self.delta, self.stopping, threshold,
                                 self.gaussian, self.sigma)
        return opened & rule
