r"""Epsilon-greedy, with a fixed \(\epsilon\) or the decaying schedule of Auer, Cesa-Bianchi and Fischer (2002)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Agent, Obs
from bandit_gym.agents.multi_armed._index import ArmMeans


class EpsilonGreedy(Agent):
    r"""Epsilon-greedy: with probability \(\epsilon_t\) pull an arm uniformly at random, else the best empirical mean.

    Paper: P. Auer, N. Cesa-Bianchi, P. Fischer. Finite-time analysis of the multiarmed bandit problem. Machine
    Learning 47, 2002, Figure 3 (\(\epsilon_n\)-greedy) and Theorem 3; the fixed-\(\epsilon\) rule is the textbook
    one (Sutton and Barto, Reinforcement Learning, §2.2).

    Rule at round \(t\) (1-based; \(t - 1\) pulls made), with \(\epsilon_t = \epsilon\) when ``epsilon`` is given
    (fixed; linear regret \(\sim \epsilon\, t \operatorname{mean}(\Delta)\)) and
    \(\epsilon_t = \min\big(1, c K / (d^2 t)\big)\) with ``epsilon=None``, the default (Auer et al.'s schedule):

    $$
    I_t = \begin{cases}
    \text{a uniform random arm} & \text{with probability } \epsilon_t, \\
    \operatorname*{arg\,max}_i \hat\mu_i & \text{otherwise.}
    \end{cases}
    $$

    Auer et al.'s Theorem 3 needs \(c > 5\) and \(0 < d \le \min_i \Delta_i\); it then gives a regret of order
    \((c / d^2) \sum_i \Delta_i \ln t\): logarithmic, but only if \(d\) is a lower bound on the gaps (an oracle),
    and with a large constant. Defaults ``c=0.15``, ``d=0.1``: the paper's experiments found small \(c\) (0.05 to
    0.3, with \(d\) the instance's gap) best in practice, below the theorem's range.

    Anytime (\(T\) is never read). Each step updates the pulled arm's mean only (\(O(N)\)); the
    \(\operatorname{arg\,max}\) with the tie rule and the exploration draws (two per copy per step, from the agent's
    generator) are \(O(N K)\) / \(O(N)\). Arms never pulled have mean \(+\infty\) for the greedy choice, so every arm is
    pulled once early (not in the paper, whose rule leaves unpulled arms undefined).

    Examples:
        One seeded episode (10 Bernoulli arms) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import EpsilonGreedy
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("MultiArmedBandit-v0", budget=200)
        >>> result = play_episode(env, EpsilonGreedy(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (200, 74.405)
    """

    families: ClassVar[tuple[str, ...]] = ("multi_armed",)
    #: never reads the horizon T
    anytime: ClassVar[bool] = True

    def __init__(self, epsilon: float | None = None, c: float = 0.15, d: float = 0.1, *,
                 tie_break: str = "random") -> None:
        self.epsilon = None if epsilon is None else check.real("epsilon", epsilon, low=0.0, high=1.0)
        self.c = check.real("c", c, low=0.0, low_open=True)
        self.d = check.real("d", d, low=0.0, high=1.0, low_open=True)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "c": self.c, "d": self.d, **super().params()}

    def allocate(self, n: int, k: int) -> None:
        self.scores = self.new_scores()  # the greedy arm's scores; its arm order breaks the ties of the argmax
        self.means = ArmMeans()
        self.means.allocate(n, k)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.means.begin(obs, rows)
        self._refresh(rows, None)

    def _refresh(self, rows: np.ndarray | slice, arms: np.ndarray | None) -> None:
        r"""Copy the means of ``arms`` (one per copy of ``rows``; every arm if None), which just changed, into the
        greedy scores (\(+\infty\) for an arm never pulled)."""
        if arms is None:
            self.scores.set_rows(np.arange(self.num)[rows],
                                 np.where(self.means.count[rows] > 0, self.means.mean[rows], np.inf))
        else:
            self.scores.set_arms(rows, arms, self.means.means_of(rows, arms))

    def exploration_rate(self, obs: Obs) -> np.ndarray:
        r"""\(\epsilon_t\) of every copy for the round about to be played (an observation seen by ``act``, single or
        batched)."""
        batch, _ = self._as_batch(obs)
        return self._rate(batch)

    def _rate(self, batch: Obs) -> np.ndarray:
        r"""\(\epsilon_t\) of every copy of a batched observation: ``epsilon``, or
        \(\min\big(1, c K / (d^2 t)\big)\)."""
        if self.epsilon is not None:
            return np.full(len(batch["counts"]), self.epsilon)
        t = self.means.pulls(batch) + 1.0
        return np.minimum(1.0, self.c * self.num_arms / (self.d**2 * t))

    def select(self, obs: Obs) -> np.ndarray:
        if self.last_arms.size:  # the arm each copy pulled at the previous round
            self.means.update(self.moved, self.last_arms, self.last_counts, self.last_sums)
            self._refresh(self.moved, self.last_arms)
        rate = self._rate(obs)
        explore = self.rng.random(self.num) < rate
        random_arms = self.rng.integers(self.num_arms, size=self.num)
        return np.where(explore, random_arms, self.scores.argmax())
