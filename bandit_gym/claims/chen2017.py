"""chen2017's claims (§3's stated outcomes, Theorem 1), from ``results.csv`` of ``bandit-gym reproduce chen2017``:
failure probabilities P(R > epsilon) over independent runs, compared budget by budget with Fisher's exact test.
AdaptiveTopK comes in two versions, Algorithm 1 as printed and the experimental one with shorter rounds (its
constant chosen on seeds that are not reported, ``tuning.csv``), so each claim about it has a row per version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from bandit_gym.claims import Claim, Loss, fmt, read_csv
from bandit_gym.claims._stats import ALPHA, fisher, holm

PAPER = "chen2017"
PRINTED = "AdaptiveTopK (as printed)"
PAPER_RUNS = 200
DATASETS = ("TwoGroup", "Synthetic0.5", "Uniform", "Synthetic6")


def claims(folder: Path) -> tuple[list[Claim], list[Loss]]:
    """The ledger's rows for chen2017 (the claims this module's docstring lists), tested on the files of
    ``folder``, and the tests in which the paper's algorithm did significantly worse than another."""
    results = read_csv(folder, "results.csv")
    errors = results[(results["metric"] == "error")].copy()
    if "failures" not in errors:
        errors["failures"] = (errors["mean"] * errors["runs"]).round().astype(int)
    tuned = [a for a in dict.fromkeys(errors.loc[errors["name"] == "AdaptiveTopK", "agent"]) if a != PRINTED]
    versions = [(PRINTED, "a"), *((a, "b") for a in tuned)]
    rows: list[Claim] = []
    for agent, suffix in versions:
        rows.append(_against_clucb(errors, agent, suffix))
    rows.append(_optmai_small_k(errors, [a for a, _ in versions]))
    for agent, suffix in versions:
        rows += [rule(errors, agent, suffix) for rule in (_large_k, _twogroup, _grows_with_k, _extremes)]
    rows.append(_theorem1())
    return sorted(rows, key=lambda c: c.id), _losses(errors, [a for a, _ in versions])


def _panel(errors: Any, dataset: str, k: int) -> Any:
    return errors[(errors["dataset"] == dataset) & (errors["k"] == k)]


def _tests(errors: Any, a: str, b: str, panels: list[tuple[str, int]]) -> Any:
    """Fisher's exact test of a against b at every budget of every panel: columns dataset, k, budget, ea, eb, p."""
    rows = []
    for dataset, k in panels:
        panel = _panel(errors, dataset, k)
        x = panel[panel["agent"] == a].set_index("budget")
        y = panel[panel["agent"] == b].set_index("budget")
        for budget in x.index.intersection(y.index):
            rx, ry = x.loc[budget], y.loc[budget]
            rows.append({"dataset": dataset, "k": k, "budget": budget, "ea": rx["mean"], "eb": ry["mean"],
                         "p": fisher(int(rx["failures"]), int(rx["runs"]), int(ry["failures"]), int(ry["runs"]))})
    return _corrected(pd.DataFrame(rows, columns=["dataset", "k", "budget", "ea", "eb", "p"]))


def _corrected(table: Any) -> Any:
    """``table`` with Holm's p over all its tests (``q``) and the significant wins and losses of a over b."""
    table["q"] = holm(table["p"].to_numpy())
    table["win"] = (table["q"] < ALPHA) & (table["ea"] < table["eb"])
    table["loss"] = (table["q"] < ALPHA) & (table["ea"] > table["eb"])
    return table


def _outcome(rows: Any) -> str:
    """A panel's outcome for a against b: better (a significant win, no loss), worse, mixed or tie."""
    win, loss = bool(rows["win"].any()), bool(rows["loss"].any())
    return {(True, False): "better", (False, True): "worse", (True, True): "mixed", (False, False): "tie"}[(win, loss)]


def _outcomes(table: Any) -> dict[tuple[str, int], str]:
    return {key: _outcome(rows) for key, rows in table.groupby(["dataset", "k"], sort=False)}


def _describe(outcomes: dict[tuple[str, int], str]) -> str:
    return "; ".join(f"{d} K={k}: {o}" for (d, k), o in outcomes.items())


def _p_for(table: Any, verdict: str) -> float:
    if verdict == "supported":
        return float(table.loc[table["win"], "q"].max()) if table["win"].any() else 1.0
    return float(table["q"].min())


def _panels(errors: Any, ks: tuple[int, ...] | None = None, datasets: tuple[str, ...] = DATASETS) -> list:
    present = errors[["dataset", "k"]].drop_duplicates().itertuples(index=False)
    return [(d, int(k)) for d, k in present if d in datasets and (ks is None or k in ks)]


def _setting(errors: Any, what: str) -> str:
    runs = int(errors["runs"].iloc[0])
    return (f"TopKIdentification-Chen2017<dataset>K<K>-v0 (n = 1000 Bernoulli arms, epsilon = delta = 0.01), {runs} "
            f"independent runs per point (the paper: {PAPER_RUNS}), failure P(R > 0.01) at the budgets of the grid; "
            + what)


def _version(agent: str) -> str:
    return "Algorithm 1 as printed" if agent == PRINTED else f"the experimental version, {agent}"


def _claim(errors: Any, number: str, source: str, text: str, agent: str, what: str, observed: str, table: Any,
           verdict: str, why: str) -> Claim:
    return Claim(f"{PAPER}.{number}", PAPER, source, text + f" [{_version(agent)}]", _setting(errors, what),
                 observed, "two-sided Fisher's exact test of the failure probabilities, per budget",
                 f"Holm over the {len(table)} (panel, budget) tests", _p_for(table, verdict), verdict, why)


def _against_clucb(errors: Any, agent: str, suffix: str) -> Claim:
    table = _tests(errors, agent, "CLUCB-PAC", _panels(errors))
    outcomes = _outcomes(table)
    better = sum(o == "better" for o in outcomes.values())
    verdict = "supported" if better >= 0.9 * len(outcomes) else "not supported"
    return _claim(errors, f"1{suffix}", "§3", "AdaptiveTopK outperforms CLUCB-PAC in almost all the datasets.", agent,
                  f"{agent} against CLUCB-PAC on every dataset and K", _describe(outcomes), table, verdict,
                  f"AdaptiveTopK is better (a significant win and no significant loss) in {better} of "
                  f"{len(outcomes)} panels; 'almost all' read as 90% or more.")


def _optmai_small_k(errors: Any, versions: list[str]) -> Claim:
    k = int(errors["k"].min())
    others = [*versions, "CLUCB-PAC"]
    tables = [_tests(errors, "OptMAI", b, _panels(errors, (k,))).assign(other=b) for b in others]
    table = _corrected(pd.concat(tables, ignore_index=True))
    best = {d: all(_outcome(rows[rows["other"] == b]) == "better" for b in others)
            for d, rows in table.groupby("dataset", sort=False)}
    n_best = sum(best.values())
    verdict = "supported" if n_best > len(best) / 2 else "not supported"
    observed = "; ".join(f"{d}: " + ", ".join(f"vs {b} {_outcome(rows[rows['other'] == b])}" for b in others)
                         for d, rows in table.groupby("dataset", sort=False))
    return Claim(f"{PAPER}.2", PAPER, "§3", "When K is relatively small, OptMAI has the best performance in most "
                 "datasets.", _setting(errors, f"K = {k}; OptMAI against both AdaptiveTopKs and CLUCB-PAC"), observed,
                 "two-sided Fisher's exact test of the failure probabilities, per budget",
                 f"Holm over the {len(table)} (dataset, opponent, budget) tests", _p_for(table, verdict), verdict,
                 f"OptMAI is better than every other paper algorithm (a significant win, no loss) on {n_best} of "
                 f"{len(best)} datasets at K = {k}; 'most' read as more than half.")


def _large_k(errors: Any, agent: str, suffix: str) -> Claim:
    k = int(errors["k"].max())
    table = _tests(errors, agent, "OptMAI", _panels(errors, (k,)))
    outcomes = _outcomes(table)
    better = sum(o == "better" for o in outcomes.values())
    worse = [f"{d}" for (d, _), o in outcomes.items() if o in ("worse", "mixed")]
    verdict = "supported" if better > len(outcomes) / 2 and not worse else "not supported"
    return _claim(errors, f"3{suffix}", "§3", "When K is large, AdaptiveTopK outperforms OptMAI.", agent,
                  f"K = {k}; {agent} against OptMAI", _describe(outcomes), table, verdict,
                  f"better on {better} of {len(outcomes)} datasets" + (f", worse or mixed on {', '.join(worse)}"
                                                                       if worse else "")
                  + "; read as better on most datasets and worse on none.")


def _twogroup(errors: Any, agent: str, suffix: str) -> Claim:
    others = [a for a in ("OptMAI", "CLUCB-PAC") if a != agent]
    table = _corrected(pd.concat([_tests(errors, agent, b, _panels(errors, datasets=("TwoGroup",))).assign(other=b)
                                  for b in others], ignore_index=True))
    outcome = {(k, b): _outcome(rows) for (k, b), rows in table.groupby(["k", "other"], sort=False)}
    verdict = "supported" if all(o == "better" for o in outcome.values()) else "not supported"
    return _claim(errors, f"4{suffix}", "§3, Figure 1", "For TWOGROUP, AdaptiveTopK outperforms the other algorithms "
                  "significantly for all values of K.", agent, f"TwoGroup, every K; {agent} against OptMAI and "
                  "CLUCB-PAC", "; ".join(f"K={k} vs {b}: {o}" for (k, b), o in outcome.items()), table, verdict,
                  "better than both at every K." if verdict == "supported" else
                  "not better than both at every K (see the outcomes).")


def _grows_with_k(errors: Any, agent: str, suffix: str) -> Claim:
    table = _tests(errors, agent, "OptMAI", _panels(errors, datasets=("TwoGroup",)))
    advantage = table.assign(gap=table["eb"] - table["ea"]).groupby("k")["gap"].mean()
    growing = bool((advantage.diff().dropna() > 0).all())
    significant_top = bool(table.loc[table["k"] == advantage.index.max(), "win"].any())
    verdict = "supported" if growing and significant_top else "not supported"
    return _claim(errors, f"5{suffix}", "§3, Figure 1", "As K increases, the advantage of AdaptiveTopK over OptMAI "
                  "becomes more significant (TWOGROUP).", agent, f"TwoGroup; {agent} against OptMAI",
                  "mean failure of OptMAI minus AdaptiveTopK's over the budgets: " + ", ".join(
                      f"{fmt(v, 2)} at K = {k}" for k, v in advantage.items()), table, verdict,
                  "the advantage grows with K and is significant at the largest K." if verdict == "supported" else
                  "the advantage does not grow with K, or is not significant at the largest K.")


def _extremes(errors: Any, agent: str, suffix: str) -> Claim:
    table = _tests(errors, agent, "OptMAI", _panels(errors, datasets=("Synthetic0.5", "Synthetic6")))
    outcomes = _outcomes(table)
    per_dataset = {d: [o for (dd, _), o in outcomes.items() if dd == d] for d in ("Synthetic0.5", "Synthetic6")}
    holds = all("better" in o and "worse" not in o and "mixed" not in o for o in per_dataset.values())
    return _claim(errors, f"6{suffix}", "§3, Figures 2-4", "The advantage of AdaptiveTopK over OptMAI becomes "
                  "significant in both extreme scenarios, SYNTHETIC-.5 (arms well separated) and SYNTHETIC-6 (arms "
                  "close to the boundary).", agent, f"SYNTHETIC-.5 and SYNTHETIC-6, every K; {agent} against OptMAI",
                  _describe(outcomes), table, "supported" if holds else "not supported",
                  "on both datasets AdaptiveTopK is significantly better at some K and never worse." if holds else
                  "on at least one of the two datasets AdaptiveTopK is never significantly better, or is worse at "
                  "some K.")


def _theorem1() -> Claim:
    return Claim(f"{PAPER}.7", PAPER, "Theorem 1",
                 "AdaptiveTopK returns an epsilon-top-K set with probability at least 1 - delta after "
                 "O((log log 1/epsilon + log n + log 1/delta) H^(t, epsilon)) pulls.",
                 "the PAC form of Algorithm 1 (AdaptiveTopK(form='pac'))", "not run at n = 1000", "none", "none", None,
                 "untested", "the paper's experiments, and ours, run the fixed-budget conversion only; the PAC form "
                 "at n = 1000, delta = 0.01 needs over 10^6 pulls per run before its first decision, and the bound's "
                 "constant is not given.")


def _losses(errors: Any, versions: list[str]) -> list[Loss]:
    """Every budget where an AdaptiveTopK fails significantly more often than OptMAI or CLUCB-PAC (Fisher, before
    correction); Holm over all of those comparisons."""
    tables = [_tests(errors, a, b, _panels(errors)).assign(a=a, other=b) for a in versions
              for b in ("OptMAI", "CLUCB-PAC")]
    table = pd.concat(tables, ignore_index=True)
    table["q"] = holm(table["p"].to_numpy())
    family = f"all {len(table)} comparisons of the AdaptiveTopKs with OptMAI and CLUCB-PAC"
    lost = table[(table["p"] < ALPHA) & (table["ea"] > table["eb"])]
    return [Loss(PAPER, r["a"], r["other"], f"{r['dataset']} K = {r['k']}, Q = {r['budget']}", "failure",
                 f"{fmt(r['ea'])} vs {fmt(r['eb'])}", float(r["p"]), float(r["q"]), family)
            for _, r in lost.iterrows()]
