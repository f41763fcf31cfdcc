"""Opt-KG, the optimistic knowledge-gradient policy (Chen, Lin, Zhou 2015), a tao2019 baseline."""

from __future__ import annotations

import numpy as np
from scipy import special

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.thresholding._index import IndexAgent


def log_c(a: np.ndarray, b: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``log c(a, b) = a ln theta + b ln(1 - theta) - ln B(a, b)``, the Beta(a, b) density at theta times theta
    (1 - theta) / ... such that ``I(a+1, b) = I(a, b) + c / a`` and ``I(a, b+1) = I(a, b) - c / b``."""
    return special.xlogy(a, theta) + special.xlog1py(b, -theta) - special.betaln(a, b)


def log_optimistic_gain(a: np.ndarray, b: np.ndarray, p: np.ndarray, logc: np.ndarray) -> np.ndarray:
    """``log R+(a, b)`` from ``p = I(a, b) = P(vartheta >= theta | Beta(a, b))`` and ``log c(a, b)``.

    With ``delta1 = c / a`` and ``delta2 = c / b`` (the exact increments of I) and ``h(x) = max(x, 1 - x)``::

        R1 = h(I + delta1) - h(I),   R2 = h(I - delta2) - h(I),   R+ = max(R1, R2)

    Away from the crossing of 1/2, ``R+`` is ``delta1`` (I > 1/2), ``delta2`` (I < 1/2) or their maximum
    (I = 1/2), whose logarithms are exact even where ``c`` underflows (counts of 10^4 give ``c`` near
    ``2^-20000``); at a crossing the deltas are not negligible and ``R+`` is evaluated directly.
    """
    log_d1, log_d2 = logc - np.log(a), logc - np.log(b)
    d1, d2 = np.exp(log_d1), np.exp(log_d2)
    above, below = p > 0.5, p < 0.5
    log_gain = np.where(above, log_d1, np.where(below, log_d2, np.maximum(log_d1, log_d2)))
    crossing = (above & (p - d2 < 0.5)) | (below & (p + d1 > 0.5))
    if np.any(crossing):
        pc, e1, e2 = p[crossing], d1[crossing], d2[crossing]
        h = np.maximum(pc, 1.0 - pc)
        r1 = np.maximum(pc + e1, 1.0 - pc - e1) - h
        r2 = np.maximum(pc - e2, 1.0 - pc + e2) - h
        log_gain[crossing] = np.log(np.maximum(r1, r2))
    return log_gain


class OptKG(IndexAgent):
    """Optimistic knowledge gradient for Bernoulli arms with Beta priors.

    Paper: X. Chen, Q. Lin, D. Zhou, JMLR 16 (2015); baseline of tao2019 §5 (ALGORITHMS.md §A.7).

    State: posterior ``Beta(a_i, b_i)`` with ``a_i = a0 + #ones``, ``b_i = b0 + #zeros``. Rule::

        i_t = argmax_i R+(a_i, b_i),   R+ = max( h(I(a+1, b)) - h(I(a, b)),  h(I(a, b+1)) - h(I(a, b)) )

    with ``I(a, b) = P(vartheta >= theta)`` under ``Beta(a, b)`` and ``h(x) = max(x, 1 - x)``; compared on
    ``log R+`` (see :func:`log_optimistic_gain`) so that Setups 2-3 do not underflow into index-order ties.
    Answer (Bayes decision): ``d_i = 1{I(a_i, b_i) >= 1/2}``; for theta = 1/2 that is ``a_i >= b_i``.

    Parameters: prior ``(a0, b0)``; tao2019 uses (1, 1) and (0.5, 0.5). Anytime. Bernoulli arms only (the
    observation's sums must count ones). No initial pulls (the original starts from the prior; UNSURE whether
    tao2019 added them). Ties: the agent's tie rule (random order by default; the third-party code keeps the
    first maximiser, ``tie_break="index"``).
    """

    init_pulls = False

    def __init__(self, a0: float = 1.0, b0: float = 1.0, *, tie_break: str = "random") -> None:
        self.a0 = check.real("a0", a0, low=0.0, low_open=True)
        self.b0 = check.real("b0", b0, low=0.0, low_open=True)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, object]:
        return {"a0": self.a0, "b0": self.b0, **super().params()}

    def allocate(self, n: int, k: int) -> None:
        super().allocate(n, k)
        self.p = np.zeros((n, k))      # I(a_i, b_i) = P(vartheta_i >= theta)
        self.logc = np.zeros((n, k))   # log c(a_i, b_i)

    def arm_index(
        self, counts: np.ndarray, sums: np.ndarray, theta: np.ndarray, rows: np.ndarray | slice
    ) -> np.ndarray:
        """Exact state from the counts (episode start, or after a batched allocation), and its index."""
        a, b = self.a0 + sums, self.b0 + counts - sums
        p, logc = special.betaincc(a, b, theta), log_c(a, b, theta)
        self.p[rows], self.logc[rows] = p, logc
        return -log_optimistic_gain(a, b, p, logc)  # the base class pulls the smallest index

    def update(self, obs: Obs) -> None:
        """O(1) per copy: the exact recurrences ``I(a+1, b) = I + c/a``, ``c(a+1, b) = c theta (a+b)/a`` (and
        their mirror for a 0), applied to the arm pulled last, whose outcome is the observation's
        ``last_value``. Where I lands within 1e-9 of 1/2, where its rounding could matter, it is recomputed
        exactly with ``scipy.special.betaincc``."""
        rows, arms = self.moved, self.last_arms
        theta = obs["threshold"][rows, 0].astype(np.float64)
        one = obs["last_value"][rows, 0] > 0.5
        a = self.a0 + self.last_sums                                    # after the update
        b = self.b0 + self.last_counts - self.last_sums
        a_prev, b_prev = np.where(one, a - 1.0, a), np.where(one, b, b - 1.0)
        flat = self._offsets[rows] + arms
        p_flat, logc_flat = self.p.reshape(-1), self.logc.reshape(-1)
        p, logc = p_flat.take(flat), logc_flat.take(flat)
        step = np.exp(logc - np.log(np.where(one, a_prev, b_prev)))
        p = np.where(one, p + step, p - step)
        logc = logc + np.where(one, np.log(theta) - np.log(a_prev), np.log1p(-theta) - np.log(b_prev))
        logc += np.log(a_prev + b_prev)
        near = np.abs(p - 0.5) < 1e-9
        if near.any():
            p[near] = special.betaincc(a[near], b[near], theta[near])
        p_flat[flat], logc_flat[flat] = p, logc
        self.index.set_arms(rows, arms, -log_optimistic_gain(a, b, p, logc))

    def answer_rows(self, obs: Obs, rows: np.ndarray) -> np.ndarray:
        """Bayes decision ``1{I(a_i, b_i) >= 1/2}`` from the maintained posterior tail probabilities."""
        return self.p[rows] >= 0.5

    def answer_last(self, obs: Obs) -> np.ndarray:
        return np.ravel(self.p).take(self._offsets[self.moved] + self.last_arms) >= 0.5
