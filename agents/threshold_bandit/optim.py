"""OPTIM, DKWUCB with the Kaplan-Meier estimator for censored feedback and non-increasing thresholds
(abernethy2016 §5.1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from bandit_gym.agents.base import Agent, Obs
from bandit_gym.agents.threshold_bandit._levels import checked_delta, fixed_delta_is_anytime, level_ucb_arms, log_terms


class OPTIM(Agent):
    r"""Optimistic-order threshold bandit with censored feedback: UCB on the modified Kaplan-Meier estimator.

    Paper: abernethy2016 §5.1, eq. 8, Theorem 4.

    Rule, after observing \(c_t\):

    $$
    \begin{aligned}
    I_t &= \operatorname*{arg\,max}_i \hat F_i(c_t) + V(N_i(c_t), \delta), \qquad \hat F_i(j) = D_i(j) / N_i(j), \\
    D_i(j) &= \#\{\text{pulls of } i \text{ with } \min(X, c) \ge j\}, \qquad
    N_i(j) = \#\{\text{pulls of } i \text{ with } c \ge j\}, \\
    V(N, \delta) &= \sqrt{2 \log(2 / \delta) / N}, \qquad V(0) = +\infty
    \end{aligned}
    $$

    (the observation's ``level_exceed`` and ``level_trials`` are \(D\) and \(N\)). Default
    \(\delta = T^{-2} / 2\); a fixed ``delta`` makes it anytime. Under non-increasing thresholds every past
    observation informs the current level, and Theorem 4 gives
    \(\mathbb{E}[\mathrm{Regret}_T] \le 32 \sum_i \log T / \min_j \Delta_i(j) + O(1)\) (\(T \ge mK\)). On other
    orders it still runs, without the theorem. Deviations: none.

    Readings where the paper is silent:

    - the estimator: the paper says only that the learner "plays the same strategy as DKWUCB" with the widths
      above; we use the modified Kaplan-Meier estimator of eq. 8, which under non-increasing thresholds equals
      DKWUCB's empirical survival function (every past threshold is \(\ge c_t\)).
    - the count inside \(V\): DKWUCB's rule has \(N_i\), the censored estimator has \(N_i(c_t)\); we use
      \(N_i(c_t)\). The two are equal under the non-increasing order, and only \(N_i(c_t)\) matches the
      estimator's variance on other orders.
    - the min in Theorem 4: read over the levels where arm \(i\) is suboptimal, as for ``DKWUCB``.
    - ties, log base, the last observation's \(c = 0\): as ``DKWUCB`` (the agent's tie rule, unpulled arms
      first; natural log, \(\log(2 / \delta) = \log(4 T^2)\) by default; level 1).

    Examples:
        One seeded episode (threshold bandit) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import OPTIM
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("ThresholdBandit-v0", horizon=200)
        >>> result = play_episode(env, OPTIM(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (200, 4.75)
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

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.log_term[rows] = log_terms(self.delta, self.total_budget[rows])

    def select(self, obs: Obs) -> np.ndarray:
        return level_ucb_arms(self.scores, obs, self.log_term, _width)


def _width(trials: np.ndarray, log_term: np.ndarray) -> np.ndarray:
    r"""OPTIM's \(V(N, \delta) = \sqrt{2 \log(2 / \delta) / N}\) for \(N \ge 1\) (``log_term``
    \(= \log(2 / \delta)\))."""
    return np.sqrt(2.0 * log_term / trials)
