"""UGapEc, the fixed-confidence version of UGapE (gabillon2012 §3, Fig. 1 right; §4.3)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bandit_gym import _validation as check
from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm import _stop, _stopping
from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.agents.best_arm._kernels import copy_step, each_copy, over_copies, play
from bandit_gym.agents.best_arm._stopping import Stopping
from bandit_gym.agents.best_arm.ugape import CHOSEN, MEAN, gap_select, gap_widths
from bandit_gym.agents.ranking import top_m_pulled
from bandit_gym.jit import called, kernel, parallel_kernel


@called
def ugapec(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
           constants: Any, state: Any, arrays: np.ndarray, work: np.ndarray, answer: np.ndarray,
           final: bool) -> int:
    r"""Each arm once (arm \(t\) at pull \(t\), no stop; the answer the \(m\) best empirical means, an arm never
    pulled ranking last, as \(J(t)\) would rank such an arm by a mean of 0); then SELECT-ARM with
    \(\beta_k = b\sqrt{x / T_k}\), \(x = c \log(4 K t^3 / \delta)\), \(t\) the pulls made; the answer is
    \(J(t)\); stop (\(K\)) once \(B_{J(t)} < \epsilon\) (its own rule), or once the stopping component of
    ``constants`` does with \(J(t)\) as its answer."""
    k = counts.shape[0]
    if made < k:
        top_m_pulled(counts, sums, m, work[MEAN], answer)
        return made
    x = constants["c"] * math.log(4.0 * k * max(np.float64(made), 1.0) ** 3 / constants["delta"])
    gap_widths(counts, sums, x, constants["b"], work)
    set_index, pull = gap_select(m, work)
    for i in range(k):
        answer[i] = work[CHOSEN, i] == 1.0
    if _stop.kind(constants) == _stop.OWN:  # UGapEc's own rule
        return k if set_index < epsilon else pull
    return k if _stop.stopped(counts, work[MEAN], answer, made, m, epsilon, constants) else pull



@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    """One ``act`` of UGapEc for copy n (``_kernels.copy_step``)."""
    copy_step(ugapec, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of UGapEc over a batch (``_kernels.each_copy``)."""
    return each_copy(ugapec, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of UGapEc (``_kernels.play``)."""
    play(ugapec, episodes)


class UGapEc(BestArmAgent):
    r"""Unified gap-based exploration, fixed confidence.

    Paper: gabillon2012, Fig. 1 (right), Fig. 2, eq. 3-4, Theorem 2.

    Pull each arm once; then, while \(B_{J(t)} \ge \epsilon\), SELECT-ARM with
    \(\beta_k = b\sqrt{c \log(4 K (t-1)^3 / \delta) / T_k}\) (\(t - 1\) pulls made); stop (action \(K\)) with the
    answer \(J(t)\) as soon as \(B_{J(t)} < \epsilon\), \(\epsilon\) read from the observation. Theorem 2: with
    \(c = 1/2\), \(P(r_{\Omega} \le \epsilon \text{ and } \tilde n \le N) \ge 1 - \delta\),
    \(N = K + O(H_\epsilon \log(H_\epsilon / \delta))\).

    Stopping: by default the paper's rule above (``stopping="own"``); any of the package's stopping components
    instead (``stopping="glr"`` with a ``threshold``, ``"lucb"``, ``"kllucb"``; see
    ``bandit_gym.agents.best_arm._stopping``), tested after each SELECT-ARM with \(J(t)\) as its answer; the
    sampling is UGapEc's either way. The GLR statistic is 0 while \(J(t)\) is not the \(m\) largest empirical
    means (it stops only when they agree); the GLR statistic and the KL bounds read the divergence of the arms'
    family ``distribution`` (``"bernoulli"``, or ``"gaussian"`` of standard deviation ``sigma``), which the
    experiment engine checks against the env's arms (``check_env``); the own rule reads neither.

    Parameters: ``delta`` in \((0, 1)\) (default 0.05, ours: the NIPS paper has no experiments), ``c = 0.5`` (the
    paper's recommendation, §3, and the value of Theorem 2), ``b`` the upper end of the rewards' range
    \([0, b]\); ``stopping``, ``threshold``, ``distribution``, ``sigma``. Anytime: it never reads the budget.
    Deviations: none.

    Readings where the paper is silent:

    - the budget: the paper's loop has no cap; on a fixed-confidence env the env's budget is a safety cap, and
      reaching it truncates the episode with the current \(J(t)\) as the answer (ours).
    - log: no base given; natural log.
    - tie rules of SELECT-ARM: see ``select_arm`` (\(J\): the first arm; \(u_t\), \(l_t\): the largest
      \(\beta\), as the paper says, then the first arm; \(I(t)\): \(l_t\) when the widths are equal), "first"
      in the copy's arm order: random per copy and episode, or the smallest index with ``tie_break="index"``
      (see ``BestArmAgent``).
    - initialisation: each arm once, in the copy's arm order, with no stopping test; the answer submitted
      during it is the \(m\) arms of largest empirical mean, an arm never pulled ranking last (ties: the first
      in the copy's order).

    Examples:
        One seeded episode (Audibert et al.'s problem 1) and the record of
        ``RecordEpisodeRegret`` that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import UGapEc
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-Audibert2010Problem1-v0", budget=400)
        >>> result = play_episode(env, UGapEc(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (400, 0.0)
    """

    #: the stopping rule's fields (``delta`` among them; the kind ``OWN`` for the paper's own), the
    #: exploration constant \(c\), the range \(b\)
    constant_fields = (*_stopping.FIELDS, "c", "b")
    anytime = True  # never reads the horizon T

    def __init__(self, delta: float = 0.05, c: float = 0.5, b: float = 1.0, *, stopping: str = "own",
                 threshold: str | None = None, distribution: str = "bernoulli", sigma: float = 1.0,
                 tie_break: str = "random") -> None:
        stopper = Stopping.paper("UGapEc", delta, stopping, threshold, distribution, sigma)
        self.c = check.real("c", c, low=0.0, low_open=True)
        self.b = check.real("b", b, low=0.0, low_open=True)
        super().__init__(stopping=stopper, tie_break=tie_break)

    def params(self) -> dict[str, object]:
        return {"delta": self.delta, "c": self.c, "b": self.b, **super().params()}

    kernels = EntryPoints(step, parallel_step, rollout)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        super().begin(obs, rows)  # the stopping rule's constants, every state field at -1
        self.constants["c"][rows], self.constants["b"][rows] = self.c, self.b
