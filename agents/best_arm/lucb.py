"""LUCB1 (Kalyanakrishnan, Tewari, Auer, Stone 2012), the fixed-confidence baseline next to UGapEc."""

from __future__ import annotations

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm._gap import BestArmAgent


class LUCB(BestArmAgent):
    """LUCB1: sample the two arms whose confidence intervals are most in doubt, stop when they separate.

    Paper: S. Kalyanakrishnan, A. Tewari, P. Auer, P. Stone, PAC Subset Selection in Stochastic Multi-armed
    Bandits, ICML 2012 (LUCB1). Not one of the five papers; the fixed-confidence baseline users expect next to
    UGapEc.

    After one pull of each arm, round t: ``High`` = the m arms of largest empirical mean,
    ``h_t = argmin_{j in High} LCB_j``, ``l_t = argmax_{j not in High} UCB_j`` with
    ``UCB/LCB = mu_hat +- beta``, ``beta(u, t) = sqrt( log(k1 K t^4 / delta) / (2 u) )``, ``k1 = 5/4``;
    stop with ``High`` when ``UCB_{l_t} - LCB_{h_t} < epsilon``, else sample h_t and l_t. Anytime.

    Deviations: a round samples two arms, an env step one: h_t is pulled at the step that computes the round
    and l_t at the next, without recomputing.

    Readings where the paper is silent:

    - the round counter: t = 1 after the K initial pulls and grows by one every two pulls,
      ``t = 1 + floor((pulls - K) / 2)``.
    - ties (High, h_t, l_t): the smallest index; fixed, no random option. Initial pulls in index order.
    - rewards in [0, b]: the paper's beta is for [0, 1]; ``b`` scales it (default 1).
    - the budget: the paper has no cap; on a fixed-confidence env the env's budget truncates the episode, with
      ``High`` of the current statistics as the answer (also the answer submitted before the end).
    - arms never pulled (only during the initial round): the submitted ``High`` ranks them last; h_t and l_t
      read their mean as 0 (they are not used before every arm is pulled).
    - log: natural.
    """

    rule = "LUCB"
    num_constants = 2  # delta, b
    anytime = True  # never reads the horizon T

    def __init__(self, delta: float = 0.05, b: float = 1.0) -> None:
        self.delta = check.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        self.b = check.real("b", b, low=0.0, low_open=True)
        super().__init__(tie_break="index")

    def params(self) -> dict[str, object]:
        return {"delta": self.delta, "b": self.b}

    def state_size(self, k: int) -> int:
        return 3  # l_t pending (or -1), pulls made at the last act, the arm it chose

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.constants[rows] = self.delta, self.b
        self.state[rows] = -1.0
