"""lil'UCB (Jamieson, Malloy, Nowak, Bubeck 2014): a UCB rule with law-of-the-iterated-logarithm confidence
bounds, stopped when one arm has been pulled far more often than all others together."""

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
from bandit_gym.agents.best_arm._stopping import Stopping
from bandit_gym.jit import called, kernel, parallel_kernel

#: the work rows: the empirical means, scratch
MEANS, SCRATCH = range(2)


def confidence_delta(delta: float, epsilon: float) -> float:
    r"""The \(\delta\) of lil'UCB's bounds (\(d\) below) for a target error probability ``delta``: Theorem 2
    bounds the error by \(4 \sqrt{c_\epsilon d} + 4 c_\epsilon d\),
    \(c_\epsilon = \frac{2 + \epsilon}{\epsilon} \big(1 / \ln(1 + \epsilon)\big)^{1 + \epsilon}\); this is the \(d\)
    that makes it equal to ``delta``: \(d = (\sqrt{1 + \delta} - 1)^2 / (4 c_\epsilon)\)."""
    c = (2.0 + epsilon) / epsilon * (1.0 / math.log(1.0 + epsilon)) ** (1.0 + epsilon)
    return (math.sqrt(1.0 + delta) - 1.0) ** 2 / (4.0 * c)


@called
def lil_ucb(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
            constants: Any, state: Any, arrays: Any, work: np.ndarray, answer: np.ndarray, final: bool) -> int:
    r"""Each arm once; then stop (\(K\)) if some \(T_i \ge 1 + \lambda \sum_{j \ne i} T_j\) (its own rule; the
    answer the most pulled arm) or if the chosen stopping component does, else pull the arm of largest index."""
    k, mean = counts.shape[0], work[MEANS]
    arm = start(counts, sums, made, m, state, mean, work[SCRATCH], answer)
    if arm >= 0:
        return arm
    total, most = 0.0, 0
    for a in range(k):
        total += np.float64(counts[a])
        if counts[a] > counts[most]:
            most = a
    if _stop.kind(constants) == _stop.LIL:  # its own rule: the answer is the most pulled arm
        for a in range(k):
            answer[a] = a == most
        stop = np.float64(counts[most]) >= 1.0 + constants["lam"] * (total - np.float64(counts[most]))
    else:
        stop = _stop.stopped(counts, mean, answer, made, m, epsilon, constants)
    if stop:
        arm = k
    else:
        eps, scale = constants["epsilon"], constants["scale"]
        width_factor = (1.0 + constants["beta"]) * (1.0 + math.sqrt(eps)) * scale
        best = -math.inf
        for a in range(k):
            n = np.float64(counts[a])
            log_term = math.log(math.log((1.0 + eps) * n) / constants["confidence"])
            index = mean[a] + width_factor * math.sqrt(2.0 * (1.0 + eps) * log_term / n)
            if index > best:
                arm, best = a, index
    state["last_made"], state["last_arm"] = np.float64(made), np.float64(arm)
    return arm



@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    """One ``act`` of lil'UCB for copy n (``_kernels.copy_step``)."""
    copy_step(lil_ucb, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of lil'UCB over a batch (``_kernels.each_copy``)."""
    return each_copy(lil_ucb, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of lil'UCB (``_kernels.play``)."""
    play(lil_ucb, episodes)


class LilUCB(BestArmAgent):
    r"""lil'UCB: pull the arm of largest LIL upper confidence bound; stop when one arm dominates the pull counts.

    Paper: K. Jamieson, M. Malloy, R. Nowak, S. Bubeck, lil' UCB: An Optimal Exploration Algorithm for
    Multi-Armed Bandits, COLT 2014 (Algorithm 1, Theorem 2). Not one of the five papers: the fixed-confidence
    rule whose sample complexity meets the law of the iterated logarithm, a standard baseline.

    After one pull of each arm, while \(T_i < 1 + \lambda \sum_{j \ne i} T_j\) for every arm \(i\), pull

    $$
    I_t = \operatorname*{arg\,max}_i \mu_i + (1 + \beta)(1 + \sqrt{\epsilon})
    \sqrt{2 \sigma^2 (1 + \epsilon) \ln\big(\ln((1 + \epsilon) T_i) / d\big) / T_i}
    $$

    (\(T_i\) the pulls of arm \(i\), \(\mu_i\) its empirical mean, \(\sigma\) the arms' sub-Gaussian scale: 1/2
    for Bernoulli arms, ``sigma`` for Gaussian ones); then answer the most pulled arm. Theorem 2: with
    \(\lambda = ((2 + \beta) / \beta)^2\) the answer is the best arm with probability at least
    \(1 - 4 \sqrt{c_\epsilon d} - 4 c_\epsilon d\); the agent takes the target error ``delta`` and sets \(d\) so
    that this bound is \(\delta\) (``confidence_delta``).

    Parameters: ``delta`` in \((0, 1)\); ``epsilon`` in \((0, 1)\) (default 0.01), ``beta`` > 0 (default 1),
    ``lam`` (default \(((2 + \beta) / \beta)^2\), 9 at \(\beta = 1\)): the paper's Theorem 2 values;
    ``distribution`` and ``sigma``; ``stopping``: ``"lil"`` (its own rule, the default) or any of the package's
    stopping components (then the answer is the empirical best arm). Best-arm identification (\(m = 1\)) only.

    Readings where the paper is silent:

    - ties (the index, the most pulled arm): the first in the copy's arm order (random per copy and episode; the
      smallest index with ``tie_break="index"``, see ``BestArmAgent``). Initial pulls in that order, with no
      stopping test.
    - the answer submitted before the stop (scored by the anytime wrappers): the most pulled arm with its own rule,
      the empirical best arm otherwise.
    - the budget: on a fixed-confidence env the env's budget truncates the episode, with that answer.

    Examples:
        Three Bernoulli arms at \(\delta = 0.05\):

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import LilUCB
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-v0", means=[0.3, 0.8, 0.5], budget=100_000,
        ...                setting="fixed_confidence")
        >>> result = play_episode(env, LilUCB(delta=0.05), seed=0)
        >>> result["pulls"] < 100_000, result["answer"].tolist()
        (True, [0, 1, 0])
    """

    constant_fields: ClassVar[tuple[str, ...]] = (*_stopping.FIELDS, "epsilon", "beta", "lam", "scale",
                                                  "confidence")
    best_arm_only = True
    state_fields: ClassVar[tuple[str, ...]] = STATE_FIELDS
    anytime = True  # never reads the horizon: the env's budget is only a cap

    def __init__(self, delta: float = 0.05, epsilon: float = 0.01, beta: float = 1.0, lam: float | None = None, *,
                 stopping: str = "lil", threshold: str | None = None, distribution: str = "bernoulli",
                 sigma: float = 1.0, tie_break: str = "random") -> None:
        self.epsilon = check.real("epsilon", epsilon, low=0.0, high=1.0, low_open=True, high_open=True)
        self.beta = check.real("beta", beta, low=0.0, low_open=True)
        self.lam = ((2.0 + self.beta) / self.beta) ** 2 if lam is None else check.real("lam", lam, low=0.0,
                                                                                        low_open=True)
        stopper = Stopping.component(type(self).__name__, delta, stopping, threshold, distribution, sigma, own="lil")
        self.scale, self.confidence = stopper.scale, confidence_delta(stopper.delta, self.epsilon)
        super().__init__(stopping=stopper, tie_break=tie_break)

    def params(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "beta": self.beta, "lam": self.lam, **super().params()}

    kernels = EntryPoints(step, parallel_step, rollout)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        super().begin(obs, rows)
        self.constants["epsilon"][rows], self.constants["beta"][rows] = self.epsilon, self.beta
        self.constants["lam"][rows] = self.lam
        self.constants["scale"][rows], self.constants["confidence"][rows] = self.scale, self.confidence
