"""The ledger's tests as the typed comparisons and bound settings ``_verdict.decide`` reads: each builder runs one
test on the data (``_stats`` or scipy.stats) and orients it so that a positive effect is the claim's direction.

A ``Comparison`` carries ``sd``, the standard deviation of one run's contribution to the effect, so that
``_verdict`` can compute the power and the runs needed (normal approximations; a counted bound's runs needed are the
exact binomial test's): for paired binary outcomes
``sqrt(p_10 + p_01)`` (the discordant share, McNemar's variance under equal probabilities); for two independent
proportions ``sqrt(p_a (1 - p_a) + p_b (1 - p_b))``; for paired continuous values the standard deviation of the
per-run differences; for two independent means ``sqrt(runs) sqrt(se_a^2 + se_b^2)``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bandit_gym.studies._stats import against_bound, below, clopper_pearson, exceeds, fisher, mcnemar
from bandit_gym.studies._verdict import Bound, Comparison


def _g(value: float) -> str:
    return f"{value:.3g}"


def paired_binary(label: str, better: str, worse: str, errors_better: Any, errors_worse: Any,
                  target: float | None = None) -> Comparison:
    """McNemar's exact test of paired error indicators (run r of both agents on the same instance), the claim
    being that ``better`` errs less often than ``worse``; effect = P(error of worse) - P(error of better)."""
    a = np.asarray(errors_better, dtype=bool)
    b = np.asarray(errors_worse, dtype=bool)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"{label}: errors_better {a.shape} and errors_worse {b.shape} must be paired 1-d runs")
    only_a, only_b, n = int((a & ~b).sum()), int((b & ~a).sum()), a.size
    return Comparison(label, mcnemar(only_a, only_b), (only_b - only_a) / n, math.sqrt((only_a + only_b) / n), n,
                      f"McNemar: {only_a} runs where only {better} errs, {only_b} where only {worse} errs ({n} "
                      f"paired runs; errors {int(a.sum())} against {int(b.sum())})", target)


def independent_binary(label: str, failures_better: int, runs_better: int, failures_worse: int, runs_worse: int,
                       target: float | None = None) -> Comparison:
    """Fisher's exact test of two independent failure counts, the claim being that the first fails less often;
    effect = the difference of the failure rates (worse - better)."""
    pa, pb = failures_better / runs_better, failures_worse / runs_worse
    return Comparison(label, fisher(failures_better, runs_better, failures_worse, runs_worse), pb - pa,
                      math.sqrt(pa * (1 - pa) + pb * (1 - pb)), min(runs_better, runs_worse),
                      f"Fisher: {failures_better}/{runs_better} against {failures_worse}/{runs_worse} failures", target)


def paired_wilcoxon(label: str, better: Any, worse: Any, target: float | None = None) -> Comparison:
    """Wilcoxon's signed-rank test of paired values (run r of both on the same seed), the claim being that
    ``better`` is lower; effect = mean(worse - better)."""
    from scipy import stats

    x, y = np.asarray(better, dtype=np.float64), np.asarray(worse, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError(f"{label}: better {x.shape} and worse {y.shape} must be paired 1-d runs (2 or more)")
    d = y - x
    if np.all(d == 0):
        p, w = 1.0, float("nan")
    else:
        result = stats.wilcoxon(x, y)
        p, w = float(result.pvalue), float(result.statistic)
    return Comparison(label, p, float(d.mean()), float(d.std(ddof=1)), x.size,
                      f"Wilcoxon W = {_g(w)}, mean difference {_g(float(d.mean()))} ({x.size} paired runs)", target)


def paired_t(label: str, mean_difference: float, t: float, p: float, runs: int,
             target: float | None = None) -> Comparison:
    """A paired t-test given by its mean difference and t, both oriented (> 0 in the claim's direction), and p."""
    sd = 0.0 if t == 0 or not np.isfinite(t) else abs(mean_difference / t) * math.sqrt(runs)
    return Comparison(label, float(p), float(mean_difference), sd, int(runs),
                      f"paired t = {_g(t)}, mean difference "
                      f"{_g(mean_difference)} ({runs} paired runs)", target)


def welch(label: str, better: Any, worse: Any, target: float | None = None) -> Comparison:
    """Welch's t-test of two independent means from summary rows (``mean``, ``se``, ``runs``), the claim being
    that ``better`` is lower; effect = worse mean - better mean."""
    from scipy import stats

    sa, sb = float(better["se"]), float(worse["se"])
    na, nb = int(better["runs"]), int(worse["runs"])
    result = stats.ttest_ind_from_stats(float(worse["mean"]), sb * math.sqrt(nb), nb, float(better["mean"]),
                                        sa * math.sqrt(na), na, equal_var=False)
    effect = float(worse["mean"]) - float(better["mean"])
    runs = min(na, nb)
    p = 1.0 if not np.isfinite(result.pvalue) else float(result.pvalue)
    return Comparison(label, p, effect, math.sqrt(runs * (sa**2 + sb**2)), runs,
                      f"Welch t = {_g(float(result.statistic))}, difference {_g(effect)}", target)


def z_difference(label: str, effect: float, se: float, runs: int, statistic: str,
                 target: float | None = None) -> Comparison:
    """A two-sided normal test of an effect with standard error ``se`` (``statistic`` says how it was built)."""
    from scipy import stats

    z = effect / se if se > 0 else (0.0 if effect == 0 else math.copysign(float("inf"), effect))
    p = float(2 * stats.norm.sf(abs(z)))
    return Comparison(label, p, effect, se * math.sqrt(runs), runs, f"z = {_g(z)}; {statistic}", target)


def binomial_bound(label: str, failures: int, runs: int, bound: float, trivial: float | None = 1.0) -> Bound:
    """An 'at most' probability: one-sided exact binomial tests of ``failures`` in ``runs`` against ``bound``,
    with the exact 95% interval in the statistic."""
    low, high = clopper_pearson(failures, runs)
    p = min(max(bound, 0.0), 1.0)
    return Bound(label, failures / runs, bound, below(failures, runs, bound), exceeds(failures, runs, bound),
                 math.sqrt(p * (1 - p)), runs,
                 f"{failures} errors in {runs} runs (exact 95% interval {_g(low)} to {_g(high)}) against "
                 f"{_g(bound)}", trivial, counted=True)


def normal_bound(label: str, mean: float, se: float, runs: int, bound: float, trivial: float | None = None,
                 exact: bool = True) -> Bound:
    """A mean against a bound: one-sided normal tests (``_stats.against_bound``)."""
    p_below, p_above = against_bound(mean, se, bound)
    z = (mean - bound) / se if se > 0 else float("nan")
    return Bound(label, mean, bound, p_below, p_above, se * math.sqrt(runs), runs,
                 f"mean {_g(mean)} (se {se:.2g}) against {_g(bound)}: z = {_g(z)}", trivial, exact)
