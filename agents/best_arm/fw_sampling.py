"""Frank-Wolfe Sampling (Wang, Tzeng and Proutiere 2021): a Frank-Wolfe step on the non-smooth objective of the
lower bound (best arm or top m) at every pull, tracked, stopped by the GLR rule."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm import _stop, _stopping
from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.agents.best_arm._fixed_confidence import STATE_FIELDS, start
from bandit_gym.agents.best_arm._game import solve_game
from bandit_gym.agents.best_arm._kernels import copy_step, each_copy, over_copies, play
from bandit_gym.agents.best_arm._stopping import Stopping
from bandit_gym.agents.ranking import stable_order
from bandit_gym.jit import called, driver, kernel, parallel_kernel

#: the work rows: the empirical means, scratch, then per challenger \(j\) (\(m = 1\)): the gradient's entries at
#: the best arm (``G``) and at \(j\) (``H``), \(f_j(x)\) (``F``); and the Frank-Wolfe direction \(z\) (``Z``)
MEANS, SCRATCH, G, H, F, Z = range(6)
#: the steps of the searches in the zero-sum game (golden section, then bisection, on the best arm's share)
SEARCH_STEPS = 80
#: two shares whose values differ by less than this (relative) are both optimal
FLAT = 1e-12


@called
def fill(s: float, members: np.ndarray, g: np.ndarray, h: np.ndarray, f: np.ndarray) -> float:
    r"""\(v(s)\): the \(v\) with \(\sum_j \max(0, (v - c_j) / h_j) = 1 - s\), \(c_j = s g_j - f_j\); the sum is
    piecewise linear in \(v\), so \(v\) is exact: with the members in increasing \(c\), the first \(m\) whose
    level \((1 - s + \sum_{i \le m} c_i / h_i) / \sum_{i \le m} 1 / h_i\) stays below the next \(c\)."""
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
    order = stable_order(c)
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
    for candidate in candidates:  # the ends too: \(v\) may peak there
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
def forced(t: float, mean: np.ndarray, answer: np.ndarray, z: np.ndarray) -> bool:
    r"""Whether \(z\) is uniform at this step (then written): \(\lfloor t / K \rfloor\) is a perfect square
    (forced exploration), or a mean outside the answer is within \(2.2 \times 10^{-16}\) (the code's ``eps()``)
    of one inside (\(\mu\) outside the set of instances with a unique top-m set: a mean ties the best one for
    \(m = 1\))."""
    k = mean.shape[0]
    rounds = math.floor(t / k)
    lowest, highest = math.inf, -math.inf
    for a in range(k):
        if answer[a]:
            lowest = min(lowest, mean[a])
        else:
            highest = max(highest, mean[a])
    if lowest - highest <= 2.220446049250313e-16 or math.floor(math.sqrt(rounds)) ** 2 == rounds:
        z[:] = 1.0 / k
        return True
    return False


@called
def best_arm_direction(best: int, t: float, mean: np.ndarray, x: np.ndarray, constants: Any,
                       work: np.ndarray) -> None:
    r"""``work[Z]`` for \(m = 1\): the best response to the \(r_t\)-subdifferential of \(\min_j f_j\) at \(x\),
    \(r_t = t^{-9/10} / K\): \(e_{\text{best}}\) or \(e_j\) for one near-minimal \(f_j\), the zero-sum game's
    solution (``solve``) for several."""
    k, z = mean.shape[0], work[Z]
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
    if count == 1:  # the best response \(e_i\), \(i = \arg\max_i \nabla f_j(x)_i\): the best arm or \(j\)
        z[:] = 0.0
        z[best if g[only] > h[only] or (g[only] == h[only] and best < only) else only] = 1.0
    else:
        solve(best, members, g, h, f, z)


@called
def pair_costs(mean: np.ndarray, x: np.ndarray, answer: np.ndarray, constants: Any, ends: np.ndarray,
               costs: np.ndarray) -> float:
    r"""For each pair \(p = (i \text{ in the answer}, j \text{ outside})\), in the arms' order: ``ends[p]``
    \(= (i, j)\), ``costs[p]`` \(= (d(\mu_i, m_{ij}), d(\mu_j, m_{ij}), f_{ij}(x))\),
    \(m_{ij} = (x_i \mu_i + x_j \mu_j) / (x_i + x_j)\); returns \(\min_p f_p\)."""
    family, sigma = constants["family"], constants["sigma"]
    p, lowest = 0, math.inf
    for i in range(mean.shape[0]):
        for j in range(mean.shape[0]):
            if answer[i] and not answer[j]:
                mid = (x[i] * mean[i] + x[j] * mean[j]) / (x[i] + x[j])
                g = _stopping.divergence(mean[i], mid, family, sigma)
                h = _stopping.divergence(mean[j], mid, family, sigma)
                ends[p, 0], ends[p, 1] = i, j
                costs[p, 0], costs[p, 1], costs[p, 2] = g, h, x[i] * g + x[j] * h
                lowest = min(lowest, costs[p, 2])
                p += 1
    return lowest


@called
def top_m_direction(t: float, mean: np.ndarray, x: np.ndarray, answer: np.ndarray, m: int, constants: Any,
                    z: np.ndarray) -> None:
    r"""\(z\) for \(m > 1\): \(H\) = the pairs \(p\) with \(f_p(x) < \min f + r_t\), \(r_t = t^{-9/10} / K\);
    \(z = e_i\) or \(e_j\), the larger entry of \(\nabla f_p(x)\), when \(H = \{p\}\); else the solution of the
    game \(\max_z \min_{p \in H} \langle z - x, \nabla f_p(x) \rangle\) (``solve_game``) on the arms of \(H\)'s
    pairs (any optimal \(z\) is zero elsewhere)."""
    k = mean.shape[0]
    ends, costs = np.zeros((m * (k - m), 2), np.int64), np.zeros((m * (k - m), 3))
    near = np.flatnonzero(costs[:, 2] < pair_costs(mean, x, answer, constants, ends, costs) + t ** -0.9 / k)
    z[:] = 0.0
    if near.shape[0] == 1:
        i, j, g, h = ends[near[0], 0], ends[near[0], 1], costs[near[0], 0], costs[near[0], 1]
        z[i if g > h or (g == h and i < j) else j] = 1.0
        return
    column = np.full(k, -1)
    for p in near:
        column[ends[p, 0]], column[ends[p, 1]] = 0, 0
    arms = np.flatnonzero(column == 0)
    column[arms] = np.arange(arms.shape[0])
    payoff = np.zeros((near.shape[0], arms.shape[0]))
    for row in range(near.shape[0]):  # \(\langle e_a - x, \nabla f_p(x) \rangle = \nabla f_p(x)_a - f_p(x)\)
        p = near[row]
        payoff[row] = -costs[p, 2]
        payoff[row, column[ends[p, 0]]] += costs[p, 0]
        payoff[row, column[ends[p, 1]]] += costs[p, 1]
    share = np.zeros(arms.shape[0])
    solve_game(payoff, share)
    z[arms] = share


@called
def best_arm_step_direction(t: float, mean: np.ndarray, x: np.ndarray, answer: np.ndarray, m: int, constants: Any,
                            work: np.ndarray) -> None:
    r"""``work[Z]`` = the step's Frank-Wolfe direction \(z\) for \(m = 1\): uniform when ``forced``, else
    ``best_arm_direction``."""
    if forced(t, mean, answer, work[Z]):
        return
    best = np.int64(0)  # not a literal 0: bandit_gym.jit, "Literals"
    for a in range(mean.shape[0]):
        if answer[a]:
            best = a
    best_arm_direction(best, t, mean, x, constants, work)


@called
def direction(t: float, mean: np.ndarray, x: np.ndarray, answer: np.ndarray, m: int, constants: Any,
              work: np.ndarray) -> None:
    r"""``work[Z]`` = the step's Frank-Wolfe direction \(z\) for any \(m\): ``best_arm_step_direction`` for
    \(m = 1\); for \(m > 1\) uniform when ``forced``, else the best response to the \(r_t\)-subdifferential of
    \(F\) at \(x\) (``top_m_direction``)."""
    if m == 1:
        best_arm_step_direction(t, mean, x, answer, m, constants, work)
    elif not forced(t, mean, answer, work[Z]):
        top_m_direction(t, mean, x, answer, m, constants, work[Z])


@driver
def frank_wolfe(choose: Any, counts: np.ndarray, sums: np.ndarray, made: int, m: int, epsilon: float, constants: Any,
                state: Any, arrays: Any, work: np.ndarray, answer: np.ndarray) -> int:
    r"""Each arm once; then stop (\(K\)) if the stopping rule does, else \(z\) = ``choose(...)`` (a direction:
    ``direction`` or its \(m = 1\) form), \(x \leftarrow x + (z - x) / t\) and pull
    \(\operatorname*{arg\,max}_a x_a / N_a\) (track \(x\))."""
    k, mean = counts.shape[0], work[MEANS]
    arm = start(counts, sums, made, m, state, mean, work[SCRATCH], answer)
    if arm >= 0:
        return arm
    if _stop.stopped(counts, mean, answer, made, m, epsilon, constants):
        arm = k
    else:
        x, t = arrays["x"], np.float64(made)
        choose(t, mean, x, answer, m, constants, work)
        z = work[Z]
        for a in range(k):
            x[a] = x[a] * ((t - 1.0) / t) + z[a] / t
        for a in range(k):
            if arm < 0 or x[a] / np.float64(counts[a]) > x[arm] / np.float64(counts[arm]):
                arm = a
    state["last_made"], state["last_arm"] = np.float64(made), np.float64(arm)
    return arm


@called
def fw_sampling(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
                constants: Any, state: Any, arrays: Any, work: np.ndarray, answer: np.ndarray,
                final: bool) -> int:
    r"""FWS's step for \(m = 1\) (``frank_wolfe`` with ``best_arm_step_direction``): compiled apart from the top-m
    game, which a best-arm batch never reaches."""
    return frank_wolfe(best_arm_step_direction, counts, sums, made, m, epsilon, constants, state, arrays, work,
                       answer)


@called
def fw_sampling_top_m(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
                      constants: Any, state: Any, arrays: Any, work: np.ndarray, answer: np.ndarray,
                      final: bool) -> int:
    r"""FWS's step for any \(m\) (``frank_wolfe`` with ``direction``)."""
    return frank_wolfe(direction, counts, sums, made, m, epsilon, constants, state, arrays, work, answer)


@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    r"""One ``act`` of FWS (\(m = 1\)) for copy n (``_kernels.copy_step``)."""
    copy_step(fw_sampling, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    r"""One ``act`` of FWS (\(m = 1\)) over a batch (``_kernels.each_copy``)."""
    return each_copy(fw_sampling, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    r"""Whole episodes of FWS (\(m = 1\); ``_kernels.play``)."""
    play(fw_sampling, episodes)


@called
def top_m_one_copy(n: int, batch: tuple[Any, ...]) -> None:
    r"""One ``act`` of FWS (any \(m\)) for copy n."""
    copy_step(fw_sampling_top_m, n, batch)


@kernel
def top_m_step(batch: tuple[Any, ...]) -> np.ndarray:
    r"""One ``act`` of FWS (any \(m\)) over a batch (``_kernels.each_copy``)."""
    return each_copy(fw_sampling_top_m, batch)


@parallel_kernel
def parallel_top_m_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``top_m_step`` with the copies on all cores."""
    return over_copies(top_m_one_copy, batch)


@kernel
def top_m_rollout(episodes: tuple[Any, ...]) -> None:
    r"""Whole episodes of FWS (any \(m\))."""
    play(fw_sampling_top_m, episodes)


class FWSampling(BestArmAgent):
    r"""Frank-Wolfe Sampling (FWS): Frank-Wolfe steps on the lower bound's objective, tracked, stopped by GLR.

    Paper: P.-A. Wang, R.-C. Tzeng, A. Proutiere, Fast Pure Exploration via Frank-Wolfe, NeurIPS 2021
    (Algorithm 1, FWS, stated for any finite union of half-spaces as \(\mathrm{Alt}(\mu)\); Proposition 1 for
    \(f\) and its gradient), as the authors' code implements it (github.com/rctzeng/NeurIPS2021-FWS,
    ``standard/samplingrules.jl``, ``utilities/envelope.jl``) for \(m = 1\), and for top-m as Tirinzoni and
    Degenne (NeurIPS 2022) run it. Not one of the five papers: an asymptotically optimal rule that needs no
    optimal allocation \(w^*(\mu)\), only gradients.

    The lower bound's objective at an allocation \(x\) is \(F(x) = \min_{i \in S, j \notin S} f_{ij}(x)\), \(S\)
    the \(m\) largest empirical means (\(S = \{b\}\), the best arm, for \(m = 1\)),
    \(f_{ij}(x) = x_i d(\mu_i, m_{ij}) + x_j d(\mu_j, m_{ij})\), \(m_{ij} = (x_i \mu_i + x_j \mu_j) / (x_i + x_j)\)
    (\(d\) the arms' divergence, \(\mu\) the empirical means); by the envelope theorem
    \(\nabla f_{ij}(x) = d(\mu_i, m_{ij}) e_i + d(\mu_j, m_{ij}) e_j\). After \(t\) pulls (each arm once first;
    \(x = 1/K\) then):

    - \(z = (1/K, \dots, 1/K)\) if \(\lfloor t / K \rfloor\) is a perfect square (forced exploration) or a mean
      outside \(S\) ties one in \(S\);
    - else, with \(r_t = t^{-9/10} / K\) and \(H = \{\text{pairs } p : f_p(x) < \min F(x) + r_t\}\): \(z = e_a\),
      \(a\) = the \(\arg\max\) of \(\nabla f_p(x)\) (\(i\) or \(j\)), when \(H = \{p\}\); else \(z\) solves the
      zero-sum game \(\max_z \min_{p \in H} \langle z - x, \nabla f_p(x) \rangle\) over the simplex, a linear
      program;
    - \(x \leftarrow ((t - 1) x + z) / t\), and pull \(\operatorname*{arg\,max}_a x_a / N_a(t)\) (the arm furthest
      below its share).

    Stopping: by default the GLR (Chernoff) rule with GK 2016 Theorem 10's threshold on Bernoulli arms
    (Lattimore and Szepesvári's on Gaussian ones), over the \(m (K - m)\) pairs; any of the package's stopping
    components (``stopping``, ``threshold``; the paper's experiments used ``threshold="heuristic"``). The answer
    is \(S\). Theorem: FWS with the GLR rule is \(\delta\)-correct and
    \(\limsup_{\delta \to 0} \mathbb{E}[\tau] / \ln(1/\delta) \le T^*(\mu)\).

    Parameters: ``delta`` in \((0, 1)\); ``distribution`` and ``sigma`` (the arms' family); ``stopping``,
    ``threshold``. Any \(m\) (the observation's).

    Readings where the paper is silent (the authors' code decides most):

    - initialisation: each arm once, in the copy's arm order, with no stopping test (the package's opening of
      every fixed-confidence rule; the authors' runner also re-pulls a Bernoulli arm of mean 0 or 1 first);
    - a tie is a mean outside \(S\) within \(2.2 \times 10^{-16}\) of one in \(S\) (the code's ``eps()`` test for
      \(m = 1\); Tirinzoni and Degenne's top-m code has none);
    - the game for \(m = 1\) is solved exactly up to floating point (golden section on the best arm's share,
      water-filling of the rest) instead of by an LP solver (Tulip); where the best arm's optimal shares form an
      interval, \(z\) takes its middle. For \(m > 1\): on the arms of \(H\)'s pairs (every optimal \(z\) is 0
      elsewhere), by the simplex method (Bland's rule), then \(z\) = the optimal point nearest the uniform one
      (least \(\lvert z \rvert\), by an active-set method), unique and free of the arms' order (an interior-point
      solver returns some point inside the optimal face; which point is a reading);
    - ties in the \(\arg\max\) of the gradient, of \(x_a / N_a\) and in \(S\): the first in the copy's arm order
      (random per copy and episode; the smallest index with ``tie_break="index"``).

    Examples:
        One seeded episode on GK 2016's first instance, at \(\delta = 0.1\):

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import FWSampling
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-v0", means=[0.5, 0.45, 0.43, 0.4], setting="fixed_confidence",
        ...                budget=100_000)
        >>> result = play_episode(env, FWSampling(delta=0.1), seed=0)
        >>> result["pulls"] < 100_000, result["error"]
        (True, 0.0)
        >>> env = gym.make("BestArmIdentification-v0", means=[0.6, 0.5, 0.4, 0.3, 0.2], m=2,  # top-2
        ...                setting="fixed_confidence", budget=10**6)
        >>> play_episode(env, FWSampling(delta=0.1), seed=0)["answer"].tolist()
        [1, 1, 0, 0, 0]
    """

    families: ClassVar[tuple[str, ...]] = ("best_arm", "top_k")  # top-m: the \(m\) (= K) largest means
    constant_fields: ClassVar[tuple[str, ...]] = _stopping.FIELDS
    state_fields: ClassVar[tuple[str, ...]] = STATE_FIELDS
    anytime = True  # never reads the horizon: the env's budget is only a cap
    #: the Frank-Wolfe iterate \(x\), one share per arm
    array_fields: ClassVar[tuple[str, ...]] = ("x",)

    def __init__(self, delta: float = 0.05, *, stopping: str = "glr", threshold: str | None = None,
                 distribution: str = "bernoulli", sigma: float = 1.0, tie_break: str = "random") -> None:
        stopper = Stopping.component(type(self).__name__, delta, stopping, threshold, distribution, sigma)
        super().__init__(stopping=stopper, tie_break=tie_break)

    kernels = EntryPoints(step, parallel_step, rollout)
    top_m_kernels = EntryPoints(top_m_step, parallel_top_m_step, top_m_rollout)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        super().begin(obs, rows)
        self.arrays["x"][rows] = 1.0 / self.num_arms
