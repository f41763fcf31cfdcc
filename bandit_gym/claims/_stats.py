"""Statistics of the ledger: Holm's correction, the tests on proportions, and the power of paired tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

ALPHA = 0.05
"""The level at which corrected p-values decide."""


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


def fisher(failures_a: int, runs_a: int, failures_b: int, runs_b: int) -> float:
    """Two-sided Fisher's exact test of equal failure probabilities in two independent samples."""
    from scipy import stats

    table = [[failures_a, runs_a - failures_a], [failures_b, runs_b - failures_b]]
    return float(stats.fisher_exact(table).pvalue)


def exceeds(failures: int, runs: int, bound: float) -> float:
    """One-sided exact binomial test of ``P(failure) <= bound`` against ``> bound``: small when the observed
    failures are too many for the bound to hold."""
    from scipy import stats

    if bound >= 1.0:
        return 1.0
    return float(stats.binomtest(failures, runs, min(max(bound, 0.0), 1.0), alternative="greater").pvalue)


def clopper_pearson(failures: int, runs: int) -> tuple[float, float]:
    """The exact 95% interval of a proportion."""
    from scipy import stats

    ci = stats.binomtest(failures, runs).proportion_ci(method="exact")
    return float(ci.low), float(ci.high)


def runs_needed(difference: float, sd: float, family: int, power: float = 0.8) -> float:
    """Paired runs a two-sided t-test (normal approximation) would need to detect a mean difference of
    ``difference`` at level ``ALPHA / family`` (Bonferroni, Holm's strictest step) with the given power, when the
    per-run differences have standard deviation ``sd``."""
    from scipy import stats

    if difference == 0 or sd == 0:
        return float("inf") if difference == 0 else 2.0
    z = stats.norm.ppf(1 - ALPHA / (2 * family)) + stats.norm.ppf(power)
    return float((z * sd / abs(difference)) ** 2)


def runs_needed_proportions(p_a: float, p_b: float, family: int, power: float = 0.8) -> float:
    """Runs per arm a two-sided two-proportion test (normal approximation) would need to tell ``p_a`` from
    ``p_b`` at level ``ALPHA / family`` with the given power."""
    from scipy import stats

    if p_a == p_b:
        return float("inf")
    z = stats.norm.ppf(1 - ALPHA / (2 * family)) + stats.norm.ppf(power)
    return float(z**2 * (p_a * (1 - p_a) + p_b * (1 - p_b)) / (p_a - p_b) ** 2)
