"""Bayes-UCB (Kaufmann, Cappé, Garivier 2012) with a Gaussian posterior over correlated arms (hoffman2014)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.bayesian._base import BayesianAgent


class BayesUCB(BayesianAgent):
    r"""Bayes-UCB: pull the arm of largest posterior quantile.

    Paper: Kaufmann, Cappé, Garivier, AISTATS 2012; a baseline of hoffman2014 §6 (§6.1's item (3)).

    \(a_t = \operatorname*{arg\,max}_k \mu_k + s_k \Phi^{-1}\big(1 - 1 / ((t + 1) (\log T)^c)\big)\), the quantile
    of the Gaussian marginal posterior. \(c = 0\) (``c``, default, Kaufmann et al.'s practical choice; their theory
    needs \(c \ge 5\)) makes it anytime; \(c > 0\) reads \(T\). Recommendation: see ``BayesianAgent`` (default: the
    largest posterior mean).

    Readings where the papers are silent:

    - \(t + 1\) in place of \(t\): at \(t = 1\) with \(c = 0\) the level \(1 - 1/t\) is 0, a quantile of \(-\infty\)
      for every arm.
    - \(\log T\) (natural log) is floored at 1: with \(T < e\) and \(c > 0\) the level would fall below 1/2, or
      below 0.
    - on correlated arms: the original keeps one posterior per arm; we take the quantile of each arm's marginal
      under the joint Gaussian posterior.
    - the value of \(c\) hoffman2014 used is not stated; we default to 0.

    Examples:
        One seeded episode (correlated arms) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import BayesUCB
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("CorrelatedBestArm-v0")
        >>> result = play_episode(env, BayesUCB(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (30, 0.103)
    """

    anytime = True  # with the default c = 0 (see is_anytime)

    def __init__(self, kernel: Any = None, eta: float = 1.0, sigma: float = 1.0, c: float = 0.0,
                 recommendation: str = "latent", tie_break: str = "random",
                 prior_mean: float = 0.0) -> None:
        self.c = check.real("c", c, low=0.0)
        super().__init__(kernel, eta, sigma, recommendation, tie_break, prior_mean)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "c": self.c}

    @classmethod
    def is_anytime(cls, params: Mapping[str, Any]) -> bool:
        return float(params.get("c", 0.0)) == 0.0

    def select(self, obs: Obs) -> np.ndarray:
        log_T = np.maximum(np.log(np.maximum(self.total_budget, 1)), 1.0)
        quantile = scipy.special.ndtri(1.0 - 1.0 / ((self.round(obs) + 1.0) * log_T**self.c))
        return self.best(self.posterior.mean + self.posterior.std() * quantile[:, None])
