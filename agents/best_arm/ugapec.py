"""UGapEc, the fixed-confidence version of UGapE (gabillon2012 §3, Fig. 1 right; §4.3)."""

from __future__ import annotations

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm._gap import BestArmAgent


class UGapEc(BestArmAgent):
    """Unified gap-based exploration, fixed confidence.

    Paper: gabillon2012, Fig. 1 (right), Fig. 2, eq. 3-4, Theorem 2.

    Pull each arm once; then, while ``B_J(t) >= epsilon``, SELECT-ARM with
    ``beta_k = b sqrt( c log(4 K (t-1)^3 / delta) / T_k )`` (t - 1 pulls made); stop (action K) with the answer
    ``J(t)`` as soon as ``B_J(t) < epsilon``, epsilon read from the observation. Theorem 2: with ``c = 1/2``,
    ``P(r_Omega <= epsilon and n_tilde <= N) >= 1 - delta``, ``N = K + O(H_eps log(H_eps / delta))``.

    Parameters: ``delta`` in (0, 1), ``c = 0.5`` (the paper's recommendation), ``b`` the range of the rewards.
    Anytime: it never reads the budget. Deviations: none.

    Readings where the paper is silent:

    - the budget: the paper's loop has no cap; on a fixed-confidence env the env's budget is a safety cap, and
      reaching it truncates the episode with the current ``J(t)`` as the answer (ours).
    - log: no base given; natural log.
    - tie rules of SELECT-ARM: see :func:`~bandit_gym.agents.best_arm._gap.select_arm` (J: smallest index;
      u_t, l_t: the largest beta, as the paper says, then the smallest index; I(t): l_t when the widths are
      equal). The tie rule is fixed (no random option).
    - initialisation: each arm once, in index order, with no stopping test; the answer submitted during it is
      the m arms of largest empirical mean, an arm never pulled ranking last (ties: the smaller index).
    """

    rule = "UGapEc"
    num_constants = 3  # delta, c, b
    anytime = True  # never reads the horizon T

    def __init__(self, delta: float = 0.05, c: float = 0.5, b: float = 1.0) -> None:
        self.delta = check.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        self.c = check.real("c", c, low=0.0, low_open=True)
        self.b = check.real("b", b, low=0.0, low_open=True)
        super().__init__(tie_break="index")

    def params(self) -> dict[str, object]:
        return {"delta": self.delta, "c": self.c, "b": self.b}

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.constants[rows] = self.delta, self.c, self.b
