"""Racing for the thresholding bandit at fixed confidence: round robin over the arms not yet certified, each arm
leaving the race when its per-arm GLR statistic passes its threshold."""

from __future__ import annotations

from typing import Any

import numpy as np

from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents._kernels import cycle
from bandit_gym.agents.base import Agent
from bandit_gym.agents.thresholding._base import ThresholdingAgent
from bandit_gym.agents.thresholding._glr import ArmStop, glr_step, is_certified
from bandit_gym.jit import called, kernel, parallel_kernel


@called
def race(n: int, pulls: float, param: float, theta: float, level: float, threshold: int,
         counts: np.ndarray, sums: np.ndarray, cost: np.ndarray, beta: np.ndarray, last: np.ndarray,
         arm_at: np.ndarray, position_of: np.ndarray) -> int:
    """The first arm still in the race (not certified) after the one pulled last, in copy ``n``'s cyclic arm order (from
    the order's first after a batched allocation)."""
    k = counts.shape[1]
    a = np.int64(last[n, 0])
    start = position_of[n, a] + 1 if a >= 0 else 0
    for j in range(k):
        i = arm_at[n, cycle(start + j, k)]
        if not is_certified(n, i, level, threshold, counts, cost, beta):
            return i
    return arm_at[n, cycle(start, k)]  # every arm certified: the step stops before asking


@kernel
def step(args: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of ThresholdingRacing over a batch (``_glr.glr_step``)."""
    return glr_step(race, args)


@parallel_kernel
def parallel_step(args: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return glr_step(race, args)


class ThresholdingRacing(ThresholdingAgent):
    r"""Racing for the thresholding bandit: pull, round robin, only the arms whose side is not yet certified; stop
    when none is left.

    Paper: the racing (successive elimination) scheme of Maron and Moore (1994), Even-Dar, Mannor and Mansour
    (2006) and Kaufmann and Kalyanakrishnan (Information Complexity in Bandit Subset Selection, COLT 2013: KL-Racing,
    racing with KL confidence bounds for top-m identification), here for the thresholding bandit, where an arm
    leaves the race on its own evidence (no comparison with other arms): the elimination rule of fixed-confidence
    thresholding and good-arm identification (Kano et al., Good arm identification via bandit feedback, Machine
    Learning 2019, identify an arm as good or bad once its confidence bound passes the threshold; their sampling
    is not round robin). Of KK 2013 and Kano et al. only the abstracts could be read when this was written: no
    equation of theirs is cited.

    Rule: the arms in the race are those not certified, \(Z_i \le \beta_i\), with arm \(i\)'s per-arm GLR
    statistic \(Z_i\) and threshold \(\beta_i\) of ``ThresholdingTaS`` (``agents/thresholding/_glr.py``); pull the
    next arm of the race after the one pulled last, in the copy's cyclic arm order (so each round pulls every arm
    of the race once); stop when the race is empty, and answer each arm's side. \(Z_i > \beta_i\) is equivalent to
    the KL confidence interval \(\{\lambda : N_i\, d(m_i, \lambda) \le \beta_i\}\) leaving the wrong set of the
    arm's answer, the KL-Racing form of the same test. Thresholds: ``"mixture"`` (default) and ``"union"`` are
    \(\delta\)-correct whatever the sampling rule, and uniformly over time: an arm's answer is wrong with
    probability at most \(\delta / K\) at the time it leaves the race as at any other (``ThresholdingTaS``'s
    proofs); ``"heuristic"`` is outside the theory.

    An arm leaves once \(N_i\, c_i(\mu) \approx \beta\), so the expected stopping time grows as
    \(\sum_i 1 / c_i(\mu) \ln(1 / \delta)\) (each arm pulled until its own certification): the lower bound's
    \(T^*(\mu)\) to first order in \(\ln(1 / \delta)\), without computing \(w^*\)
    (``bandit_gym.lower_bounds.thresholding_allocation``), against \(K \max_i 1 / c_i(\mu)\) for uniform sampling.
    This is a heuristic count, not a theorem proved here.

    Parameters: \(\delta \in (0, 1)\) (``delta``, default 0.05), ``threshold`` (default ``"mixture"``), ``distribution``
    and
    ``sigma`` (the arms' family, whose divergence the statistics use). Deviations: rounds are not synchronised:
    the race is tested after every pull, on the arm pulled (the only arm whose statistic changed), not at the end
    of a round.

    Readings where the papers are silent:

    - an arm's membership of the race is read from the current statistics, not remembered: with ``"mixture"`` or
      ``"union"`` (thresholds that depend on the arm's own pulls only) an arm out of the race never returns; with
      ``"heuristic"`` (a threshold growing with the pulls of all arms) a certified arm may fall back in.
    - the next arm follows the observation's ``last_arm`` in the copy's order (random per copy and episode, the
      identity with ``tie_break="index"``; the order's first at an episode start); each arm is pulled once
      before any stop.
    - on a fixed-budget env the same rule with the budget as its cap (it stops early when the race is empty).

    Examples:
        One seeded episode (the instance of ``ThresholdingTaS``'s example, which stops after 705 pulls):

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import ThresholdingRacing
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("ThresholdingBandit-v0", means=[0.2, 0.4, 0.6, 0.8], threshold=0.5,
        ...                setting="fixed_confidence", budget=100_000)
        >>> result = play_episode(env, ThresholdingRacing(delta=0.05), seed=0)
        >>> result["pulls"], result["error"]
        (710, 0.0)
    """

    anytime = True  # never reads the horizon: the env's budget is only a cap
    kernels = EntryPoints(step, parallel_step, None)
    #: no compiled rollout (``Agent``'s: None): the rule is played step by step
    compiled_rollout = Agent.compiled_rollout

    def __init__(self, delta: float = 0.05, *, threshold: str = "mixture", distribution: str = "bernoulli",
                 sigma: float = 1.0, tie_break: str = "random") -> None:
        super().__init__(stopper=ArmStop.component(delta, threshold, distribution, sigma), tie_break=tie_break)
