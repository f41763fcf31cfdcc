"""UCBE(b) adapted to the thresholding bandit (Audibert, Bubeck, Munos 2010; Locatelli et al. 2016)."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.thresholding._index import IndexAgent


class UCBE(IndexAgent):
    """UCB-E for thresholding, with an oracle exploration parameter.

    Paper: Audibert, Bubeck, Munos, COLT 2010, as adapted in Locatelli et al. 2016; baseline of tao2019 §5
    (ALGORITHMS.md §A.6).

    Rule: pull each arm once, then::

        i_t = argmin_i  Delta_hat_i(t-1) - sqrt( a / T_i(t-1) ),     a = 4^b (T - K) / H

    with ``Delta_hat_i = |theta_hat_i - theta|`` (no epsilon). Answer: ``d_i = 1{theta_hat_i >= theta}``.

    Parameters: ``b`` (tao2019 uses -1, 0, 4) and ``H = sum_i 1 / Delta_i^2``, the complexity of the instance
    computed from the TRUE gaps: an **oracle** parameter the caller must pass (the experiment engine fills it
    from the instance and labels the agent as oracle). T is read from the observation at the start of each
    episode, so UCBE is horizon-aware and must be re-run for every budget. Deviations: the initial pull of each
    arm is inferred (UNSURE in ALGORITHMS.md §F.2 item 3).
    """

    oracle_parameters: ClassVar[tuple[str, ...]] = ("H",)
    anytime: ClassVar[bool] = False

    def __init__(self, b: float = 0.0, H: float | None = None, *, tie_break: str = "random") -> None:
        self.b = check.real("b", b)
        if H is None:
            raise ValueError("H=None: UCBE needs the oracle complexity H = sum_i 1/Delta_i^2 of the instance "
                             "(bandit_gym.instances.complexity(means, threshold)); pass H > 0")
        self.H = check.real("H", H, low=0.0, low_open=True)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, object]:
        return {"b": self.b, "H": self.H, **super().params()}

    def prepare(self, obs: Obs, rows: np.ndarray) -> None:
        horizon = self.total_budget[rows].astype(np.float64)
        # T < K leaves no pull after the initial ones, where a would be negative; it is never used then.
        self.per_copy[rows] = 4.0**self.b * np.maximum(horizon - self.num_arms, 0.0) / self.H

    @property
    def a(self) -> np.ndarray:
        """The exploration parameter ``a = 4^b (T - K) / H`` of each copy's episode."""
        return self.per_copy

    @staticmethod
    def index(count: float, total: float, theta: float, param: float, a: float) -> float:
        """``Delta_hat_i - sqrt(a / T_i)`` (compiled by the step kernel)."""
        return abs(total / max(count, 1.0) - theta) - math.sqrt(a / count)
