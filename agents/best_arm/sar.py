"""Successive Accepts and Rejects (Bubeck, Wang, Viswanathan 2013), fixed-budget m-best identification."""

from __future__ import annotations

import numpy as np

from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm.successive_rejects import SuccessiveRejects


class SAR(SuccessiveRejects):
    """Successive Accepts and Rejects: SR's phases, but each phase removes the active arm of largest empirical
    gap, accepting it if it is among the active top ones, rejecting it otherwise.

    Paper: S. Bubeck, T. Wang, N. Viswanathan, Multiple Identifications in Multi-Armed Bandits, ICML 2013.
    Not in ALGORITHMS.md; the fixed-budget baseline for m > 1 that gabillon2012's issue names.

    Phase lengths as :class:`SuccessiveRejects`. At the end of phase k, with the active arms sorted by empirical
    mean ``sigma_1 >= ... `` and ``l`` arms still to accept::

        Delta_hat_r = mu_hat_{sigma_r} - mu_hat_{sigma_(l+1)}  (r <= l),  mu_hat_{sigma_l} - mu_hat_{sigma_r}  (r > l)

    the arm of largest ``Delta_hat`` leaves: accepted if ``r <= l`` (then ``l <- l - 1``), rejected otherwise.
    Output: the accepted arms and, after the last phase, the active arm if one is still to accept. Choices: ties
    go to the higher-ranked arm (then the smaller index); with nothing left to accept the worst active arm is
    rejected, with every active arm to accept the best is accepted. The answer submitted before the end: the
    accepted arms plus the best active ones. m = 1 gives SR's answers with SAR's removal rule.
    """

    def allocate(self, n: int, k: int) -> None:
        super().allocate(n, k)
        self.accepted = np.zeros((n, k), dtype=bool)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        super().begin(obs, rows)
        self.accepted[rows] = False

    def check_m(self, m: int) -> None:
        """Any m."""

    def remove(self, rows: np.ndarray, means: np.ndarray, m: int) -> None:
        """End a phase in copies ``rows``: remove the active arm of largest empirical gap."""
        order = np.argsort(-np.where(self.alive[rows], means[rows], -np.inf), axis=1, kind="stable")
        ranked = np.take_along_axis(means[rows], order, axis=1)
        active = self.alive[rows].sum(axis=1)
        left = m - self.accepted[rows].sum(axis=1)  # still to accept
        positions = np.arange(self.num_arms)[None, :]
        r = np.arange(rows.size)
        kth = ranked[r, np.clip(left - 1, 0, None)]
        after = ranked[r, np.clip(left, None, self.num_arms - 1)]
        gaps = np.where(positions < left[:, None], ranked - after[:, None], kth[:, None] - ranked)
        gaps = np.where(positions < active[:, None], gaps, -np.inf)
        pick = np.argmax(gaps, axis=1)
        pick = np.where(left <= 0, active - 1, np.where(left >= active, 0, pick))
        arm = order[r, pick]
        accept = pick < left
        self.alive[rows, arm] = False
        self.accepted[rows[accept], arm[accept]] = True
        last = self.alive[rows].sum(axis=1) == 1  # the last active arm joins the answer if one is still missing
        fill = last & (self.accepted[rows].sum(axis=1) < m)
        if fill.any():
            self.accepted[rows[fill]] |= self.alive[rows[fill]]

    def answer(self, means: np.ndarray, m: int) -> np.ndarray:
        answer = self.accepted.copy()
        missing = m - answer.sum(axis=1)
        order = np.argsort(-np.where(self.alive & ~answer, means, -np.inf), axis=1, kind="stable")
        fill = np.arange(self.num_arms)[None, :] < missing[:, None]
        answer[np.arange(self.num)[:, None], order] |= fill
        return answer
