"""Problem instances of the papers, and samplers that draw an instance per episode."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from bandit_gym import _validation as check

TAO2019_SETUPS: dict[int, tuple[float, ...]] = {
    1: (0.2, 0.25, 0.3, 0.35, 0.45, 0.55, 0.65, 0.7, 0.75, 0.8),
    2: tuple(round(0.405 + i / 100, 3) for i in range(20)),
    3: (0.45,) * 5 + (0.505,) * 5,
}
"""tao2019 §5: Bernoulli means, threshold 0.5."""

TAO2019_BUDGETS: dict[int, int] = {1: 1000, 2: 40000, 3: 100000}
"""The largest budget of each setup's figure (x-axis of tao2019 Figure 1): the presets' default budgets."""


def complexity(means: np.ndarray, threshold: float) -> float:
    r"""\(H = \sum_i 1 / \Delta_i^2\) with \(\Delta_i = \lvert \theta_i - \theta \rvert\) (tao2019, used by UCBE's
    oracle ``a``)."""
    gaps = np.abs(np.asarray(means, dtype=np.float64) - threshold)
    return float(np.sum(1.0 / gaps**2))


@dataclass(frozen=True)
class UniformMeans:
    r"""Sampler of Bernoulli means drawn i.i.d. uniform on ``[low, high]`` for ``num_arms`` arms, per episode.

    Pass it as ``means=`` to a thresholding env; it draws with the env's ``np_random``. ``num_arms`` is an
    integer from 2 to ``MAX_ARMS`` (``bandit_gym._validation``, 65,536), ``low`` \(\le\) ``high`` finite reals (in
    \([0, 1]\) for an env of Bernoulli arms, which checks the means it draws)."""

    num_arms: int = 10
    low: float = 0.0
    high: float = 1.0

    def __post_init__(self) -> None:
        check.integer("UniformMeans num_arms", self.num_arms, minimum=2, maximum=check.MAX_ARMS)
        check.real("UniformMeans low", self.low)
        check.real("UniformMeans high", self.high, low=self.low)
        if not np.isfinite(float(self.high) - float(self.low)):
            raise ValueError(f"UniformMeans low={self.low!r} and high={self.high!r}: the width high - low must be a "
                             "finite float")

    def __call__(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.uniform(self.low, self.high, size=(n, self.num_arms))


@dataclass(frozen=True)
class SpreadMeans:
    r"""Sampler of Bernoulli means below a random top level with a random spread, per episode:
    \(\text{top} \sim U(\text{top\_low}, \text{top\_high})\), ``spread`` log-uniform in
    ``[spread_low, spread_high]``, then ``num_arms`` means i.i.d. uniform on \([\text{top} - \text{spread},
    \text{top}]\).

    A law of instances from easy to hard for best-arm identification: with a small spread every arm is close to
    the best (the many near-optimal arms of Audibert et al.'s problems), with a large one most arms are clearly
    worse (what ``UniformMeans`` draws). Pass it as ``means=``; it draws with the env's ``np_random``."""

    num_arms: int = 15
    top_low: float = 0.5
    top_high: float = 0.7
    spread_low: float = 0.04
    spread_high: float = 0.5

    def __post_init__(self) -> None:
        check.integer("SpreadMeans num_arms", self.num_arms, minimum=2, maximum=check.MAX_ARMS)
        check.real("SpreadMeans top_low", self.top_low, low=0.0, high=1.0)
        check.real("SpreadMeans top_high", self.top_high, low=self.top_low, high=1.0)
        check.real("SpreadMeans spread_low", self.spread_low, low=0.0, high=1.0, low_open=True)
        check.real("SpreadMeans spread_high", self.spread_high, low=self.spread_low, high=self.top_low)

    def __call__(self, rng: np.random.Generator, n: int) -> np.ndarray:
        top = rng.uniform(self.top_low, self.top_high, size=(n, 1))
        spread = np.exp(rng.uniform(np.log(self.spread_low), np.log(self.spread_high), size=(n, 1)))
        return top - spread * rng.uniform(size=(n, self.num_arms))


@dataclass(frozen=True)
class BudgetRange:
    r"""Sampler of a budget \(T\) per episode in ``low..high`` (both included): uniform on the integers, or
    log-uniform (``log=True``: \(\mathrm{round}\big(\exp(U(\ln \text{low}, \ln \text{high}))\big)\), as many
    episodes per factor of 2 of \(T\)).

    Pass it as ``budget=`` to a pure-exploration env (thresholding, best arm, top K, correlated arms): every
    episode draws its \(T\) with the env's ``np_random``; the observation's ``budget_left`` starts at it and its
    space is bounded by ``high``. For training across budgets (the arm-wise RL policy); the experiment engine,
    the anytime wrappers and the compiled rollouts need a fixed budget."""

    low: int
    high: int
    log: bool = False

    def __post_init__(self) -> None:
        check.integer("BudgetRange low", self.low, minimum=1)
        check.integer("BudgetRange high", self.high, minimum=self.low, maximum=check.MAX_BUDGET)
        if not isinstance(self.log, (bool, np.bool_)):
            raise TypeError(f"BudgetRange log must be True or False, got {self.log!r}")

    def __call__(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.log:
            drawn = np.exp(rng.uniform(np.log(self.low), np.log(self.high), size=n))
            return np.clip(np.rint(drawn), self.low, self.high).astype(np.int64)
        return rng.integers(self.low, self.high, size=n, endpoint=True, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class Preset:
    """The instance a registered id plays (its ``means=``, or a threshold bandit's ``distributions=``), unless the
    user gives the env's other way of setting the instance (``distributions=`` of custom arms, or ``survival=``),
    which then replaces it: ``gym.make("ThresholdingBandit-Tao2019Setup1-v0", distributions=[...])`` plays the
    given arms at the preset's threshold and budget. A value given under the same name replaces it as any
    keyword argument of ``gym.make`` does."""

    value: object

    @staticmethod
    def resolve(value: object, replaced: bool) -> object:
        """``value`` itself, or a preset's value (None when the user ``replaced`` it by the other argument)."""
        if isinstance(value, Preset):
            return None if replaced else value.value
        return value


def oracle_values(means: np.ndarray, threshold: float) -> dict[str, float]:
    """Oracle parameters that some agents take from the true instance (named in their ``oracle_parameters``):
    ``H`` for UCBE."""
    return {"H": complexity(means, threshold)}


# ----------------------------------------------------------------------------------------- abernethy2016
DELIVERY_ROUTES = ("ferry", "motorway", "ring road", "city centre")
r"""Delivery routes (abernethy2016's motivation): \(X\) is a parcel's slack, in units of 10 minutes before the
deadline window closes (0..6), and the threshold \(c\) is how much slack the customer's deadline demands. The ferry
almost always makes a loose deadline but never a tight one; the city centre is often late but the only route that is
sometimes very early. Survival \(F\) (levels 1..6): ferry .99 .97 .60 .05 0 0, motorway .93 .90 .85 .55 .15 0, ring
road .90 .85 .78 .70 .40 .10, city centre .80 .75 .70 .62 .52 .30: the best route is the ferry for \(c \le 2\), the
motorway for \(c = 3\), the ring road for \(c = 4\), the city for \(c \ge 5\) (gaps .06 .07 .07 .08 .12 .20).
"""
DELIVERY_DISTRIBUTIONS = (
    (0.01, 0.02, 0.37, 0.55, 0.05, 0.00, 0.00),
    (0.07, 0.03, 0.05, 0.30, 0.40, 0.15, 0.00),
    (0.10, 0.05, 0.07, 0.08, 0.30, 0.30, 0.10),
    (0.20, 0.05, 0.05, 0.08, 0.10, 0.22, 0.30),
)


def threshold_assumption_failures(survival: np.ndarray, tolerance: float = 1e-9) -> list[str]:
    r"""The assumptions of abernethy2016 that a survival matrix \(F_i(j)\) (\(K\), \(m\)) breaks: a unique best arm
    \(i^*(j) = \operatorname*{arg\,max}_i F_i(j)\) at every level \(j\) (§4 and §5). Empty if all hold."""
    F = np.asarray(survival, dtype=np.float64)
    ranked = np.sort(F, axis=0)
    gaps = ranked[-1] - ranked[-2]
    return [f"level {j + 1}: arms {np.flatnonzero(F[:, j] >= ranked[-1, j] - tolerance).tolist()} tie for the "
            f"best (F = {ranked[-1, j]:g}); the paper assumes a unique best arm per level"
            for j in np.flatnonzero(gaps <= tolerance)]


def threshold_gaps(survival: np.ndarray) -> np.ndarray:
    r"""\(F_{i^*(j)}(j) - \max_{i \ne i^*(j)} F_i(j)\) at each level \(j\): the smallest gap at each threshold."""
    ranked = np.sort(np.asarray(survival, dtype=np.float64), axis=0)
    return ranked[-1] - ranked[-2]


@dataclass(frozen=True)
class RandomSurvival:
    r"""Sampler of a threshold-bandit instance per episode: ``num_arms`` arms on the values ``0..num_levels``,
    each arm's distribution drawn from the flat Dirichlet, kept only if every level \(j\) has a unique best arm
    \(\operatorname*{arg\,max}_i F_i(j)\) ahead of the others by at least ``min_gap`` (abernethy2016's assumption,
    with a margin), and, with ``crossing=True`` (default), if the best arm is not the same at every level
    (otherwise one arm wins at every threshold and the side information is useless). Draws are redone until they
    pass (vectorised rejection; the acceptance rate is printed in the error if it is too low to finish).

    Pass it as ``survival=`` to a threshold-bandit env: every episode draws its instance with the env's
    ``np_random``. For training across instances (the arm-wise RL policy). ``num_arms`` is at most ``MAX_ARMS``
    (65,536) and ``num_levels`` at most ``MAX_LEVELS`` (4096), the limits of the env (``bandit_gym._validation``);
    many arms or levels make a unique best arm per level, with its gap, rare, and the draws fail with an error
    after 1000 rounds of rejection."""

    num_arms: int = 3
    num_levels: int = 5
    min_gap: float = 0.05
    crossing: bool = True

    def __post_init__(self) -> None:
        check.integer("RandomSurvival num_arms", self.num_arms, minimum=2, maximum=check.MAX_ARMS)
        check.integer("RandomSurvival num_levels", self.num_levels, minimum=2 if self.crossing else 1,
                      maximum=check.MAX_LEVELS)
        check.real("RandomSurvival min_gap", self.min_gap, low=0.0, high=1.0, high_open=True)

    def __call__(self, rng: np.random.Generator, n: int) -> np.ndarray:
        out = np.empty((n, self.num_arms, self.num_levels))
        missing = np.arange(n)
        for _ in range(1000):
            p = rng.dirichlet(np.ones(self.num_levels + 1), size=(missing.size, self.num_arms))
            survival = np.clip(1.0 - np.cumsum(p, axis=2)[:, :, :-1], 0.0, 1.0)  # F(j) = P(X >= j), j = 1..m
            ranked = np.sort(survival, axis=1)
            ok = np.all(ranked[:, -1] - ranked[:, -2] >= max(self.min_gap, 1e-9), axis=1)
            if self.crossing:
                best = survival.argmax(axis=1)
                ok &= np.any(best != best[:, :1], axis=1)
            out[missing[ok]] = survival[ok]
            missing = missing[~ok]
            if missing.size == 0:
                return out
        raise ValueError(f"RandomSurvival({self.num_arms}, {self.num_levels}, min_gap={self.min_gap}) accepts too "
                         "few draws to finish: lower min_gap or the number of levels")


def staircase_distributions(num_arms: int, num_levels: int) -> np.ndarray:
    r"""A synthetic abernethy2016 instance for scaling studies: \(K\) arms on the values \(0..m\), arm \(i\) best on
    its own band of levels, gaps independent of \(m\).

    Arm \(i\) takes the value \(v_i = \max\big(1, \mathrm{round}((i + 1) m / K)\big)\) with probability
    \(s_i - r_i\), the value \(m\) with probability \(r_i\) and 0 otherwise, with \(s_i = 0.9 - 0.4 i / (K - 1)\) and
    \(r_i = 0.2 i / (K - 1)\). So \(F_i(j) = s_i\) for \(j \le v_i\) and \(r_i\) above: at level \(j\) the best arm
    is the first \(i\) with \(v_i \ge j\) (unique: \(s\) decreases, and \(r_{i-1} < s_i\)), safe arms are best at low
    thresholds and risky ones at high thresholds, and every gap is at least \(0.4 / (K - 1)\) whatever \(m\). With
    \(K > m\) some arms are best at no level. Returns the \((K, m + 1)\) probability vectors."""
    k = int(num_arms)
    m = int(num_levels)
    if k < 2 or m < 1:
        raise ValueError(f"staircase_distributions needs num_arms >= 2 and num_levels >= 1, got K={k}, m={m}")
    check.arm_count("staircase_distributions num_arms", k)
    check.level_count("staircase_distributions num_levels", m)
    i = np.arange(k)
    s = 0.9 - 0.4 * i / (k - 1)
    r = 0.2 * i / (k - 1)
    v = np.maximum(1, np.rint((i + 1) * m / k).astype(np.int64))
    p = np.zeros((k, m + 1))
    p[:, 0] = 1.0 - s
    p[i, v] += s - r
    p[:, m] += r
    return p


FIXED_GAP_SURVIVAL = ((0.8, 0.2), (0.6, 0.6), (0.5, 0.4), (0.4, 0.4))
r"""Survival of ``fixed_gap_distributions``' four arms on the low levels (\(j \le m/2\)) and the high ones
(\(j > m/2\))."""


def fixed_gap_distributions(num_levels: int) -> np.ndarray:
    r"""A synthetic abernethy2016 instance for \(m\)-scaling studies whose gaps do not change with \(m\), with two
    arms that are never best: four arms on the values \(0..m\) (\(m\) even), with survival \(F_i(j)\) constant on
    the low levels \(j \le m/2\) and on the high ones (``FIXED_GAP_SURVIVAL``): arm 0 (.8 low, .2 high) is best on
    the low levels, arm 1 (.6, .6) on the high ones, arms 2 (.5, .4) and 3 (.4, .4) at none. The gaps
    \(\Delta_i(j)\) are .2 / .3 / .4 (arms 1-3) on the low levels and .4 / .2 / .2 (arms 0, 2, 3) on the high
    ones, whatever \(m\): only the number of levels per regime grows with \(m\). Returns the \((4, m + 1)\)
    probability vectors (arm \(i\) takes the values 0, \(m/2\) and \(m\))."""
    m = int(num_levels)
    if m < 2 or m % 2:
        raise ValueError(f"fixed_gap_distributions needs an even num_levels >= 2, got {num_levels!r}")
    check.level_count("fixed_gap_distributions num_levels", m)
    survival = np.asarray(FIXED_GAP_SURVIVAL)
    p = np.zeros((len(survival), m + 1))
    p[:, 0] = 1.0 - survival[:, 0]
    p[:, m // 2] = survival[:, 0] - survival[:, 1]
    p[:, m] += survival[:, 1]
    return p


# ----------------------------------------------------------------------------------------- gabillon2012
AUDIBERT2010_PROBLEMS: dict[int, tuple[float, ...]] = {
    1: (0.5,) + (0.4,) * 19,
    2: (0.5,) + (0.42,) * 5 + (0.38,) * 14,
    3: (0.5, *(round(0.5 - 0.37**i, 12) for i in range(2, 5))),
    4: (0.5, 0.42, 0.4, 0.4, 0.35, 0.35),
    5: (0.5, *(round(0.5 - 0.025 * i, 12) for i in range(2, 16))),
    6: (0.5, 0.48) + (0.37,) * 18,
    7: (0.5,) + (0.45,) * 5 + (0.43,) * 14 + (0.38,) * 10,
}
r"""The seven Bernoulli problems of Audibert, Bubeck and Munos (COLT 2010, §6). gabillon2012 (NIPS) has no
experiments (its technical report, not used here, has them), so the choice and the values rest on Audibert et al.;
the best arm has mean 0.5 in all, so the formulas of problems 3 and 5 (\(0.5 - 0.37^i\), \(0.5 - 0.025\, i\)) run
over the other arms, \(i = 2..K\).
"""


def best_arm_complexity(means: ArrayLike) -> float:
    r"""\(H_1 = \sum_i 1 / \Delta_i^2\) of Audibert et al. (2010), \(\Delta_i = \mu^* - \mu_i\) for the suboptimal
    arms and \(\Delta_{(2)}\) for the best."""
    mu = np.sort(np.asarray(means, dtype=np.float64))[::-1]
    gaps = mu[0] - mu
    gaps[0] = gaps[1]
    return float(np.sum(1.0 / gaps**2))


def gap_complexity(means: ArrayLike, m: int = 1, epsilon: float = 0.0, b: float = 1.0) -> float:
    r"""\(H_\epsilon = \sum_i b^2 / \max\big((\Delta_i + \epsilon) / 2, \epsilon\big)^2\) of gabillon2012 (§4,
    eq. 6), with \(\Delta_k = \mu_k - \mu_{(m+1)}\) for the \(m\) best arms and \(\mu_{(m)} - \mu_k\) for the
    others."""
    mu = np.asarray(means, dtype=np.float64)
    ranked = np.sort(mu)[::-1]
    best = mu >= ranked[m - 1]
    gaps = np.where(best, mu - ranked[m], ranked[m - 1] - mu)
    return float(np.sum(b**2 / np.maximum((gaps + epsilon) / 2.0, epsilon) ** 2))


# ----------------------------------------------------------------------------------------- chen2017
CHEN2017_DATASETS: dict[str, float | None] = {"TwoGroup": None, "Uniform": 1.0, "Synthetic0.5": 0.5, "Synthetic6": 6.0}
r"""chen2017 §3's datasets: name -> exponent \(p\) of SYNTHETIC-\(p\) (None: TWOGROUP); UNIFORM is SYNTHETIC-1."""


def chen2017_means(dataset: str, n: int = 1000, k: int = 100) -> np.ndarray:
    r"""The means of a chen2017 dataset, sorted decreasingly (the env shuffles them per episode):

    - TwoGroup: 0.7 for the top \(K\) arms, 0.3 for the others;
    - Synthetic-\(p\) (Uniform = Synthetic-1, \(\theta_i = 1 - i / n\)): with \(b = 1 - K / n\) the boundary,
      \(\theta_i = b + (K / n) \big((K - i) / K\big)^p\) for \(i \le K\) and
      \(b - b \big((i - K) / (n - K)\big)^p\) for \(i > K\) (our reconstruction: the paper's formula is garbled in
      the text we have; this one meets every property it states: Synthetic-1 is Uniform, the boundary is
      \(1 - K / n\), \(p > 1\) moves the means towards it and \(p < 1\) away from it, and the means span \([0, 1]\)
      as Uniform's do, from 0 at \(i = n\) to about \(1 - p / n\) at \(i = 1\)).

    chen2017 §3 uses \(n = 1000\), \(K \in \{100, 250, 500\}\) and \(p \in \{0.5, 1, 6\}\).
    """
    if dataset not in CHEN2017_DATASETS:
        raise ValueError(f"dataset={dataset!r} is unknown; allowed: {', '.join(CHEN2017_DATASETS)}")
    if not 1 <= k < n:
        raise ValueError(f"k must be in 1..n-1, got k={k}, n={n}")
    p = CHEN2017_DATASETS[dataset]
    i = np.arange(1, n + 1)
    if p is None:
        return np.where(i <= k, 0.7, 0.3)
    b = 1.0 - k / n
    top = b + (k / n) * (np.clip(k - i, 0, None) / k) ** p
    rest = b - b * (np.clip(i - k, 0, None) / (n - k)) ** p
    return np.where(i <= k, top, rest)
