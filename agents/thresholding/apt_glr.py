"""APT's sampling (Locatelli et al. 2016) stopped by the per-arm GLR rule: an adaptive baseline of the thresholding
bandit at fixed confidence."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bandit_gym import _validation as check
from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents.base import Agent
from bandit_gym.agents.thresholding._base import ThresholdingAgent
from bandit_gym.agents.thresholding._glr import ArmStop, glr_step
from bandit_gym.agents.thresholding.apt import apt_compiled
from bandit_gym.jit import called, kernel, parallel_kernel


@called
def apt_arm(n: int, pulls: float, param: float, theta: float, level: float, threshold: int, counts: np.ndarray,
            sums: np.ndarray, cost: np.ndarray, beta: np.ndarray, last: np.ndarray, arm_at: np.ndarray,
            position_of: np.ndarray) -> int:
    r"""\(\operatorname*{arg\,min}_i \sqrt{N_i}\,(\lvert m_i - \theta \rvert + \epsilon)\) in copy ``n`` (APT's
    index, ``apt.apt_index``, \(\epsilon\) = ``param``), ties to the first in the copy's arm order."""
    arm, least = -1, math.inf
    for p in range(counts.shape[1]):
        i = arm_at[n, p]
        value = apt_compiled(np.float64(counts[n, i]), np.float64(sums[n, i]), theta, param, 0.0)
        if value < least:
            arm, least = i, value
    return arm


@kernel
def step(args: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of ThresholdingAPT over a batch (``_glr.glr_step``)."""
    return glr_step(apt_arm, args)


@parallel_kernel
def parallel_step(args: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return glr_step(apt_arm, args)


class ThresholdingAPT(ThresholdingAgent):
    r"""APT's sampling stopped by the per-arm GLR rule, an adaptive baseline of the thresholding bandit at fixed
    confidence.

    Paper: A. Locatelli, M. Gutzeit, A. Carpentier, An optimal algorithm for the Thresholding Bandit Problem, ICML
    2016 (APT, a fixed-budget, anytime rule; the package's ``APT``, whose index this is), with ``ThresholdingTaS``'s
    stop: APT has no stopping rule of its own.

    Rule: each arm once in the copy's arm order, then
    \(i_t = \operatorname*{arg\,min}_i \sqrt{N_i}\,(\lvert m_i - \theta \rvert + \epsilon)\) (``APT``'s index,
    \(\epsilon\) APT's precision parameter); stop when every arm's per-arm GLR statistic \(Z_i\) exceeds its
    threshold \(\beta_i\) and answer each arm's side (``agents/thresholding/_glr.py``; ``ThresholdingTaS`` states
    the statistic, the thresholds and their proofs). Thresholds: ``"mixture"`` (default) and ``"union"``,
    \(\delta\)-correct whatever the sampling rule; ``"heuristic"`` outside the theory.

    Why it is a natural baseline: APT balances \(N_i (\lvert \Delta_i \rvert + \epsilon)^2\) across the arms, which
    for Gaussian arms of one \(\sigma\) and \(\epsilon\) equal to the env's is the optimal allocation \(w^*_i\)
    proportional to \(1 / c_i = 2 \sigma^2 / (\lvert \Delta_i \rvert + \epsilon)^2\)
    (``bandit_gym.lower_bounds.thresholding_allocation``), without computing it; for Bernoulli arms it differs
    from \(w^*\) by the arms' variances.

    Parameters: \(\epsilon \ge 0\) (``epsilon``), APT's precision (default 0, as ``APT``'s; the env's
    \(\epsilon\) is read by the stop, not by the index); \(\delta \in (0, 1)\) (``delta``, default 0.05), ``threshold``
    (default ``"mixture"``),
    ``distribution`` and ``sigma`` (the arms' family, whose divergence the statistics use). Deviations from APT:
    the stop (APT runs to its budget).

    Readings: ties in the \(\operatorname{arg\,min}\) go to the first arm in the copy's arm order (random per copy and
    episode, the smallest index with ``tie_break="index"``), as ``APT``'s; on a fixed-budget env the same rule with the
    budget as its cap (it stops early when confident).

    Examples:
        One seeded episode (the instance of ``ThresholdingTaS``'s example, which stops after 705 pulls):

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import ThresholdingAPT
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("ThresholdingBandit-v0", means=[0.2, 0.4, 0.6, 0.8], threshold=0.5,
        ...                setting="fixed_confidence", budget=100_000)
        >>> result = play_episode(env, ThresholdingAPT(delta=0.05), seed=0)
        >>> result["pulls"], result["error"]
        (634, 0.0)
    """

    anytime = True  # never reads the horizon: the env's budget is only a cap
    kernels = EntryPoints(step, parallel_step, None)
    #: no compiled rollout (``Agent``'s: None): the rule is played step by step
    compiled_rollout = Agent.compiled_rollout

    def __init__(self, delta: float = 0.05, epsilon: float = 0.0, *, threshold: str = "mixture",
                 distribution: str = "bernoulli", sigma: float = 1.0, tie_break: str = "random") -> None:
        self.epsilon = check.real("epsilon", epsilon, low=0.0)
        super().__init__(stopper=ArmStop.component(delta, threshold, distribution, sigma), tie_break=tie_break)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "epsilon": self.epsilon}

    def index_param(self) -> float:
        r"""APT's precision \(\epsilon\), which its index reads."""
        return self.epsilon
