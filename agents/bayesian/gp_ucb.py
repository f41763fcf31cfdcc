"""GP-UCB (Srinivas, Krause, Kakade, Seeger 2010) on a finite set of correlated arms (a hoffman2014 baseline)."""

from __future__ import annotations

from typing import Any

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.bayesian._base import BayesianAgent


class GPUCB(BayesianAgent):
    r"""GP-UCB: pull the arm of largest \(\mu_k + \sqrt{\beta_t}\, s_k\).

    Paper: Srinivas et al., ICML 2010, Theorem 1 (finite domain); a baseline of hoffman2014 §6 (§6.1's item (3)).

    \(\beta_t = \text{scale} \cdot 2 \log\big(K t^2 \pi^2 / (6 \delta)\big)\) at round \(t\) (1-based).
    Recommendation: see ``BayesianAgent``. Anytime.

    Readings where the papers are silent:

    - \(\delta\) and the scale of \(\beta_t\): hoffman2014 does not state them; we default to ``delta=0.1`` and
      ``scale=1/5``, as Srinivas et al.'s experiments and the authors' later library pybo scale the
      theoretical \(\beta_t\) down by a factor 5.
    - log: natural. Ties: the agent's tie rule.

    Examples:
        One seeded episode (correlated arms) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import GPUCB
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("CorrelatedBestArm-v0")
        >>> result = play_episode(env, GPUCB(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (30, 0.136)
    """

    anytime = True  # never reads the horizon T

    def __init__(self, kernel: Any = None, eta: float = 1.0, sigma: float = 1.0, delta: float = 0.1,
                 scale: float = 0.2, recommendation: str = "latent", tie_break: str = "random",
                 prior_mean: float = 0.0) -> None:
        self.delta = check.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        self.scale = check.real("scale", scale, low=0.0, low_open=True)
        super().__init__(kernel, eta, sigma, recommendation, tie_break, prior_mean)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "delta": self.delta, "scale": self.scale}

    def select(self, obs: Obs) -> np.ndarray:
        k, t = self.posterior.mean.shape[1], self.round(obs).astype(np.float64)
        beta = self.scale * 2.0 * np.log(k * t**2 * np.pi**2 / (6.0 * self.delta))
        return self.best(self.posterior.mean + np.sqrt(beta)[:, None] * self.posterior.std())
