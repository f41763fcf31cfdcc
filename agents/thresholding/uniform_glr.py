"""Uniform sampling (round robin) stopped by the per-arm GLR rule: the non-adaptive baseline of the thresholding
bandit at fixed confidence."""

from __future__ import annotations

from typing import Any

import numpy as np

from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents._kernels import cycle
from bandit_gym.agents.base import Agent
from bandit_gym.agents.thresholding._base import ThresholdingAgent
from bandit_gym.agents.thresholding._glr import ArmStop, glr_step
from bandit_gym.jit import called, kernel, parallel_kernel


@called
def round_robin(n: int, pulls: float, param: float, theta: float, level: float, threshold: int,
                counts: np.ndarray, sums: np.ndarray, cost: np.ndarray, beta: np.ndarray, last: np.ndarray,
                arm_at: np.ndarray, position_of: np.ndarray) -> int:
    """The arm after the one pulled last in copy ``n``'s arm order (the order's first after a batched allocation)."""
    a = np.int64(last[n, 0])
    return arm_at[n, cycle(position_of[n, a] + 1, counts.shape[1]) if a >= 0 else 0]


@kernel
def step(args: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of ThresholdingUniform over a batch (``_glr.glr_step``)."""
    return glr_step(round_robin, args)


@parallel_kernel
def parallel_step(args: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return glr_step(round_robin, args)


class ThresholdingUniform(ThresholdingAgent):
    r"""Uniform sampling (round robin) stopped by the per-arm GLR rule, the non-adaptive baseline at fixed confidence.

    Paper: none of its own. Uniform allocation is the baseline of every pure-exploration comparison (tao2019 §5's
    in the fixed-budget thresholding bandit; Kaufmann and Kalyanakrishnan 2013 and GK 2016 §6 compare adaptive
    rules with it at fixed confidence); its stop here is ``ThresholdingTaS``'s, so that the two differ only in
    their sampling.

    Rule: \(i_t = \sigma\big(((t - 1) \bmod K) + 1\big)\), round robin in the copy's arm order \(\sigma\)
    (``Uniform``'s), each arm pulled \(\lfloor t / K \rfloor\) or \(\lceil t / K \rceil\) times after \(t\) pulls;
    stop when every arm's GLR statistic \(Z_i\) exceeds its threshold \(\beta_i\), and answer each arm's side
    (``agents/thresholding/_glr.py``, where the statistic, the thresholds and their proofs are written out;
    ``ThresholdingTaS`` states them). Thresholds: ``"mixture"`` (default) and ``"union"``, \(\delta\)-correct
    whatever the sampling rule; ``"heuristic"`` outside the theory.

    Its expected stopping time grows as \(K \max_i 1 / c_i(\mu) \ln(1 / \delta)\) (the hardest arm sets the pace
    of all), against \(T^*(\mu) = \sum_i 1 / c_i(\mu)\) for the optimal allocation
    (``bandit_gym.lower_bounds.thresholding_allocation``): equal when the arms are equally hard, up to \(K\) times
    more otherwise.

    Parameters: \(\delta \in (0, 1)\) (``delta``, default 0.05), ``threshold`` (default ``"mixture"``), ``distribution``
    and ``sigma`` (the arms' family, whose divergence the statistics use). Deviations: none (no paper).

    Readings: the next arm follows the observation's ``last_arm`` in the copy's order (no state of its own; the
    order's first at an episode start); ties between arms do not arise; on a fixed-budget env the same rule with the
    budget as its cap (it stops early when confident).

    Examples:
        One seeded episode (the instance of ``ThresholdingTaS``'s example, which stops after 705 pulls):

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import ThresholdingUniform
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("ThresholdingBandit-v0", means=[0.2, 0.4, 0.6, 0.8], threshold=0.5,
        ...                setting="fixed_confidence", budget=100_000)
        >>> result = play_episode(env, ThresholdingUniform(delta=0.05), seed=0)
        >>> result["pulls"], result["error"]
        (2460, 0.0)
    """

    anytime = True  # never reads the horizon: the env's budget is only a cap
    kernels = EntryPoints(step, parallel_step, None)
    #: no compiled rollout (``Agent``'s: None): the rule is played step by step
    compiled_rollout = Agent.compiled_rollout

    def __init__(self, delta: float = 0.05, *, threshold: str = "mixture", distribution: str = "bernoulli",
                 sigma: float = 1.0, tie_break: str = "random") -> None:
        super().__init__(stopper=ArmStop.component(delta, threshold, distribution, sigma), tie_break=tie_break)
