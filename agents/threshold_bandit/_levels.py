"""Shared machinery of the threshold-bandit agents that estimate ``F_i(c) = P(X_i >= c)`` per level from the
observation's ``level_exceed`` / ``level_trials`` counts (the empirical survival function under uncensored
feedback, the modified Kaplan-Meier estimator under censored feedback, abernethy2016 eqs. 5 and 8)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Agent, Obs


def current_levels(obs: Obs) -> np.ndarray:
    """The threshold ``c_t`` of each copy as an integer level ``1..m``. The final observation of an episode has
    ``c = 0`` (no round left; the action is ignored): it reads as level 1."""
    return np.maximum(obs["threshold"][:, 0].astype(np.int64), 1)


def num_levels(obs: Obs) -> int:
    """m, from the observation's ``(N, K * m)`` level counts."""
    return obs["level_exceed"].shape[1] // obs["counts"].shape[1]


def level_counts(obs: Obs, levels: np.ndarray, rows: np.ndarray | slice = slice(None)) -> tuple[np.ndarray, ...]:
    """``(D_i(c), N_i(c))`` of every arm at level ``levels[r]`` (1-based) in copies ``rows``, float64 ``(r, K)``."""
    k, m = obs["counts"].shape[1], num_levels(obs)
    columns = np.arange(k) * m + (levels[:, None] - 1)
    exceed = np.take_along_axis(obs["level_exceed"][rows], columns, axis=1)
    trials = np.take_along_axis(obs["level_trials"][rows], columns, axis=1)
    return exceed.astype(np.float64), trials.astype(np.float64)


def survival_estimate(exceed: np.ndarray, trials: np.ndarray) -> np.ndarray:
    """``F_hat = D / N``, 0 where ``N = 0`` (those arms get an infinite width)."""
    return exceed / np.maximum(trials, 1.0)


class ConfidenceAgent(Agent):
    """Base of the optimistic threshold-bandit agents with ``delta = T^-2 / 2`` by default (read from the
    observation's ``budget_left`` at each episode start), or a fixed ``delta``: ``self.log_term`` holds
    ``log(2 / delta)`` per copy."""

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
        if self.delta is None:  # log(2 / delta) with delta = T^-2 / 2
            self.log_term[rows] = np.log(4.0 * self.total_budget[rows].astype(np.float64) ** 2)
        else:
            self.log_term[rows] = np.log(2.0 / self.delta)


class LevelUCB(ConfidenceAgent):
    """``I_t = argmax_i F_hat_i(c_t) + V(N_i(c_t))`` with ``V(0) = +inf``; subclasses give the width ``V``."""

    level_keys: ClassVar[bool] = True

    def width(self, trials: np.ndarray, log_term: np.ndarray) -> np.ndarray:
        """``V(N, delta)`` for ``N >= 1`` (``log_term = log(2 / delta)``, one per copy, broadcast)."""
        raise NotImplementedError

    def select(self, obs: Obs) -> np.ndarray:
        exceed, trials = level_counts(obs, current_levels(obs))
        with np.errstate(divide="ignore"):
            bonus = np.where(trials > 0, self.width(trials, self.log_term[:, None]), np.inf)
        self.scores.set_all(survival_estimate(exceed, trials) + bonus)
        return self.scores.argmax()
