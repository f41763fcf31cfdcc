"""Successive Rejects (Audibert, Bubeck, Munos 2010), the parameter-free fixed-budget baseline."""

from __future__ import annotations

import numpy as np

from bandit_gym.agents._batch import most_owed_first
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

    Paper: Audibert, Bubeck, Munos, COLT 2010, a baseline of gabillon2012.

    ``n_k = ceil( (n - K) / (logbar(K) (K + 1 - k)) )``, ``logbar(K) = 1/2 + sum_{i=2}^K 1/i``, n read from the
    observation at the episode start (horizon-aware); at most n pulls in all. Output: the last surviving arm.
    Defined for m = 1 (SAR handles m > 1). Deviations: none.

    Readings where the paper is silent:

    - order of pulls within a phase: the surviving arm with the fewest pulls, the smallest index first.
    - ties for the smallest mean: the arm of smallest index is rejected.
    - leftover budget: the phases use at most n pulls; the pulls left after the last phase go to the survivor
      (the public banditpylib code gives them to the last two arms; the answer does not change).
    - answer before the end: the surviving arm of largest empirical mean, an arm never pulled ranking last
      (ties: the smallest index).
    - n <= K: every n_k is 0, so all K - 1 rejections happen before any pull, on empirical means of 0 (the
      smallest indices leave first), and the last arm takes the whole budget. ``n_k`` is rounded up with a
      tolerance of 1e-9, so that a quotient that is an integer up to rounding is not rounded up once more.
    """

    anytime = False
    rule = "SuccessiveRejects"
    batched = True

    def __init__(self) -> None:
        super().__init__(tie_break="index")

    def params(self) -> dict[str, object]:
        return {}

    @property
    def phase(self) -> np.ndarray:
        """Per copy, the current phase (1..K-1; K once one arm is left)."""
        return self.state[:, 0].astype(np.int64)

    @property
    def alive(self) -> np.ndarray:
        """Per copy, the bits of the arms still in play."""
        return self.state[:, 1:1 + self.num_arms] == 1.0

    def state_size(self, k: int) -> int:
        return 1 + 3 * k  # phase, alive bits, n_1..n_{K-1} and n, accepted bits (SAR)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        k = self.num_arms
        self.state[rows] = 0.0
        self.state[rows, 0] = 1.0
        self.state[rows, 1:1 + k] = 1.0
        for budget in np.unique(self.total_budget[rows]):  # one schedule per distinct budget (usually one)
            chosen = rows[self.total_budget[rows] == budget]
            self.state[chosen, 1 + k:2 * k] = phase_lengths(int(budget), k)
            self.state[chosen, 2 * k] = budget

    def _batch_pulls(self, obs: Obs, family: str) -> np.ndarray | None:
        """The rest of the current phase at once: every surviving arm up to n_k pulls (the single survivor: the
        rest of the budget). Phases end, and arms leave, at the compiled rule's next call, as pull by pull."""
        self._act_batch(obs, obs["last_arm"][:, 0], family)  # ends the phases whose pulls are all made
        k = self.num_arms
        phase = self.state[:, 0].astype(np.int64)
        target = self.state[np.arange(self.num), k + phase]  # n_k (n_K = n: the survivor takes what is left)
        owed = np.where(self.alive, np.maximum(target[:, None] - obs["counts"], 0), 0).astype(np.int64)
        return most_owed_first(owed, obs["budget_left"][:, 0].astype(np.int64))

    def check_m(self, m: int) -> None:
        if m != 1:
            raise ValueError(f"SuccessiveRejects returns one arm (m = 1); this env asks for m = {m}: use SAR")
