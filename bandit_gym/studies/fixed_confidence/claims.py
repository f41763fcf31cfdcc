r"""The fixed-confidence study's claims, from ``results.csv`` of ``bandit-gym reproduce fixed-confidence``: what
Garivier and Kaufmann (2016), the Top Two papers and the stopping rules' papers state that the study can test.

- ``fixed-confidence.1``: the lower bound (GK 2016, Theorem 1): every \(\delta\)-correct algorithm has
  \(\mathbb{E}[\tau] \ge \mathrm{kl}(\delta, 1 - \delta)\, T^*(\mu)\); checked on every rule a theorem makes
  \(\delta\)-correct.
- ``fixed-confidence.2``: Track-and-Stop's asymptotic optimality (GK 2016, Theorem 14):
  \(\lim \mathbb{E}[\tau] / \ln(1/\delta) = T^*(\mu)\) as \(\delta \to 0\).
- ``fixed-confidence.3``: Top Two's \(\beta\)-optimality (Jourdan et al. 2022, Theorem 2, EB-TCI; Jourdan and
  Degenne 2023, TTUCB): \(\limsup \mathbb{E}[\tau] / \ln(1/\delta) \le T^*_\beta(\mu) \le 2 T^*(\mu)\) at
  \(\beta = 1/2\).
- ``fixed-confidence.4`` to ``.6``: \(\delta\)-correctness, \(P(\text{wrong answer}) \le \delta\), of the GLR rule
  with the theory's threshold (GK 2016, Theorem 10, Bernoulli arms; Lattimore and Szepesvári 2020 on Gaussian
  arms), of the papers' own rules (LUCB1, UGapEc, KL-LUCB, lil'UCB), and of the heuristic threshold, which no
  theorem covers (GK 2016 §6 observe it \(\delta\)-correct in their experiments).

- ``fixed-confidence.7``: GK 2016 §6, Table 1: the mean number of draws of Track-and-Stop and KL-LUCB at
  \(\delta = 0.1\) on their \(\mu_1\) and \(\mu_2\), as they ran them (``table1.csv``, ``reproduce.TABLE1``), against
  the paper's numbers: a two-sided normal test per cell of the difference (package \(-\) paper) over its standard
  error, the package's and the paper's (the paper's estimated by the package's standard deviation over the paper's
  \(N\) runs), Holm over the cells.

The \(\delta\)-sweep (``sweep.csv``, ``sweep.py``: four problems, one Bernoulli instance each, \(\delta\) from 0.1 to
\(10^{-6}\)):

- ``fixed-confidence.8``: on every problem, the ratio
  \(\mathbb{E}[\tau] / (\mathrm{kl}(\delta, 1 - \delta)\, T^*(\mu))\) of the best proved rule (the ``mixture`` and
  ``own`` stops; the one of least ratio at the smallest \(\delta\)) falls at every step of \(\delta\): one-sided
  reading of Welch's tests of the ratio at consecutive deltas (independent runs), Holm over the steps of every
  problem.
- ``fixed-confidence.9`` and ``.10``: \(\delta\)-correctness of the proved stops, and of the heuristic threshold, on
  the sweep's cells (exact binomial tests), as ``.4`` to ``.6``.
- ``fixed-confidence.11``: the lower bound on the problems with one correct answer (best arm, top-\(m\),
  thresholding; the \(\epsilon\)-best-arm bound of Degenne and Koolen 2019 is asymptotic), as ``.1``.

The \(\delta\)-correctness rows test the settings where the runs can confirm the bound:
\(\text{runs} \cdot \delta \ge 5\) (with 50 runs, \(\delta = 0.1\) only), a rule fixed before the study ran (the
sweep's rows also test every cell whose error rate is above \(\delta\), which can contradict the bound); a smaller
\(\delta\) needs more runs than the study makes (the slow tests of
``tests/agents/best_arm/test_fixed_confidence.py`` test each component at its own \(\delta\) with more runs).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from bandit_gym.studies._compare import binomial_bound, normal_bound, welch, z_difference
from bandit_gym.studies._ledger import Claim, Loss, fmt, read_csv
from bandit_gym.studies._verdict import Evidence, Group, Kind, Method, decide

PAPER = "fixed-confidence"
SETTING = ("BestArmIdentification-v0, setting = fixed_confidence, the study's {instances} instances (3 from the "
           r"literature, 4 random; \(K = 4\) to 50, Bernoulli and Gaussian), \(\delta \in \{{0.1, 0.01, 0.001\}}\), "
           r"{runs} runs per cell, cap \(10^7\) pulls")
#: the rules a theorem makes delta-correct (the study's labels), and those outside the theory
THEORY = ("LUCB1", "UGapEc", "KL-LUCB", "lilUCB", "TaS-C", "TaS-D", "EB-TCI", "TTUCB", "TTTS", "FWS")
GLR_THEORY = ("TaS-C", "TaS-D", "EB-TCI", "TTUCB", "TTTS", "FWS")
OWN_RULES = ("LUCB1", "UGapEc", "KL-LUCB", "lilUCB")
HEURISTIC = ("TaS-D heuristic", "EB-TCI heuristic")
#: a delta-correctness setting is tested where runs * delta reaches this (where the runs can confirm the bound)
MIN_EXPECTED_ERRORS = 5.0
BINOMIAL = Method(r"one-sided exact binomial tests of the error count against \(\delta\)", paired=False,
                  runs_paired=False, design=r"one rule's runs against a bound, per instance and \(\delta\)")
NORMAL = Method("one-sided normal tests of the mean sample complexity against the bound", paired=False,
                runs_paired=False, design=r"one rule's runs against a bound, per instance and \(\delta\)")
TABLE1_TEST = Method("two-sided normal tests of the mean sample complexity against the paper's", paired=False,
                     runs_paired=False, design="the package's runs against the paper's mean of its own runs, per "
                                               "algorithm and instance")


#: the plain-text formulas of the study's own labels (``table1.csv``'s ``how``, ``sweep.csv``'s problems and
#: instances), typeset for the ledger
_TYPESET = ((r"ln\(\(1 \+ ln t\)/delta\)", r"\\(\\ln((1 + \\ln t)/\\delta)\\)"),
            (r"\bt the samples", r"\\(t\\) the samples"), (r"\bL >= U\b", r"\\(L \\ge U\\)"),
            (r"\bepsilon-", r"\\(\\epsilon\\)-"),
            (r"\bepsilon = ([0-9.]+)", r"\\(\\epsilon = \1\\)"), (r"\bm = ([0-9]+)", r"\\(m = \1\\)"))


def _typeset(text: str) -> str:
    r"""``text`` with the formulas of ``_TYPESET`` as KaTeX: ``"epsilon = 0.05"`` becomes ``"\(\epsilon = 0.05\)"``
    (a text that already holds a formula is returned as it is)."""
    if "\\(" in text:
        return text
    for plain, math_ in _TYPESET:
        text = re.sub(plain, math_, text)
    return text


def _tex(x: float) -> str:
    r"""A number inside a formula: ``1e-06`` as ``10^{-6}``, others as ``{x:g}``."""
    text = f"{x:g}"
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    power = f"10^{{{int(exponent)}}}"
    return power if mantissa == "1" else rf"{mantissa} \cdot {power}"


def claims(folder: Path) -> tuple[list[Claim], list[Loss]]:
    """The ledger's rows for the fixed-confidence study (this module's docstring), from ``folder``."""
    results = read_csv(folder, "results.csv")
    runs = int(results["runs"].iloc[0])
    setting = SETTING.format(instances=results["instance"].nunique(), runs=runs)
    pulls = results[results["metric"] == "pulls"]
    errors = results[results["metric"] == "error"].copy()
    errors["failures"] = (errors["mean"] * errors["runs"]).round().astype(int)
    return [_lower_bound(pulls, setting), _track_and_stop(pulls, setting), _top_two(pulls, setting),
            _correct(errors, setting, GLR_THEORY, 4, "GLR (Chernoff) stopping with the theory's threshold",
                     "GK 2016 Theorem 10 (Bernoulli arms); Lattimore and Szepesvári 2020, Lemma 33.7 and Proposition "
                     "33.9 (Gaussian arms)",
                     r"The GLR stopping rule with the threshold \(\ln(2t(K - 1)/\delta)\) (Bernoulli arms) or "
                     r"Lattimore and Szepesvári's (Gaussian arms) is \(\delta\)-correct whatever the sampling rule: "
                     r"\(P(\text{wrong answer}) \le \delta\)."),
            _correct(errors, setting, OWN_RULES, 5, "the papers' own stopping rules",
                     "Kalyanakrishnan et al. 2012 (LUCB1); Gabillon et al. 2012, Theorem 2 (UGapEc); Kaufmann and "
                     "Kalyanakrishnan 2013, Theorem 3 (KL-LUCB); Jamieson et al. 2014, Theorem 2 (lil'UCB)",
                     "LUCB1, UGapEc, KL-LUCB and lil'UCB, each with its paper's stopping rule and parameters, return "
                     r"the best arm with probability at least \(1 - \delta\)."),
            _correct(errors, setting, HEURISTIC, 6, r"the heuristic threshold \(\ln((1 + \ln t)/\delta)\)",
                     "GK 2016 §6 (an observation, no theorem)",
                     r"The GLR stopping rule with the heuristic threshold \(\ln((1 + \ln t)/\delta)\) is "
                     r"\(\delta\)-correct in practice (GK 2016 observe errors well below \(\delta\))."),
            _table1(read_csv(folder, "table1.csv")),
            *sweep_claims(read_csv(folder, "sweep.csv")),
            ], []


def _lower_bound(pulls: Any, setting: str) -> Claim:
    rows = pulls[pulls["rule"].isin(THEORY)]
    points = tuple(normal_bound(rf"{r['rule']} on {r['instance']} at \(\delta = {_tex(r['delta'])}\)", float(r["mean"]),
                                float(r["se"]), int(r["runs"]), float(r["lower_bound"]))
                   for _, r in rows.iterrows())
    ratios = rows["ratio"]
    observed = (rf"\(\mathbb{{E}}[\tau] / (\mathrm{{kl}}(\delta, 1 - \delta) T^*)\) from {fmt(ratios.min())} "
                f"({_where(rows, ratios.idxmin())}) to {fmt(ratios.max())} ({_where(rows, ratios.idxmax())}) over "
                rf"{len(rows)} (rule, instance, \(\delta\)) cells")
    evidence = Evidence(Kind.LOWER_BOUND, NORMAL, bounds=points, family=f"the {len(points)} cells",
                        note=r"\(T^*(\mu)\) by `bandit_gym.lower_bounds.best_arm_allocation` (GK 2016 Theorem 5).")
    return Claim(f"{PAPER}.1", PAPER, "Garivier and Kaufmann 2016, Theorem 1",
                 r"Every \(\delta\)-correct algorithm has \(\mathbb{E}[\tau] \ge \mathrm{kl}(\delta, 1 - \delta) "
                 r"T^*(\mu)\) on every instance.",
                 setting + r"; the rules a theorem makes \(\delta\)-correct", observed, decide(evidence))


def _ratio_trend(pulls: Any, rules: tuple[str, ...]) -> tuple[str, list[str]]:
    """Per rule and instance, E[tau] / (T* ln(1/delta)) from the largest delta to the smallest, and the
    (rule, instance) pairs where it does not fall as delta falls."""
    parts, rising = [], []
    for (rule, instance), g in pulls[pulls["rule"].isin(rules)].groupby(["rule", "instance"], sort=False):
        g = g.sort_values("delta", ascending=False)
        scaled = (g["mean"] / (g["T_star"] * (1.0 / g["delta"]).map(math.log))).to_numpy()
        parts.append(f"{rule} on {instance}: " + ", ".join(fmt(x, 3) for x in scaled))
        if (scaled[1:] >= scaled[:-1]).any():
            rising.append(f"{rule} on {instance}")
    return "; ".join(parts), rising


def _limit_reason(rising: list[str], target: str) -> str:
    trend = (r"it falls as \(\delta\) falls for every rule and instance" if not rising else
             rf"it falls as \(\delta\) falls except for {', '.join(rising)}")
    return (rf"a limit as \(\delta \to 0\) ({target}): no finite \(\delta\) confirms or contradicts it; of the ratio "
            rf"\(\mathbb{{E}}[\tau] / (T^* \ln(1/\delta))\), {trend}.")


def _track_and_stop(pulls: Any, setting: str) -> Claim:
    trend, rising = _ratio_trend(pulls, ("TaS-D", "TaS-C"))
    evidence = Evidence(Kind.ORDER, reason=_limit_reason(rising, r"the ratio to \(T^*(\mu) \ln(1/\delta)\) tends to 1"))
    return Claim(f"{PAPER}.2", PAPER, "Garivier and Kaufmann 2016, Theorem 14",
                 "Track-and-Stop (C- or D-tracking, GLR stopping with the threshold of Theorem 10) is asymptotically "
                 r"optimal: \(\lim_{\delta \to 0} \mathbb{E}[\tau] / \ln(1/\delta) = T^*(\mu)\).",
                 setting + r"; TaS-D and TaS-C with the threshold \(\ln(2t(K - 1)/\delta)\) (Bernoulli) or Lattimore "
                 "and Szepesvári's (Gaussian)",
                 r"\(\mathbb{E}[\tau] / (T^* \ln(1/\delta))\) at \(\delta = 0.1, 0.01, 0.001\): " + trend,
                 decide(evidence))


def _top_two(pulls: Any, setting: str) -> Claim:
    trend, rising = _ratio_trend(pulls, ("EB-TCI", "TTUCB"))
    evidence = Evidence(Kind.ORDER, reason=_limit_reason(rising, r"against \(T^*_\beta(\mu)\), between \(T^*(\mu)\) "
                                                                 r"and \(2 T^*(\mu)\)"))
    return Claim(f"{PAPER}.3", PAPER, "Jourdan et al. 2022, Theorem 2; Jourdan and Degenne 2023",
                 r"A Top Two rule with \(\beta = 1/2\) (EB-TCI; TTUCB) and GLR stopping is asymptotically "
                 r"\(\beta\)-optimal: \(\limsup_{\delta \to 0} \mathbb{E}[\tau] / \ln(1/\delta) \le T^*_\beta(\mu) "
                 r"\le 2 T^*(\mu)\).",
                 setting + "; EB-TCI and TTUCB with the theory's GLR threshold",
                 r"\(\mathbb{E}[\tau] / (T^* \ln(1/\delta))\) at \(\delta = 0.1, 0.01, 0.001\): " + trend,
                 decide(evidence))


def _correct(errors: Any, setting: str, rules: tuple[str, ...], number: int, what: str, source: str,
             claim: str) -> Claim:
    rows = errors[errors["rule"].isin(rules)]
    tested = rows[rows["runs"] * rows["delta"] >= MIN_EXPECTED_ERRORS]
    points = tuple(binomial_bound(rf"{r['rule']} on {r['instance']} at \(\delta = {_tex(r['delta'])}\)",
                                  int(r["failures"]),
                                  int(r["runs"]), float(r["delta"])) for _, r in tested.iterrows())
    observed = (f"{int(rows['failures'].sum())} errors in {int(rows['runs'].sum())} runs of {', '.join(rules)} over "
                rf"{len(rows)} (rule, instance, \(\delta\)) cells; largest error rate {fmt(rows['mean'].max())}; "
                rf"tested at the {len(tested)} cells where \(\text{{runs}} \times \delta \ge {MIN_EXPECTED_ERRORS:g}\)")
    evidence = Evidence(Kind.AT_MOST, BINOMIAL, bounds=points, family=f"the {len(points)} tested cells",
                        note=rf"{what}: smaller values of \(\delta\) need more runs than the study makes.")
    return Claim(f"{PAPER}.{number}", PAPER, source, claim, setting + f"; {', '.join(rules)}", observed,
                 decide(evidence))


def _where(rows: Any, index: Any) -> str:
    r = rows.loc[index]
    return rf"{r['rule']} on {r['instance']} at \(\delta = {_tex(r['delta'])}\)"


def _table1(table: Any) -> Claim:
    """GK 2016 Table 1 side by side: is the package's mean number of draws the paper's, per algorithm and
    instance?"""
    tests = []
    for _, r in table.iterrows():
        se_both = math.sqrt(float(r["se"]) ** 2 + float(r["sd"]) ** 2 / int(r["paper_runs"]))
        tests.append(z_difference(f"{r['algorithm']} on {r['instance']}", float(r["mean"] - r["paper"]), se_both,
                                  int(r["runs"]), f"{r['mean']:.0f} (se {r['se']:.0f}, {int(r['runs'])} runs) "
                                  f"against the paper's {r['paper']:.0f} ({int(r['paper_runs'])} runs)"))
    numbers = "; ".join(f"{algorithm} {' and '.join(f'{x:.0f}' for x in rows['paper'])}"
                        for algorithm, rows in table.groupby("algorithm", sort=False))
    how = "; ".join(f"{algorithm}: {_typeset(rows['how'].iloc[0])}"
                    for algorithm, rows in table.groupby("algorithm", sort=False))
    instances = " and ".join(dict.fromkeys(table["instance"]))
    observed = "; ".join(rf"{r['algorithm']} on {r['instance']}: {r['mean']:.0f} \(\pm\) {r['se']:.0f} against "
                         rf"{r['paper']:.0f} (\(z = {r['z']:+.2f}\), {r['z_both']:+.2f} with the paper's sampling "
                         rf"error)"
                         for _, r in table.iterrows())
    evidence = Evidence(Kind.NO_DIFFERENCE, TABLE1_TEST, Group("cells", tuple(tests)),
                        family=f"the {len(tests)} cells",
                        note="The paper's standard error is not published: it is taken as the package's standard "
                             "deviation over the paper's runs.")
    setting = (rf"BestArmIdentification-v0, setting = fixed_confidence, {instances} (Bernoulli), \(\delta = "
               rf"{table['delta'].iloc[0]:g}\), {int(table['runs'].iloc[0])} runs per cell (the paper: "
               rf"{int(table['paper_runs'].iloc[0])}), cap \(10^7\) pulls; {how}")
    return Claim(f"{PAPER}.7", PAPER, "Garivier and Kaufmann 2016, §6, Table 1",
                 rf"At \(\delta = {table['delta'].iloc[0]:g}\) on {instances}, the mean numbers of draws are: "
                 rf"{numbers} (both at the exploration rate \(\ln((1 + \ln t)/\delta)\): Track-and-Stop's GLR "
                 "threshold, KL-LUCB's confidence bounds).", setting, observed,
                 decide(evidence))


# ----------------------------------------------------------------------------------------- the delta-sweep
SWEEP_TREND = Method(r"Welch's t-tests of the ratio \(\mathbb{E}[\tau] / (\mathrm{kl}(\delta, 1 - \delta) T^*)\) at "
                     r"consecutive values of \(\delta\)",
                     paired=False, runs_paired=False,
                     design=r"one rule per problem; independent runs at each \(\delta\) (the seeds differ)")
#: the sweep's problems whose bound kl(delta, 1 - delta) T*(mu) holds at every delta (one correct answer)
ONE_ANSWER = ("best arm", "top-2", "thresholding")


def sweep_claims(frame: Any) -> list[Claim]:
    """The ledger's rows on the delta-sweep (``fixed-confidence.8`` to ``.11``; this module's docstring), from the
    rows of ``sweep.csv``."""
    frame = frame.assign(problem=frame["problem"].map(_typeset), instance=frame["instance"].map(_typeset))
    problems = "; ".join(f"{name} on {rows['instance'].iloc[0]}" for name, rows in frame.groupby("problem", sort=False))
    deltas = ", ".join(_tex(d) for d in sorted(set(frame["delta"]), reverse=True))
    setting = (r"BestArmIdentification-v0 and ThresholdingBandit-v0, setting = fixed_confidence, the "
               r"\(\delta\)-sweep's "
               rf"{frame['problem'].nunique()} problems ({problems}; Bernoulli arms), \(\delta \in \{{{deltas}\}}\), "
               rf"{int(frame['runs'].iloc[0])} runs per cell, cap \(10^7\) pulls")
    errors = frame.assign(failures=frame["errors"].astype(int), mean=frame["error_rate"])
    proved = errors[errors["proved"].astype(bool)]
    heuristic = errors[~errors["proved"].astype(bool)]
    return [_sweep_trend(frame[frame["proved"].astype(bool)], setting),
            _sweep_correct(proved, setting, 9, "the proved stops (GLR at the mixture threshold, KL-LUCB's and "
                           "LUCB1's own)",
                           "Kaufmann and Koolen 2021 (mixture martingales: the package's mixture thresholds, "
                           "agents/best_arm/_stopping.py and agents/thresholding/_glr.py); Kaufmann and "
                           "Kalyanakrishnan 2013, Theorem 3 (KL-LUCB); Kalyanakrishnan et al. 2012 (LUCB1)",
                           "The GLR stopping rule at the mixture threshold, KL-LUCB's and LUCB1's rules are "
                           r"\(\delta\)-correct whatever the sampling rule, on best-arm, \(\epsilon\)-best-arm, "
                           r"top-\(m\) and thresholding problems: \(P(\text{wrong answer}) \le \delta\)."),
            _sweep_correct(heuristic, setting, 10, r"the heuristic threshold \(\ln((1 + \ln t)/\delta)\)",
                           "GK 2016 §6 (an observation, no theorem)",
                           r"The GLR stopping rule with the heuristic threshold \(\ln((1 + \ln t)/\delta)\) is "
                           r"\(\delta\)-correct in practice, on the sweep's four problems."),
            _sweep_lower_bound(frame[frame["proved"].astype(bool) & frame["problem"].isin(ONE_ANSWER)], setting)]


def _ratio_row(row: Any) -> dict[str, float]:
    """A cell's ratio as a mean with its standard error, for ``welch``."""
    return {"mean": float(row["ratio"]), "se": float(row["se_tau"] / row["lower_bound"]), "runs": int(row["runs"])}


def _sweep_trend(proved: Any, setting: str) -> Claim:
    groups, parts = [], []
    for problem, rows in proved.groupby("problem", sort=False):
        last = rows[rows["delta"] == rows["delta"].min()]
        best = last.loc[last["ratio"].idxmin()]
        series = rows[(rows["rule"] == best["rule"]) & (rows["threshold"] == best["threshold"])]
        series = series.sort_values("delta", ascending=False)
        label = f"{best['rule']} ({best['threshold']}) on {problem}"
        steps = [welch(f"{label}, delta {a['delta']:g} to {b['delta']:g}", _ratio_row(b), _ratio_row(a))
                 for (_, a), (_, b) in zip(series.iloc[:-1].iterrows(), series.iloc[1:].iterrows(), strict=True)]
        if steps:
            groups.append(Group(r"steps of \(\delta\)", tuple(steps)))
        parts.append(f"{label}: " + ", ".join(f"{r:.2f}" for r in series["ratio"]))
    observed = r"the best proved rule's ratio at \(\delta = " + ", ".join(
        _tex(d) for d in sorted(set(proved["delta"]), reverse=True)) + r"\): " + "; ".join(parts)
    claim = (r"On each problem of the sweep, the ratio \(\mathbb{E}[\tau] / (\mathrm{kl}(\delta, 1 - \delta) "
             r"T^*(\mu))\) of the best proved rule falls at every step as \(\delta\) falls from 0.1 to \(10^{-6}\) (an "
             "asymptotically optimal rule's ratio tends to 1; how close it comes is not tested here).")
    source = r"The \(\delta\)-sweep's goal; the limit: Garivier and Kaufmann 2016, Theorem 14"
    if not groups:
        evidence = Evidence(Kind.OUT_OF_REACH, reason=r"the sweep has one \(\delta\): no step to test.")
    else:
        evidence = Evidence(Kind.DIRECTION, SWEEP_TREND, Group("problems", tuple(groups)),
                            family=f"the {sum(len(g.members) for g in groups)} steps of every problem",
                            note="The best proved rule of a problem is the proved rule of least ratio at the "
                                 r"smallest \(\delta\).")
    return Claim(f"{PAPER}.8", PAPER, source, claim, setting + "; the proved stops (mixture, own)", observed,
                 decide(evidence))


def _sweep_correct(errors: Any, setting: str, number: int, what: str, source: str, claim: str) -> Claim:
    """As ``_correct``, on the sweep's cells: tested where ``runs * delta >= MIN_EXPECTED_ERRORS`` (where the runs
    can confirm the bound) and wherever the error rate is above delta (where they can contradict it)."""
    tested = errors[(errors["runs"] * errors["delta"] >= MIN_EXPECTED_ERRORS) | (errors["mean"] > errors["delta"])]
    points = tuple(binomial_bound(f"{r['rule']} ({r['threshold']}) on {r['problem']} at delta = {r['delta']:g}",
                                  int(r["failures"]), int(r["runs"]), float(r["delta"])) for _, r in tested.iterrows())
    worst = errors.loc[(errors["mean"] / errors["delta"]).idxmax()]
    largest = (rf"; the largest error rate against \(\delta\): {fmt(worst['mean'])} ({worst['rule']} "
               rf"({worst['threshold']}) on {worst['problem']} at \(\delta = {_tex(worst['delta'])}\))"
               if errors["failures"].any() else "")
    observed = (f"{int(errors['failures'].sum())} errors in {int(errors['runs'].sum())} runs over {len(errors)} "
                rf"(rule, threshold, problem, \(\delta\)) cells{largest}; tested at the {len(tested)} cells where "
                rf"\(\text{{runs}} \times \delta \ge {MIN_EXPECTED_ERRORS:g}\) or the rate is above \(\delta\)")
    if points:
        evidence = Evidence(Kind.AT_MOST, BINOMIAL, bounds=points, family=f"the {len(points)} tested cells",
                            note=rf"The stops: {what}. A cell with \(\text{{runs}} \times \delta < "
                                 rf"{MIN_EXPECTED_ERRORS:g}\) and a rate at most \(\delta\) can neither confirm nor "
                                 "contradict the bound.")
    else:
        evidence = Evidence(Kind.OUT_OF_REACH, reason=rf"no cell has \(\text{{runs}} \times \delta \ge "
                                                      rf"{MIN_EXPECTED_ERRORS:g}\) or an error rate above \(\delta\) "
                                                      f"({what}).")
    return Claim(f"{PAPER}.{number}", PAPER, source, claim, setting + f"; {what}", observed, decide(evidence))


def _sweep_lower_bound(pulls: Any, setting: str) -> Claim:
    points = tuple(normal_bound(rf"{r['rule']} ({r['threshold']}) on {r['problem']} at \(\delta = {_tex(r['delta'])}\)",
                                float(r["mean_tau"]), float(r["se_tau"]), int(r["runs"]), float(r["lower_bound"]))
                   for _, r in pulls.iterrows())
    where = {i: rf"{r['rule']} ({r['threshold']}) on {r['problem']} at \(\delta = {_tex(r['delta'])}\)"
             for i, r in pulls.iterrows()}
    observed = (rf"\(\mathbb{{E}}[\tau] / (\mathrm{{kl}}(\delta, 1 - \delta) T^*)\) from {fmt(pulls['ratio'].min())} "
                f"({where[pulls['ratio'].idxmin()]}) to {fmt(pulls['ratio'].max())} ({where[pulls['ratio'].idxmax()]}) "
                f"over {len(pulls)} cells")
    evidence = Evidence(Kind.LOWER_BOUND, NORMAL, bounds=points, family=f"the {len(points)} cells",
                        note=r"\(T^*(\mu)\) by `bandit_gym.lower_bounds` (`best_arm_allocation`, `top_m_allocation`, "
                             "`thresholding_allocation`).")
    return Claim(f"{PAPER}.11", PAPER, "Garivier and Kaufmann 2016, Theorem 1; Kaufmann, Cappé and Garivier 2016, "
                 "Lemma 1 (any problem with one correct answer)",
                 r"Every \(\delta\)-correct algorithm has \(\mathbb{E}[\tau] \ge \mathrm{kl}(\delta, 1 - \delta) "
                 r"T^*(\mu)\) on the best-arm, top-\(m\) and thresholding problems (one correct answer).",
                 setting + "; the proved stops, on the best-arm, top-2 and thresholding problems", observed,
                 decide(evidence))
