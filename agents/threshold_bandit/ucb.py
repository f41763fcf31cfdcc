"""UCB in the deviation-function form of abernethy2016 §2, blind to the threshold."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from bandit_gym.agents.base import Agent, Obs
from bandit_gym.agents.threshold_bandit._levels import checked_delta, fixed_delta_is_anytime, log_terms


class UCB(Agent):
    r"""Classic UCB on the realised rewards \(R = \mathbb{1}\{X \ge c_t\}\), ignoring the threshold \(c_t\).

    Paper: abernethy2016 §2, eq. 1, Theorem 1 (UCB of the classical bandit, written with a deviation function).

    Rule (Hoeffding deviation function):

    $$
    I_t = \operatorname*{arg\,max}_i \hat\mu_i + V(N_i, \delta), \qquad
    V(N, \delta) = \sqrt{\log(2 / \delta) / (2 N)}, \qquad V(0) = +\infty
    $$

    Default \(\delta = T^{-2} / 2\) (Theorem 1), i.e. \(\log(2/\delta) = \log(4 T^2)\), with \(T\) read from the
    observation's ``budget_left`` at the start of each episode; pass ``delta`` to fix it instead.
    Only the previously pulled arm's index changes, so it alone is recomputed (\(O(N)\) per step, plus the
    \(\operatorname{arg\,max}\)).

    Readings where the paper is silent:

    - on the threshold bandit: the paper's UCB is for the classical bandit; we run it on the rewards
      \(\mathbb{1}\{X \ge c_t\}\) of every round, whatever \(c_t\), as the threshold-blind baseline (ours).
    - ties in the \(\operatorname{arg\,max}\): no rule given; a random arm order per copy and episode
      (``tie_break="random"``) or the smallest index (``tie_break="index"``). Unpulled arms have index \(+\infty\), so
      every arm is pulled once first, in that order.
    - log: no base given; natural log.

    Examples:
        One seeded episode (threshold bandit) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import UCB
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("ThresholdBandit-v0", horizon=200)
        >>> result = play_episode(env, UCB(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (200, 30.65)
    """

    families: ClassVar[tuple[str, ...]] = ("threshold",)
    anytime: ClassVar[bool] = False

    @classmethod
    def is_anytime(cls, params: Mapping[str, Any]) -> bool:
        return fixed_delta_is_anytime(params)

    def __init__(self, delta: float | None = None, *, tie_break: str = "random") -> None:
        self.delta = checked_delta(delta)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, Any]:
        return {"delta": self.delta, **super().params()}

    def allocate(self, n: int, k: int) -> None:
        self.scores = self.new_scores()
        self.log_term = np.zeros(n)  # log(2 / delta) per copy

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.log_term[rows] = log_terms(self.delta, self.total_budget[rows])
        self.scores.set_rows(rows, np.full((rows.size, self.num_arms), np.inf))

    def select(self, obs: Obs) -> np.ndarray:
        if self.last_arms.size:
            n = self.last_counts
            bonus = np.sqrt(self.log_term[self.moved] / (2.0 * n))
            self.scores.set_arms(self.moved, self.last_arms, self.last_sums / n + bonus)
        return self.scores.argmax()
