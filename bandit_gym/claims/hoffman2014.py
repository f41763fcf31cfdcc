"""hoffman2014's claims (§6.1 traffic sensors, §6.2 model selection, Theorem 1), from ``results.csv``,
``traffic_instances.csv``, ``model_selection_runs.csv`` and ``model_selection_allocations.csv`` of ``bandit-gym
reproduce hoffman2014``. Both of the paper's data sets are unavailable offline: the traffic study runs on
simulated speed profiles built by the paper's recipe, the model selection on scikit-learn's diabetes data, so
every verdict is about these stand-ins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from bandit_gym.claims import Claim, Loss, fmt, read_csv
from bandit_gym.claims._stats import ALPHA, fisher, holm, runs_needed_proportions

PAPER = "hoffman2014"
HEADLINE = "v1 held-out profiles"
BAYESIAN = ("BayesGap", "Thompson", "BayesUCB", "GP-UCB", "EI", "PI")
BLIND = ("UGap", "UCB-E")
#: the paper's runs: 840 held-out signals (traffic), 100 runs (model selection)
PAPER_RUNS, PAPER_MODEL_RUNS = 840, 100
BUDGET = 400


def claims(folder: Path) -> tuple[list[Claim], list[Loss]]:
    """The ledger's rows for hoffman2014 (the claims this module's docstring lists), tested on the files of
    ``folder``, and the tests in which the paper's algorithm did significantly worse than another."""
    results = read_csv(folder, "results.csv")
    errors = results[(results["metric"] == "error") & (results["study"] == HEADLINE)].copy()
    errors["failures"] = (errors["mean"] * errors["runs"]).round().astype(int)
    records = read_csv(folder, "model_selection_runs.csv")
    allocations = read_csv(folder, "model_selection_allocations.csv")
    instances = read_csv(folder, "traffic_instances.csv")
    tuned = [a for a in dict.fromkeys(errors["agent"]) if a.startswith("BayesGap (")]
    rows = [_correlation_pays(errors), _bayesgap_lowest(errors, "BayesGap", "2"),
            *(_bayesgap_lowest(errors, a, "2b") for a in tuned), _thompson_weaker(errors),
            _model_selection_best(records), _stuck(records, allocations), _thompson_explores(allocations),
            _theorem1(instances, errors)]
    return rows, _losses(errors, records)


def _at(errors: Any, agent: str, budget: int = BUDGET) -> Any:
    return errors[(errors["agent"] == agent) & (errors["budget"] == budget)].iloc[0]


def _compare(errors: Any, pairs: list[tuple[str, str]], budget: int = BUDGET) -> Any:
    """Fisher's exact test per (a, b) pair at ``budget``: rows (a, b, error a, error b, p, Holm p)."""
    import pandas as pd

    rows = []
    for a, b in pairs:
        x, y = _at(errors, a, budget), _at(errors, b, budget)
        rows.append({"a": a, "b": b, "ea": x["mean"], "eb": y["mean"], "runs": int(x["runs"]),
                     "p": fisher(int(x["failures"]), int(x["runs"]), int(y["failures"]), int(y["runs"]))})
    table = pd.DataFrame(rows)
    table["q"] = holm(table["p"].to_numpy())
    return table


def _setting(errors: Any, agents: str) -> str:
    runs = int(errors["runs"].iloc[0])
    return (f"CorrelatedBestArm-TrafficSynthetic-v1 (K = 357 simulated sensors; the true means are held-out speed "
            f"profiles, the agents' prior N(0, 20^2 G) with G the historical covariance, sigma^2 = 5% of its mean "
            f"diagonal), T = {BUDGET}, {runs} runs (each held-out profile once; the paper: {PAPER_RUNS} held-out "
            f"signals), epsilon = 0; {agents}; probability of error")


def _universal(table: Any, runs: int, paper_runs: int, what: str, proportions: bool = True) -> tuple[str, float, str]:
    """Verdict of 'every a beats its b': supported if every pair is a significant win for a, not supported if
    some b is significantly better or (at the paper's number of runs or more) some win is missing; else
    inconclusive with the runs a proportion test would need."""
    win = (table["q"] < ALPHA) & (table["ea"] < table["eb"])
    loss = (table["q"] < ALPHA) & (table["ea"] > table["eb"])
    if win.all():
        return "supported", float(table["q"].max()), f"{what}: significant in every comparison."
    if loss.any():
        names = ", ".join(f"{r['b']} over {r['a']}" for _, r in table[loss].iterrows())
        return "not supported", float(table.loc[loss, "q"].min()), f"significantly the other way: {names}."
    open_rows = table[~win]
    missing = ", ".join(f"{r['a']} vs {r['b']}" for _, r in open_rows.iterrows())
    if runs >= paper_runs:
        return ("not supported", float(open_rows["q"].max()),
                f"with the paper's number of runs these are not significant: {missing}.")
    if not proportions:
        return ("inconclusive", float(open_rows["q"].max()),
                f"not significant: {missing}, with {runs} runs (the paper ran {paper_runs}).")
    need = min(runs_needed_proportions(r["ea"], r["eb"], len(table)) for _, r in open_rows.iterrows())
    return ("inconclusive", float(open_rows["q"].max()),
            f"not significant: {missing}; the easiest would need about {fmt(need, 2)} runs per agent.")


def _correlation_pays(errors: Any) -> Claim:
    table = _compare(errors, [(a, b) for a in BAYESIAN for b in BLIND])
    runs = int(table["runs"].iloc[0])
    verdict, p, why = _universal(table, runs, PAPER_RUNS, "the correlation-modelling agent errs less")
    observed = "error at T = 400: " + ", ".join(f"{a} {fmt(_at(errors, a)['mean'])}" for a in BAYESIAN + BLIND) + \
        f"; {int(((table['q'] < ALPHA) & (table['ea'] < table['eb'])).sum())} of {len(table)} pairs significant"
    return Claim(f"{PAPER}.1", PAPER, "§6.1, Figure 2",
                 "Methods that model correlation (BayesGap, Thompson, Bayes-UCB, GP-UCB, EI, PI) beat the "
                 "correlation-blind best-arm methods (UCB-E, UGap), even on the best-arm metric.",
                 _setting(errors, "the six Bayesian agents against UGap and UCB-E (H and H1 from the historical "
                                  "profiles)"), observed, "two-sided Fisher's exact test of the error probabilities",
                 f"Holm over the {len(table)} (Bayesian, blind) pairs", p, verdict, why)


def _bayesgap_lowest(errors: Any, agent: str, number: str) -> Claim:
    agents = dict.fromkeys(errors.loc[errors["budget"] == BUDGET, "agent"])
    others = [a for a in agents if not a.startswith("BayesGap")]
    table = _compare(errors, [(agent, b) for b in others])
    runs = int(table["runs"].iloc[0])
    verdict, p, why = _universal(table, runs, PAPER_RUNS, f"{agent} errs less")
    best = min(others, key=lambda a: _at(errors, a)["mean"])
    observed = (f"{agent} errs {fmt(_at(errors, agent)['mean'])} at T = 400; the lowest other: {best} "
                f"{fmt(_at(errors, best)['mean'])}; at T = 100 (T < K): {agent} "
                f"{fmt(_at(errors, agent, 100)['mean'])}" if (errors["budget"] == 100).any() else "")
    tuned = agent != "BayesGap"
    return Claim(f"{PAPER}.{number}", PAPER, "§6.1, Figure 2",
                 "BayesGap gives the lowest probability of error (the only competitor that addresses budgets, "
                 "best-arm identification and correlation simultaneously)." + (" [our tuned beta]" if tuned else ""),
                 _setting(errors, f"{agent} ("
                          + ("beta scaled by a constant chosen on historical profiles, not on the reported runs"
                             if tuned else "eq. 9's beta with the adaptive H_epsilon, as the paper")
                          + ") against every other agent (not the other BayesGap)"),
                 observed, "two-sided Fisher's exact test of the error probabilities",
                 f"Holm over the {len(table)} other agents", p, verdict, why)


def _thompson_weaker(errors: Any) -> Claim:
    table = _compare(errors, [("BayesGap", "Thompson")])
    row = table.iloc[0]
    if row["q"] < ALPHA:
        verdict = "supported" if row["ea"] < row["eb"] else "not supported"
    else:
        verdict = "not supported" if row["runs"] >= PAPER_RUNS else "inconclusive"
    return Claim(f"{PAPER}.3", PAPER, "§6.2 (about §6.1)",
                 "Thompson sampling's more uniform exploration explains its poor results in the traffic experiment "
                 "(read: Thompson errs more than BayesGap there).",
                 _setting(errors, "BayesGap against Thompson sampling"),
                 f"BayesGap {fmt(row['ea'])}, Thompson {fmt(row['eb'])} at T = 400",
                 "two-sided Fisher's exact test", "Holm over 1 test (none needed)", float(row["q"]), verdict,
                 {"supported": "Thompson errs significantly more often than BayesGap.",
                  "not supported": "Thompson does not err significantly more often than BayesGap"
                                   + (" (it errs significantly less)." if row["q"] < ALPHA else
                                      f" with {int(row['runs'])} runs (the paper's {PAPER_RUNS})."),
                  "inconclusive": "the difference is not significant at these runs."}[verdict])


def _wilcoxon(records: Any, a: str, b: str, budget: int, column: str = "rmse") -> tuple[float, float, float]:
    """(mean of a, mean of b, two-sided Wilcoxon signed-rank p) over runs paired by run index."""
    from scipy import stats

    x = records[(records["agent"] == a) & (records["budget"] == budget)].sort_values("run")[column].to_numpy()
    y = records[(records["agent"] == b) & (records["budget"] == budget)].sort_values("run")[column].to_numpy()
    p = 1.0 if np.all(x == y) else float(stats.wilcoxon(x, y).pvalue)
    return float(x.mean()), float(y.mean()), p


def _paired_table(records: Any, pairs: list[tuple[str, str]], budget: int, column: str = "rmse") -> Any:
    import pandas as pd

    rows = [dict(zip(("ea", "eb", "p"), _wilcoxon(records, a, b, budget, column), strict=True), a=a, b=b,
                 runs=int((records["agent"] == a).sum() // records["budget"].nunique()))
            for a, b in pairs]
    table = pd.DataFrame(rows)
    table["q"] = holm(table["p"].to_numpy())
    return table


MODEL_SETTING = ("ModelSelection-v0 (160 scikit-learn regressors on the DIABETES data, the paper's Wine Quality "
                 "being unavailable offline; a pull trains a model on a random 10% and scores it on another 10%), "
                 "{runs} runs paired by seed; the agents' prior is an ORACLE, fitted to the table of mean scores the "
                 "runs are judged by; {what}")


def _model_selection_best(records: Any) -> Claim:
    others = ("BayesUCB", "GP-UCB", "EI", "PI")
    table = _paired_table(records, [(a, b) for a in ("Thompson", "BayesGap") for b in others], 10)
    runs = int(records[(records["agent"] == "BayesGap") & (records["budget"] == 10)].shape[0])
    verdict, p, why = _universal(table, runs, PAPER_MODEL_RUNS, "Thompson and BayesGap recommend better models",
                                 proportions=False)
    means = records[records["budget"] == 10].groupby("agent", sort=False)["rmse"].mean()
    return Claim(f"{PAPER}.4", PAPER, "§6.2, Figure 3",
                 "In model selection (T = 10), Thompson sampling and BayesGap are the best.",
                 MODEL_SETTING.format(runs=runs, what="Thompson and BayesGap against the other four, T = 10"),
                 "mean true RMSE of the recommended model: " + ", ".join(f"{a} {fmt(v, 4)}" for a, v in means.items()),
                 "two-sided Wilcoxon signed-rank tests of the recommended model's true RMSE, paired by run",
                 f"Holm over the {len(table)} pairs", p, verdict, why)


def _family(model: str) -> str:
    return model.split("(")[0]


def _stuck(records: Any, allocations: Any) -> Claim:
    budget = int(records["budget"].max())
    table = _paired_table(records, [(a, b) for a in ("Thompson", "BayesGap") for b in ("EI", "PI", "GP-UCB")],
                          budget)
    runs = int(records[(records["agent"] == "EI") & (records["budget"] == budget)].shape[0])
    tried = allocations[allocations["budget"] == budget].groupby(["agent", "run"])["arm"].nunique() \
        .groupby("agent").mean()
    rbf = records[(records["budget"] == budget)].assign(rbf=lambda t: t["model"].map(_family) == "rbf_svr") \
        .groupby("agent")["rbf"].mean()
    verdict, p, why = _universal(table, runs, PAPER_MODEL_RUNS,
                                 "EI, PI and GP-UCB recommend worse models than Thompson and BayesGap",
                                 proportions=False)
    observed = (f"T = {budget}: models tried per run " + ", ".join(f"{a} {fmt(tried[a], 3)}" for a in BAYESIAN)
                + "; share of recommendations that are RBF SVRs " + ", ".join(f"{a} {rbf[a]:.2f}" for a in BAYESIAN)
                + "; mean RMSE " + ", ".join(f"{r['b']} {fmt(r['eb'], 4)}" for _, r in table.iloc[:3].iterrows())
                + f" against Thompson {fmt(table.iloc[0]['ea'], 4)}, BayesGap {fmt(table.iloc[3]['ea'], 4)}")
    return Claim(f"{PAPER}.5", PAPER, "§6.2, Figure 4",
                 "EI, PI and GP-UCB get stuck in local minima; EI often keeps recommending a locally optimal RBF "
                 "SVR.",
                 MODEL_SETTING.format(runs=runs, what=f"T = {budget}; 'stuck' read as recommending significantly "
                                                       "worse models than Thompson and BayesGap"), observed,
                 "two-sided Wilcoxon signed-rank tests of the recommended model's true RMSE, paired by run",
                 f"Holm over the {len(table)} pairs", p, verdict, why)


def _thompson_explores(allocations: Any) -> Claim:
    import pandas as pd

    budget = int(allocations["budget"].max())
    tried = allocations[allocations["budget"] == budget].groupby(["agent", "run"])["arm"].nunique().reset_index()
    tried = tried.rename(columns={"arm": "tried"}).assign(budget=budget)
    table = _paired_table(tried, [("Thompson", b) for b in BAYESIAN if b != "Thompson"], budget, "tried")
    # more models is 'better' here: flip the sign convention of _universal
    flipped = pd.DataFrame({"a": table["a"], "b": table["b"], "ea": -table["ea"], "eb": -table["eb"],
                            "p": table["p"], "q": table["q"]})
    runs = int(tried[tried["agent"] == "Thompson"].shape[0])
    verdict, p, why = _universal(flipped, runs, PAPER_MODEL_RUNS, "Thompson tries more distinct models",
                                 proportions=False)
    observed = f"distinct models trained per run at T = {budget}: Thompson {fmt(table.iloc[0]['ea'], 3)}, " + \
        ", ".join(f"{r['b']} {fmt(r['eb'], 3)}" for _, r in table.iterrows())
    return Claim(f"{PAPER}.6", PAPER, "§6.2, Figure 4",
                 "Thompson sampling explores more, but more uniformly.",
                 MODEL_SETTING.format(runs=runs, what=f"T = {budget}; 'explores more' read as more distinct models "
                                                       "trained per run"), observed,
                 "two-sided Wilcoxon signed-rank tests of the number of distinct models, paired by run",
                 f"Holm over the {len(table)} pairs", p, verdict, why)


def _theorem1(instances: Any, errors: Any) -> Claim:
    beta = instances["bayesgap_beta_T400"].to_numpy()
    bound = instances["theorem1_bound_T400"].to_numpy()
    k = 357
    needed = float(np.sqrt(2.0 * np.log(k * BUDGET)))  # beta at which 1 - K T exp(-beta^2 / 2) reaches 0
    observed = (f"BayesGap's beta at T = 400 (eq. 9 with the adaptive H_epsilon, recorded per run): median "
                f"{fmt(float(np.median(beta)))}, range {fmt(float(beta.min()))}-{fmt(float(beta.max()))}; the bound "
                f"1 - K T exp(-beta^2 / 2) there: median {fmt(float(np.median(bound)))} (it is positive only for "
                f"beta > {fmt(needed)}); observed P(correct) {fmt(1 - _at(errors, 'BayesGap')['mean'])}")
    vacuous = bool((bound <= 0).all())
    return Claim(f"{PAPER}.7", PAPER, "Theorem 1",
                 "BayesGap's recommendation is epsilon-good with probability at least 1 - K T exp(-beta^2 / 2).",
                 _setting(errors, "BayesGap"), observed, "none: the bound's value is at most 0", "none", None,
                 "untested" if vacuous else "consistent",
                 "at the beta the adaptive H_epsilon gives, the bound is negative in every run, so it says nothing "
                 "(the theorem also takes epsilon > 0 and the known H_epsilon; the runs use epsilon = 0)."
                 if vacuous else "the bound is positive in some runs; the observed success rate is compared.")


def _losses(errors: Any, records: Any) -> list[Loss]:
    """Every test where the paper's BayesGap (eq. 9's beta) did significantly worse than another agent: error
    probabilities in the traffic study (Fisher), recommended RMSE in model selection (Wilcoxon)."""
    rows = []
    for budget in sorted(set(errors["budget"])):
        present = [a for a in dict.fromkeys(errors.loc[errors["budget"] == budget, "agent"])
                   if not a.startswith("BayesGap")]
        table = _compare(errors, [("BayesGap", b) for b in present], budget)
        rows += [("traffic (v1)", f"T = {budget}", "error", r) for _, r in table.iterrows()]
    for budget in sorted(set(records["budget"])):
        others = [a for a in dict.fromkeys(records["agent"]) if a != "BayesGap"]
        table = _paired_table(records, [("BayesGap", b) for b in others], budget)
        rows += [("model selection", f"T = {budget}", "true RMSE", r) for _, r in table.iterrows()]
    q = holm([r["p"] for *_, r in rows])
    family = f"all {len(rows)} comparisons of BayesGap (both studies, every budget)"
    return [Loss(PAPER, "BayesGap", r["b"], f"{study}, {when}", metric, f"{fmt(r['ea'], 4)} vs {fmt(r['eb'], 4)}",
                 float(r["p"]), float(qv), family)
            for (study, when, metric, r), qv in zip(rows, q, strict=True) if r["p"] < ALPHA and r["ea"] > r["eb"]]
