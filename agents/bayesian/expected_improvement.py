"""Expected improvement (Mockus 1982; Jones et al. 1998) over correlated arms (a hoffman2014 baseline)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.bayesian._base import BayesianAgent, improvement


class EI(BayesianAgent):
    r"""EI: pull the arm of largest expected improvement over the incumbent.

    Paper: Mockus 1982, Jones 2001; a baseline of hoffman2014 §6 (§6.1's item (6)).

    \(a_t = \operatorname*{arg\,max}_k (\mu_k - \mu^+ - \xi) \Phi(z_k) + s_k \phi(z_k)\),
    \(z_k = (\mu_k - \mu^+ - \xi) / s_k\). Recommendation: see ``BayesianAgent``. Anytime.

    Readings where the papers are silent:

    - the incumbent \(\mu^+\): the largest posterior mean among the arms pulled so far, all arms before the first
      pull (as the authors' later library pybo does).
    - \(\xi\) (``xi``): hoffman2014 does not state it; default 0 (pybo's default), in the rewards' units.
    - \(s_k\): the posterior standard deviation of the mean \(\mu_k\), not of a new observation.
    - an arm with \(s_k = 0\) (its mean known exactly) has improvement 0, even if \(\mu_k > \mu^+ + \xi\).
    - ties: the agent's tie rule.

    Examples:
        One seeded episode (correlated arms) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import EI
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("CorrelatedBestArm-v0")
        >>> result = play_episode(env, EI(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (30, 0.013)
    """

    #: the margin ``xi`` when the constructor is given None
    default_xi: ClassVar[float] = 0.0
    anytime = True  # never reads the horizon T

    def __init__(self, kernel: Any = None, eta: float = 1.0, sigma: float = 1.0, xi: float | None = None,
                 recommendation: str = "latent", tie_break: str = "random", prior_mean: float = 0.0) -> None:
        self.xi = check.real("xi", self.default_xi if xi is None else xi)
        super().__init__(kernel, eta, sigma, recommendation, tie_break, prior_mean)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "xi": self.xi}

    def select(self, obs: Obs) -> np.ndarray:
        d, z, std, uncertain = improvement(self.posterior, self.incumbent_value(obs), self.xi)
        gain = np.where(uncertain, d * scipy.special.ndtr(z) + std * np.exp(-0.5 * z**2) / np.sqrt(2.0 * np.pi), 0.0)
        return self.best(gain)
