"""EB-TCI for Gaussian arms of unknown variances: the Top Two rule of Jourdan et al. with the transportation costs
and the GLR stop of the Gaussian family whose variance is estimated (Jourdan, Degenne and Kaufmann 2023)."""

from __future__ import annotations

import functools
import math
from typing import Any, ClassVar

import numpy as np
import scipy

from bandit_gym import _validation as check
from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents.base import Agent, Obs
from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.agents.best_arm._fixed_confidence import STATE_FIELDS, start, tracked
from bandit_gym.agents.best_arm._kernels import copy_step, each_copy, over_copies
from bandit_gym.jit import called, kernel, parallel_kernel

#: the work rows: the empirical means, the empirical variances, scratch, the leader's costs \(W(\text{leader}, j)\)
MEANS, VARIANCES, SCRATCH, COSTS = range(4)
THRESHOLDS = ("mixture", "heuristic")
#: ``constants["threshold"]``: the index of the threshold in ``THRESHOLDS``
MIXTURE, HEURISTIC = range(len(THRESHOLDS))
#: \(c\), the precision (in units of the arm's variance) of the normal prior on the mean shift of the Bayes factor
PRIOR = 1.0
#: the bisection steps of a root of the cost's derivative (on an interval of the means' gap: \(2^{-100}\) of it)
BISECTIONS = 100


@called
def arm_cost(n: float, mean: float, variance: float, u: float) -> float:
    r"""\((n / 2) \ln(1 + (\text{mean} - u)^2 / \text{variance})\): the GLR of "the arm's mean is \(u\)" against
    any mean, both with their own variance (the Gaussian family of unknown variance)."""
    return 0.5 * n * math.log1p((mean - u) ** 2 / variance)


@called
def cubic(y: float, a3: float, a2: float, a1: float, a0: float) -> float:
    return ((a3 * y + a2) * y + a1) * y + a0


@called
def cost_at_root(low: float, high: float, a3: float, a2: float, a1: float, a0: float, ni: float, mi: float,
                 vi: float, nj: float, mj: float, vj: float) -> float:
    r"""The pair's cost at the root in [``low``, ``high``] of the cubic where it rises through 0 (a local minimum
    of the cost, at \(u = m_j + y\)), by bisection; infinite when it does not rise through 0 there."""
    if not (cubic(low, a3, a2, a1, a0) <= 0.0 <= cubic(high, a3, a2, a1, a0)):
        return math.inf
    for _ in range(BISECTIONS):
        middle = 0.5 * (low + high)
        if cubic(middle, a3, a2, a1, a0) <= 0.0:
            low = middle
        else:
            high = middle
    u = mj + 0.5 * (low + high)
    return arm_cost(ni, mi, vi, u) + arm_cost(nj, mj, vj, u)


@called
def pair_cost(ni: float, mi: float, vi: float, nj: float, mj: float, vj: float) -> float:
    r"""\(W(i, j) = \inf_u L_i(u) + L_j(u)\) (``arm_cost``) if \(\mu_i > \mu_j\) (else 0): the GLR statistic of
    "\(j\) beats \(i\)" and the Top Two transportation cost, exact. With \(u = \mu_j + y\) and
    \(D = \mu_i - \mu_j\), the derivative's sign is that of the cubic
    \((N_i + N_j) y^3 - D (2 N_j + N_i) y^2 + (N_j (v_i + D^2) + N_i v_j) y - N_i D v_j\) (negative at 0,
    positive at \(D\)): the infimum is at one of its roots where it rises through 0, found by bisection on each
    interval between the cubic's turning points."""
    if mi <= mj:
        return 0.0
    gap = mi - mj
    a3, a2 = ni + nj, -gap * (2.0 * nj + ni)
    a1, a0 = nj * (vi + gap * gap) + ni * vj, -ni * gap * vj
    first, second = gap, gap  # the turning points (roots of \(3 a_3 y^2 + 2 a_2 y + a_1\)) within \([0, D]\)
    discriminant = a2 * a2 - 3.0 * a3 * a1
    if discriminant > 0.0:
        root = math.sqrt(discriminant)
        first = min(max((-a2 - root) / (3.0 * a3), 0.0), gap)
        second = min(max((-a2 + root) / (3.0 * a3), 0.0), gap)
    least = cost_at_root(0.0, first, a3, a2, a1, a0, ni, mi, vi, nj, mj, vj)
    least = min(least, cost_at_root(first, second, a3, a2, a1, a0, ni, mi, vi, nj, mj, vj))
    return min(least, cost_at_root(second, gap, a3, a2, a1, a0, ni, mi, vi, nj, mj, vj))


@called
def mixture_boundary(ni: float, nj: float, level: float) -> float:
    r"""The pair's proved threshold at ``level`` \(= \ln x\): the largest \(L_i + L_j\) with
    \(\phi_i(L_i) + \phi_j(L_j) < \ln x\) (infinite when unbounded), \(\phi_n\) the log Bayes factor of one arm
    as a function of its GLR \(L\). With \(\kappa_n = c / (n + c)\) and
    \(E = \ln x + \ln((N_i + c)(N_j + c) / c^2) / 2\):
    \(E + \max_a (N_a / 2) \ln((1 - \kappa_a) / (1 - r_a \kappa_a))\), \(r_a = e^{2 E / N_a}\) (infinite where
    \(r_a \kappa_a \ge 1\))."""
    e = level + 0.5 * (math.log((ni + PRIOR) / PRIOR) + math.log((nj + PRIOR) / PRIOR))
    largest = 0.0
    for n in (ni, nj):
        kappa = PRIOR / (n + PRIOR)
        shrunk = 1.0 - math.exp(2.0 * e / n) * kappa
        if shrunk <= 0.0:
            return math.inf
        largest = max(largest, 0.5 * n * math.log((1.0 - kappa) / shrunk))
    return e + largest


@called
def leader_costs(counts: np.ndarray, mean: np.ndarray, variance: np.ndarray, leader: int, costs: np.ndarray) -> None:
    r"""``costs[j]`` \(= W(\text{leader}, j)\) for every \(j \ne \text{leader}\) (``pair_cost``), read by both the
    stop and the challenger."""
    for j in range(counts.shape[0]):
        if j != leader:
            costs[j] = pair_cost(np.float64(counts[leader]), mean[leader], variance[leader], np.float64(counts[j]),
                                 mean[j], variance[j])


@called
def stops(counts: np.ndarray, costs: np.ndarray, best: int, t: float, constants: Any) -> bool:
    r"""Whether every challenger \(j\) has \(W(\text{best}, j)\) (``costs[j]``) above its threshold
    (``"mixture"``: per pair; ``"heuristic"``: \(\ln((1 + \ln t) / \delta)\))."""
    heuristic = math.log((1.0 + math.log(t)) / constants["delta"])
    for j in range(counts.shape[0]):
        if j == best:
            continue
        ni, nj = np.float64(counts[best]), np.float64(counts[j])
        bound = mixture_boundary(ni, nj, constants["level"]) if constants["threshold"] == MIXTURE else heuristic
        if costs[j] <= bound:
            return False
    return True


@called
def challenger(counts: np.ndarray, costs: np.ndarray, leader: int) -> int:
    r"""\(\operatorname*{arg\,min}_{j \ne \text{leader}} W(\text{leader}, j) + \ln N_j\) (TCI, ``costs[j]``
    \(= W\)); the first in the copy's arm order on ties."""
    chosen, least = -1, math.inf
    for j in range(counts.shape[0]):
        if j != leader:
            cost = costs[j] + math.log(np.float64(counts[j]))
            if cost < least:
                chosen, least = j, cost
    return chosen


@called
def eb_tci_unknown_variances(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int,
                             epsilon: float, constants: Any, state: Any, arrays: Any, work: np.ndarray,
                             answer: np.ndarray, final: bool) -> int:
    r"""Each arm twice (a variance needs two samples); then stop (\(K\)) if the GLR test does, else the leader
    (the empirical best) or the TCI challenger, the leader's share tracked at \(\beta\). ``arrays["squares"]``
    holds each
    arm's squared deviations (by position)."""
    k, mean, variance = counts.shape[0], work[MEANS], work[VARIANCES]
    arm = start(counts, sums, made, m, state, mean, work[SCRATCH], answer)
    if arm >= 0:
        return arm
    if made < 2 * k:
        arm = made - k
    else:
        leader = np.int64(0)  # not a literal 0: bandit_gym.jit, "Literals"
        for a in range(k):
            variance[a] = max(arrays["squares"][a] / np.float64(counts[a]), 1e-300)
            if answer[a]:
                leader = a
        costs = work[COSTS]
        leader_costs(counts, mean, variance, leader, costs)
        if stops(counts, costs, leader, np.float64(made), constants):
            arm = k
        else:
            arm = tracked(leader, challenger(counts, costs, leader), constants, arrays)
    state["last_made"], state["last_arm"] = np.float64(made), np.float64(arm)
    return arm


@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    """One ``act`` for copy n (``_kernels.copy_step``)."""
    copy_step(eb_tci_unknown_variances, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` over a batch (``_kernels.each_copy``)."""
    return each_copy(eb_tci_unknown_variances, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@functools.cache
def mixture_level(delta: float, pairs: int) -> float:
    r"""\(\ln x\), \(x \ge 1\) the root of \((1 + \ln x) / x = \delta / P\): the level at which the product of
    two independent arms' maximal Bayes factors (each above \(y\) with probability at most \(1 / y\), by
    Ville's inequality) exceeds \(x\) with probability at most \(\delta / P\)."""
    target = math.log(delta / pairs)
    return float(scipy.optimize.brentq(lambda z: math.log1p(z) - z - target, 0.0, 10.0 - 2.0 * target, xtol=1e-14))


class EBTCIUnknownVariances(BestArmAgent):
    r"""EB-TCI on Gaussian arms whose variances are unknown (and may differ): the transportation costs and the GLR
    stop of the Gaussian family of unknown variance, with a proved threshold.

    Paper: M. Jourdan, R. Degenne, E. Kaufmann, Dealing with Unknown Variances in Best-Arm Identification, ALT
    2023 (the "GLR" approach: the transportation costs of the two-parameter Gaussian family in the Top Two
    sampling rule and in the stopping rule); the sampling rule is ``EBTCI``'s (Jourdan et al. 2022). Not one of
    the five papers. It reads each arm's squared deviations from the observation (``gym.make(
    "BestArmIdentification-v0", arm_distribution="gaussian", sigma=[...], squares=True, setting=
    "fixed_confidence")``), or, without them, keeps them from the pulls it sees (``last_value``; then every act
    must see the one pull since the last: a batched allocation is refused).

    With \(N_a\) pulls, empirical mean \(\mu_a\) and empirical variance \(v_a = \text{squares}_a / N_a\) (the
    maximum-likelihood one), one arm's GLR of "its mean is \(u\)" is
    \(L_a(u) = (N_a / 2) \ln(1 + (\mu_a - u)^2 / v_a)\) (the infimum over the variance of the Gaussian KL), and
    the transportation cost of "\(j\) beats \(i\)" is \(W(i, j) = \inf_u L_i(u) + L_j(u)\) if \(\mu_i > \mu_j\)
    (exact: the roots of a cubic, ``pair_cost``). After \(t\) pulls (each arm twice first): leader \(B\) the
    empirical best, challenger \(\operatorname*{arg\,min}_{j \ne B} W(B, j) + \ln N_j\), \(B\) pulled while its
    share of the steps it led is at most \(\beta\) (EB-TCI's tracking).

    Stop when \(W(B, j) > b(N_B, N_j)\) for every \(j\). Thresholds (``threshold``):

    - ``"mixture"`` (proved; the package's derivation, not the paper's threshold): each arm's Bayes factor for
      "its mean is \(\mu_a\)" with the right Haar prior on its scale and a \(\mathcal{N}(0, \sigma^2 / c)\) prior
      on the mean shift (\(c\) = ``PRIOR`` = 1; Lai 1976's invariant mixture),
      \(\mathrm{BF} = \sqrt{\kappa} \big((1 + u) / (1 + \kappa u)\big)^{N / 2}\),
      \(u = (\hat\mu_a - \mu_a)^2 / v_a\), \(\kappa = c / (N + c)\), is a test martingale of the arm's own
      samples (its scale-invariant filtration), whatever the sampling rule (each arm's samples are a fixed
      sequence read in turn), so its maximum exceeds \(y\) with probability at most \(1 / y\) (Ville). Two
      independent arms' maxima have a product above \(x\) with probability at most \((1 + \ln x) / x\); \(x\)
      solves \((1 + \ln x) / x = \delta / (K - 1)\). A wrong answer needs a pair whose true means lie in its
      alternative, where \(W \le L_B(\mu_B) + L_j(\mu_j)\); \(\ln \mathrm{BF}\) is a concave increasing function
      \(\phi_N(L)\) of the arm's \(L\), so the sum of the two \(L\)'s over \(\{\phi_B + \phi_j < \ln x\}\) is
      largest at a corner: ``mixture_boundary``, about \(\ln x + \ln(N_B N_j) / 2\) for large counts, infinite
      while an arm has too few samples for its Bayes factor to reach the level. \(\delta\)-correct on Gaussian
      arms of any variances.
    - ``"heuristic"``: \(\ln((1 + \ln t) / \delta)\), outside the theory (as GK 2016 §6 and the paper's
      experiments use it for their rules).

    Parameters: ``delta`` in \((0, 1)\); ``beta`` in \((0, 1)\) (default 1/2); ``threshold``. Best-arm
    identification (\(m = 1\), \(\epsilon = 0\)); its guarantee is for Gaussian arms (it plays any arms; on
    Bernoulli arms an arm whose samples are all equal has variance 0, read as \(10^{-300}\), outside the theory).

    Readings where the paper is silent:

    - initialisation: each arm twice, in the copy's arm order, with no stopping test; an empirical variance of 0
      (probability 0 on Gaussian arms) is read as \(10^{-300}\).
    - ties (leader, challenger): the first in the copy's arm order (random per copy and episode).
    - the budget: the env's budget is a cap; reaching it truncates the episode, with the empirical best arm as the
      answer.

    Examples:
        Three Gaussian arms of different standard deviations, which the agent does not know:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import EBTCIUnknownVariances
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-v0", means=[1.0, 0.5, 0.0], arm_distribution="gaussian",
        ...                sigma=[1.0, 0.5, 2.0], squares=True, setting="fixed_confidence", budget=100_000)
        >>> result = play_episode(env, EBTCIUnknownVariances(delta=0.01), seed=0)
        >>> result["pulls"] < 100_000, result["error"]
        (True, 0.0)
    """

    constant_fields: ClassVar[tuple[str, ...]] = ("delta", "threshold", "level", "beta")
    choice_fields: ClassVar[tuple[str, ...]] = ("threshold",)
    best_arm_only = True
    state_fields: ClassVar[tuple[str, ...]] = STATE_FIELDS
    anytime = True  # never reads the horizon: the env's budget is only a cap
    #: \(L_i\) and \(N^i_i\) (EB-TCI's tracking), and each arm's squared deviations by position (from the observation)
    array_fields: ClassVar[tuple[str, ...]] = ("led", "pulled_leading", "squares")

    def __init__(self, delta: float = 0.05, beta: float = 0.5, *, threshold: str = "mixture",
                 tie_break: str = "random") -> None:
        self.delta = check.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        self.beta = check.real("beta", beta, low=0.0, high=1.0, low_open=True, high_open=True)
        self.threshold = check.choice("threshold", threshold, THRESHOLDS)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, Any]:
        return {"delta": self.delta, "beta": self.beta, "threshold": self.threshold, **super().params()}

    kernels = EntryPoints(step, parallel_step, None)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        if float(np.max(np.asarray(obs["epsilon"])[rows])) > 0.0:
            raise ValueError(f"{type(self).__name__} answers the best arm exactly (epsilon = 0); the env has "
                             "epsilon > 0")
        self.constants["delta"][rows] = self.delta
        self.constants["threshold"][rows] = THRESHOLDS.index(self.threshold)
        self.constants["level"][rows] = mixture_level(self.delta, self.num_arms - 1)
        self.constants["beta"][rows] = self.beta
        for name in self.state_fields:
            self.state[name][rows] = -1.0
        for name in ("led", "pulled_leading"):
            self.arrays[name][rows] = 0.0

    def allocate(self, n: int, k: int) -> None:
        super().allocate(n, k)
        #: the squares and sums kept from the pulls seen, for an observation without ``squares``
        self.seen = np.zeros((3, n, k))

    def rule_step(self, obs: Obs, action: np.ndarray, follows: bool = True) -> np.ndarray:
        """The squares by position in each copy's arm order, then the compiled step."""
        squares = np.asarray(obs["squares"], dtype=np.float64) if "squares" in obs else self.kept_squares(obs)
        self.arrays["squares"][...] = np.take_along_axis(squares, self.order.arm_at, axis=1)
        return super().rule_step(obs, action, follows)

    def kept_squares(self, obs: Obs) -> np.ndarray:
        """Each arm's squared deviations kept by Welford's update from the pulls this agent sees (an observation
        without ``squares``): every act must see the one pull since the last (``last_arm``, ``last_value``), or a
        new episode; a batched allocation or a skipped act is refused."""
        squares, sums, counts = self.seen
        now = np.asarray(obs["counts"], dtype=np.float64)
        fresh = now.sum(axis=1) == 0.0
        squares[fresh], sums[fresh], counts[fresh] = 0.0, 0.0, 0.0
        added = (now - counts).sum(axis=1)
        rows = np.flatnonzero(added == 1.0)
        arm = np.asarray(obs["last_arm"])[rows, 0].astype(np.int64)
        missed = np.any((added != 0.0) & (added != 1.0)) or np.any(arm < 0)
        if missed or np.any(now[rows, arm] != counts[rows, arm] + 1.0):
            raise ValueError(f"{type(self).__name__} keeps each arm's squared deviations from the pulls it sees, and "
                             "missed some (a batched allocation, or an act skipped): make the env with squares=True")
        x = np.asarray(obs["last_value"], dtype=np.float64)[rows, 0]
        n = now[rows, arm]
        old_mean = np.divide(sums[rows, arm], n - 1.0, out=x.copy(), where=n > 1.0)
        squares[rows, arm] += (x - old_mean) * (x - (sums[rows, arm] + x) / n)
        sums[rows, arm] += x
        counts[...] = now
        return squares

    #: no compiled rollout (``Agent``'s: None): the rollout plays Bernoulli arms from the env's streams and shows
    #: the rule no observation, so it would not see the squares
    compiled_rollout = Agent.compiled_rollout
