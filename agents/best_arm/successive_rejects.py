"""Successive Rejects (Audibert, Bubeck, Munos 2010), the parameter-free fixed-budget baseline."""

from __future__ import annotations

import numpy as np

from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm._gap import BestArmAgent


def phase_lengths(budget: int, k: int) -> np.ndarray:
    """``n_1..n_{K-1}`` with ``n_k = ceil( (n - K) / (logbar(K) (K + 1 - k)) )``, ``logbar(K) = 1/2 + sum_{i=2}^K
    1/i``: the number of pulls every arm surviving phase k has at its end (``n_0 = 0``)."""
    logbar = 0.5 + np.sum(1.0 / np.arange(2, k + 1))
    phases = np.arange(1, k)
    return np.ceil(max(budget - k, 0) / (logbar * (k + 1 - phases)) - 1e-9).astype(np.int64)


class SuccessiveRejects(BestArmAgent):
    """Successive Rejects: K - 1 phases; in phase k every surviving arm is pulled up to ``n_k`` pulls, then the
    arm of smallest empirical mean is rejected.

    Paper: Audibert, Bubeck, Munos, COLT 2010 (ALGORITHMS.md §B.6), a baseline of gabillon2012.

    ``n_k = ceil( (n - K) / (logbar(K) (K + 1 - k)) )``, ``logbar(K) = 1/2 + sum_{i=2}^K 1/i``, n read from the
    observation at the episode start (horizon-aware); at most n pulls in all. Output: the last surviving arm.
    Within a phase the surviving arm with the fewest pulls is pulled (smallest index first). Choices: a tie for
    the smallest mean rejects the smallest index (UNSURE in §B.6); pulls left after the last phase go to the
    survivor (banditpylib gives them to the last two arms; the answer does not change). The answer submitted
    before the end is the surviving arm of largest empirical mean. Defined for m = 1 (SAR handles m > 1).
    """

    anytime = False

    def __init__(self) -> None:
        super().__init__(tie_break="index")

    def params(self) -> dict[str, object]:
        return {}

    def allocate(self, n: int, k: int) -> None:
        self.alive = np.ones((n, k), dtype=bool)
        self.phase = np.ones(n, dtype=np.int64)              # 1..K-1; K once a single arm is left
        self.schedule = np.zeros((n, k), dtype=np.int64)     # schedule[:, k - 1] = n_k; n_K = n (the survivor)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.alive[rows] = True
        self.phase[rows] = 1
        for budget in np.unique(self.total_budget[rows]):  # one schedule per distinct budget (usually one)
            chosen = rows[self.total_budget[rows] == budget]
            self.schedule[chosen, :-1] = phase_lengths(int(budget), self.num_arms)
            self.schedule[chosen, -1] = budget

    def decide(self, obs: Obs) -> tuple[np.ndarray, np.ndarray]:
        counts, means, _, m = self.statistics(obs)
        self.check_m(m)
        rows = np.arange(self.num)
        for _ in range(self.num_arms - 1):  # phases of length 0 may end together
            target = self.schedule[rows, self.phase - 1]
            ended = (self.phase < self.num_arms) & np.all(~self.alive | (counts >= target[:, None]), axis=1)
            if not ended.any():
                break
            self.remove(np.flatnonzero(ended), means, m)
            self.phase[ended] += 1
        arms = np.argmin(np.where(self.alive, counts, np.inf), axis=1)  # the surviving arm with the fewest pulls
        return arms, self.answer(means, m)

    def check_m(self, m: int) -> None:
        if m != 1:
            raise ValueError(f"SuccessiveRejects returns one arm (m = 1); this env asks for m = {m}: use SAR")

    def remove(self, rows: np.ndarray, means: np.ndarray, m: int) -> None:
        """End a phase in copies ``rows``: reject the surviving arm of smallest empirical mean."""
        worst = np.argmin(np.where(self.alive[rows], means[rows], np.inf), axis=1)
        self.alive[rows, worst] = False

    def answer(self, means: np.ndarray, m: int) -> np.ndarray:
        """The surviving arm of largest empirical mean."""
        answer = np.zeros_like(self.alive)
        answer[np.arange(self.num), np.argmax(np.where(self.alive, means, -np.inf), axis=1)] = True
        return answer
