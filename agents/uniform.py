"""Uniform allocation: round-robin over the arms (tao2019 §5 baseline; usable on every env family)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from bandit_gym.agents.base import Agent, Obs, family_of


class Uniform(Agent):
    """Round-robin allocation, the non-adaptive baseline.

    Paper: tao2019 §5 ("pulls each arm sequentially from 1 to K until the budget T is reached").

    Rule: ``i_t = ((t - 1) mod K) + 1`` (0-based here: ``(t - 1) mod K``), so each arm gets ``floor(T/K)`` or
    ``ceil(T/K)`` pulls, the first ``T mod K`` arms one more. The submitted answer at every step is the env's
    empirical rule, so the agent is anytime: on the thresholding bandit ``d_i = 1{theta_hat_i >= theta}`` (an
    arm not yet pulled has ``theta_hat_i = 0``); on best-arm and top-K envs the m arms of largest empirical mean,
    an arm never pulled ranking below every pulled arm (ties: the smaller index first), so that with T < K or
    negative rewards the answer keeps to the arms pulled. On the threshold bandit it ignores c_t; on the classic
    K-armed bandit it is the explore-only baseline (linear regret).

    Parameters: none (``tie_break`` is accepted for a uniform interface; round-robin has no ties).
    Deviations: none. The next arm is the one after the observation's ``last_arm`` (arm 0 at the start), which
    is the same rule and keeps no state, so repeated ``act`` calls on one observation agree.
    """

    families: ClassVar[tuple[str, ...]] = ("thresholding", "threshold", "best_arm", "top_k", "multi_armed")
    batched = True
    anytime = True  # never reads the horizon T

    def _batch_pulls(self, obs: Obs, family: str) -> np.ndarray | None:
        """On best-arm and top-K envs the rest of the budget at once, round robin from the next arm (the
        thresholding bandit scores answers at every budget, so it plays pull by pull)."""
        if family not in ("best_arm", "top_k"):
            return None
        k = self.num_arms
        left = obs["budget_left"][:, 0].astype(np.int64)
        start = (self.total_budget - left) % k  # pulls so far were round robin from arm 0
        position = (np.arange(k)[None, :] - start[:, None]) % k  # arm i is pulled at these offsets of the cycle
        return left[:, None] // k + (position < (left % k)[:, None])

    def select(self, obs: Obs) -> np.ndarray:
        arms = obs["last_arm"][:, 0].astype(np.int64) + 1
        arms[(arms == self.num_arms) | (arms < 0)] = 0  # wrap around; arm 0 after a batched allocation (-2)
        return arms

    def compiled_rollout(self, obs: Obs) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
        from bandit_gym.agents._kernels import index_rule, no_index, policy_rollout

        batch = self._start_all(obs)
        if family_of(batch) in ("best_arm", "top_k"):
            from bandit_gym.agents.best_arm._kernels import WORK_ROWS, decide_rollout, uniform

            n, k = batch["counts"].shape
            return decide_rollout(uniform), (np.zeros((n, 1)), np.zeros((n, 1)), np.zeros((n, WORK_ROWS, k)))
        identity = np.tile(np.arange(self.num_arms, dtype=np.int32), (batch["counts"].shape[0], 1))
        return policy_rollout(*index_rule(no_index)), (True, False, 0.0, 0.0, np.zeros(len(identity)), identity,
                                                       identity)

    def _act_batch(self, obs: Obs, last: np.ndarray, family: str) -> np.ndarray:
        if family in ("best_arm", "top_k"):  # the m arms of largest empirical mean, never pulled: last
            from bandit_gym.agents.best_arm._kernels import top_m_answers

            top_m_answers(obs["m"], obs["counts"], obs["sums"], self._action)
            self._action[:, 0] = self.select(obs)
            return self._action
        if family != "thresholding":
            return super()._act_batch(obs, last, family)
        # The round-robin arm needs only last_arm, and the empirical answer kernel reads the statistics itself.
        return self._answer_action(obs, self.select(obs))
