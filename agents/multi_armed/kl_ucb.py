"""KL-UCB (Garivier and Cappé 2011): the largest mean still plausible in Kullback-Leibler divergence."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy

from bandit_gym import _validation as check
from bandit_gym.agents.base import Agent, Obs
from bandit_gym.agents.multi_armed._index import ArmMeans, check_unit_means
from bandit_gym.divergences import DISTRIBUTIONS, kl_bernoulli

NEWTON_STEPS = 8
r"""Newton steps of the Bernoulli index: from the start below, 8 steps reach \(10^{-12}\) on every
\((\hat\mu, \text{level})\) of a test grid (levels \(10^{-6}\) to 20), far below any gap between two arms' indices that
matters.
"""


def kl_ucb_bernoulli(mean: np.ndarray, level: np.ndarray, steps: int = NEWTON_STEPS) -> np.ndarray:
    r"""\(\max\{q \in [p, 1] : d(p, q) \le \text{level}\}\) elementwise for \(p\) = ``mean`` in \([0, 1]\) (\(d\)
    the Bernoulli KL divergence; ``level`` \(= +\infty\) gives 1), by Newton's method on every entry at once.

    \(q \mapsto d(p, q)\) is convex and increasing on \([p, 1]\), so Newton's steps from a point right of the root
    decrease monotonically to it (and never cross it). The start is the smaller of two upper bounds of the
    root: Pinsker's \(p + \sqrt{\text{level} / 2}\) (\(d \ge 2 (q - p)^2\)) and
    \(1 - \exp\big((h(p) - \text{level}) / (1 - p)\big)\), from \(d(p, q) \ge h(p) - (1 - p) \ln(1 - q)\) with
    \(h(p) = p \ln p + (1 - p) \ln(1 - p)\) (tight near 1)."""
    p = np.asarray(mean, dtype=np.float64)
    h = scipy.special.xlogy(p, p) + scipy.special.xlogy(1.0 - p, 1.0 - p)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        near_one = 1.0 - np.exp((h - level) / (1.0 - p))  # p = 1: nan, replaced by 1 below
        q = np.fmin(np.minimum(p + np.sqrt(level / 2.0), 1.0), near_one)
        for _ in range(steps):
            excess = kl_bernoulli(p, q) - level
            slope = (q - p) / (q * (1.0 - q))
            move = (excess > 0) & (q < 1.0) & (slope > 0)  # q = 1 only where the root is 1 to double precision
            q = np.where(move, np.maximum(q - excess / slope, p), q)
    return q


class KLUCB(Agent):
    r"""KL-UCB: the arm whose mean could be largest at the confidence level \(\ln t + c \ln\ln t\).

    Paper: A. Garivier, O. Cappé. The KL-UCB algorithm for bounded stochastic bandits and beyond. COLT 2011,
    Algorithm 1 and Theorem 1 (Bernoulli / bounded rewards); Gaussian arms as in their §2 (exponential
    families).

    Rule at round \(t\) (1-based; \(t - 1\) pulls made), with \(N_i(t)\) pulls and empirical mean \(\hat\mu_i\) of
    arm \(i\):

    $$
    I_t = \operatorname*{arg\,max}_i \max\{q : N_i(t)\, d(\hat\mu_i, q) \le \ln t + c \ln\ln t\}
    \qquad (+\infty \text{ for an arm never pulled})
    $$

    with \(d\) the Bernoulli KL divergence \(d(p, q) = p \ln(p/q) + (1-p) \ln\big((1-p)/(1-q)\big)\)
    (``distribution="bernoulli"``; rewards in \([0, 1]\)) or the Gaussian one \((p - q)^2 / (2 \sigma^2)\)
    (``"gaussian"``), whose index has the closed form \(\hat\mu_i + \sigma \sqrt{2 (\ln t + c \ln\ln t) / N_i}\).
    The Bernoulli index is the root of a monotone equation, found by Newton's method on every arm of every copy at
    once (``kl_ucb_bernoulli``, ``NEWTON_STEPS`` steps; no loop over copies).

    Theorem 1 (\(c = 3\)): \(\mathbb{E}[N_i(n)] \le (1 + \epsilon) \ln n / d(\mu_i, \mu^*) + O(\ln\ln n)\), hence
    \(\limsup \mathbb{E}[R_n] / \ln n \le \sum_i \Delta_i / d(\mu_i, \mu^*)\), the Lai-Robbins constant for
    Bernoulli arms: asymptotically optimal. Default ``c=0``, the value of the paper's experiments, which it
    recommends in practice; \(c = 3\) is the theorem's.

    Anytime (\(T\) is never read). Each step recomputes \(K\) indices per copy (the level \(\ln t\) grows for every
    arm). Ties (the first \(K\) rounds): the agent's tie rule (random arm order per copy and episode, or smallest
    index). Readings where the paper is silent: \(\ln\ln t\) is taken as 0 while \(\ln t < 1\) (\(t \le 2\), only
    before every arm has been pulled when \(K \ge 2\)); \(\sigma\) (``sigma``) of Gaussian arms is a parameter
    (the env's, default 1).

    Examples:
        One seeded episode (10 Bernoulli arms) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import KLUCB
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("MultiArmedBandit-v0", budget=200)
        >>> result = play_episode(env, KLUCB(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (200, 18.49)
    """

    families: ClassVar[tuple[str, ...]] = ("multi_armed",)
    #: never reads the horizon T
    anytime: ClassVar[bool] = True

    def __init__(self, c: float = 0.0, distribution: str = "bernoulli", sigma: float = 1.0, *,
                 tie_break: str = "random") -> None:
        self.c = check.real("c", c, low=0.0)
        self.distribution = check.choice("distribution", distribution, DISTRIBUTIONS)
        self.sigma = check.real("sigma", sigma, low=0.0, low_open=True)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, Any]:
        return {"c": self.c, "distribution": self.distribution, "sigma": self.sigma, **super().params()}

    def allocate(self, n: int, k: int) -> None:
        self.scores = self.new_scores()  # its arm order breaks the ties of the argmax
        self.means = ArmMeans()
        self.means.allocate(n, k)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.means.begin(obs, rows)
        self._refresh(rows, None)

    def _refresh(self, rows: np.ndarray | slice, arms: np.ndarray | None) -> None:
        """Check the means of ``arms`` (one per copy of ``rows``; every arm if None), which just changed."""
        if self.distribution == "bernoulli":
            check_unit_means(self.means, rows, arms, type(self).__name__)

    def exploration(self, obs: Obs) -> np.ndarray:
        r"""\(\ln t + c \ln\ln t\) of every copy, \(t\) the round about to be played (1-based)."""
        log_t = np.log(self.means.pulls(obs) + 1.0)
        return log_t + self.c * np.log(np.maximum(log_t, 1.0))

    def select(self, obs: Obs) -> np.ndarray:
        if self.last_arms.size:  # the arm each copy pulled at the previous round
            self.means.update(self.moved, self.last_arms, self.last_counts, self.last_sums)
            self._refresh(self.moved, self.last_arms)
        count, mean = self.means.count, self.means.mean
        with np.errstate(divide="ignore", invalid="ignore"):
            level = self.exploration(obs)[:, None] / count
        if self.distribution == "gaussian":
            index = mean + self.sigma * np.sqrt(2.0 * level)
        else:
            index = kl_ucb_bernoulli(mean, level)
        index[count == 0] = np.inf  # an arm never pulled first
        self.scores.set_all(index)
        return self.scores.argmax()
