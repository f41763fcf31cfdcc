r"""Track-and-Stop for the thresholding bandit at fixed confidence: D-tracking of the closed-form optimal allocation
\(w^*(\hat\mu)\), stopped by the per-arm GLR rule."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents.base import Agent
from bandit_gym.agents.thresholding._base import ThresholdingAgent
from bandit_gym.agents.thresholding._glr import ArmStop, glr_step
from bandit_gym.jit import called, kernel, parallel_kernel


@called
def d_tracking(n: int, pulls: float, param: float, theta: float, level: float, threshold: int,
               counts: np.ndarray, sums: np.ndarray, cost: np.ndarray, beta: np.ndarray, last: np.ndarray,
               arm_at: np.ndarray, position_of: np.ndarray) -> int:
    r"""Garivier and Kaufmann (2016, §3.1)'s D-tracking of \(w^*_i\) proportional to \(1 / c_i\) in copy \(n\): the
    least pulled arm of \(U_t = \{i : N_i < \sqrt{t} - K / 2\}\) if \(U_t\) is not empty, else
    \(\operatorname*{arg\,max}_i (t\, w^*_i - N_i)\), ties to the first in the copy's arm order. Arms of cost 0 (a
    mean at \(\theta\), \(\epsilon = 0\)) share all the weight;
    arms of infinite cost (never wrong) get none; if every arm has infinite cost the weights are uniform."""
    k = counts.shape[1]
    floor = math.sqrt(pulls) - k / 2.0
    best = -1
    for p in range(k):
        i = arm_at[n, p]
        if np.float64(counts[n, i]) < floor and (best < 0 or counts[n, i] < counts[n, arm_at[n, best]]):
            best = p
    if best >= 0:
        return arm_at[n, best]
    zeros, total = 0, 0.0
    for i in range(k):
        if cost[n, i] == 0.0:
            zeros += 1
        elif cost[n, i] < math.inf:
            total += 1.0 / cost[n, i]
    arm, gap = -1, -math.inf
    for p in range(k):
        i = arm_at[n, p]
        c = cost[n, i]
        if zeros > 0:
            w = 1.0 / zeros if c == 0.0 else 0.0
        elif total > 0.0:
            w = (1.0 / c) / total if c < math.inf else 0.0
        else:
            w = 1.0 / k
        value = pulls * w - np.float64(counts[n, i])
        if value > gap:
            arm, gap = i, value
    return arm


@kernel
def step(args: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of ThresholdingTaS over a batch (``_glr.glr_step``)."""
    return glr_step(d_tracking, args)


@parallel_kernel
def parallel_step(args: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return glr_step(d_tracking, args)


class ThresholdingTaS(ThresholdingAgent):
    r"""Track-and-Stop for the thresholding bandit: track the optimal allocation \(w^*(\hat\mu)\), stop by the
    per-arm GLR rule.

    Paper: A. Garivier, E. Kaufmann, Optimal Best Arm Identification with Fixed Confidence, COLT 2016 (GK 2016):
    its sampling rule (D-tracking, §3.1) and stopping principle (a GLR statistic against the instances that
    contradict the answer, §3.2) applied to the thresholding bandit, whose optimal allocation is in closed form.
    Garivier, Ménard and Rossi (Thresholding Bandit for Dose-ranging: The Impact of Monotonicity, 2017) analyse
    the fixed-confidence thresholding bandit (a lower bound for every \(\delta\)-correct algorithm and an algorithm
    of the same order); Degenne, Koolen and Ménard (Non-asymptotic pure exploration by solving games, NeurIPS 2019)
    give sampling rules for any pure exploration query, and Degenne and Koolen (Pure exploration with multiple
    correct answers, NeurIPS 2019) the lower bound of problems with several correct answers, which the indifference
    zone makes this one. Of these three only the abstracts could be read when this was written: no equation of
    theirs is cited, and the rule below is GK 2016's as the package's best-arm ``TrackAndStop`` implements it. The
    "mixture" thresholds follow Kaufmann and Koolen (Mixture martingales revisited, JMLR 2021; their method, not a
    printed threshold).

    The optimal allocation (``bandit_gym.lower_bounds.thresholding_allocation``): with the env's \(\theta\) and
    \(\epsilon\), arm \(i\)'s cost per pull is

    $$
    c_i(m) = \max\big(d(m_i, \theta - \epsilon)\, \mathbb{1}\{m_i > \theta - \epsilon\},\
    d(m_i, \theta + \epsilon)\, \mathbb{1}\{m_i < \theta + \epsilon\}\big)
    $$

    (\(d(m_i, \theta)\) at \(\epsilon = 0\)), \(T^*(\mu) = \sum_i 1 / c_i(\mu)\) and
    \(w^*_i(\mu) = (1 / c_i(\mu)) / \sum_j 1 / c_j(\mu)\). After \(t\) pulls, at the empirical means \(m(t)\):

    - **D-tracking** (GK 2016 §3.1): with \(U_t = \{i : N_i(t) < \sqrt{t} - K/2\}\), pull
      \(\operatorname*{arg\,min}_{i \in U_t} N_i(t)\) if \(U_t\) is not empty (forced exploration), else
      \(\operatorname*{arg\,max}_i \big(t\, w^*_i(m(t)) - N_i(t)\big)\);
    - **stop** (the per-arm GLR rule, ``agents/thresholding/_glr.py``): arm \(i\)'s statistic is
      \(Z_i = N_i\, d(m_i, \theta - \epsilon)\) when answered above (0 if \(m_i \le \theta - \epsilon\)) and
      \(N_i\, d(m_i, \theta + \epsilon)\) when answered below (0 if \(m_i \ge \theta + \epsilon\)), each arm
      answered on the side of the larger statistic (the empirical answer \(\mathbb{1}\{m_i \ge \theta\}\) at
      \(\epsilon = 0\)); stop when \(Z_i > \beta_i\) for every arm, and answer each arm's side.

    Thresholds (``threshold``), each \(\delta\)-correct whatever the sampling rule but the last:

    - ``"mixture"`` (default): \(\beta_i = b(N_i)\), one arm's mixture-martingale boundary at level
      \(\ln(K / \delta)\) (``arm_mixture_boundary`` of ``agents/best_arm/_stopping.py``; Bernoulli
      \(\ln(K / \delta) + \ln(N_i) / 2 + \ln 2\), Gaussian
      \(\big(\ln(K / \delta) + \ln(1 + N_i) / 2\big)(1 + N_i) / N_i\)). Proof: a wrong answer for arm \(i\) puts
      \(\mu_i\) in that answer's wrong set, so \(N_i\, d(m_i, \mu_i) \ge Z_i > b(N_i)\) and the arm's mixture martingale
      exceeds \(K / \delta\): probability at most \(\delta / K\) at any time (Ville's inequality); a union over the
      \(K\) arms gives \(\delta\).
    - ``"union"``: \(\beta_i = \ln\big(K N_i (N_i + 1) / \delta\big)\). Proof: a wrong answer for arm \(i\) needs,
      at \(n = N_i\), \(n\, d(m_{i,n}, \mu_i) > \ln\big(K n (n + 1) / \delta\big)\) with the deviation on the one
      side where its answer can be wrong; Chernoff's bound gives each \(n\) probability at most
      \(\delta / \big(K n (n + 1)\big)\), which sums to \(\delta / K\) over \(n\); a union over the \(K\) arms gives
      \(\delta\).
    - ``"heuristic"``: \(\beta = \ln\big((1 + \ln t) / \delta\big)\), GK 2016 §6's experimental threshold,
      **outside the theory** (no proof of \(\delta\)-correctness).

    Optimality: not proved here. GK 2016 Theorem 14 proves D-tracking with a GLR stop at threshold
    \(\ln(C t^\alpha / \delta)\) asymptotically optimal for best-arm identification; its argument
    (\(w^*(m(t)) \to w^*(\mu)\), \(N_i(t) / t \to w^*_i\), the stop once \(t / T^*(\mu)\) exceeds the thresholds)
    is what makes this rule expected to reach \(\mathbb{E}[\tau_\delta] / \ln(1 / \delta) \to T^*(\mu)\), the lower
    bound's rate (tested: the tracking converges to \(w^*\); the rate itself is not).

    Parameters: \(\delta \in (0, 1)\) (``delta``, default 0.05); ``threshold`` (default ``"mixture"``);
    ``distribution`` (``"bernoulli"``, default, or ``"gaussian"``) and ``sigma``: the arms' family, whose
    divergence \(w^*\) and the statistics use (the env's arms are checked against it). Deviations: with
    \(\epsilon > 0\) each arm takes the side of the larger statistic, not always \(\mathbb{1}\{m_i \ge \theta\}\)
    (they differ only for Bernoulli means near 0 or 1).

    Readings where the papers are silent:

    - initialisation: each arm once, in the copy's arm order, with no stop (\(w^*\) and the statistics need a mean
      per arm); the forced exploration then starts at \(t = K\).
    - \(t\) is the number of pulls made (the sum of the counts); \(w^*\) is recomputed at every pull.
    - ties (\(U_t\)'s least pulled arm, the \(\operatorname{arg\,max}\)): the first in the copy's arm order (random per
      copy and episode; the smallest index with ``tie_break="index"``).
    - an empirical mean at \(\theta\) with \(\epsilon = 0\) has cost 0 (\(w^*\) puts all its weight on such arms:
      the limit of \(1 / c_i\)); a Bernoulli side whose wrong set holds no mean inside \((0, 1)\) has infinite cost
      (no weight, and the arm is certified at its first pull).
    - the budget: the papers have none. On a fixed-confidence env the budget is a cap that truncates the episode
      (the answer at the cap is scored); on a fixed-budget env the agent plays the same rule with the budget as
      its cap (it stops early when confident, and the env scores the stop), which the observation cannot tell
      apart.

    Examples:
        One seeded episode on four Bernoulli arms at \(\delta = 0.05\): the answer is right after 705 pulls, where
        \(T^*(\mu) \ln(1 / \delta)\) is about 330 (the "mixture" threshold, about
        \(\ln(K / \delta) + \ln(N_i) / 2 + \ln 2 = 8\) at these counts, is far above \(\ln(1 / \delta) = 3\) at this
        \(\delta\)):

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import ThresholdingTaS
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("ThresholdingBandit-v0", means=[0.2, 0.4, 0.6, 0.8], threshold=0.5,
        ...                setting="fixed_confidence", budget=100_000)
        >>> result = play_episode(env, ThresholdingTaS(delta=0.05), seed=0)
        >>> result["pulls"], result["error"]
        (705, 0.0)
    """

    anytime = True  # never reads the horizon: the env's budget is only a cap
    kernels = EntryPoints(step, parallel_step, None)
    #: no compiled rollout (``Agent``'s: None): the rule is played step by step
    compiled_rollout = Agent.compiled_rollout

    def __init__(self, delta: float = 0.05, *, threshold: str = "mixture", distribution: str = "bernoulli",
                 sigma: float = 1.0, tie_break: str = "random") -> None:
        super().__init__(stopper=ArmStop.component(delta, threshold, distribution, sigma), tie_break=tie_break)
