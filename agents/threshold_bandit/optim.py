"""OPTIM, DKWUCB with the Kaplan-Meier estimator for censored feedback and non-increasing thresholds
(abernethy2016 §5.1)."""

from __future__ import annotations

import numpy as np

from bandit_gym.agents.threshold_bandit._levels import LevelUCB


class OPTIM(LevelUCB):
    """Optimistic-order threshold bandit with censored feedback: UCB on the modified Kaplan-Meier estimator.

    Paper: abernethy2016 §5.1, Theorem 4 (ALGORITHMS.md §C.4-C.5).

    Rule, after observing ``c_t``::

        I_t = argmax_i  F_hat_i(c_t) + V(N_i(c_t), delta),   F_hat_i(j) = D_i(j) / N_i(j),
        D_i(j) = #{pulls of i with min(X, c) >= j},   N_i(j) = #{pulls of i with c >= j},
        V(N, delta) = sqrt( 2 log(2 / delta) / N ),   V(0) = +inf

    (the observation's ``level_exceed`` and ``level_trials`` are D and N). Default ``delta = T^-2 / 2``; a fixed
    ``delta`` makes it anytime. Under non-increasing thresholds every past observation informs the current
    level, and Theorem 4 gives ``E[Regret_T] <= 32 sum_i log T / min_j Delta_i(j) + O(1)`` (T >= mK).

    Deviations and choices: the count inside V is ``N_i(c_t)`` (UNSURE in ALGORITHMS.md §C.5: it equals N_i
    under the optimistic order and is the safe general choice). Ties: the agent's tie rule. On other orders it
    still runs, without the theorem.
    """

    def width(self, trials: np.ndarray, log_term: np.ndarray) -> np.ndarray:
        return np.sqrt(2.0 * log_term / trials)
