"""APT, the Anytime Parameter-free Thresholding algorithm (Locatelli et al. 2016), a tao2019 baseline."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bandit_gym import _validation as check
from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents._kernels import arm_play, arm_step, index_fresh, index_pulled
from bandit_gym.agents.thresholding._base import ThresholdingAgent
from bandit_gym.jit import called, kernel, parallel_kernel


def apt_index(count: float, total: float, theta: float, epsilon: float, per_copy: float) -> float:
    r"""\(B = \sqrt{T_i}\,(\hat\Delta_i + \epsilon)\) (compiled by the step kernel)."""
    return math.sqrt(count) * (abs(total / max(count, 1.0) - theta) + epsilon)


apt_compiled = called(apt_index)


@kernel
def step(args: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of APT over a batch (``_kernels.arm_step``)."""
    return arm_step(index_fresh, index_pulled, apt_compiled, False, args)


@parallel_kernel
def parallel_step(args: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return arm_step(index_fresh, index_pulled, apt_compiled, False, args)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of APT (``_kernels.arm_play``)."""
    arm_play(index_fresh, index_pulled, apt_compiled, episodes)


class APT(ThresholdingAgent):
    r"""Anytime Parameter-free Thresholding with precision \(\epsilon\).

    Paper: Locatelli, Gutzeit, Carpentier, ICML 2016; baseline of tao2019 §5, its rule restated in tao2019 §1.

    Rule: pull each arm once (Locatelli et al.'s initialisation; tao2019 does not state it), then:

    $$
    B_i(t) = \sqrt{T_i(t-1)}\,\big(\lvert \hat\theta_i(t-1) - \theta \rvert + \epsilon\big), \qquad
    i_t = \operatorname*{arg\,min}_i B_i(t)
    $$

    tao2019 §1 writes \(\sqrt{T_i(t)}\,\hat\Delta_i(t)\) with \(T_i(t)\) the pulls "until time \(t\)", the
    statistics before the \(t\)-th pull, and \(\hat\Delta_i(t) = \lvert \hat\theta_i(t) - \theta \rvert + \epsilon\).
    Anytime. Answer (tao2019 §5's "natural adaptation" of APT's output set \(\{i : \hat\theta_i \ge \theta\}\)):
    \(d_i = \mathbb{1}\{\hat\theta_i \ge \theta\}\).

    Parameter \(\epsilon \ge 0\) (``epsilon``); tao2019 uses 0, 0.025, 0.05 and 0.1. Deviations: none.

    Readings where the papers are silent:

    - default ``epsilon=0``: ours (tao2019 gives no default; 0 is its APT(0)).
    - ties in the \(\operatorname{arg\,min}\): no rule in either paper; the agent's tie rule, a random arm order per
      copy and episode by default, or the smallest index with ``tie_break="index"`` (what the public banditpylib code's
      ``np.argmin`` does).
    - initialisation: each arm once, in the copy's arm order (the tie rule above; index order \(1, \dots, K\)
      with ``tie_break="index"``; the order is ours).
    - \(T < K\): only the first \(T\) arms of that order are pulled; an arm never pulled has empirical mean 0,
      answered \(\mathbb{1}\{0 \ge \theta\}\).
    - answer before the end: the empirical rule on the current statistics at every step; only the answer after
      the \(T\)-th pull is scored.

    Examples:
        One seeded episode (thresholding bandit, tao2019 Setup 1) and the record of
        ``RecordEpisodeRegret`` that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import APT
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=200)
        >>> result = play_episode(env, APT(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (200, 1.0)
    """

    anytime = True  # never reads the horizon T

    def __init__(self, epsilon: float = 0.0, *, tie_break: str = "random") -> None:
        self.epsilon = check.real("epsilon", epsilon, low=0.0)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, object]:
        return {"epsilon": self.epsilon, **super().params()}

    def index_param(self) -> float:
        return self.epsilon

    index = staticmethod(apt_index)
    kernels = EntryPoints(step, parallel_step, rollout)
