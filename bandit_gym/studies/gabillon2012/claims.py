"""gabillon2012's claims (Theorems 1 and 2, §1), from ``results.csv`` of ``bandit-gym reproduce gabillon2012``
(the paper has no experiments: its theorems are checked on Audibert, Bubeck and Munos's seven problems)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from bandit_gym.studies._compare import binomial_bound
from bandit_gym.studies._ledger import Claim, Loss, fmt, read_csv
from bandit_gym.studies._stats import ALPHA, fisher, holm
from bandit_gym.studies._verdict import Evidence, Kind, Method, decide
from bandit_gym.studies.gabillon2012.reproduce import theorem1_bound

PAPER = "gabillon2012"
UGAPEB = "UGapEb(a=(n-K)/4H)"
r"""UGapEb as the paper parameterises it (\(a = (n - K) / (4 H_\epsilon)\), Theorem 1's best \(a\))."""
SETTING = ("`BestArmIdentification-Audibert2010Problem<p>-v0` (Bernoulli arms), {runs} runs per point, errors "
           "as proportions")
BINOMIAL = Method("one-sided exact binomial tests of the error count against the bound, in both directions",
                  paired=False, runs_paired=False, design="one agent's runs against a bound, per setting")


def claims(folder: Path) -> tuple[list[Claim], list[Loss]]:
    """The ledger's rows for gabillon2012 (the claims this module's docstring lists), tested on the files of
    ``folder``, and the tests in which the paper's algorithm did significantly worse than another."""
    results = read_csv(folder, "results.csv")
    errors = results[results["metric"] == "error"].copy()
    errors["failures"] = (errors["mean"] * errors["runs"]).round().astype(int)
    runs = int(errors["runs"].iloc[0])
    rows = [_theorem1_vacuous(errors, runs), _theorem1_checked(errors, runs), _theorem2_error(errors, runs),
            _theorem2_pulls(results, runs), _tech_report(results, runs)]
    return rows, _losses(errors)


def _theorem1_points(rows: Any) -> tuple[Any, tuple]:
    bounds = theorem1_bound(rows["budget"], rows["num_arms"], rows["H_eps"]).to_numpy()
    points = tuple(binomial_bound(rf"problem {r['problem']} at \(n = {r['budget']}\)", int(r["failures"]),
                                  int(r["runs"]),
                                  float(b)) for (_, r), b in zip(rows.iterrows(), bounds, strict=True))
    return bounds, points


def _theorem1_vacuous(errors: Any, runs: int) -> Claim:
    a = errors[(errors["part"] == "a") & (errors["agent"] == UGAPEB)]
    bounds, points = _theorem1_points(a)
    at_h1 = a[(a["budget"] / a["H1"]).round(2) == 1.0]
    observed = (rf"at the budgets of part (a), \(n = H_1 / 2\) to \(4 H_1\) ({a['budget'].min()} to "
                rf"{a['budget'].max()} pulls), the bound \(2Kn\exp(-2a)\) is {fmt(bounds.min())} to "
                rf"{fmt(bounds.max())}; at \(n = H_1\) UGapEb with this \(a\) errs {fmt(at_h1['mean'].min())} to "
                f"{fmt(at_h1['mean'].max())}")
    evidence = Evidence(Kind.AT_MOST, BINOMIAL, bounds=points, family=f"the {len(points)} (problem, budget) points",
                        note=f"{PAPER}.2 checks the bound where it is below 1.")
    return Claim(f"{PAPER}.1", PAPER, "Theorem 1",
                 r"If UGapEb runs with \(0 < a \le (n - K) / (4 H_\epsilon)\), the probability that its simple regret "
                 r"exceeds \(\epsilon\) is at most \(2 K n \exp(-2a)\).",
                 SETTING.format(runs=runs) + r"; UGapEb with \(a = (n - K) / (4 H_\epsilon)\), \(m = 1\), "
                 r"\(\epsilon = 0\), budgets \(n = f H_1\) for \(f \in \{1/2, 1, 2, 4\}\)", observed, decide(evidence))


def _theorem1_checked(errors: Any, runs: int) -> Claim:
    d = errors[(errors["part"] == "d") & (errors["agent"] == UGAPEB)]
    bounds, points = _theorem1_points(d)
    observed = "; ".join(rf"problem {r['problem']} at \(n = {r['budget']}\): bound {fmt(b)}, {r['failures']} errors in "
                         f"{r['runs']} runs" for (_, r), b in zip(d.iterrows(), bounds, strict=True))
    evidence = Evidence(Kind.AT_MOST, BINOMIAL, bounds=points, family=f"the {len(d)} problems",
                        note="The bound is loose: the observed error is far below it.")
    return Claim(f"{PAPER}.2", PAPER, "Theorem 1",
                 r"If UGapEb runs with \(a = (n - K) / (4 H_\epsilon)\), the probability that its simple regret "
                 r"exceeds \(\epsilon\) is at most \(2 K n \exp(-2a)\) (checked where the bound is below 1).",
                 SETTING.format(runs=runs) + r"; part (d): UGapEb with \(a = (n - K) / (4 H_\epsilon)\), \(m = 1\), "
                 r"\(\epsilon = 0\), at the smallest budget (a multiple of 1000) where the bound is at most 0.05, on "
                 "the two problems where that budget is smallest", observed, decide(evidence))


def _theorem2_error(errors: Any, runs: int) -> Claim:
    c = errors[(errors["part"] == "c") & errors["agent"].str.startswith("UGapEc")].copy()
    c["delta"] = c["agent"].str.extract(r"delta=([0-9.]+)")[0].astype(float)
    points = tuple(binomial_bound(rf"{r['experiment'][2:]}, \(\delta = {r['delta']:g}\)", int(r["failures"]),
                                  int(r["runs"]), float(r["delta"])) for _, r in c.iterrows())
    deltas = ", ".join(f"{x:g}" for x in sorted(set(c["delta"])))
    observed = (f"{int(c['failures'].sum())} errors in {int(c['runs'].sum())} runs over {len(c)} settings (3 "
                rf"instances x \(\delta \in \{{{deltas}\}}\)); largest error rate {fmt(c['mean'].max())}")
    evidence = Evidence(Kind.AT_MOST, BINOMIAL, bounds=points, family=f"the {len(c)} settings",
                        note=r"The error is far below \(\delta\) (the union bounds are loose).")
    return Claim(f"{PAPER}.3", PAPER, "Theorem 2",
                 r"UGapEc (\(c = 1/2\)) stops and returns \(m\) arms whose simple regret is at most \(\epsilon\) with "
                 r"probability at least \(1 - \delta\).",
                 SETTING.format(runs=runs) + r"; part (c): UGapEc on problem 4 (\(m = 1\), \(\epsilon = 0\)), "
                 r"problem 3 (\(m = 1\), \(\epsilon = 0.05\)) and problem 5 (\(m = 2\), \(\epsilon = 0.05\)), "
                 r"cap \(10^7\) pulls",
                 observed, decide(evidence))


def _theorem2_pulls(results: Any, runs: int) -> Claim:
    c = results[(results["part"] == "c") & results["agent"].str.startswith("UGapEc")
                & (results["metric"] == "pulls")].copy()
    c["delta"] = c["agent"].str.extract(r"delta=([0-9.]+)")[0].astype(float)
    c["ratio"] = c["mean"] / (c["H_eps"] * np.log(c["H_eps"] / c["delta"]))
    observed = (r"mean pulls \(/ (H_\epsilon \log(H_\epsilon / \delta))\) from " + fmt(c["ratio"].min()) + " to "
                + fmt(c["ratio"].max()) + r"; pulls against \(\delta\): " + "; ".join(
                    f"{name[2:]}: " + ", ".join(f"{int(r['mean'])} at {r['delta']:g}" for _, r in g.iterrows())
                    for name, g in c.groupby("experiment", sort=False)))
    evidence = Evidence(Kind.ORDER, reason=r"the \(O(\cdot)\) hides the constant, so only the scaling can be compared: "
                        r"the pulls stay within a small constant factor of \(H_\epsilon \log(H_\epsilon / \delta)\) "
                        r"across instances and values of \(\delta\), which agrees with the bound's form but cannot "
                        "confirm it.")
    return Claim(f"{PAPER}.4", PAPER, "Theorem 2",
                 r"UGapEc stops after at most \(N = K + O(H_\epsilon \log(H_\epsilon / \delta))\) pulls with "
                 r"probability at least \(1 - \delta\).",
                 SETTING.format(runs=runs) + "; part (c)", observed, decide(evidence))


def _tech_report(results: Any, runs: int) -> Claim:
    c = results[(results["part"] == "c") & (results["metric"] == "pulls")]
    c = c.assign(delta=c["agent"].str.extract(r"delta=([0-9.]+)")[0], algorithm=c["agent"].str.split("(").str[0])
    pulls = c.pivot_table(index=["experiment", "delta"], columns="algorithm", values="mean")
    saving = 1.0 - pulls["UGapEc"] / pulls["LUCB"]
    evidence = Evidence(Kind.OUT_OF_REACH, reason="the comparison the claim names (Mnih et al.'s algorithm, the "
                        "report's instances) is not run here.")
    return Claim(f"{PAPER}.5", PAPER, "§1 (Appendix C of the technical report, not available here)",
                 "UGapE outperforms existing algorithms in some settings (e.g. it improves the performance of the "
                 "algorithm by Mnih et al. in the fixed confidence setting).",
                 "the technical report's experiments are not available; Mnih et al.'s empirical Bernstein stopping is "
                 "not implemented",
                 f"for context, not the claim: UGapEc stops with {fmt(100 * saving.min(), 2)}% to "
                 f"{fmt(100 * saving.max(), 2)}% fewer pulls than LUCB1 in the {len(saving)} settings of part (c) "
                 f"({runs} runs)", decide(evidence))


def _losses(errors: Any) -> list[Loss]:
    """Every fixed-budget test (Fisher's exact, same instance and budget) where UGapEb with the paper's a errs
    significantly more often than another agent, before correction; Holm over all of UGapEb's comparisons."""
    rows = []
    for (experiment, budget), g in errors[errors["part"].isin(["a", "b"])].groupby(["experiment", "budget"],
                                                                                    sort=False):
        mine = g[g["agent"] == UGAPEB]
        if mine.empty:
            continue
        me = mine.iloc[0]
        for _, other in g[g["agent"] != UGAPEB].iterrows():
            p = fisher(int(me["failures"]), int(me["runs"]), int(other["failures"]), int(other["runs"]))
            rows.append((experiment, budget, other["agent"], me["mean"], other["mean"], p))
    adjusted = holm([r[-1] for r in rows])
    family = f"all {len(rows)} fixed-budget comparisons of UGapEb (parts a, b)"
    return [Loss(PAPER, UGAPEB, other, rf"{experiment[2:]}, \(n = {budget}\)", "error",
                 f"{fmt(mine)} vs {fmt(theirs)}", p, float(q), family)
            for (experiment, budget, other, mine, theirs, p), q in zip(rows, adjusted, strict=True)
            if p < ALPHA and mine > theirs]
