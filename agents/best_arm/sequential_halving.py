"""Sequential Halving (Karnin, Koren and Somekh 2013): fixed-budget best-arm identification by halving rounds."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bandit_gym.agents.base import Agent, Obs


class SequentialHalving(Agent):
    r"""Sequential Halving: split the budget evenly over \(\lceil \log_2 K \rceil\) rounds; in each round pull
    every surviving arm equally often and keep the better half.

    Paper: Z. Karnin, T. Koren, O. Somekh, *Almost Optimal Exploration in Multi-Armed Bandits*, ICML 2013,
    Algorithm 1 (Sequential Halving) and Theorem 4.1.

    With budget \(T\) and \(K\) arms, \(S_0\) = all arms and \(R = \lceil \log_2 K \rceil\) rounds. In round
    \(r = 0, \dots, R - 1\) every arm \(i\) of \(S_r\) is pulled

    $$
    t_r = \big\lfloor T / (\lvert S_r \rvert \lceil \log_2 K \rceil) \big\rfloor
    $$

    times, \(\hat p_i^r\) is the average of the \(t_r\) values of round \(r\) alone, and \(S_{r+1}\) is the
    \(\lceil \lvert S_r \rvert / 2 \rceil\) arms of \(S_r\) with the largest \(\hat p_i^r\). The answer is the one
    arm of \(S_R\). The rounds make at most \(\sum_r \lvert S_r \rvert t_r \le T\) pulls; by Theorem 4.1 the answer
    is wrong with probability at most \(3 \log_2(K) \exp(-T / (8 H_2 \log_2 K))\),
    \(H_2 = \max_i i / \Delta_{(i)}^2\). Parameter-free (no oracle): the paper's defaults are the algorithm
    itself.

    Readings where the paper is silent:

    - **Top m** (``m > 1``, best arm with \(m\) or top K): rounds \(R = \lceil \log_2(K / m) \rceil\), and each
      keeps \(\max(m, \lceil \lvert S_r \rvert / 2 \rceil)\) arms; \(\lceil \cdot \rceil\) of
      \(\lceil \cdot \rceil\) being \(\lceil K / 2^R \rceil = m\), exactly \(m\) arms survive, and they are the
      answer. At \(m = 1\) this is the paper's algorithm.
    - **Pulls left over** (the floors of \(t_r\)): the agent stops after its last round (action \(K\)) and is
      scored on \(S_R\); it never pulls beyond \(T\).
    - **Ties**, in a round's averages and in the answer before the last round: by the agent's tie rule
      (``tie_break``, random by default), so no arm is favoured by its position. A budget below
      \(\lvert S_r \rvert \lceil \log_2 K \rceil\) makes \(t_r = 0\) (the paper assumes \(T \ge K \log_2 K\)): the
      round has no values, its arms tie, and the halving keeps a random half.
    - **Within a round** the arm pulled next is a least-pulled survivor of the round (round robin; the order
      does not change what the round sees). The answer submitted before the last round, which no loss of the
      envs reads unless an episode is cut short, is the \(m\) survivors of largest mean over all their pulls.

    Plays best-arm identification (fixed budget; \(\epsilon\) is not an input) and top-K identification
    (``TopKIdentification-v0``, with the \(m\) of its observation). Not anytime: it reads the budget \(T\) when
    an episode begins.

    \(K = 4\) arms and \(T = 40\): two rounds of 5 pulls per arm (20), then 10 per survivor (20); arm 2 always
    pays 1:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import SequentialHalving
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-v0", means=[0.0, 0.0, 1.0, 0.0], budget=40, loss="error")
        >>> result = play_episode(env, SequentialHalving(), seed=0)
        >>> int(result["pulls"]), float(result["error"])
        (40, 0.0)
    """

    families: ClassVar[tuple[str, ...]] = ("best_arm", "top_k")

    def allocate(self, n: int, k: int) -> None:
        """Per-copy state, one row per copy, every name the paper's."""
        self.survivors = np.zeros((n, k), dtype=bool)  # \(S_r\)
        self.round = np.zeros(n, dtype=np.int64)  # \(r\)
        self.rounds = np.zeros(n, dtype=np.int64)  # \(R = \lceil \log_2(K / m) \rceil\)
        self.budget = np.zeros(n, dtype=np.int64)  # \(T\)
        self.pulls_per_arm = np.zeros(n, dtype=np.int64)  # \(t_r\)
        self.counts_before = np.zeros((n, k))  # each arm's counts and sums when round \(r\) began
        self.sums_before = np.zeros((n, k))

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        k = self.num_arms
        m = obs["m"][rows, 0].astype(np.int64)
        self.survivors[rows] = True
        self.round[rows] = 0
        self.rounds[rows] = np.ceil(np.log2(-(-k // m))).astype(np.int64)  # log2 of a whole number: exact
        self.budget[rows] = obs["budget_left"][rows, 0].astype(np.int64)
        self._begin_round(obs, rows)

    def _begin_round(self, obs: Obs, rows: np.ndarray) -> None:
        r"""Round \(r\) begins in copies ``rows``: \(t_r = \lfloor T / (\lvert S_r \rvert R) \rfloor\), and the
        statistics so far are kept."""
        self.counts_before[rows] = obs["counts"][rows]
        self.sums_before[rows] = obs["sums"][rows]
        size = self.survivors[rows].sum(axis=1)
        self.pulls_per_arm[rows] = self.budget[rows] // (size * self.rounds[rows])

    def _halve(self, obs: Obs, rows: np.ndarray) -> None:
        r"""Round \(r\) ended in copies ``rows``: keep \(\max(m, \lceil \lvert S_r \rvert / 2 \rceil)\) survivors by
        their round-\(r\) averages."""
        pulled = obs["counts"][rows] - self.counts_before[rows]
        average = np.where(pulled > 0, (obs["sums"][rows] - self.sums_before[rows]) / np.maximum(pulled, 1), -np.inf)
        keep = np.maximum(obs["m"][rows, 0].astype(np.int64), -(-self.survivors[rows].sum(axis=1) // 2))
        values = np.full((self.num, self.num_arms), -np.inf)
        among = np.zeros((self.num, self.num_arms), dtype=bool)
        values[rows], among[rows] = average, self.survivors[rows]
        count = np.zeros(self.num, dtype=np.int64)
        count[rows] = keep
        self.survivors[rows] = self.top(values, count, among)[rows]
        self.round[rows] += 1
        going = rows[self.round[rows] < self.rounds[rows]]
        if going.size:
            self._begin_round(obs, going)

    def select(self, obs: Obs) -> np.ndarray:
        r"""End the rounds whose pulls are all made (several in a row when \(t_r = 0\)), then pull a least-pulled
        survivor of the round that still owes pulls."""
        for _ in range(self.num_arms):  # each pass ends at least one round in a copy; \(R \le \log_2 K\) rounds
            pulled = obs["counts"] - self.counts_before  # this round's pulls
            owed = self.survivors & (pulled < self.pulls_per_arm[:, None])
            ended = np.flatnonzero((self.round < self.rounds) & ~owed.any(axis=1))
            if not ended.size:
                break
            self._halve(obs, ended)
        # a finished copy owes nothing: any arm, which ``stop`` turns into the stop action
        return self.argmin(np.where(owed, pulled, np.inf))

    def stop(self, obs: Obs) -> np.ndarray:
        r"""Stop after the last round: \(S_R\) is the answer."""
        return self.round >= self.rounds

    def answer(self, obs: Obs) -> np.ndarray:
        r"""The \(m\) survivors of largest empirical mean (after the last round: \(S_R\), exactly \(m\) arms)."""
        means = np.where(obs["counts"] > 0, obs["sums"] / np.maximum(obs["counts"], 1), -np.inf)
        return self.top(means, obs["m"][:, 0].astype(np.int64), self.survivors).astype(np.int64)
