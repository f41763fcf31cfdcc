"""LUCB1 (Kalyanakrishnan, Tewari, Auer, Stone 2012), the fixed-confidence baseline next to UGapEc."""

from __future__ import annotations

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm._gap import BestArmAgent, initial_round


class LUCB(BestArmAgent):
    """LUCB1: sample the two arms whose confidence intervals are most in doubt, stop when they separate.

    Paper: S. Kalyanakrishnan, A. Tewari, P. Auer, P. Stone, PAC Subset Selection in Stochastic Multi-armed
    Bandits, ICML 2012 (LUCB1). Not in ALGORITHMS.md; the fixed-confidence baseline users expect next to UGapEc.

    After one pull of each arm, round t: ``High`` = the m arms of largest empirical mean,
    ``h_t = argmin_{j in High} LCB_j``, ``l_t = argmax_{j not in High} UCB_j`` with
    ``UCB/LCB = mu_hat +- beta``, ``beta(u, t) = sqrt( log(k1 K t^4 / delta) / (2 u) )``, ``k1 = 5/4``;
    stop with ``High`` when ``UCB_{l_t} - LCB_{h_t} < epsilon``, else sample h_t and l_t.

    Deviations: a round samples two arms, an env step one: h_t is pulled at the step that computes the round
    and l_t at the next, without recomputing (round t = 1 + floor((pulls - K) / 2)). Ties (unspecified): the
    smallest index. ``beta`` assumes rewards in [0, 1] (``b`` scales it for [0, b]). Anytime.
    """

    def __init__(self, delta: float = 0.05, b: float = 1.0) -> None:
        self.delta = check.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        self.b = check.real("b", b, low=0.0, low_open=True)
        super().__init__(tie_break="index")

    def params(self) -> dict[str, object]:
        return {"delta": self.delta, "b": self.b}

    def allocate(self, n: int, k: int) -> None:
        self.pending = np.full(n, -1, dtype=np.int64)  # l_t, pulled at the step after h_t
        self.left_seen = np.full(n, -1, dtype=np.int64)
        self.choice = np.zeros(n, dtype=np.int64)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.pending[rows] = -1
        self.left_seen[rows] = -1

    def decide(self, obs: Obs) -> tuple[np.ndarray, np.ndarray]:
        counts, means, made, m = self.statistics(obs)
        k, rows = self.num_arms, np.arange(self.num)
        round_t = 1.0 + np.maximum(made - k, 0.0) // 2
        beta = self.b * np.sqrt(np.log(1.25 * k * round_t**4 / self.delta)[:, None] / (2.0 * np.maximum(counts, 1.0)))
        order = np.argsort(-means, axis=1, kind="stable")
        high = np.zeros(counts.shape, dtype=bool)
        high[rows[:, None], order[:, :m]] = True
        h_t = np.argmin(np.where(high, means - beta, np.inf), axis=1)
        l_t = np.argmax(np.where(high, -np.inf, means + beta), axis=1)
        stop = (means + beta)[rows, l_t] - (means - beta)[rows, h_t] < obs["epsilon"][:, 0]
        left = obs["budget_left"][:, 0].astype(np.int64)
        new = left != self.left_seen  # a repeated act on one observation repeats its action
        second = new & (self.pending >= 0)
        first = new & ~second & ~initial_round(made, k)
        arms = np.where(initial_round(made, k), made.astype(np.int64), h_t)
        arms = np.where(first & stop, k, arms)
        arms = np.where(second, self.pending, arms)
        arms = np.where(new, arms, self.choice)
        self.choice[:] = arms
        self.pending[second] = -1
        self.pending[first & ~stop] = l_t[first & ~stop]
        self.left_seen[new] = left[new]
        return arms, high
