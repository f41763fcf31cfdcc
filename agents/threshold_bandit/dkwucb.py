"""DKWUCB, the threshold bandit's UCB on the empirical survival function (abernethy2016 §4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from bandit_gym.agents.base import Agent, Obs
from bandit_gym.agents.threshold_bandit._levels import checked_delta, fixed_delta_is_anytime, level_ucb_arms, log_terms


class DKWUCB(Agent):
    r"""UCB on the empirical survival function with the Dvoretzky-Kiefer-Wolfowitz width, uncensored feedback.

    Paper: abernethy2016 §4, eq. 5-6, Theorem 2.

    Rule, after observing \(c_t\):

    $$
    \begin{aligned}
    I_t &= \operatorname*{arg\,max}_i \hat F_i(c_t) + V(N_i, \delta), \qquad
    \hat F_i(j) = \#\{\text{pulls of } i \text{ with } X \ge j\} / N_i, \\
    V(N, \delta) &= \sqrt{\log(2 / \delta) / (2 N)}, \qquad V(0) = +\infty
    \end{aligned}
    $$

    \(\hat F\) uses every pull of arm \(i\) whatever its threshold (the observation's ``level_exceed`` /
    ``level_trials``; under uncensored feedback ``level_trials`` is \(N_i\) at every level). Default
    \(\delta = T^{-2} / 2\) (Theorem 2), \(T\) read at the episode start; a fixed ``delta`` makes it anytime.
    Theorem 2: \(\mathbb{E}[\mathrm{Regret}_T] \le 8 \sum_i \log T / \min_j \Delta_i(j) + O(1)\), with no
    dependence on \(m\). Deviations: none. On a censored env the counts are the Kaplan-Meier ones, where this width
    is not the paper's (use ``OPTIM``). Cost \(O(K)\) per copy and step: the index depends on \(c_t\).

    Readings where the paper is silent or garbled:

    - the min in Theorem 2: as printed, \(\min_{j \in M} \Delta_i(j)\) is 0 for an arm that is best at some
      level, which would make the bound infinite; we read it over the levels where arm \(i\) is suboptimal
      (\(\Delta_i(j) > 0\)). The extracted text may also square that gap; we follow the prose ("identical to
      UCB, but with the suboptimality gap \(\min_j \Delta_i(j)\)", and the naive bound with
      \((\min_j \Delta_i(j))^2\) called a factor \(\max_j \Delta_i(j) / \min_j \Delta_i(j)\) worse):
      \(1 / \min_j \Delta_i(j)\).
    - ties in the \(\operatorname{arg\,max}\): no rule given; the agent's tie rule, a random arm order per copy and
      episode by default, the smallest index with ``tie_break="index"``. Unpulled arms (index \(+\infty\)) are therefore
      each pulled once first, in that order.
    - log: the paper writes log without a base; natural log. With the default \(\delta\),
      \(\log(2 / \delta) = \log(4 T^2)\), \(T\) the horizon read from ``budget_left`` at the episode start.
    - the observation after the last round carries \(c = 0\); it is read as level 1 (the action is ignored).

    Examples:
        One seeded episode (threshold bandit) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import DKWUCB
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("ThresholdBandit-v0", horizon=200)
        >>> result = play_episode(env, DKWUCB(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (200, 2.4)
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
    r"""DKWUCB's \(V(N, \delta) = \sqrt{\log(2 / \delta) / (2 N)}\) for \(N \ge 1\) (``log_term``
    \(= \log(2 / \delta)\))."""
    return np.sqrt(log_term / (2.0 * trials))
