r"""Shared machinery of the threshold-bandit agents that estimate \(F_i(c) = P(X_i \ge c)\) per level from the
observation's ``level_exceed`` / ``level_trials`` counts (the empirical survival function under uncensored
feedback, the modified Kaplan-Meier estimator under censored feedback, abernethy2016 eqs. 5 and 8), and the
confidence \(\delta\) (``delta``) that the optimistic agents (UCB, PerThresholdUCB, DKWUCB, OPTIM) share:
\(T^{-2} / 2\) by default, or fixed, as \(\log(2 / \delta)\) per copy."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.scores import ArmScores


def current_levels(obs: Obs) -> np.ndarray:
    r"""The threshold \(c_t\) of each copy as an integer level \(1, \dots, m\). The final observation of an episode
    has \(c = 0\) (no round left; the action is ignored): it reads as level 1."""
    return np.maximum(obs["threshold"][:, 0].astype(np.int64), 1)


def num_levels(obs: Obs) -> int:
    r"""\(m\), from the observation's ``(N, K * m)`` level counts."""
    return obs["level_exceed"].shape[1] // obs["counts"].shape[1]


def level_counts(obs: Obs, levels: np.ndarray, rows: np.ndarray | slice = slice(None)) -> tuple[np.ndarray, ...]:
    r"""\((D_i(c), N_i(c))\) of every arm at level ``levels[r]`` (1-based) in copies ``rows``, float64 ``(r, K)``."""
    k, m = obs["counts"].shape[1], num_levels(obs)
    columns = np.arange(k) * m + (levels[:, None] - 1)
    exceed = np.take_along_axis(obs["level_exceed"][rows], columns, axis=1)
    trials = np.take_along_axis(obs["level_trials"][rows], columns, axis=1)
    return exceed.astype(np.float64), trials.astype(np.float64)


def survival_estimate(exceed: np.ndarray, trials: np.ndarray) -> np.ndarray:
    r"""\(\hat F = D / N\), 0 where \(N = 0\) (those arms get an infinite width)."""
    return exceed / np.maximum(trials, 1.0)


def checked_delta(delta: float | None) -> float | None:
    r"""The confidence \(\delta\) of the optimistic agents, in \((0, 1)\), or None for \(\delta = T^{-2} / 2\)
    (\(T\) read from the observation's ``budget_left`` at each episode start)."""
    return None if delta is None else check.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)


def fixed_delta_is_anytime(params: Mapping[str, Any]) -> bool:
    r"""``is_anytime`` of the agents with a ``delta`` parameter: anytime when ``delta`` is fixed (a fixed
    \(\delta\) does not depend on \(T\); the default \(T^{-2} / 2\) does)."""
    return params.get("delta") is not None


def log_terms(delta: float | None, total_budget: np.ndarray) -> np.ndarray | float:
    r"""\(\log(2 / \delta)\) for copies of horizon ``total_budget``: \(\log(4 T^2)\) with the default
    \(\delta = T^{-2} / 2\) (``delta`` None), one per copy, else the one fixed value."""
    if delta is None:
        return np.log(4.0 * total_budget.astype(np.float64) ** 2)
    return np.log(2.0 / delta)


def level_ucb_arms(scores: ArmScores, obs: Obs, log_term: np.ndarray,
                   width: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    r"""\(I_t = \operatorname*{arg\,max}_i \hat F_i(c_t) + V(N_i(c_t), \delta)\) with \(V(0) = +\infty\), ties by
    ``scores``' arm order.

    ``width(trials, log_term)`` is \(V(N, \delta)\) for \(N \ge 1\) (``log_term`` \(= \log(2 / \delta)\), one per
    copy, broadcast against the ``(N, K)`` trials; a division by \(N = 0\) is allowed, its value is replaced by
    \(+\infty\))."""
    exceed, trials = level_counts(obs, current_levels(obs))
    with np.errstate(divide="ignore"):
        bonus = np.where(trials > 0, width(trials, log_term[:, None]), np.inf)
    scores.set_all(survival_estimate(exceed, trials) + bonus)
    return scores.argmax()
