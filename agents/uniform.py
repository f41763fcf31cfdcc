"""Uniform allocation: round-robin over the arms (tao2019 §5 baseline; usable on every env family)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bandit_gym.agents.base import Agent, Obs


class Uniform(Agent):
    """Round-robin allocation, the non-adaptive baseline.

    Paper: tao2019 §5 (ALGORITHMS.md §A.4).

    Rule: ``i_t = ((t - 1) mod K) + 1`` (0-based here: ``(t - 1) mod K``), so each arm gets ``floor(T/K)`` or
    ``ceil(T/K)`` pulls, the first ``T mod K`` arms one more. On a pure-exploration env the submitted answer at
    every step is the empirical rule ``d_i = 1{theta_hat_i >= theta}`` (an arm not yet pulled answers 0), so
    the agent is anytime. On the threshold bandit it ignores c_t.

    Parameters: none (``tie_break`` is accepted for a uniform interface; round-robin has no ties).
    Deviations: none. The next arm is the one after the observation's ``last_arm`` (arm 0 at the start), which
    is the same rule and keeps no state, so repeated ``act`` calls on one observation agree.
    """

    families: ClassVar[tuple[str, ...]] = ("thresholding", "threshold")

    def select(self, obs: Obs) -> np.ndarray:
        arms = obs["last_arm"][:, 0].astype(np.int64) + 1
        arms[(arms == self.num_arms) | (arms < 0)] = 0  # wrap around; arm 0 after a batched allocation (-2)
        return arms
