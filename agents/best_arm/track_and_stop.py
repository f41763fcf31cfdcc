r"""Track-and-Stop (Garivier and Kaufmann 2016): track the optimal allocation \(w^*(\hat\mu)\), stop by the GLR
rule; best-arm and top-m identification."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm import _stop, _stopping
from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.agents.best_arm._fixed_confidence import STATE_FIELDS, start
from bandit_gym.agents.best_arm._kernels import copy_step, each_copy, over_copies, play
from bandit_gym.agents.best_arm._oracle import best_arm_weights, top_m_weights
from bandit_gym.agents.best_arm._stopping import Stopping
from bandit_gym.jit import called, driver, kernel, parallel_kernel

#: the work rows: the empirical means, \(w^*(\hat\mu)\), scratch
MEANS, WEIGHTS, SCRATCH = range(3)
TRACKING = ("D", "C")
#: ``constants["tracking"]``: the index of the tracking in ``TRACKING``
D_TRACKING, C_TRACKING = range(len(TRACKING))


@called
def project(weights: np.ndarray, floor: float) -> None:
    r"""The \(L^\infty\) projection of ``weights`` (on the simplex) onto \(\{w : w_a \ge \text{floor}\}\):
    \(w_a \leftarrow \max(w_a - \eta, \text{floor})\) with \(\eta \ge 0\) the shift that keeps the sum 1
    (bisection)."""
    low, high = 0.0, 1.0
    for _ in range(60):
        eta = 0.5 * (low + high)
        total = 0.0
        for a in range(weights.shape[0]):
            total += max(weights[a] - eta, floor)
        if total > 1.0:
            low = eta
        else:
            high = eta
    for a in range(weights.shape[0]):
        weights[a] = max(weights[a] - high, floor)


@called
def best_arm_oracle(values: np.ndarray, m: int, family: int, sigma: float, weights: np.ndarray,
                    scratch: np.ndarray) -> None:
    r"""\(w^*\)(``values``) for \(m = 1\) (``_oracle.best_arm_weights``), in ``top_m_weights``' signature."""
    best_arm_weights(values, family, sigma, weights, scratch)


@driver
def tracking(oracle: Any, counts: np.ndarray, sums: np.ndarray, made: int, m: int, epsilon: float, constants: Any,
             state: Any, arrays: Any, work: np.ndarray, answer: np.ndarray) -> int:
    r"""Track-and-Stop's step with \(w^*\) from ``oracle`` (``top_m_weights`` or its \(m = 1\) form): each arm
    once; then stop (\(K\)) if the stopping rule does, else D- or C-tracking of \(w^*(\hat\mu(t))\) of answer
    size \(m\)."""
    k, mean = counts.shape[0], work[MEANS]
    arm = start(counts, sums, made, m, state, mean, work[SCRATCH], answer)
    if arm >= 0:
        return arm
    if _stop.stopped(counts, mean, answer, made, m, epsilon, constants):
        arm = k
    else:
        weights, t = work[WEIGHTS], np.float64(made)
        oracle(mean, m, constants["family"], constants["sigma"], weights, work[SCRATCH])
        sum_w = arrays["sum"]
        arm = -1
        if constants["tracking"] == D_TRACKING:
            floor = math.sqrt(t) - k / 2.0
            for a in range(k):  # forced exploration: the least pulled arm of \(U_t = \{a : N_a < \sqrt{t} - K/2\}\)
                if np.float64(counts[a]) < floor and (arm < 0 or counts[a] < counts[arm]):
                    arm = a
            if arm < 0:
                for a in range(k):
                    if arm < 0 or t * weights[a] - counts[a] > t * weights[arm] - counts[arm]:
                        arm = a
        else:  # C-tracking: the cumulated projected allocations
            project(weights, 0.5 / math.sqrt(k * k + t))
            for a in range(k):
                sum_w[a] += weights[a]
                if arm < 0 or sum_w[a] - counts[a] > sum_w[arm] - counts[arm]:
                    arm = a
    state["last_made"], state["last_arm"] = np.float64(made), np.float64(arm)
    return arm



@called
def track_and_stop(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
                   constants: Any, state: Any, arrays: Any, work: np.ndarray, answer: np.ndarray, final: bool) -> int:
    r"""Track-and-Stop's step for \(m = 1\) (the rule of ``BestArmAgent``; ``tracking`` with ``best_arm_oracle``),
    compiled apart from the top-m oracle, which a best-arm batch never reaches."""
    return tracking(best_arm_oracle, counts, sums, made, m, epsilon, constants, state, arrays, work, answer)


@called
def track_and_stop_top_m(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
                         constants: Any, state: Any, arrays: Any, work: np.ndarray, answer: np.ndarray,
                         final: bool) -> int:
    r"""Track-and-Stop's step for any \(m\) (``tracking`` with ``top_m_weights``)."""
    return tracking(top_m_weights, counts, sums, made, m, epsilon, constants, state, arrays, work, answer)


@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    r"""One ``act`` of Track-and-Stop (\(m = 1\)) for copy n (``_kernels.copy_step``)."""
    copy_step(track_and_stop, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    r"""One ``act`` of Track-and-Stop (\(m = 1\)) over a batch (``_kernels.each_copy``)."""
    return each_copy(track_and_stop, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    r"""Whole episodes of Track-and-Stop (\(m = 1\); ``_kernels.play``)."""
    play(track_and_stop, episodes)


@called
def top_m_one_copy(n: int, batch: tuple[Any, ...]) -> None:
    r"""One ``act`` of Track-and-Stop (any \(m\)) for copy n."""
    copy_step(track_and_stop_top_m, n, batch)


@kernel
def top_m_step(batch: tuple[Any, ...]) -> np.ndarray:
    r"""One ``act`` of Track-and-Stop (any \(m\)) over a batch (``_kernels.each_copy``)."""
    return each_copy(track_and_stop_top_m, batch)


@parallel_kernel
def parallel_top_m_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``top_m_step`` with the copies on all cores."""
    return over_copies(top_m_one_copy, batch)


@kernel
def top_m_rollout(episodes: tuple[Any, ...]) -> None:
    r"""Whole episodes of Track-and-Stop (any \(m\))."""
    play(track_and_stop_top_m, episodes)


class TrackAndStop(BestArmAgent):
    r"""Track-and-Stop: sample in the proportions \(w^*(\hat\mu(t))\) of the lower bound, stop by the GLR rule;
    best-arm (\(m = 1\)) and top-m identification (any \(m\), read from the env).

    Paper: A. Garivier, E. Kaufmann, Optimal Best Arm Identification with Fixed Confidence, COLT 2016 (GK 2016).
    Not one of the five papers: the reference algorithm of fixed-confidence best-arm identification since. Top m:
    the lower bound of E. Kaufmann, O. Cappé, A. Garivier, On the Complexity of Best-Arm Identification in
    Multi-Armed Bandit Models, JMLR 2016 (its general bound with \(\mathrm{Alt}(\mu)\) the instances whose \(m\)
    best arms differ), tracked by the same sampling rule: the general recipe of tracking the optimal allocation
    of the problem's lower bound (GK 2016 §3; R. Degenne, W. M. Koolen, Pure Exploration with Multiple Correct
    Answers, NeurIPS 2019).

    After \(t\) pulls, with \(w^*(\mu)\) the optimal allocation of answer size \(m\) at the empirical means
    (``bandit_gym.lower_bounds``: GK 2016 Theorem 5 for \(m = 1\), ``best_arm_allocation``; for \(m > 1\)
    \(\operatorname*{arg\,max}_{w \in \Sigma_K} \min_{i \in S, j \notin S}
    w_i d(\mu_i, m_{ij}) + w_j d(\mu_j, m_{ij})\),
    \(S\) the \(m\) largest means and \(m_{ij}\) the pair's \(w\)-weighted mean, ``top_m_allocation``):

    - **D-tracking** (§3.1, ``tracking="D"``, the default): with \(U_t = \{a : N_a(t) < \sqrt{t} - K/2\}\), pull
      \(\operatorname*{arg\,min}_{a \in U_t} N_a(t)\) if \(U_t\) is not empty (forced exploration), else
      \(\operatorname*{arg\,max}_a t w^*_a(\hat\mu(t)) - N_a(t)\);
    - **C-tracking** (``tracking="C"``): pull
      \(\operatorname*{arg\,max}_a \sum_{s \le t} w^{\epsilon_s}_a(\hat\mu(s)) - N_a(t)\), \(w^{\epsilon}\) the
      \(L^\infty\) projection of \(w^*\) onto \(\{w : w_a \ge \epsilon\}\), \(\epsilon_s = (K^2 + s)^{-1/2} / 2\).

    \(w^*\) is compiled (``_oracle``): for \(m = 1\) GK 2016 Theorem 5's root findings, to machine precision; for
    \(m > 1\) a barrier (interior-point) method on the max-min's homogeneous form \(\min \sum_a w_a\) subject to
    every pair's cost at least 1, with a fixed budget of Newton steps, within \(10^{-7}\) (relative) of
    ``top_m_allocation``'s \(T^*\) and \(w^*\) on its tests (about 0.04 ms a pull at \(K = 5\), 0.1 to 0.15 ms at
    \(K = 10\), 0.3 to 0.6 ms at \(K = 20\)).

    Stopping: by default the GLR (Chernoff) rule, \(\min_{i \in S, j \notin S} Z_{ij}(t) > \beta(t, \delta)\)
    with \(S\) the \(m\) largest empirical means, with GK 2016 Theorem 10's threshold \(\ln(2 t P / \delta)\)
    (\(P = m (K - m)\) pairs, \(K - 1\) for \(m = 1\)) on Bernoulli arms, Lattimore and Szepesvári's on Gaussian
    arms; any rule of the package's stopping components (``stopping``, ``threshold``: see
    ``bandit_gym.agents.best_arm._stopping``; GK 2016 §6 ran its experiments with ``threshold="heuristic"``,
    \(\ln((1 + \ln t) / \delta)\)). The answer is the \(m\) largest empirical means. Theorem 14: with D-tracking
    and a threshold \(\ln(C t^\alpha / \delta)\),
    \(\limsup_{\delta \to 0} \mathbb{E}[\tau] / \ln(1 / \delta) \le \alpha T^*(\mu)\): asymptotically optimal
    (\(m = 1\); its proof uses only the continuity of \(w^*\) at \(\mu\), which holds for \(m > 1\) where the
    maximiser is unique; Degenne and Koolen 2019 treat sets of maximisers).

    Parameters: ``delta`` in \((0, 1)\); ``tracking`` ``"D"`` or ``"C"``; ``distribution`` and ``sigma`` (the
    arms' family, whose divergence \(w^*\) and the GLR use); ``stopping``, ``threshold``. The JAX twin
    (``bandit_gym.jax``) stays best-arm identification only (\(m = 1\)).

    Readings where the papers are silent:

    - initialisation: each arm once, in the copy's arm order, with no stopping test (\(w^*\) needs a mean per
      arm; the authors' code does the same); C-tracking's cumulated sum then starts at those pulls (one per arm).
    - \(t\) is the number of pulls made; the allocation is recomputed at every pull (as in the paper).
    - ties (\(U_t\)'s least pulled arm, the \(\arg\max\), the empirical answer): the first in the copy's arm
      order (random per copy and episode; the smallest index with ``tie_break="index"``, see ``BestArmAgent``).
      When the \(m\)-th and \((m + 1)\)-th largest empirical means are equal (for \(m = 1\): several arms share
      the largest), \(w^*\) spreads evenly over the arms of that mean and the GLR statistic is 0; \(w^*\) itself
      depends on the means only, not on the arms' order.
    - the \(L^\infty\) projection: \(w_a \leftarrow \max(w_a - \eta, \epsilon)\), \(\eta\) the shift that keeps
      the sum 1 (one of the projections the paper allows).
    - Bernoulli means of 0 or 1 are clamped to \([10^{-9}, 1 - 10^{-9}]\) to compute \(w^*\) (``_oracle``).
    - the budget: the paper has no cap; on a fixed-confidence env the env's budget truncates the episode, with
      the empirical answer.

    Examples:
        One seeded episode on GK 2016's first instance, at \(\delta = 0.1\), and one of top-2 identification:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import TrackAndStop
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-v0", means=[0.5, 0.45, 0.43, 0.4], setting="fixed_confidence",
        ...                budget=100_000)
        >>> result = play_episode(env, TrackAndStop(delta=0.1), seed=0)
        >>> result["pulls"] < 100_000, result["error"]
        (True, 0.0)
        >>> env = gym.make("BestArmIdentification-v0", means=[0.6, 0.5, 0.4, 0.3, 0.2], m=2,
        ...                setting="fixed_confidence", budget=10**6)
        >>> play_episode(env, TrackAndStop(delta=0.1), seed=0)["answer"].tolist()
        [1, 1, 0, 0, 0]
    """

    families: ClassVar[tuple[str, ...]] = ("best_arm", "top_k")  # top-m: the \(m\) (= K) largest means
    constant_fields: ClassVar[tuple[str, ...]] = (*_stopping.FIELDS, "tracking")
    choice_fields: ClassVar[tuple[str, ...]] = ("tracking",)
    state_fields: ClassVar[tuple[str, ...]] = STATE_FIELDS
    anytime = True  # never reads the horizon: the env's budget is only a cap
    #: C-tracking's cumulated projected allocations
    array_fields: ClassVar[tuple[str, ...]] = ("sum",)

    def __init__(self, delta: float = 0.05, tracking: str = "D", *, stopping: str = "glr",
                 threshold: str | None = None, distribution: str = "bernoulli", sigma: float = 1.0,
                 tie_break: str = "random") -> None:
        self.tracking = check.choice("tracking", tracking, TRACKING)
        stopper = Stopping.component(type(self).__name__, delta, stopping, threshold, distribution, sigma)
        super().__init__(stopping=stopper, tie_break=tie_break)

    def params(self) -> dict[str, Any]:
        return {"tracking": self.tracking, **super().params()}

    kernels = EntryPoints(step, parallel_step, rollout)
    top_m_kernels = EntryPoints(top_m_step, parallel_top_m_step, top_m_rollout)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        super().begin(obs, rows)
        self.constants["tracking"][rows] = TRACKING.index(self.tracking)
        self.arrays["sum"][rows] = 1.0
