"""Probability of improvement (Kushner 1964) over correlated arms (a hoffman2014 baseline)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.bayesian._base import BayesianAgent, improvement


class PI(BayesianAgent):
    r"""PI: pull the arm most likely to improve on the incumbent by \(\xi\).

    Paper: Kushner 1964, Mockus 1982; a baseline of hoffman2014 §6 (§6.1's item (5)).

    \(a_t = \operatorname*{arg\,max}_k \Phi\big((\mu_k - \mu^+ - \xi) / s_k\big)\). Recommendation: see
    ``BayesianAgent``. Anytime.

    Readings where the papers are silent:

    - the incumbent \(\mu^+\): as ``EI`` (the largest posterior mean among the pulled arms; all arms before
      the first pull).
    - \(\xi\) (``xi``): hoffman2014 does not state it; default 0.05 (pybo's default), in the rewards' units.
    - \(s_k\): the posterior standard deviation of the mean \(\mu_k\); an arm with \(s_k = 0\) has probability 0.
    - ties: the agent's tie rule (many arms can tie at probability 0 or 1 in floating point).

    Examples:
        One seeded episode (correlated arms) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import PI
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("CorrelatedBestArm-v0")
        >>> result = play_episode(env, PI(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (30, 0.103)
    """

    #: the margin ``xi`` when the constructor is given None
    default_xi: ClassVar[float] = 0.05
    anytime = True  # never reads the horizon T

    def __init__(self, kernel: Any = None, eta: float = 1.0, sigma: float = 1.0, xi: float | None = None,
                 recommendation: str = "latent", tie_break: str = "random", prior_mean: float = 0.0) -> None:
        self.xi = check.real("xi", self.default_xi if xi is None else xi)
        super().__init__(kernel, eta, sigma, recommendation, tie_break, prior_mean)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "xi": self.xi}

    def select(self, obs: Obs) -> np.ndarray:
        _, z, _, uncertain = improvement(self.posterior, self.incumbent_value(obs), self.xi)
        return self.best(np.where(uncertain, scipy.special.ndtr(z), 0.0))
