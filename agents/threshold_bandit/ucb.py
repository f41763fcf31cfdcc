"""UCB in the deviation-function form of abernethy2016 §2, blind to the threshold."""

from __future__ import annotations

import numpy as np

from bandit_gym.agents.base import Obs
from bandit_gym.agents.threshold_bandit._levels import ConfidenceAgent


class UCB(ConfidenceAgent):
    """Classic UCB on the realised rewards ``R = 1{X >= c_t}``, ignoring the threshold c_t.

    Paper: abernethy2016 §2, Theorem 1 (ALGORITHMS.md §C.1).

    Rule (Hoeffding deviation function)::

        I_t = argmax_i  mu_hat_i + V(N_i, delta),   V(N, delta) = sqrt( log(2 / delta) / (2 N) ),  V(0) = +inf

    Default ``delta = T^-2 / 2`` (Theorem 1), i.e. ``log(2/delta) = log(4 T^2)``, with T read from the
    observation's ``budget_left`` at the start of each episode; pass ``delta`` to fix it instead.

    Ties (unspecified in the paper): a random arm order per copy and episode (``tie_break="random"``) or the
    smallest index (``tie_break="index"``); unpulled arms have index +inf, so every arm is pulled once first.
    Only the previously pulled arm's index changes, so it alone is recomputed (O(N) per step, plus the argmax).
    """

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        super().begin(obs, rows)
        self.scores.set_rows(rows, np.full((rows.size, self.num_arms), np.inf))

    def select(self, obs: Obs) -> np.ndarray:
        if self.last_arms.size:
            n = self.last_counts
            bonus = np.sqrt(self.log_term[self.moved] / (2.0 * n))
            self.scores.set_arms(self.moved, self.last_arms, self.last_sums / n + bonus)
        return self.scores.argmax()
