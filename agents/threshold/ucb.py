"""UCB in the deviation-function form of abernethy2016 §2, blind to the threshold."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Agent, Obs


class UCB(Agent):
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

    families: ClassVar[tuple[str, ...]] = ("threshold",)
    anytime: ClassVar[bool] = False

    @classmethod
    def is_anytime(cls, params: Mapping[str, Any]) -> bool:
        return params.get("delta") is not None  # a fixed delta does not depend on T

    def __init__(self, delta: float | None = None, *, tie_break: str = "random") -> None:
        self.delta = None if delta is None else check.real("delta", delta, low=0.0, high=1.0, low_open=True,
                                                           high_open=True)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, object]:
        return {"delta": self.delta, **super().params()}

    def allocate(self, n: int, k: int) -> None:
        self.scores = self.new_scores()
        self.log_term = np.zeros(n)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.scores.set_rows(rows, np.full((rows.size, self.num_arms), np.inf))
        if self.delta is None:
            self.log_term[rows] = np.log(4.0 * self.total_budget[rows].astype(np.float64) ** 2)
        else:
            self.log_term[rows] = np.log(2.0 / self.delta)

    def select(self, obs: Obs) -> np.ndarray:
        if self.last_arms.size:
            n = self.last_counts
            bonus = np.sqrt(self.log_term[self.moved] / (2.0 * n))
            self.scores.set_arms(self.moved, self.last_arms, self.last_sums / n + bonus)
        return self.scores.argmax()
