"""UGapE's SELECT-ARM (gabillon2012 §3, Fig. 2), batched over copies, shared by UGapEb and UGapEc; and the base
class of the best-arm agents."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bandit_gym.agents.base import Agent, Obs


class BestArmAgent(Agent):
    """Base of the (epsilon, m)-best-arm agents: :meth:`decide` returns, per copy, the arm to pull (K to stop)
    and the answer bits (exactly m ones)."""

    families: ClassVar[tuple[str, ...]] = ("best_arm",)

    def decide(self, obs: Obs) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _act_batch(self, obs: Obs, last: np.ndarray, family: str) -> np.ndarray:
        arms, answer = self.decide(obs)
        self._action[:, 0] = arms
        self._action[:, 1:] = answer
        return self._action

    @staticmethod
    def statistics(obs: Obs) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Pulls ``T_k`` (float64, ``(N, K)``), empirical means, pulls made so far ``t - 1`` per copy, and m."""
        counts = obs["counts"].astype(np.float64)
        means = obs["sums"] / np.maximum(counts, 1.0)
        return counts, means, counts.sum(axis=1), int(obs["m"][0, 0])


def _first_best(values: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Per row, the argmax of ``values``; ties to the largest ``beta``, then the smallest index (§B.2)."""
    candidates = values == values.max(axis=1, keepdims=True)
    tied_beta = np.where(candidates, beta, -np.inf)
    return np.argmax(candidates & (tied_beta == tied_beta.max(axis=1, keepdims=True)), axis=1)


def select_arm(means: np.ndarray, beta: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SELECT-ARM(t) from the statistics after t - 1 rounds, for every copy::

        U_k = mu_hat_k + beta_k,   L_k = mu_hat_k - beta_k,   B_k = max^m_{i != k} U_i - L_k
        J = the m arms of smallest B (ties: smallest index),   B_J = max_{k in J} B_k
        u = argmax_{j not in J} U_j,   l = argmin_{i in J} L_i   (ties: largest beta, then smallest index)
        I = argmax_{k in {l, u}} beta_k   (a tie pulls l)

    ``max^m_{i != k} U_i`` is the (m+1)-th largest U when k is among the m largest, the m-th otherwise.
    Returns ``(J as bits (N, K), B_J (N,), I (N,))``."""
    n, k = means.shape
    rows = np.arange(n)[:, None]
    upper, lower = means + beta, means - beta
    order = np.argsort(-upper, axis=1, kind="stable")
    in_top = np.zeros((n, k), dtype=bool)
    in_top[rows, order[:, :m]] = True
    mth, next_one = upper[rows[:, 0], order[:, m - 1]], upper[rows[:, 0], order[:, m]]
    index = np.where(in_top, next_one[:, None], mth[:, None]) - lower
    chosen = np.argsort(index, axis=1, kind="stable")[:, :m]
    answer = np.zeros((n, k), dtype=bool)
    answer[rows, chosen] = True
    set_index = index[rows, chosen].max(axis=1)
    u_t = _first_best(np.where(answer, -np.inf, upper), beta)
    l_t = _first_best(np.where(answer, -lower, -np.inf), beta)
    pull = np.where(beta[rows[:, 0], l_t] >= beta[rows[:, 0], u_t], l_t, u_t)
    return answer, set_index, pull


def initial_round(pulls_made: np.ndarray, k: int) -> np.ndarray:
    """Copies still in the initial round (each arm pulled once, in index order: arm ``t - 1`` at round t)."""
    return pulls_made < k
