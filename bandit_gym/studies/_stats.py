"""Statistics of the ledger: Holm's correction, the exact tests on counts (Fisher, McNemar, the one-sided
binomial tests of a bound), normal tests of a mean against a bound, and the power of a test and the runs it
needs (normal approximations; exact for the binomial test of a bound)."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

ALPHA = 0.05
"""The level at which corrected p-values decide."""
POWER = 0.8
"""The power at which a non-significant result counts as evidence against the effect it was sized for."""


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979): sort ascending, multiply the i-th smallest (0-based) by
    ``m - i``, make the sequence non-decreasing, cap at 1, and put them back in the input order. Controls the
    family-wise error rate at any level under any dependence between the tests (scipy has no Holm step)."""
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


@functools.lru_cache(maxsize=4096)
def fisher(failures_a: int, runs_a: int, failures_b: int, runs_b: int) -> float:
    """Two-sided Fisher's exact test of equal failure probabilities in two independent samples (cached: the
    ledger asks for the same tables in several claims)."""
    from scipy import stats

    table = [[failures_a, runs_a - failures_a], [failures_b, runs_b - failures_b]]
    return float(stats.fisher_exact(table).pvalue)


def mcnemar(only_a: int, only_b: int) -> float:
    """McNemar's exact two-sided test of equal failure probabilities in paired runs, from the discordant pairs:
    ``only_a`` runs where only a failed, ``only_b`` where only b did. Under equal probabilities a discordant pair
    is a fair coin, so the p-value is the two-sided binomial test of ``only_a`` in ``only_a + only_b`` at 1/2
    (McNemar 1947; the exact form of Mosteller 1952). Concordant pairs carry no information."""
    from scipy import stats

    if only_a < 0 or only_b < 0:
        raise ValueError(f"only_a={only_a}, only_b={only_b}: discordant counts must be >= 0")
    if only_a + only_b == 0:
        return 1.0
    return float(stats.binomtest(only_a, only_a + only_b, 0.5).pvalue)


def exceeds(failures: int, runs: int, bound: float) -> float:
    """One-sided exact binomial test of ``P(failure) <= bound`` against ``> bound``: small when the observed
    failures are too many for the bound to hold."""
    from scipy import stats

    if bound >= 1.0:
        return 1.0
    return float(stats.binomtest(failures, runs, max(bound, 0.0), alternative="greater").pvalue)


def below(failures: int, runs: int, bound: float) -> float:
    """One-sided exact binomial test of ``P(failure) >= bound`` against ``< bound``: small when the observed
    failures are too few for the probability to reach the bound, i.e. the data confirm ``P(failure) < bound``.
    With no failures it is ``(1 - bound)^runs``."""
    from scipy import stats

    if bound <= 0.0:
        return 1.0
    return float(stats.binomtest(failures, runs, min(bound, 1.0), alternative="less").pvalue)


def clopper_pearson(failures: int, runs: int) -> tuple[float, float]:
    """The exact (Clopper-Pearson) 95% interval of a proportion."""
    from scipy import stats

    ci = stats.binomtest(failures, runs).proportion_ci(method="exact")
    return float(ci.low), float(ci.high)


def against_bound(mean: float, se: float, bound: float) -> tuple[float, float]:
    """One-sided normal tests of a mean with standard error ``se`` against ``bound``: (p that the true mean is
    below the bound, p that it is above), i.e. ``Phi(z)`` and ``1 - Phi(z)`` with ``z = (mean - bound) / se``."""
    from scipy import stats

    if se == 0:
        return (0.0, 1.0) if mean < bound else (1.0, 0.0) if mean > bound else (1.0, 1.0)
    z = (mean - bound) / se
    return float(stats.norm.cdf(z)), float(stats.norm.sf(z))


def power(effect: float, sd: float, runs: float, family: int, sides: int = 2) -> float:
    """Power of a test at level ``ALPHA / family`` (Bonferroni: Holm's strictest step) to detect a mean
    difference ``effect`` when one run's difference has standard deviation ``sd`` (normal approximation): with
    ``s = |effect| sqrt(runs) / sd`` and ``z = Phi^-1(1 - ALPHA / (sides family))``, ``Phi(s - z) + Phi(-s - z)``
    two-sided, ``Phi(s - z)`` one-sided (``sides=1``, the effect in the tested direction)."""
    from scipy.special import ndtr, ndtri  # the standard normal's cdf and quantile

    _check_sides(sides)
    if effect == 0:
        return ALPHA / family / (3 - sides)
    if sd == 0:
        return 1.0
    z = ndtri(1 - ALPHA / (sides * family))
    shift = abs(effect) * math.sqrt(runs) / sd
    return float(ndtr(shift - z) + (ndtr(-shift - z) if sides == 2 else 0.0))


def runs_needed(difference: float, sd: float, family: int, power: float = POWER, sides: int = 2) -> float:
    """Runs a test (normal approximation) would need to detect a mean difference of ``difference`` at level
    ``ALPHA / family`` (Bonferroni, Holm's strictest step) with the given power, when one run's difference has
    standard deviation ``sd``: ``((z_(1 - ALPHA / (sides family)) + z_power) sd / difference)^2``."""
    from scipy.special import ndtri

    _check_sides(sides)
    if difference == 0 or sd == 0:
        return float("inf") if difference == 0 else 2.0
    z = ndtri(1 - ALPHA / (sides * family)) + ndtri(power)
    return float((z * sd / abs(difference)) ** 2)


def binomial_runs_needed(rate: float, bound: float, family: int, power: float = POWER,
                         most: int = 10**7) -> float:
    """Runs the one-sided exact binomial test of ``below`` (``P(failure) >= bound`` against ``< bound``) needs,
    at level ``ALPHA / family`` (Holm's strictest step), to reject with the given power when the failure
    probability is ``rate``: the smallest n whose critical count ``c_n`` (the largest k with ``P(X <= k) <=
    ALPHA / family`` for X ~ Binomial(n, bound)) has ``P(Y <= c_n) >= power`` for Y ~ Binomial(n, rate). At
    ``rate`` = 0 that is the first n with ``(1 - bound)^n <= ALPHA / family``. Exact, unlike ``runs_needed``'s
    normal approximation, which overstates it about twice at 0 failures. ``inf`` where ``rate >= bound``, or
    where no n up to ``most`` suffices."""
    from scipy import stats

    level = ALPHA / family
    if not 0.0 < bound <= 1.0 or rate >= bound:
        return float("inf")
    if rate <= 0.0:
        return float(math.ceil(math.log(level) / math.log1p(-bound))) if bound < 1.0 else 1.0
    start = 1
    while start <= most:
        n = np.arange(start, min(4 * start, most + 1))
        critical = stats.binom.ppf(level, n, bound)  # the least k with P(X <= k) >= level
        critical = critical - (stats.binom.cdf(critical, n, bound) > level)
        reached = (critical >= 0) & (stats.binom.cdf(critical, n, rate) >= power)
        if reached.any():
            return float(n[np.argmax(reached)])
        start = 4 * start
    return float("inf")


def _check_sides(sides: int) -> None:
    if sides not in (1, 2):
        raise ValueError(f"sides={sides!r}: a test is one-sided (1) or two-sided (2)")
