r"""The per-arm GLR stop of the thresholding bandit at fixed confidence, a component of its sampling rules
(``ThresholdingTaS``, ``ThresholdingUniform``, ``ThresholdingRacing``, ``ThresholdingAPT``: a
``ThresholdingAgent`` whose ``stopper`` it is), its per-copy state (``Certificates``), and the compiled step they
share (numba).

The problem. Arm \(i\) must be answered \(\mathbb{1}\{\mu_i \ge \theta\}\) unless
\(\lvert \mu_i - \theta \rvert < \epsilon\) (the env's indifference zone, ``bandit_gym.metrics.counted_arms``:
such an arm may be answered either way). The answer "above" is therefore wrong exactly on the means
\(\lambda_i \le \theta - \epsilon\) (\(\lambda_i < \theta\) at \(\epsilon = 0\)), and "below" exactly on
\(\lambda_i \ge \theta + \epsilon\).

The statistic. After \(N_i\) pulls of arm \(i\) with empirical mean \(m_i\), the generalised likelihood ratio of an
answer against its wrong set is the least \(N_i\, d(m_i, \lambda)\) over that set (\(d\) the divergence of the arms'
family):

$$
\begin{aligned}
Z_i(\text{above}) &= N_i\, d(m_i, \theta - \epsilon) \text{ if } m_i > \theta - \epsilon, \text{ else } 0, \\
Z_i(\text{below}) &= N_i\, d(m_i, \theta + \epsilon) \text{ if } m_i < \theta + \epsilon, \text{ else } 0
\end{aligned}
$$

(\(d(m, \cdot)\) grows away from \(m\), so the infimum over a half-line not holding \(m\) is at its end). The rule
answers each arm with the side of the larger statistic, \(Z_i = \max(Z_i(\text{above}), Z_i(\text{below}))\),
"above" on a tie (both 0, at \(m_i = \theta\) with \(\epsilon = 0\)): at \(\epsilon = 0\) that is the empirical
answer \(\mathbb{1}\{m_i \ge \theta\}\); with \(\epsilon > 0\) it is too for Gaussian arms and for Bernoulli arms
away from 0 and 1 (the divergence of Bernoulli laws is not symmetric: near 1 a mean just above \(\theta\) may be
certified "below" sooner). A Bernoulli side whose wrong set holds no mean inside \((0, 1)\)
(\(\theta - \epsilon \le 0\), \(\theta + \epsilon \ge 1\)) is never wrong: its statistic is infinite once the arm is
pulled. An arm never pulled has \(Z_i = 0\). \(Z_i / N_i\) is the arm's cost \(c_i(m)\) of
``bandit_gym.lower_bounds.thresholding_allocation``, whose \(w^*_i\) is proportional to \(1 / c_i\).

The stop. Stop when every arm's statistic exceeds its threshold, \(Z_i > \beta_i\), and answer each arm's side.
Thresholds (``threshold``), with \(K\) arms and confidence \(\delta\):

- ``"mixture"`` (the default): \(\beta_i = b(N_i)\), the one-arm boundary of a mixture martingale at level
  \(\ln(K / \delta)\) (``bandit_gym.divergences.mixture_boundary([N_i], ln(K / delta), family)``, compiled as
  ``agents/best_arm/_stopping.arm_mixture_boundary``): Bernoulli arms \(\ln(K / \delta) + \ln(N_i) / 2 + \ln 2\),
  Gaussian arms \(\big(\ln(K / \delta) + \ln(1 + N_i) / 2\big) (1 + N_i) / N_i\). *Proof.* If the answer of arm
  \(i\) is wrong, \(\mu_i\) lies in that answer's wrong set, so \(N_i\, d(m_i, \mu_i) \ge Z_i > b(N_i)\); the arm's
  mixture martingale (a nonnegative martingale of mean 1 in its own samples, whatever the sampling rule; Kaufmann
  and Koolen 2021's method) then exceeds \(K / \delta\), which by Ville's inequality happens at some time with
  probability at most \(\delta / K\). A union over the \(K\) arms: the stopped answer is wrong with probability at
  most \(\delta\). The bound is uniform over time, so it holds at any stopping time, and at the time an arm is
  first certified (racing).
- ``"union"``: \(\beta_i = \ln\big(K N_i (N_i + 1) / \delta\big)\). *Proof.* Fix arm \(i\), its true mean and so
  the one side on which its answer can be wrong (none inside the zone); a wrong answer needs the empirical mean of
  its first \(n\) samples to deviate towards that side with
  \(n\, d(m_{i,n}, \mu_i) \ge Z_i > \ln\big(K n (n + 1) / \delta\big)\) for \(n = N_i\). Chernoff's bound gives
  each \(n\) probability at most \(\delta / \big(K n (n + 1)\big)\) (one tail of a one-parameter exponential
  family: \(P\big(n\, d(m_n, \mu) \ge x,\ m_n > \mu\big) \le e^{-x}\)), and \(\sum_n 1 / \big(n (n + 1)\big) = 1\):
  at most \(\delta / K\) per arm, \(\delta\) over the \(K\) arms, uniformly over time. Never below ``"mixture"``
  on Bernoulli arms (\(2 \ln N_i\) against \(\ln(N_i) / 2 + \ln 2\)).
- ``"heuristic"``: \(\beta = \ln\big((1 + \ln t) / \delta\big)\), \(t\) the pulls made: Garivier and Kaufmann
  (2016, §6)'s choice for their experiments, **outside the theory** (no proof of \(\delta\)-correctness).

For Bernoulli arms the ``"mixture"`` and ``"union"`` proofs hold for any arms with values in \([0, 1]\) (the
Bernoulli likelihood ratio is a supermartingale for them, by convexity), but the component, like the best-arm
ones, accepts only the arms of its family (``check_arms``).

Readings. \(\theta\) and \(\epsilon\) are read from the float32 observation: an arm whose mean lies within float32
rounding (about \(6 \times 10^{-8}\) relative) of \(\theta \pm \epsilon\) may be judged on the wrong side of it.
\(t\), the pulls made, is the sum of the counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numba
import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm import _stopping
from bandit_gym.agents.best_arm._stopping import arm_mixture_boundary, check_arms
from bandit_gym.agents.scores import ArmScores
from bandit_gym.jit import called, driver

THRESHOLDS = ("mixture", "union", "heuristic")
DISTRIBUTIONS = _stopping.DISTRIBUTIONS
#: the threshold as the compiled step names it (its index in ``THRESHOLDS``)
MIXTURE, UNION, HEURISTIC = range(len(THRESHOLDS))
#: the arms' family as the compiled step names it (``_stopping``'s)
BERNOULLI, GAUSSIAN = _stopping.BERNOULLI, _stopping.GAUSSIAN


@dataclass(frozen=True)
class ArmStop:
    """The per-arm GLR stop of a thresholding sampling rule: confidence ``delta``, ``threshold`` (one of
    ``THRESHOLDS``) and the arms' family (``distribution``, ``sigma``) whose divergence the statistics use. Built by
    ``ArmStop.component``, which checks every argument."""

    delta: float
    threshold: str
    distribution: str
    sigma: float

    @classmethod
    def component(cls, delta: Any, threshold: Any, distribution: Any, sigma: Any) -> ArmStop:
        """The stop of these arguments, each checked (a ValueError or TypeError that names it)."""
        delta = check.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        threshold = check.choice("threshold", threshold, THRESHOLDS)
        distribution = check.choice("distribution", distribution, DISTRIBUTIONS)
        sigma = check.real("sigma", sigma, low=0.0, low_open=True)
        return cls(delta, threshold, distribution, sigma)

    def params(self) -> dict[str, Any]:
        """The agent's constructor arguments that built this stop."""
        return {"delta": self.delta, "threshold": self.threshold, "distribution": self.distribution,
                "sigma": self.sigma}

    def codes(self) -> tuple[float, int, int, float]:
        """``(delta, threshold, family, sigma)`` as the compiled step reads them: the choices as their indices
        (``MIXTURE``, ``BERNOULLI``, ...)."""
        return self.delta, THRESHOLDS.index(self.threshold), DISTRIBUTIONS.index(self.distribution), self.sigma

    def check_env(self, agent: str, env: Any) -> None:
        """Refuse an env whose arms are not the family of the statistics' divergence (``check_arms``)."""
        engine = getattr(env.unwrapped, "engine", None)
        arms = getattr(engine, "arm_distribution", None)
        if engine is not None and arms is not None:
            check_arms(agent, arms, getattr(engine, "sigma", math.nan), "glr", self.distribution, self.sigma)

    def arguments(self, agent: str, obs: Obs, certificates: Certificates, follows: bool, param: float,
                  order: ArmScores, action: np.ndarray) -> tuple[Any, ...]:
        r"""The arguments of one compiled step (``glr_step``) of ``agent``'s rule over the batch ``obs``, written into
        ``action`` (``[arm or K, answer bits]`` per copy), with the rule's constant ``param`` and the copies' arm
        ``order``; every arm is updated where the step did not run on the previous observation (``follows``
        False). A Bernoulli stop refuses rewards outside \([0, 1]\) first."""
        self.check_rewards(agent, obs)
        if not follows:
            certificates.stale[:] = True
        delta, threshold, family, sigma = self.codes()
        return (delta, threshold, family, sigma, param, obs["counts"], obs["sums"], obs["threshold"], obs["epsilon"],
                obs["last_arm"], *certificates, order.arm_at, order.position_of, action)

    def check_rewards(self, agent: str, obs: Any) -> None:
        r"""Refuse statistics whose empirical means lie outside \([0, 1]\) when they are read as Bernoulli means."""
        if self.distribution == "bernoulli":
            counts, sums = obs["counts"], obs["sums"]
            if np.any(sums < 0.0) or np.any(sums > counts):
                raise ValueError(f"{agent}: an empirical mean lies outside [0, 1]: the rewards are not Bernoulli; "
                                 "build the agent with distribution='gaussian' (and sigma) for Gaussian arms")


class Certificates(NamedTuple):
    """The stop's per-copy state: each arm's cost per pull and threshold as of its last update (``(N, K)`` each),
    and which copies must update every arm at their next step (``stale``, ``(N,)``: at an episode start, and where
    the step did not run on the previous observation)."""

    cost: np.ndarray
    beta: np.ndarray
    stale: np.ndarray

    @classmethod
    def allocate(cls, n: int, k: int) -> Certificates:
        """The state of ``n`` copies of a K-armed problem, every copy stale."""
        return cls(np.zeros((n, k)), np.full((n, k), math.inf), np.ones(n, dtype=bool))


# ----------------------------------------------------------------------------------------------- compiled
@called
def side_cost(mean: float, point: float, family: int, sigma: float) -> float:
    r"""``d(mean, point)``; infinite for a Bernoulli point at or outside \(\{0, 1\}\) (no mean inside \((0, 1)\) lies
    beyond it, so the side it bounds is never wrong)."""
    if family == BERNOULLI and (point <= 0.0 or point >= 1.0):
        return math.inf
    return _stopping.divergence(mean, point, family, sigma)


@called
def arm_cost(mean: float, theta: float, epsilon: float, family: int, sigma: float) -> tuple[float, bool]:
    r"""``(c, above)``: the cost per pull \(Z_i / N_i\) of an arm of empirical mean ``mean`` and its answer (the side
    of the larger statistic, above on a tie)."""
    up = side_cost(mean, theta - epsilon, family, sigma) if mean > theta - epsilon else 0.0
    down = side_cost(mean, theta + epsilon, family, sigma) if mean < theta + epsilon else 0.0
    above = up > down or (up == down and mean >= theta)
    return (up if above else down), above


@called
def boundary(count: float, pulls: float, k: int, delta: float, threshold: int, family: int) -> float:
    r"""The threshold \(\beta\) of an arm pulled ``count >= 1`` times after ``pulls`` pulls in all, \(K\) arms."""
    if threshold == MIXTURE:
        return arm_mixture_boundary(count, math.log(k / delta), family)
    if threshold == UNION:
        return math.log(k * count * (count + 1.0) / delta)
    return math.log((1.0 + math.log(max(pulls, 1.0))) / delta)


@called
def certified(count: float, cost: float, beta: float) -> bool:
    r"""\(Z_i\) = ``count * cost`` \(> \beta\) for an arm pulled at least once (never for one not pulled)."""
    return count > 0.0 and count * cost > beta


@driver
def glr_step(rule: Any, args: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of a sampling rule with the per-arm GLR stop, over a batch. Per copy: the cost, answer bit and
    threshold of the arm pulled last (every arm where ``stale``, at an episode start, after a batched allocation, or
    where the step did not run on the previous observation); then stop (K) if every arm is certified, else pull the
    first arm never pulled in the copy's arm order, else ``rule``'s arm. ``args`` holds ``(delta, threshold,
    family, sigma, param, counts, sums, theta, epsilon, last, cost, beta, stale, arm_at, position_of, action)``;
    ``rule(n, pulls, param, theta, level, threshold, counts, sums, cost, beta, last, arm_at, position_of)`` reads
    copy n (``param``: the rule's constant; ``level``: the heuristic threshold, shared by the arms). Inlined in an
    entry point compiled with ``parallel=True`` the ``prange`` runs the copies on all cores."""
    (delta, threshold, family, sigma, param, counts, sums, theta, epsilon, last, cost, beta, stale, arm_at,
     position_of, action) = args
    k = counts.shape[1]
    for n in numba.prange(counts.shape[0]):
        th, eps, a = np.float64(theta[n, 0]), np.float64(epsilon[n, 0]), np.int64(last[n, 0])
        if stale[n]:
            a = -1
            stale[n] = False
        pulls = 0.0
        for i in range(k):
            pulls += np.float64(counts[n, i])
        for i in range(k) if a < 0 else range(a, a + 1):
            c = np.float64(counts[n, i])
            cost[n, i], above = arm_cost(np.float64(sums[n, i]) / max(c, 1.0), th, eps, family, sigma)
            action[n, 1 + i] = above
            if threshold != HEURISTIC:  # the heuristic threshold is the same for every arm: ``level`` below
                beta[n, i] = boundary(c, pulls, k, delta, threshold, family) if c > 0.0 else math.inf
        level = boundary(1.0, pulls, k, delta, threshold, family) if threshold == HEURISTIC else math.inf
        done, fresh = True, -1
        for p in range(k):
            i = arm_at[n, p]
            c = np.float64(counts[n, i])
            if c == 0.0 and fresh < 0:
                fresh = p
            if not certified(c, cost[n, i], level if threshold == HEURISTIC else beta[n, i]):
                done = False
        if done:
            action[n, 0] = k
        elif fresh >= 0:
            action[n, 0] = arm_at[n, fresh]
        else:
            action[n, 0] = rule(n, pulls, param, th, level, threshold, counts, sums, cost, beta, last, arm_at,
                                position_of)
    return action


@called
def is_certified(n: int, i: int, level: float, threshold: int, counts: np.ndarray, cost: np.ndarray,
                 beta: np.ndarray) -> bool:
    """Whether arm ``i`` of copy ``n`` is certified (``certified`` with its threshold)."""
    return certified(np.float64(counts[n, i]), cost[n, i], level if threshold == HEURISTIC else beta[n, i])
