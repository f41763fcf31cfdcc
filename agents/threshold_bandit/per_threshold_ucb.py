"""PerThresholdUCB: one independent UCB per threshold level, the baseline of abernethy2016's lower bound."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from bandit_gym.agents.base import Agent, Obs
from bandit_gym.agents.threshold_bandit._levels import (
    checked_delta,
    current_levels,
    fixed_delta_is_anytime,
    log_terms,
    num_levels,
)


class PerThresholdUCB(Agent):
    r"""\(m\) independent UCB copies, one per threshold level, each learning only from the rounds at its level.

    Paper: the baseline that abernethy2016's adversarial lower bound (§5.1, Theorem 3) describes: under
    censored feedback and increasing thresholds the problem is \(m\) independent bandits. Not an algorithm of the
    paper; the natural baseline users expect.

    Rule, after observing \(c_t = j\):

    $$
    I_t = \operatorname*{arg\,max}_i \hat R_i(j) + \sqrt{\log(2 / \delta) / \big(2 N_i(j)\big)}
    \quad (+\infty \text{ if } N_i(j) = 0)
    $$

    where \(N_i(j)\) counts the pulls of arm \(i\) in rounds with threshold \(j\) and \(\hat R_i(j)\) is their mean
    reward \(\mathbb{1}\{X \ge j\}\) (known under either feedback). Default \(\delta = T^{-2} / 2\); a fixed
    ``delta`` makes it anytime.

    State: the agent keeps \(N_i(j)\) and the reward sums itself (the observation's counts pool the levels),
    updated from ``last_arm`` and ``last_reward`` with the level it saw at the previous step; it must therefore
    see every step of an episode. Calling ``act`` twice on one observation is harmless (a round is counted once,
    recognised by ``budget_left``). Regret grows with \(m\): each level is learnt alone.

    Readings (all ours, the paper defines no such algorithm):

    - the width: the Hoeffding width of the paper's UCB (§2), with \(\delta = T^{-2} / 2\) for the whole horizon
      \(T\), not for the rounds at each level.
    - ties: the agent's tie rule (random arm order per copy and episode, or smallest index); at each level the
      unpulled arms (\(+\infty\)) come first, in that order.
    - log: natural. The observation after the last round (\(c = 0\)) is read as level 1.

    Examples:
        One seeded episode (threshold bandit) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import PerThresholdUCB
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("ThresholdBandit-v0", horizon=200)
        >>> result = play_episode(env, PerThresholdUCB(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (200, 21.85)
    """

    families: ClassVar[tuple[str, ...]] = ("threshold",)
    anytime: ClassVar[bool] = False
    level_keys: ClassVar[bool] = True

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
        self.pulls = np.zeros((n, k, 1))
        self.wins = np.zeros((n, k, 1))
        self.level_seen = np.zeros(n, dtype=np.int64)     # c of the round the last action was chosen for
        self.left_seen = np.full(n, -1, dtype=np.int64)   # budget_left of that observation
        self._rows = np.arange(n)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.log_term[rows] = log_terms(self.delta, self.total_budget[rows])
        m = num_levels(obs)
        if self.pulls.shape[2] != m:
            self.pulls = np.zeros((self.num, self.num_arms, m))
            self.wins = np.zeros((self.num, self.num_arms, m))
        self.pulls[rows] = 0.0
        self.wins[rows] = 0.0
        self.left_seen[rows] = -1

    def select(self, obs: Obs) -> np.ndarray:
        left = obs["budget_left"][:, 0].astype(np.int64)
        moved = np.flatnonzero((left != self.left_seen) & (self.left_seen >= 0))  # one more round was played
        if moved.size:
            arm = obs["last_arm"][moved, 0].astype(np.int64)
            level = self.level_seen[moved] - 1
            self.pulls[moved, arm, level] += 1.0
            self.wins[moved, arm, level] += obs["last_reward"][moved, 0]
        levels = current_levels(obs)
        self.level_seen[:] = levels
        self.left_seen[:] = left
        pulls = self.pulls[self._rows, :, levels - 1]
        wins = self.wins[self._rows, :, levels - 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            index = np.where(pulls > 0, wins / pulls + np.sqrt(self.log_term[:, None] / (2.0 * pulls)), np.inf)
        self.scores.set_all(index)
        return self.scores.argmax()
