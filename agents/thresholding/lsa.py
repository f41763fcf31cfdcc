"""LSA, the Logarithmic-Sample Algorithm of tao2019."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bandit_gym import _validation as check
from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents._kernels import arm_play, arm_step, index_fresh, index_pulled
from bandit_gym.agents.thresholding._base import ThresholdingAgent
from bandit_gym.jit import called, kernel, parallel_kernel

LOG_COUNTS = np.array([math.log(n) for n in range(1, 4097)])
r"""``math.log(n)`` for \(n = 1, \dots, 4096\), LSA's \(\ln T_i\) (numba compiles a global array as a constant)."""


def lsa_index(count: float, total: float, theta: float, alpha: float, per_copy: float) -> float:
    r"""\(\xi = \alpha T_i \hat\Delta_i^2 + 0.5 \ln T_i\) (compiled by the step kernel); \(\ln T_i\) read from
    ``LOG_COUNTS`` up to its size (the same numbers as ``math.log``, a fifth of its cost); \(-\infty\) for an arm
    never pulled (\(\ln 0\); the initial round pulls it before any index is compared)."""
    if count < 1.0:
        return -math.inf
    gap = abs(total / max(count, 1.0) - theta)
    log_count = LOG_COUNTS[int(count) - 1] if 1.0 <= count <= LOG_COUNTS.size else math.log(count)
    return alpha * count * (gap * gap) + 0.5 * log_count


lsa_compiled = called(lsa_index)


@kernel
def step(args: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of LSA over a batch (``_kernels.arm_step``)."""
    return arm_step(index_fresh, index_pulled, lsa_compiled, False, args)


@parallel_kernel
def parallel_step(args: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return arm_step(index_fresh, index_pulled, lsa_compiled, False, args)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of LSA (``_kernels.arm_play``)."""
    arm_play(index_fresh, index_pulled, lsa_compiled, episodes)


class LSA(ThresholdingAgent):
    r"""Logarithmic-Sample Algorithm for the thresholding bandit with aggregate regret.

    Paper: tao2019 §3, Algorithm 1.

    Rule: pull each arm once (rounds \(1, \dots, K\)), then:

    $$
    \xi_i(t-1) = \alpha\, T_i(t-1)\, \hat\Delta_i(t-1)^2 + 0.5 \ln T_i(t-1), \qquad
    i_t = \operatorname*{arg\,min}_i \xi_i(t-1)
    $$

    with \(\hat\Delta_i = \lvert \hat\theta_i - \theta \rvert\). Anytime (does not use \(T\)). Answer:
    \(d_i = \mathbb{1}\{\hat\theta_i \ge \theta\}\).

    Default \(\alpha = 1.35\) (``alpha``), fixed in all of tao2019 §5's experiments (Appendix F.4 varies it).
    Theorem 1 needs \(0 < \alpha \le 8\) and \(T \ge \max(40 / \alpha + 1, 40)\, K\); Remark 2 takes
    \(\alpha = 1/20\). Deviations: none.

    Readings where the paper is silent:

    - ties in the \(\operatorname{arg\,min}\): the paper gives no rule; we draw a random order of the arms per copy and
      episode from the agent's seeded generator and take the first tied arm in it (a fixed smallest-index rule would
      favour low indices); ``tie_break="index"`` takes the smallest index instead.
    - initialisation: the paper says "pull each arm once" without an order; we pull each arm once in the copy's
      arm order (the tie rule above: a random order per copy and episode; index order \(1, \dots, K\) with
      ``tie_break="index"``).
    - \(T < K\): only the first \(T\) arms of that order get their initial pull; an arm never pulled has empirical
      mean 0 and is answered \(d_i = \mathbb{1}\{0 \ge \theta\}\).
    - answer before the end: the paper outputs \(d\) only after \(T\) pulls; we submit the empirical rule on the
      current statistics at every step, and only the answer after the \(T\)-th pull is scored.

    Examples:
        One seeded episode (thresholding bandit, tao2019 Setup 1) and the record of
        ``RecordEpisodeRegret`` that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import LSA
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=200)
        >>> result = play_episode(env, LSA(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (200, 1.0)
    """

    anytime = True  # never reads the horizon T

    def __init__(self, alpha: float = 1.35, *, tie_break: str = "random") -> None:
        self.alpha = check.real("alpha", alpha, low=0.0, low_open=True)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, object]:
        return {"alpha": self.alpha, **super().params()}

    def index_param(self) -> float:
        return self.alpha

    index = staticmethod(lsa_index)
    kernels = EntryPoints(step, parallel_step, rollout)
