"""APT, the Anytime Parameter-free Thresholding algorithm (Locatelli et al. 2016), a tao2019 baseline."""

from __future__ import annotations

import math

from bandit_gym import _validation as check
from bandit_gym.agents.thresholding._index import IndexAgent


class APT(IndexAgent):
    """Anytime Parameter-free Thresholding with precision epsilon.

    Paper: Locatelli, Gutzeit, Carpentier, ICML 2016; baseline of tao2019 §5 (ALGORITHMS.md §A.5).

    Rule: pull each arm once, then::

        B_i(t) = sqrt(T_i(t-1)) * ( |theta_hat_i(t-1) - theta| + epsilon ),     i_t = argmin_i B_i(t)

    Anytime. Answer (tao2019's adaptation): ``d_i = 1{theta_hat_i >= theta}``.

    Parameter ``epsilon >= 0``; tao2019 uses 0, 0.025, 0.05 and 0.1 (no default in the paper; 0 here).
    Ties: the agent's tie rule (random order by default; banditpylib's ``np.argmin`` is ``tie_break="index"``).
    Deviations: none.
    """

    def __init__(self, epsilon: float = 0.0, *, tie_break: str = "random") -> None:
        self.epsilon = check.real("epsilon", epsilon, low=0.0)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, object]:
        return {"epsilon": self.epsilon, **super().params()}

    def index_param(self) -> float:
        return self.epsilon

    @staticmethod
    def index(count: float, total: float, theta: float, epsilon: float, per_copy: float) -> float:
        """``B = sqrt(T_i) * (Delta_hat_i + epsilon)`` (compiled by the step kernel)."""
        return math.sqrt(count) * (abs(total / max(count, 1.0) - theta) + epsilon)
