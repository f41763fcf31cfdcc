"""UCB1 (Auer, Cesa-Bianchi and Fischer 2002): the empirical mean plus a Hoeffding bonus."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bandit_gym.agents.base import Agent, Obs
from bandit_gym.agents.multi_armed._index import ArmMeans


class UCB1(Agent):
    r"""UCB1: play each arm once, then the arm of largest upper confidence bound.

    Paper: P. Auer, N. Cesa-Bianchi, P. Fischer. Finite-time analysis of the multiarmed bandit problem. Machine
    Learning 47, 2002, Figure 1 (UCB1) and Theorem 1.

    Rule, with \(n\) the number of pulls made so far and \(T_i\) the pulls of arm \(i\):

    $$
    I_t = \operatorname*{arg\,max}_i \hat\mu_i + \sqrt{2 \ln n / T_i} \qquad (+\infty \text{ for an arm never pulled})
    $$

    Theorem 1 (rewards in \([0, 1]\)):
    \(\mathbb{E}[R_n] \le 8 \sum_{i: \Delta_i > 0} \ln n / \Delta_i + (1 + \pi^2 / 3) \sum_i \Delta_i\). The order
    \(\ln n\) is optimal, the constant is not: UCB1 pulls a suboptimal arm about \(2 \ln n / \Delta_i^2\) times, a
    regret of \(2 \ln n / \Delta_i\) per arm, while the Lai-Robbins constant is
    \(\Delta_i / \mathrm{kl}(\mu_i, \mu^*) \le 1 / (2 \Delta_i)\) (Pinsker: \(\mathrm{kl} \ge 2 \Delta^2\)), much
    smaller still for Bernoulli arms of small variance (means near 0 or 1). KL-UCB closes that gap.

    Parameters: none. Anytime (\(T\) is never read). Only the previously pulled arm's mean and count change; the
    bonus of every arm grows with \(\ln n\), so each step recomputes \(K\) indices per copy (one vectorised pass).
    Ties (the first \(K\) rounds, where every unpulled arm has index \(+\infty\)): a random arm order per copy and
    episode (``tie_break="random"``) or the smallest index (``tie_break="index"``). Deviations: none.

    Examples:
        One seeded episode (10 Bernoulli arms) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import UCB1
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("MultiArmedBandit-v0", budget=200)
        >>> result = play_episode(env, UCB1(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (200, 40.5)
    """

    families: ClassVar[tuple[str, ...]] = ("multi_armed",)
    #: never reads the horizon T
    anytime: ClassVar[bool] = True

    def allocate(self, n: int, k: int) -> None:
        self.scores = self.new_scores()  # its arm order breaks the ties of the argmax
        self.means = ArmMeans()
        self.means.allocate(n, k)
        self.width = np.zeros((n, k))  # 1 / sqrt(T_i), +inf for an arm never pulled

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.means.begin(obs, rows)
        self._refresh(rows, None)

    def _refresh(self, rows: np.ndarray | slice, arms: np.ndarray | None) -> None:
        """Recompute the widths of ``arms`` (one per copy of ``rows``; every arm if None), whose counts changed."""
        count = self.means.count
        with np.errstate(divide="ignore"):
            if arms is None:
                self.width[rows] = 1.0 / np.sqrt(count[rows])
            else:
                flat = self._offsets[rows] + arms
                self.width.reshape(-1)[flat] = 1.0 / np.sqrt(count.reshape(-1)[flat])

    def select(self, obs: Obs) -> np.ndarray:
        if self.last_arms.size:  # the arm each copy pulled at the previous round
            self.means.update(self.moved, self.last_arms, self.last_counts, self.last_sums)
            self._refresh(self.moved, self.last_arms)
        # n >= 2 once an index is compared with another finite one (K >= 2 arms are pulled once first): taking
        # n = max(n, 2) only keeps the bonus of the first pulled arm finite-times-inf free, no decision changes
        scale = np.sqrt(2.0 * np.log(np.maximum(self.means.pulls(obs), 2.0)))
        index = self.means.mean + scale[:, None] * self.width
        self.scores.set_all(index)
        return self.scores.argmax()
