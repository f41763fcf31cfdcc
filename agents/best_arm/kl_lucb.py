"""KL-LUCB (Kaufmann and Kalyanakrishnan 2013): LUCB with confidence bounds from the Kullback-Leibler divergence."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents.best_arm import _stopping
from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.agents.best_arm._fixed_confidence import STATE_FIELDS, start
from bandit_gym.agents.best_arm._kernels import copy_step, over_copies, play
from bandit_gym.agents.best_arm._stopping import Stopping
from bandit_gym.jit import called, kernel, parallel_kernel

#: the work rows: the empirical means, scratch
MEANS, SCRATCH = range(2)


@called
def kl_lucb(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
            constants: Any, state: Any, arrays: Any, work: np.ndarray, answer: np.ndarray, final: bool) -> int:
    """Each arm once; then rounds: J(t) the m best empirical means, u_t = argmax_{j not in J} U_j,
    l_t = argmin_{j in J} L_j; stop (K) if the stopping rule does (KL-LUCB's own: U_u - L_l < epsilon), else
    pull l_t now and u_t at the next step."""
    k, mean = counts.shape[0], work[MEANS]
    arm = start(counts, sums, made, m, state, mean, work[SCRATCH], answer)
    if arm >= 0:
        return arm
    if state["pending"] >= 0.0:  # the round's second pull
        arm = np.int64(state["pending"])
        state["pending"] = -1.0
    else:
        round_t = 1.0 + max(np.float64(made - k), 0.0) // 2
        level = _stopping.kl_lucb_rate(round_t, k, constants["delta"])
        family, sigma = constants["family"], constants["sigma"]
        upper, lower, u, low = -math.inf, math.inf, -1, -1
        for a in range(k):
            n = np.float64(counts[a])
            if answer[a]:
                bound = _stopping.kl_bound(mean[a], n, level, False, family, sigma)
                if bound < lower:
                    lower, low = bound, a
            else:
                bound = _stopping.kl_bound(mean[a], n, level, True, family, sigma)
                if bound > upper:
                    upper, u = bound, a
        if constants["rule"] == _stopping.KLLUCB:  # KL-LUCB's own rule, at its round counter
            stop = upper - lower < epsilon
        else:
            stop = _stopping.stopped(counts, mean, answer, made, m, epsilon, constants)
        if stop:
            arm = k
        else:
            arm, state["pending"] = low, np.float64(u)
    state["last_made"], state["last_arm"] = np.float64(made), np.float64(arm)
    return arm



@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    """One ``act`` of KL-LUCB for copy n (``_kernels.copy_step``)."""
    copy_step(kl_lucb, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of KL-LUCB over a batch (``_kernels.over_copies``)."""
    return over_copies(one_copy, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of KL-LUCB (``_kernels.play``)."""
    play(kl_lucb, episodes)


class KLLUCB(BestArmAgent):
    """KL-LUCB: sample the least certain arm of the empirical top m and the most promising arm outside it, with
    confidence bounds from the KL divergence; stop when they separate.

    Paper: E. Kaufmann, S. Kalyanakrishnan, Information Complexity in Bandit Subset Selection, COLT 2013
    (KL-LUCB, §3). Not one of the five papers: LUCB1's refinement, a standard fixed-confidence baseline (GK 2016
    compare with it).

    After one pull of each arm, round t: J(t) = the m arms of largest empirical mean,
    ``u_t = argmax_{j not in J(t)} U_j(t)``, ``l_t = argmin_{j in J(t)} L_j(t)``, with
    ``U_a = max{q >= mu_a : N_a d(mu_a, q) <= b(t, delta)}`` and ``L_a = min{q <= mu_a : N_a d(mu_a, q) <= b(t,
    delta)}`` (d the arms' divergence); stop with J(t) when ``U_{u_t} - L_{l_t} < epsilon``, else sample u_t and
    l_t. The exploration rate ``b(t, delta) = ln(k1 K t^alpha / delta) + ln ln(k1 K t^alpha / delta)`` with
    alpha = 1.1, k1 = 405.5, the paper's experiments' values, which satisfy its Theorem 3 (k1 > 2e + 1 + e /
    (alpha - 1) + (e + 1) / (alpha - 1)^2): KL-LUCB is then delta-PAC with a sample complexity of order
    ``H*_epsilon ln(1 / delta)``, H* built from Chernoff informations. Any m, any epsilon.

    Stopping: by default its own rule above (``stopping="kllucb"``); any of the package's stopping components
    instead (``stopping="glr"`` with a ``threshold``: GK 2016 §5 ran KL-LUCB's sampling with the GLR rule too),
    checked at the start of each round.

    Parameters: ``delta`` in (0, 1); ``distribution`` and ``sigma`` (the arms' family: Bernoulli KL bounds by
    bisection, Gaussian ones in closed form); ``stopping``, ``threshold``.

    Deviations: a round samples two arms, an env step one: l_t is pulled at the step that computes the round and
    u_t at the next, without recomputing.

    Readings where the paper is silent:

    - the round counter: t = 1 after the K initial pulls, one more every two pulls,
      ``t = 1 + floor((pulls - K) / 2)`` (as ``LUCB``).
    - ties (J(t), u_t, l_t): the first in the copy's arm order (random per copy and episode; the smallest index
      with ``tie_break="index"``, see ``BestArmAgent``). Initial pulls in that order, with no stopping test.
    - the budget: on a fixed-confidence env the env's budget truncates the episode, with J(t) as the answer.

    Examples:
        The two best of six Bernoulli arms, at delta = 0.05:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import KLLUCB
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-v0", means=[0.2, 0.7, 0.5, 0.65, 0.3, 0.4], m=2, budget=50_000,
        ...                setting="fixed_confidence")
        >>> result = play_episode(env, KLLUCB(delta=0.05), seed=0)
        >>> result["pulls"] < 50_000, result["answer"].tolist()
        (True, [0, 1, 0, 1, 0, 0])
    """

    #: u_t still to pull (-1: none), the pulls made at the last act (-1 before the first), its arm
    constant_fields: ClassVar[tuple[str, ...]] = _stopping.FIELDS
    state_fields: ClassVar[tuple[str, ...]] = ("pending", *STATE_FIELDS)
    anytime = True  # never reads the horizon: the env's budget is only a cap

    def __init__(self, delta: float = 0.05, *, stopping: str = "kllucb", threshold: str | None = None,
                 distribution: str = "bernoulli", sigma: float = 1.0, tie_break: str = "random") -> None:
        stopper = Stopping.component(type(self).__name__, delta, stopping, threshold, distribution, sigma)
        super().__init__(stopping=stopper, tie_break=tie_break)

    kernels = EntryPoints(step, parallel_step, rollout)
