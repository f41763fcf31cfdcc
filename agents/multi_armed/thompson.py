r"""Thompson sampling for the classic \(K\)-armed bandit: Beta posteriors (Bernoulli arms) or Gaussian posteriors."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Agent, Obs
from bandit_gym.agents.multi_armed._index import ArmMeans, check_unit_means
from bandit_gym.divergences import DISTRIBUTIONS


class Thompson(Agent):
    r"""Thompson sampling: draw a mean for every arm from its posterior, pull the arm of the largest draw.

    Papers: W. R. Thompson. On the likelihood that one unknown probability exceeds another in view of the
    evidence of two samples. Biometrika 25, 1933. S. Agrawal, N. Goyal. Analysis of Thompson sampling for the
    multi-armed bandit problem. COLT 2012 (Algorithm 1, Beta priors) and Further optimal regret bounds for
    Thompson sampling, AISTATS 2013 (Algorithm 2, Gaussian priors). E. Kaufmann, N. Korda, R. Munos. Thompson
    sampling: an asymptotically optimal finite-time analysis. ALT 2012.

    Rule, with \(S_i\) the sum of arm \(i\)'s rewards and \(N_i\) its pulls:

    $$
    \begin{aligned}
    \text{Bernoulli (uniform prior Beta}(1, 1)\text{):} \quad & \theta_i \sim \mathrm{Beta}(1 + S_i, 1 + N_i - S_i) \\
    \text{Gaussian (prior } \mathcal{N}(0, \sigma^2)\text{, known } \sigma\text{):} \quad &
      \theta_i \sim \mathcal{N}\big(S_i / (N_i + 1), \sigma^2 / (N_i + 1)\big) \\
    & I_t = \operatorname*{arg\,max}_i \theta_i
    \end{aligned}
    $$

    With Bernoulli arms its regret attains the Lai-Robbins constant \(\sum_i \Delta_i / \mathrm{kl}(\mu_i, \mu^*)\)
    (Kaufmann et al. 2012; Agrawal and Goyal 2013).

    Not the ``ThompsonSampling`` agent of the correlated best-arm envs (a Gaussian-process posterior,
    hoffman2014): this one plays the independent arms of ``MultiArmedBandit-v0``.

    Parameters: ``distribution`` (``"bernoulli"`` or ``"gaussian"``) and the Gaussian arms' ``sigma``.
    Anytime (\(T\) is never read). Each step draws \(K\) posterior samples per copy from the agent's generator.
    Ties have probability zero (continuous draws); ``tie_break`` is accepted for a uniform interface. The Gaussian
    prior is Agrawal and Goyal's, scaled by \(\sigma\).

    Deviation: with ``distribution="bernoulli"`` the Beta posterior also takes rewards in \([0, 1]\), \(S_i\) being
    then a real sum (a pseudo-count posterior). Agrawal and Goyal instead turn a reward \(r \in [0, 1]\) into a
    Bernoulli(\(r\)) trial before the update; the two agree on Bernoulli rewards, the only ones this library's
    ``MultiArmedBandit-v0`` Bernoulli arms give. Rewards outside \([0, 1]\) are refused.

    Examples:
        One seeded episode (10 Bernoulli arms) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import Thompson
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("MultiArmedBandit-v0", budget=200)
        >>> result = play_episode(env, Thompson(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (200, 14.728)
    """

    families: ClassVar[tuple[str, ...]] = ("multi_armed",)
    #: never reads the horizon T
    anytime: ClassVar[bool] = True

    def __init__(self, distribution: str = "bernoulli", sigma: float = 1.0, *, tie_break: str = "random") -> None:
        self.distribution = check.choice("distribution", distribution, DISTRIBUTIONS)
        self.sigma = check.real("sigma", sigma, low=0.0, low_open=True)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, Any]:
        return {"distribution": self.distribution, "sigma": self.sigma, **super().params()}

    def allocate(self, n: int, k: int) -> None:
        # not read by the draws; its tie order, shuffled at each episode start from the agent's generator, keeps
        # the draws that follow where they were
        self.scores = self.new_scores()
        self.means = ArmMeans()
        self.means.allocate(n, k)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.means.begin(obs, rows)
        self._refresh(rows, None)

    def _refresh(self, rows: np.ndarray | slice, arms: np.ndarray | None) -> None:
        """Check the means of ``arms`` (one per copy of ``rows``; every arm if None), which just changed."""
        if self.distribution == "bernoulli":
            check_unit_means(self.means, rows, arms, type(self).__name__)

    def select(self, obs: Obs) -> np.ndarray:
        if self.last_arms.size:  # the arm each copy pulled at the previous round
            self.means.update(self.moved, self.last_arms, self.last_counts, self.last_sums)
            self._refresh(self.moved, self.last_arms)
        count = self.means.count
        successes = self.means.mean * count
        if self.distribution == "bernoulli":
            draws = self.rng.beta(1.0 + successes, 1.0 + count - successes)
        else:
            spread = self.sigma / np.sqrt(count + 1.0)
            draws = successes / (count + 1.0) + spread * self.rng.standard_normal(count.shape)
        return draws.argmax(axis=1)
