"""Uniform allocation: round-robin over the arms (tao2019 §5 baseline; usable on every env family)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from bandit_gym.agents._kernels import arm_play, cycle, index_fresh, index_pulled, no_index_compiled, round_robin_arm
from bandit_gym.agents.base import Agent, Obs, plays_select
from bandit_gym.agents.best_arm._kernels import play
from bandit_gym.agents.ranking import top_m_pulled
from bandit_gym.families import Family, family_of
from bandit_gym.jit import called, kernel


@called
def round_robin(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
                constants: Any, state: Any, arrays: np.ndarray, work: np.ndarray, answer: np.ndarray,
                final: bool) -> int:
    r"""Uniform's step on best-arm and top-K envs as a compiled rule of ``BestArmAgent`` (for whole compiled
    episodes): position \(\mathrm{made} \bmod K\) (the driver plays positions in the copy's arm order); the answer
    is the \(m\) largest empirical means, an arm never pulled ranking last."""
    if final:
        top_m_pulled(counts, sums, m, work[0], answer)
    return cycle(made, counts.shape[0])


@kernel
def best_arm_rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of round robin on best-arm and top-K envs (``best_arm._kernels.play``)."""
    play(round_robin, episodes)


def play_best_arm(*episodes: Any) -> None:
    """``best_arm_rollout`` in the signature ``bandit_gym.rollout`` calls."""
    best_arm_rollout(episodes)


@kernel
def thresholding_rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of round robin on the thresholding bandit (``_kernels.arm_play``)."""
    arm_play(index_fresh, index_pulled, no_index_compiled, episodes)


def play_thresholding(*episodes: Any) -> None:
    """``thresholding_rollout`` in the signature ``bandit_gym.rollout`` calls."""
    thresholding_rollout(episodes)


class Uniform(Agent):
    r"""Round-robin allocation, the non-adaptive baseline.

    Paper: tao2019 §5 ("pulls each arm sequentially from 1 to \(K\) until budget \(T\) is reached such that each arm
    is sampled roughly \(T/K\) times", then answers \(\theta_i \ge \theta\) when \(\hat\theta_i \ge \theta\)).

    Rule: \(i_t = \sigma\big(((t - 1) \bmod K) + 1\big)\): round robin in the copy's arm order \(\sigma\), so each
    arm gets \(\lfloor T/K \rfloor\) or \(\lceil T/K \rceil\) pulls, the first \(T \bmod K\) arms of the order one
    more. The submitted answer at every step is the env's empirical rule, so the agent is anytime: on the
    thresholding bandit \(d_i = \mathbb{1}\{\hat\theta_i \ge \theta\}\) (an arm not yet pulled has
    \(\hat\theta_i = 0\)); on best-arm and top-K envs the \(m\) arms of largest empirical mean, an arm never pulled
    ranking below every pulled arm (ties: the arm first in the copy's order), so that with \(T < K\) or negative
    rewards the answer keeps to the arms pulled. On the threshold bandit it ignores \(c_t\); on the classic
    \(K\)-armed bandit it is the explore-only baseline (linear regret).

    Parameters: ``tie_break``. The copy's arm order \(\sigma\) is drawn per copy and episode from the agent's seeded
    generator (``tie_break="random"``, the default), so which arms get the extra pulls and which tied arm enters
    the answer never depend on the arms' positions; ``tie_break="index"`` is tao2019's "from 1 to \(K\)"
    (\(\sigma\) the identity, ties to the smaller index). Deviations: none. The next arm is the one after the
    observation's ``last_arm`` in the order (the order's first arm at the start), which keeps no state of its own, so
    repeated ``act`` calls on one observation agree.

    Examples:
        One seeded episode (thresholding bandit, tao2019 Setup 1) and the record of
        ``RecordEpisodeRegret`` that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import Uniform
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=200)
        >>> result = play_episode(env, Uniform(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (200, 1.0)
    """

    families: ClassVar[tuple[str, ...]] = ("thresholding", "threshold", "best_arm", "top_k", "multi_armed")
    batched = True
    anytime = True  # never reads the horizon T

    @classmethod
    def batched_family(cls, family: Family) -> bool:
        """Batched on best-arm and top-K envs only: on the thresholding bandit its answers are scored at every
        budget, so it plays pull by pull."""
        return family.answers_a_set

    def allocate(self, n: int, k: int) -> None:
        self.order = self.new_scores()  # each copy's arm order (reshuffled per episode with random ties)

    def _batch_pulls(self, obs: Obs, family: Family) -> np.ndarray | None:
        """On best-arm and top-K envs the rest of the budget at once, round robin from the next arm (the
        thresholding bandit scores answers at every budget, so it plays pull by pull)."""
        if not family.answers_a_set:
            return None
        k = self.num_arms
        left = obs["budget_left"][:, 0].astype(np.int64)
        start = round_robin_arm(self.total_budget - left, k)  # pulls so far: round robin from the order's first
        # arm i is pulled at these offsets of the cycle
        position = (self.order.position_of - start[:, None]) % k
        return left[:, None] // k + (position < (left % k)[:, None])

    def select(self, obs: Obs) -> np.ndarray:
        last = obs["last_arm"][:, 0].astype(np.int64)
        # the arm after the last one in the copy's order; the order's first arm at the start (-1) and after a
        # batched allocation (-2)
        rows = np.arange(self.num)
        after = np.where(last < 0, 0, round_robin_arm(self.order.position_of[rows, np.maximum(last, 0)] + 1,
                                                      self.num_arms))
        return self.order.arm_at[rows, after].astype(np.int64)

    def compiled_rollout(self, obs: Obs) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
        batch = self._start_all(obs)
        if family_of(batch).answers_a_set:
            from bandit_gym.agents.best_arm._base import records
            from bandit_gym.agents.best_arm._kernels import WORK_ROWS, in_arm_order

            n, k = batch["counts"].shape
            none = np.zeros(n, records(()))  # no constants, no state, no arrays
            return in_arm_order(play_best_arm, self.order.arm_at), (
                none, none, np.zeros((n, 0), records(())), np.zeros((n, WORK_ROWS, k)))
        return play_thresholding, (True, False, 0.0, 0.0, np.zeros(self.num),
                                                       self.order.arm_at, self.order.position_of)

    @plays_select
    def _act_batch(self, obs: Obs, last: np.ndarray, family: Family) -> np.ndarray:
        if family.answers_a_set:  # the m arms of largest empirical mean, never pulled: last
            from bandit_gym.agents.ranking import top_m_answers

            top_m_answers(obs["m"], obs["counts"], obs["sums"], self.order.arm_at, self._action)
            self._action[:, 0] = self._checked_arms(self.select(obs), family)
            return self._action
        if family is not Family.THRESHOLDING:  # online: the arm only
            return super()._act_batch(obs, last, family)
        # The round-robin arm needs only last_arm, and the empirical answer kernel reads the statistics itself.
        return self._answer_action(obs, self._checked_arms(self.select(obs), family))
