"""The base class of the best-arm agents, and UGapE's SELECT-ARM (gabillon2012 §3, Fig. 2) for hand-made
statistics."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from bandit_gym.agents.base import Agent, Obs


class BestArmAgent(Agent):
    """Base of the (epsilon, m)-best-arm agents. Each agent is a compiled *rule* (see
    :mod:`bandit_gym.agents.best_arm._kernels`) that decides one step of one copy from its statistics, its
    per-copy ``constants`` and ``state`` (arrays with a leading copy axis, set by :meth:`begin`); :meth:`act` runs
    it over the batch in one compiled pass, and :meth:`compiled_rollout` plays whole episodes with it."""

    families: ClassVar[tuple[str, ...]] = ("best_arm",)
    #: name of the agent's rule in ``_kernels.RULES``
    rule: ClassVar[str] = ""
    #: per-copy constants of the rule
    num_constants: ClassVar[int] = 0

    def state_size(self, k: int) -> int:
        """Floats of per-copy state the rule keeps for K arms."""
        return 0

    def allocate(self, n: int, k: int) -> None:
        from bandit_gym.agents.best_arm._kernels import WORK_ROWS

        self.constants = np.zeros((n, max(self.num_constants, 1)))
        self.state = np.zeros((n, max(self.state_size(k), 1)))
        self.work = np.zeros((n, WORK_ROWS, k))

    def check_m(self, m: int) -> None:
        """Raise if the agent cannot return m arms."""

    def _act_batch(self, obs: Obs, last: np.ndarray, family: str) -> np.ndarray:
        from bandit_gym.agents.best_arm import _kernels

        self.check_m(int(obs["m"][0, 0]))
        step = _kernels.decide_step(_kernels.RULES[self.rule])
        return step(obs["m"], obs["epsilon"], obs["budget_left"], self.total_budget, obs["counts"], obs["sums"],
                    self.constants, self.state, self.work, self._action)

    def compiled_rollout(self, obs: Obs) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
        from bandit_gym.agents.best_arm import _kernels

        batch = self._start_all(obs)
        self.check_m(int(batch["m"][0, 0]))
        return _kernels.decide_rollout(_kernels.RULES[self.rule]), (self.constants, self.state, self.work)


def select_arm(means: np.ndarray, beta: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SELECT-ARM(t) from given empirical means and widths ``(N, K)``, for every row::

        U_k = mu_hat_k + beta_k,   L_k = mu_hat_k - beta_k,   B_k = max^m_{i != k} U_i - L_k
        J = the m arms of smallest B (ties: smallest index),   B_J = max_{k in J} B_k
        u = argmax_{j not in J} U_j,   l = argmin_{i in J} L_i   (ties: largest beta, then smallest index)
        I = argmax_{k in {l, u}} beta_k   (a tie pulls l)

    The compiled rule UGapEb and UGapEc run (``_kernels.gap_select``). Returns ``(J as bits (N, K), B_J (N,),
    I (N,))``.

    Readings where gabillon2012 (Fig. 2, §3) is silent: the paper breaks ties in u and l in favour of the
    largest beta and says no more; the further tie on beta goes to the smallest index. It gives no tie rule for
    J (the m smallest B) nor for I when ``beta_l = beta_u``: J takes the smallest indices among equal B, and I
    pulls l. ``max^m_{i != k} U_i`` is computed as the (m+1)-th largest U when k is among the m largest, the
    m-th otherwise; its value does not depend on how ties in U are ranked."""
    from bandit_gym.agents.best_arm._kernels import select_arm_rows

    means, beta = np.atleast_2d(np.asarray(means, np.float64)), np.atleast_2d(np.asarray(beta, np.float64))
    n = means.shape[0]
    bits, set_index, pull = np.zeros(means.shape, dtype=bool), np.zeros(n), np.zeros(n, dtype=np.int64)
    select_arm_rows(means, beta, int(m), bits, set_index, pull)
    return bits, set_index, pull
