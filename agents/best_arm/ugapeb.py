"""UGapEb, the fixed-budget version of UGapE (gabillon2012 §3.1)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm._gap import BestArmAgent, initial_round, select_arm


class UGapEb(BestArmAgent):
    """Unified gap-based exploration, fixed budget.

    Paper: gabillon2012, Fig. 1 (left), Theorem 1 (ALGORITHMS.md §B.2-B.3).

    Pull each arm once, then at every round SELECT-ARM (see :func:`~bandit_gym.agents.best_arm._gap.select_arm`)
    with ``beta_k = b sqrt(a / T_k)``, recording ``J(t)`` and its set index ``B_J(t)``. The recommendation is
    ``Omega(n) = J(t*)``, ``t* = argmin_t B_J(t)`` (the earliest on ties): the submitted answer at every step is
    the recorded set of smallest index so far.

    Parameters: ``a`` (exploration), or the oracle complexity ``H`` (H_epsilon of §B.5, from the true means),
    from which ``a = eta (n - K) / (4 H)`` is set at each episode start with n read from the observation
    (``eta = 1``: the value Theorem 1 prefers); ``b`` the range of the rewards (1 for Bernoulli arms).

    ``eta`` is ours, after the constant ``c`` of Audibert et al.'s UCB-E experiments: at n = H_1 the
    theoretical a is small (0.062 on Audibert et al.'s problem 1), the widths are narrow, and the set index
    of the first round after initialisation (one sample per arm) is often the smallest over the whole run, so
    the recommendation locks on an arm that drew a 1 first: error 0.73 against Uniform's 0.40 there (1000
    runs), 0.18 with ``eta = 16`` (a = 0.99). The same lock-in hurts more where gaps are small: m = 2 on
    problem 4 at n = 1500 errs 0.82 with ``eta = 16`` against Uniform's 0.48 and SAR's 0.44.

    Choices: the recorded sets run over t = K+1..n+1 (the set after the last observation is included, as the
    proof allows; ALGORITHMS.md §B.3 UNSURE). Tie rules as §B.2. During the initial round the answer is the m
    arms of largest empirical mean. Horizon-aware when built from H.
    """

    oracle_parameters: ClassVar[tuple[str, ...]] = ("H",)

    def __init__(self, a: float | None = None, H: float | None = None, b: float = 1.0, eta: float = 1.0) -> None:
        if (a is None) == (H is None):
            raise ValueError("pass exactly one of a (exploration, > 0) and H (oracle complexity H_epsilon, > 0); "
                             "a = (n - K) / (4 H) is the value Theorem 1 prefers")
        self.a = None if a is None else check.real("a", a, low=0.0, low_open=True)
        self.H = None if H is None else check.real("H", H, low=0.0, low_open=True)
        self.b = check.real("b", b, low=0.0, low_open=True)
        self.eta = check.real("eta", eta, low=0.0, low_open=True)
        super().__init__(tie_break="index")

    def params(self) -> dict[str, object]:
        return {"a": self.a, "H": self.H, "b": self.b, "eta": self.eta}

    @classmethod
    def is_anytime(cls, params: dict) -> bool:  # type: ignore[override]
        return params.get("H") is None

    def allocate(self, n: int, k: int) -> None:
        self.exploration = np.zeros(n)
        self.best_index = np.full(n, np.inf)
        self.recommendation = np.zeros((n, k), dtype=bool)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        if self.H is not None:
            self.exploration[rows] = self.eta * np.maximum(self.total_budget[rows] - self.num_arms, 0) / (4.0 * self.H)
        else:
            self.exploration[rows] = self.a
        self.best_index[rows] = np.inf

    def decide(self, obs: Obs) -> tuple[np.ndarray, np.ndarray]:
        counts, means, made, m = self.statistics(obs)
        beta = self.b * np.sqrt(self.exploration[:, None] / np.maximum(counts, 1.0))
        answer, set_index, pull = select_arm(means, beta, m)
        first = initial_round(made, self.num_arms)
        better = ~first & (set_index < self.best_index)
        self.best_index[better] = set_index[better]
        self.recommendation[better] = answer[better]
        waiting = np.isinf(self.best_index)  # nothing recorded yet: the m best empirical means
        if waiting.any():
            order = np.argsort(-means[waiting], axis=1, kind="stable")[:, :m]
            self.recommendation[waiting] = False
            self.recommendation[np.flatnonzero(waiting)[:, None], order] = True
        return np.where(first, made.astype(np.int64), pull), self.recommendation
