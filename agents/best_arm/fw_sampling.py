"""Frank-Wolfe Sampling (Wang, Tzeng and Proutiere 2021): a Frank-Wolfe step on the non-smooth objective of the
lower bound at every pull, tracked, stopped by the GLR rule."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm import _stopping
from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.agents.best_arm._fixed_confidence import STATE_FIELDS, start
from bandit_gym.agents.best_arm._kernels import copy_step, over_copies, play
from bandit_gym.agents.best_arm._stopping import Stopping
from bandit_gym.jit import called, kernel, parallel_kernel

#: the work rows: the empirical means, scratch, then per challenger j: the gradient's entries at the best arm
#: (``G``) and at j (``H``), f_j(x) (``F``); and the Frank-Wolfe direction z (``Z``)
MEANS, SCRATCH, G, H, F, Z = range(6)
#: the steps of the searches in the zero-sum game (golden section, then bisection, on the best arm's share)
SEARCH_STEPS = 80
#: two shares whose values differ by less than this (relative) are both optimal
FLAT = 1e-12


@called
def fill(s: float, members: np.ndarray, g: np.ndarray, h: np.ndarray, f: np.ndarray) -> float:
    """v(s): the v with ``sum_j max(0, (v - c_j) / h_j) = 1 - s``, ``c_j = s g_j - f_j``; the sum is piecewise
    linear in v, so v is exact: with the members in increasing c, the first m whose level
    ``(1 - s + sum_{i <= m} c_i / h_i) / sum_{i <= m} 1 / h_i`` stays below the next c."""
    count = 0
    for j in range(members.shape[0]):
        if members[j]:
            count += 1
    c, w = np.empty(count), np.empty(count)
    i = 0
    for j in range(members.shape[0]):
        if members[j]:
            c[i], w[i] = s * g[j] - f[j], 1.0 / h[j]
            i += 1
    order = np.argsort(c)
    weight, weighted = 0.0, 0.0
    level = math.inf
    for rank in range(count):
        i = order[rank]
        weight += w[i]
        weighted += c[i] * w[i]
        level = (1.0 - s + weighted) / weight
        if rank + 1 == count or level <= c[order[rank + 1]]:
            break
    return level


@called
def edge(best_s: float, best_v: float, toward: float, members: np.ndarray, g: np.ndarray, h: np.ndarray,
         f: np.ndarray) -> float:
    """The end, on the side of ``toward``, of the interval of shares whose value is ``best_v`` (bisection)."""
    inside, outside = best_s, toward
    if fill(toward, members, g, h, f) >= best_v - FLAT * (1.0 + abs(best_v)):
        return toward
    for _ in range(SEARCH_STEPS):
        middle = 0.5 * (inside + outside)
        if fill(middle, members, g, h, f) >= best_v - FLAT * (1.0 + abs(best_v)):
            inside = middle
        else:
            outside = middle
    return inside


@called
def solve(best: int, members: np.ndarray, g: np.ndarray, h: np.ndarray, f: np.ndarray, z: np.ndarray) -> None:
    ratio = 0.5 * (math.sqrt(5.0) - 1.0)
    a, b = 0.0, 1.0
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = fill(c, members, g, h, f), fill(d, members, g, h, f)
    for _ in range(SEARCH_STEPS):
        if fc < fd:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = fill(d, members, g, h, f)
        else:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = fill(c, members, g, h, f)
    s = 0.5 * (a + b)
    candidates = (0.0, s, 1.0)
    best_v = -math.inf
    for candidate in candidates:  # the ends too: v may peak there
        value = fill(candidate, members, g, h, f)
        if value > best_v:
            s, best_v = candidate, value
    s = 0.5 * (edge(s, best_v, 0.0, members, g, h, f) + edge(s, best_v, 1.0, members, g, h, f))
    v = fill(s, members, g, h, f)
    z[:] = 0.0
    z[best] = s
    total = s
    for j in range(members.shape[0]):
        if members[j]:
            z[j] = max(0.0, (v - s * g[j] + f[j]) / h[j])
            total += z[j]
    for a_ in range(z.shape[0]):
        z[a_] /= total


@called
def direction(best: int, t: float, mean: np.ndarray, x: np.ndarray, constants: Any, work: np.ndarray) -> None:
    """``work[Z]`` = the step's Frank-Wolfe direction z: uniform when a mean ties the best one or floor(t / K)
    is a perfect square (forced exploration); else the best response to the r_t-subdifferential of
    ``min_j f_j`` at x, r_t = t^(-9/10) / K: e_best or e_j for one near-minimal f_j, the zero-sum game's
    solution for several."""
    k, z = mean.shape[0], work[Z]
    rounds = math.floor(t / k)
    square = math.floor(math.sqrt(rounds)) ** 2 == rounds
    tie = False
    for a in range(k):
        if a != best and mean[best] - mean[a] <= 2.220446049250313e-16:
            tie = True
    if tie or square:
        z[:] = 1.0 / k
        return
    g, h, f = work[G], work[H], work[F]
    family, sigma = constants["family"], constants["sigma"]
    lowest = math.inf
    for j in range(k):
        if j != best:
            mid = (x[best] * mean[best] + x[j] * mean[j]) / (x[best] + x[j])
            g[j] = _stopping.divergence(mean[best], mid, family, sigma)
            h[j] = _stopping.divergence(mean[j], mid, family, sigma)
            f[j] = x[best] * g[j] + x[j] * h[j]
            lowest = min(lowest, f[j])
    r = t ** -0.9 / k
    members = np.zeros(k, dtype=np.bool_)
    count, only = 0, -1
    for j in range(k):
        if j != best and f[j] < lowest + r:
            members[j] = True
            count += 1
            only = j
    if count == 1:  # the best response e_i, i = argmax_i grad f_j(x)_i: the best arm or j
        z[:] = 0.0
        z[best if g[only] > h[only] or (g[only] == h[only] and best < only) else only] = 1.0
    else:
        solve(best, members, g, h, f, z)


@called
def fw_sampling(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
                constants: Any, state: Any, arrays: Any, work: np.ndarray, answer: np.ndarray,
                final: bool) -> int:
    """Each arm once; then stop (K) if the stopping rule does, else ``x <- x + (z - x) / t`` and pull
    ``argmax_a x_a / N_a`` (track x)."""
    k, mean = counts.shape[0], work[MEANS]
    arm = start(counts, sums, made, m, state, mean, work[SCRATCH], answer)
    if arm >= 0:
        return arm
    if _stopping.stopped(counts, mean, answer, made, 1, epsilon, constants):
        arm = k
    else:
        best = 0
        for a in range(k):
            if answer[a]:
                best = a
        x, t = arrays["x"], np.float64(made)
        direction(best, t, mean, x, constants, work)
        z = work[Z]
        for a in range(k):
            x[a] = x[a] * ((t - 1.0) / t) + z[a] / t
        for a in range(k):
            if arm < 0 or x[a] / np.float64(counts[a]) > x[arm] / np.float64(counts[arm]):
                arm = a
    state["last_made"], state["last_arm"] = np.float64(made), np.float64(arm)
    return arm



@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    """One ``act`` of FWS for copy n (``_kernels.copy_step``)."""
    copy_step(fw_sampling, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of FWS over a batch (``_kernels.over_copies``)."""
    return over_copies(one_copy, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of FWS (``_kernels.play``)."""
    play(fw_sampling, episodes)


class FWSampling(BestArmAgent):
    """Frank-Wolfe Sampling (FWS): Frank-Wolfe steps on the lower bound's objective, tracked, stopped by GLR.

    Paper: P.-A. Wang, R.-C. Tzeng, A. Proutiere, Fast Pure Exploration via Frank-Wolfe, NeurIPS 2021
    (Algorithm 1, FWS, for best-arm identification; Proposition 1 for f and its gradient), as the authors' code
    implements it (github.com/rctzeng/NeurIPS2021-FWS, ``standard/samplingrules.jl``,
    ``utilities/envelope.jl``). Not one of the five papers: a modern asymptotically optimal sampling rule that
    needs no optimal allocation w*(mu), only one gradient per arm and step.

    The lower bound's objective at an allocation x is ``F(x) = min_{j != b} f_j(x)``, b the empirical best arm,
    ``f_j(x) = x_b d(mu_b, m_j) + x_j d(mu_j, m_j)``, ``m_j = (x_b mu_b + x_j mu_j) / (x_b + x_j)`` (d the arms'
    divergence, mu the empirical means); by the envelope theorem ``grad f_j(x) = d(mu_b, m_j) e_b + d(mu_j, m_j)
    e_j``. After t pulls (each arm once first; x = 1/K then):

    - z = (1/K, ..., 1/K) if floor(t / K) is a perfect square (forced exploration) or an empirical mean ties the
      best one;
    - else, with r_t = t^(-9/10) / K and ``H = {j : f_j(x) < min_i f_i(x) + r_t}``: z = e_i, i = argmax of grad
      f_j(x) (the best arm or j), when H = {j}; else z solves the zero-sum game ``max_z min_{j in H} <z - x,
      grad f_j(x)>`` over the simplex;
    - ``x <- ((t - 1) x + z) / t``, and pull ``argmax_a x_a / N_a(t)`` (the arm furthest below its share).

    Stopping: by default the GLR (Chernoff) rule with GK 2016 Theorem 10's threshold on Bernoulli arms
    (Lattimore and Szepesvári's on Gaussian ones); any of the package's stopping components (``stopping``,
    ``threshold``; the paper's experiments used the heuristic ``threshold="heuristic"``). The answer is the
    empirical best arm. Theorem: FWS with the GLR rule is delta-correct and asymptotically optimal,
    ``limsup E[tau] / ln(1/delta) <= T*(mu)``.

    Parameters: ``delta`` in (0, 1); ``distribution`` and ``sigma`` (the arms' family); ``stopping``,
    ``threshold``. Best-arm identification (m = 1) only.

    Readings where the paper is silent (the authors' code decides most):

    - initialisation: each arm once, in the copy's arm order, with no stopping test (the package's opening of
      every fixed-confidence rule; the authors' runner also re-pulls a Bernoulli arm whose mean is 0 or 1 before
      starting, the package does not);
    - a tie with the best mean is a mean within 2.2e-16 of it (the code's ``eps()``);
    - the zero-sum game is solved exactly up to floating point (golden section on the best arm's share,
      water-filling of the rest) instead of by an LP solver (Tulip); its solution need not be unique, and when the
      optimal shares of the best arm form an interval, z takes its middle (an interior-point solver also returns a
      point inside the optimal face; which point is a reading);
    - ties in the argmax of the gradient, of x_a / N_a and of the empirical best arm: the first in the copy's arm
      order (random per copy and episode; the smallest index with ``tie_break="index"``).

    Examples:
        One seeded episode on GK 2016's first instance, at delta = 0.1:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import FWSampling
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-v0", means=[0.5, 0.45, 0.43, 0.4], setting="fixed_confidence",
        ...                budget=100_000)
        >>> result = play_episode(env, FWSampling(delta=0.1), seed=0)
        >>> result["pulls"] < 100_000, result["error"]
        (True, 0.0)
    """

    constant_fields: ClassVar[tuple[str, ...]] = _stopping.FIELDS
    state_fields: ClassVar[tuple[str, ...]] = STATE_FIELDS
    best_arm_only = True
    anytime = True  # never reads the horizon: the env's budget is only a cap
    #: the Frank-Wolfe iterate x, one share per arm
    array_fields: ClassVar[tuple[str, ...]] = ("x",)

    def __init__(self, delta: float = 0.05, *, stopping: str = "glr", threshold: str | None = None,
                 distribution: str = "bernoulli", sigma: float = 1.0, tie_break: str = "random") -> None:
        stopper = Stopping.component(type(self).__name__, delta, stopping, threshold, distribution, sigma)
        super().__init__(stopping=stopper, tie_break=tie_break)

    kernels = EntryPoints(step, parallel_step, rollout)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        super().begin(obs, rows)
        self.arrays["x"][rows] = 1.0 / self.num_arms
