"""Thompson sampling with a joint Gaussian posterior over correlated arms (a baseline of hoffman2014)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bandit_gym.agents.base import Obs
from bandit_gym.agents.bayesian._base import BayesianAgent


class ThompsonSampling(BayesianAgent):
    r"""Thompson sampling: pull the \(\operatorname{arg\,max}\) of one joint posterior sample.

    Paper: Chapelle & Li 2011, Agrawal & Goyal 2013; a baseline of hoffman2014 §6 (§6.1's item (4)).

    \(\tilde\mu \sim \mathcal{N}(m_t, C_t)\) jointly over the arms (the arms are correlated, so not arm by arm),
    drawn with the agent's own generator as \(m_t + F z\) from the square-root factor \(C_t = F F^\top\)
    (\(O(K r)\) per step, \(r\) the kernel's rank); \(a_t = \operatorname*{arg\,max}_k \tilde\mu_k\). Anytime.

    Readings where the papers are silent:

    - recommendation: hoffman2014 does not say how Thompson sampling recommends; the largest posterior mean
      (``"latent"``, default) or the largest among the pulled arms (``"incumbent"``), see ``BayesianAgent``.
    - ties in the \(\operatorname{arg\,max}\) of the sample (possible only between arms with identical
      posteriors): the agent's tie rule.

    Examples:
        One seeded episode (correlated arms) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import ThompsonSampling
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("CorrelatedBestArm-v0")
        >>> result = play_episode(env, ThompsonSampling(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (30, 0.166)
    """

    form: ClassVar[str] = "factor"
    anytime = True  # never reads the horizon T

    def select(self, obs: Obs) -> np.ndarray:
        return self.best(self.posterior.sample(self.rng))
