"""UCB-E (Audibert, Bubeck, Munos 2010) for best arm identification, a baseline of gabillon2012."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm._gap import BestArmAgent


class UCBEBestArm(BestArmAgent):
    """UCB-E, the highly exploring UCB of best arm identification.

    Paper: Audibert, Bubeck, Munos, COLT 2010; named ``UCBE(a)`` in gabillon2012 and a baseline of hoffman2014
    (the thresholding variant of tao2019 is :class:`bandit_gym.agents.UCBE`).

    Rule: ``I_t = argmax_i mu_hat_i + sqrt(a / T_i)``, ``+inf`` for an arm never pulled (so each arm is pulled
    once first). Output: the m arms of largest empirical mean (``argmax_i mu_hat_i`` for m = 1).

    Speed (not a deviation): only the pulled arm's index is recomputed and the argmax kept in a tournament tree,
    O(log K) per pull; for m = 1 the answer's argmax mean is kept the same way (``act`` and whole-episode
    rollouts alike).

    Parameters: ``a``, or the oracle ``H1 = sum_i 1 / Delta_i^2`` (from the true means; the best arm's gap is
    the second best's) with ``a = c (n - K) / H1`` set at each episode start, n read from the observation
    (``c = 25/36``: the largest a of the theorem ``e_n <= 2 n K exp(-2 a / 25)``; Audibert et al.'s experiments
    try several c). Deviations: none for m = 1.

    Readings where the paper is silent:

    - ties in the argmax (pulls and answer): the smallest index; fixed, no random option. The initial pulls
      (index +inf) therefore go in index order.
    - m > 1 (ours; UCB-E identifies one arm): the same pulls, and the answer is the m arms of largest empirical
      mean. epsilon is not used.
    - n <= K with H1 given: ``a = c max(n - K, 0) / H1``, so a = 0.
    - answer before the end: the m largest empirical means of the current statistics, an arm never pulled
      ranking last (ties: the smaller index); only the one after the n-th pull is scored. (The index that picks
      the pull gives such an arm +inf.)
    """

    oracle_parameters: ClassVar[tuple[str, ...]] = ("H1",)
    oracle_alternatives: ClassVar[tuple[str, ...]] = ("a",)
    rule = "UCBEBestArm"
    num_constants = 1  # a

    def __init__(self, a: float | None = None, H1: float | None = None, c: float = 25.0 / 36.0) -> None:
        if (a is None) == (H1 is None):
            raise ValueError("pass exactly one of a (exploration, > 0) and H1 (oracle complexity, > 0)")
        self.a = None if a is None else check.real("a", a, low=0.0, low_open=True)
        self.H1 = None if H1 is None else check.real("H1", H1, low=0.0, low_open=True)
        self.c = check.real("c", c, low=0.0, low_open=True)
        super().__init__(tie_break="index")

    def params(self) -> dict[str, object]:
        return {"a": self.a, "H1": self.H1, "c": self.c}

    @classmethod
    def is_anytime(cls, params: dict) -> bool:  # type: ignore[override]
        return params.get("a") is not None  # built from H1 (the oracle fills it), a reads the budget

    def state_size(self, k: int) -> int:
        from bandit_gym.agents.best_arm._kernels import tree_size

        return 5 + 2 * tree_size(k)  # see the rule (_kernels.ucbe): the last call, the answer, two trees

    @property
    def exploration(self) -> np.ndarray:
        """Per copy, the exploration parameter a of the current episode."""
        return self.constants[:, 0]

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        if self.H1 is not None:
            self.constants[rows, 0] = self.c * np.maximum(self.total_budget[rows] - self.num_arms, 0) / self.H1
        else:
            self.constants[rows, 0] = self.a
