"""AdaptiveTopK (chen2017, Algorithm 1), fixed confidence and its fixed-budget conversion."""

from __future__ import annotations

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.top_k._rounds import ACCEPTED, ACTIVE, RoundAgent, top_of

FORMS = ("fixed_budget", "pac")


def round_size(r: np.ndarray, n: int, delta: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """``m_r = ceil(scale 4^r ln(2 n r^2 / delta))``, the pulls of each surviving arm in round r (Claim 1:
    ``scale = 1``), per copy."""
    r = np.asarray(r, dtype=np.float64)
    return np.ceil(scale * 4.0**r * np.log(2.0 * n * r * r / np.asarray(delta))).astype(np.int64)


class AdaptiveTopK(RoundAgent):
    """Adaptive top-K: rounds of uniform sampling of the surviving arms at accuracy ``2^-r``, accepting and
    rejecting every arm whose empirical gap is clear.

    Paper: chen2017, Algorithm 1 and §3 (ALGORITHMS.md §D.2-D.3).

    Round r: every arm of S gets ``m_r = ceil(4^r ln(2 n r^2 / delta))`` fresh pulls, with means
    ``theta~_i``; then, while an arm is clear, with ``k' = K - |A|``, ``theta~_a`` / ``theta~_b`` the
    (k'+1)-th / k'-th largest theta~ over S and ``Delta~_i = max(theta~_i - theta~_a, theta~_b - theta~_i)``:
    if ``max_S Delta~ <= 2 2^-r`` the round ends; else the arm x of largest Delta~ (ties: smallest index)
    leaves S, accepted if ``theta~_x > theta~_a``, else rejected (theta~_a, theta~_b recomputed after every
    removal). Guards: ``k' = 0`` ends (answer A); ``|S| <= k'`` accepts all of S and ends.

    ``form="fixed_budget"`` (default; the paper's experiments): no epsilon test, rounds go on until the budget
    runs out (a round cut short by the budget decides nothing); the answer is A plus the ``K - |A|`` arms of S of
    largest mean over all their samples (ALGORITHMS.md §D.3 option (a)); budget left unused when the guards end
    it early (the agent stops). ``form="pac"``: rounds go on while ``2 2^-r (K - |A|) > epsilon K`` (epsilon
    from the observation); then A plus the ``K - |A|`` arms of S of largest last-round theta~; the budget is only
    a cap.

    Parameters: ``delta`` (None: the observation's delta), ``pooled=False`` (True: theta~ over all samples so
    far instead of the round's fresh ones, ALGORITHMS.md §D.2 UNSURE), ``form``, ``scale = 1`` (ours: rounds of
    ``ceil(scale 4^r ln(2 n r^2 / delta))`` pulls; below 1 the guarantee of Claim 1 is lost).

    At chen2017's scale (n = 1000, delta = 0.01) round 1 costs 49 n pulls and decides nothing (no empirical gap
    exceeds its threshold 2 2^-1 = 1), round 2 costs 218 n more: at budgets up to 267 n the agent is a uniform
    allocation (the answer ranks arms by all their samples), and the inner loop first removes arms in round 3
    (threshold 1/4), after about 1.2 million pulls. Deviations: the answer
    submitted before the end is A plus the best of S by all samples. The inner loop runs over S sorted once per
    round: the arm of largest Delta~ is always the largest or the smallest theta~ of S.
    """

    def __init__(self, delta: float | None = None, pooled: bool = False, form: str = "fixed_budget",
                 scale: float = 1.0) -> None:
        self.delta = None if delta is None else check.real("delta", delta, low=0.0, high=1.0, low_open=True,
                                                           high_open=True)
        if not isinstance(pooled, (bool, np.bool_)):
            raise TypeError(f"pooled must be True or False, got {pooled!r}")
        self.pooled = bool(pooled)
        self.form = check.choice("form", form, FORMS)
        self.scale = check.real("scale", scale, low=0.0, low_open=True)
        super().__init__(tie_break="index")

    def params(self) -> dict[str, object]:
        return {"delta": self.delta, "pooled": self.pooled, "form": self.form, "scale": self.scale}

    def allocate(self, n: int, k: int) -> None:
        super().allocate(n, k)
        self.start_counts = np.zeros((n, k))
        self.start_sums = np.zeros((n, k))
        self.last_theta = np.zeros((n, k))
        self.confidence = np.zeros(n)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        super().begin(obs, rows)
        self.confidence[rows] = obs["delta"][rows, 0] if self.delta is None else self.delta

    def end_round(self, obs: Obs, rows: np.ndarray) -> None:
        from bandit_gym.agents.top_k._kernels import accept_reject

        k = int(obs["m"][0, 0])
        counts, sums = obs["counts"][rows].astype(np.float64), obs["sums"][rows].astype(np.float64)
        r = self.round[rows]
        played = r > 0
        if played.any():  # the accept / reject loop of the round just completed
            p = rows[played]
            fresh_counts = counts[played] - (0.0 if self.pooled else self.start_counts[p])
            fresh_sums = sums[played] - (0.0 if self.pooled else self.start_sums[p])
            theta = np.where(self.status[p] == ACTIVE, fresh_sums / np.maximum(fresh_counts, 1.0), 0.0)
            self.last_theta[p] = theta
            accept_reject(theta, self.status, p, k, 2.0 * 2.0 ** -r[played].astype(np.float64))
        left = k - (self.status[rows] == ACCEPTED).sum(axis=1)
        active = (self.status[rows] == ACTIVE).sum(axis=1)
        done = (left <= 0) | (active <= left)
        if self.form == "pac":  # the outer loop: go on while 2 2^-r (K - |A|) > epsilon K
            done |= played & (2.0 * 2.0 ** -r.astype(np.float64) * left <= obs["epsilon"][rows, 0] * k)
        self.finished[rows[done]] = True
        go = rows[~done]
        if go.size:
            self.round[go] += 1
            sizes = round_size(self.round[go], self.num_arms, self.confidence[go], self.scale)
            self.start_counts[go], self.start_sums[go] = counts[~done], sums[~done]
            self.target[go] = np.where(self.status[go] == ACTIVE, counts[~done] + sizes[:, None], 0)

    def answer(self, obs: Obs) -> np.ndarray:
        k = int(obs["m"][0, 0])
        accepted = self.status == ACCEPTED
        active = self.status == ACTIVE
        means = obs["sums"] / np.maximum(obs["counts"], 1.0)
        values = np.where((self.form == "pac") & self.finished[:, None], self.last_theta, means)
        return accepted | top_of(values, active, k - accepted.sum(axis=1))
