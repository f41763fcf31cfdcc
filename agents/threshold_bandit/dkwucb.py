"""DKWUCB, the threshold bandit's UCB on the empirical survival function (abernethy2016 §4)."""

from __future__ import annotations

import numpy as np

from bandit_gym.agents.threshold_bandit._levels import LevelUCB


class DKWUCB(LevelUCB):
    """UCB on the empirical survival function with the Dvoretzky-Kiefer-Wolfowitz width, uncensored feedback.

    Paper: abernethy2016 §4, Theorem 2 (ALGORITHMS.md §C.3).

    Rule, after observing ``c_t``::

        I_t = argmax_i  F_hat_i(c_t) + V(N_i, delta),   F_hat_i(j) = #{pulls of i with X >= j} / N_i,
        V(N, delta) = sqrt( log(2 / delta) / (2 N) ),   V(0) = +inf

    ``F_hat`` uses every pull of arm i whatever its threshold (the observation's ``level_exceed`` /
    ``level_trials``; under uncensored feedback ``level_trials`` is N_i at every level). Default
    ``delta = T^-2 / 2`` (Theorem 2), T read at the episode start; a fixed ``delta`` makes it anytime.
    Theorem 2: ``E[Regret_T] <= 8 sum_i log T / min_j Delta_i(j) + O(1)`` (min over the levels where i is
    suboptimal), with no dependence on m.

    Ties (unspecified): the agent's tie rule (random arm order per copy and episode, or ``tie_break="index"``).
    Deviations: none. On a censored env the counts are the Kaplan-Meier ones, where this width is not the
    paper's (use :class:`OPTIM`). Cost O(K) per copy and step: the index depends on c_t.
    """

    def width(self, trials: np.ndarray, log_term: np.ndarray) -> np.ndarray:
        return np.sqrt(log_term / (2.0 * trials))
