r"""chen2017's claims (§3's stated outcomes, Theorem 1), from ``results.csv`` of ``bandit-gym reproduce chen2017``:
failure probabilities \(P(R > \epsilon)\) over independent runs, compared budget by budget with Fisher's exact test.
AdaptiveTopK comes in two versions, Algorithm 1 as printed and the experimental one with shorter rounds (its
constant chosen on seeds that are not reported, ``tuning.csv``), so each claim about it has a row per version."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bandit_gym.studies._compare import independent_binary, z_difference
from bandit_gym.studies._ledger import Claim, Loss, fmt, read_csv
from bandit_gym.studies._stats import ALPHA, fisher, holm
from bandit_gym.studies._verdict import (
    ALMOST_ALL,
    ANY,
    MOST,
    MOST_NONE_LOST,
    Comparison,
    Evidence,
    Group,
    Kind,
    Method,
    decide,
)

PAPER = "chen2017"
PRINTED = "AdaptiveTopK (as printed)"
PAPER_RUNS = 200
DATASETS = ("TwoGroup", "Synthetic0.5", "Uniform", "Synthetic6")
FISHER = Method("two-sided Fisher's exact tests of the failure probabilities, per budget", paired=False,
                runs_paired=False, design="independent runs: no common random numbers (sums of batched pulls are "
                "drawn exactly), the instance fixed up to a per-episode shuffle of the arms")


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


def _panel_rows(errors: Any, dataset: str, k: int) -> Any:
    return errors[(errors["dataset"] == dataset) & (errors["k"] == k)]


def _tests(errors: Any, a: str, b: str, panels: list[tuple[str, int]]) -> Any:
    """Fisher's exact test of a against b at every budget of every panel: columns dataset, k, budget, ea, eb, p."""
    rows = []
    for dataset, k in panels:
        panel = _panel_rows(errors, dataset, k)
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
    return "; ".join(rf"{d} \(K = {k}\): {o}" for (d, k), o in outcomes.items())


def _panels(errors: Any, ks: tuple[int, ...] | None = None, datasets: tuple[str, ...] = DATASETS) -> list:
    present = errors[["dataset", "k"]].drop_duplicates().itertuples(index=False)
    return [(d, int(k)) for d, k in present if d in datasets and (ks is None or k in ks)]


def _setting(errors: Any, what: str) -> str:
    runs = int(errors["runs"].iloc[0])
    return (rf"`TopKIdentification-Chen2017<dataset>K<K>-v0` (\(n = 1000\) Bernoulli arms, \(\epsilon = \delta = "
            rf"0.01\)), {runs} independent runs per point (the paper: {PAPER_RUNS}), failure \(P(R > 0.01)\) at the "
            "budgets of the grid; " + what)


def _version(agent: str) -> str:
    return "Algorithm 1 as printed" if agent == PRINTED else f"the experimental version, {agent}"


def _panel(errors: Any, dataset: str, k: int, a: str, b: str) -> Group:
    """Fisher's tests of ``a`` against ``b`` at every budget of one panel, as a group won when ``a`` is
    significantly better at some budget and significantly worse at none (the panel outcome 'better')."""
    panel = _panel_rows(errors, dataset, k)
    x = panel[panel["agent"] == a].set_index("budget")
    y = panel[panel["agent"] == b].set_index("budget")
    tests = tuple(independent_binary(rf"{a} vs {b}, {dataset} \(K = {k}\), \(Q = {q}\)", int(x.loc[q, "failures"]),
                                     int(x.loc[q, "runs"]), int(y.loc[q, "failures"]), int(y.loc[q, "runs"]))
                  for q in x.index.intersection(y.index))
    return Group("budgets", tests, ANY)


def _claim(errors: Any, number: str, source: str, text: str, agent: str, what: str, observed: str,
           comparisons: Group, note: str, method: Method = FISHER, family: str = "") -> Claim:
    count = sum(1 for _ in _count(comparisons))
    evidence = Evidence(Kind.DIRECTION, method, comparisons, family=family or f"the {count} (panel, budget) tests",
                        note=note)
    return Claim(f"{PAPER}.{number}", PAPER, source, text + f" [{_version(agent)}]", _setting(errors, what),
                 observed, decide(evidence))


def _count(node: Comparison | Group) -> Any:
    if isinstance(node, Comparison):
        yield node
    else:
        for member in node.members:
            yield from _count(member)


def _against_clucb(errors: Any, agent: str, suffix: str) -> Claim:
    panels = _panels(errors)
    outcomes = _outcomes(_tests(errors, agent, "CLUCB-PAC", panels))
    group = Group("panels", tuple(_panel(errors, d, k, agent, "CLUCB-PAC") for d, k in panels), ALMOST_ALL)
    return _claim(errors, f"1{suffix}", "§3", "AdaptiveTopK outperforms CLUCB-PAC in almost all the datasets.", agent,
                  f"{agent} against CLUCB-PAC on every dataset and K", _describe(outcomes), group,
                  "'Almost all' is read as 90% or more of the (dataset, K) panels, a panel won when AdaptiveTopK is "
                  "significantly better at some budget and significantly worse at none.")


def _optmai_small_k(errors: Any, versions: list[str]) -> Claim:
    k = int(errors["k"].min())
    others = [*versions, "CLUCB-PAC"]
    tables = [_tests(errors, "OptMAI", b, _panels(errors, (k,))).assign(other=b) for b in others]
    table = _corrected(pd.concat(tables, ignore_index=True))
    observed = "; ".join(f"{d}: " + ", ".join(f"vs {b} {_outcome(rows[rows['other'] == b])}" for b in others)
                         for d, rows in table.groupby("dataset", sort=False))
    datasets = [d for d, _ in _panels(errors, (k,))]
    group = Group("datasets", tuple(Group("opponents", tuple(_panel(errors, d, k, "OptMAI", b) for b in others))
                                    for d in datasets), MOST)
    evidence = Evidence(Kind.DIRECTION, FISHER, group, family=f"the {len(table)} (dataset, opponent, budget) tests",
                        note=rf"'Most' is read as more than half the datasets at \(K = {k}\), a dataset won when "
                             "OptMAI is better than every other paper algorithm there (significantly better at some "
                             "budget, significantly worse at none).")
    return Claim(f"{PAPER}.2", PAPER, "§3", r"When \(K\) is relatively small, OptMAI has the best performance in most "
                 "datasets.", _setting(errors, rf"\(K = {k}\); OptMAI against both AdaptiveTopKs and CLUCB-PAC"),
                 observed, decide(evidence))


def _large_k(errors: Any, agent: str, suffix: str) -> Claim:
    k = int(errors["k"].max())
    panels = _panels(errors, (k,))
    outcomes = _outcomes(_tests(errors, agent, "OptMAI", panels))
    group = Group("datasets", tuple(_panel(errors, d, kk, agent, "OptMAI") for d, kk in panels), MOST_NONE_LOST)
    return _claim(errors, f"3{suffix}", "§3", r"When \(K\) is large, AdaptiveTopK outperforms OptMAI.", agent,
                  rf"\(K = {k}\); {agent} against OptMAI", _describe(outcomes), group,
                  "Read as better on more than half the datasets and significantly worse on none.")


def _twogroup(errors: Any, agent: str, suffix: str) -> Claim:
    others = [a for a in ("OptMAI", "CLUCB-PAC") if a != agent]
    panels = _panels(errors, datasets=("TwoGroup",))
    table = _corrected(pd.concat([_tests(errors, agent, b, panels).assign(other=b) for b in others],
                                 ignore_index=True))
    outcome = {(k, b): _outcome(rows) for (k, b), rows in table.groupby(["k", "other"], sort=False)}
    group = Group(r"(\(K\), opponent) panels", tuple(_panel(errors, d, k, agent, b) for b in others for d, k in panels))
    return _claim(errors, f"4{suffix}", "§3, Figure 1", "For TWOGROUP, AdaptiveTopK outperforms the other algorithms "
                  r"significantly for all values of \(K\).", agent, rf"TwoGroup, every \(K\); {agent} against OptMAI "
                  "and CLUCB-PAC", "; ".join(rf"\(K = {k}\) vs {b}: {o}" for (k, b), o in outcome.items()), group,
                  r"Read as better than both (significantly at some budget, worse at none) at every \(K\).")


def _advantage(errors: Any, agent: str, k: int) -> tuple[float, float, int]:
    """(mean over the budgets of OptMAI's failure rate minus ``agent``'s on TwoGroup at ``k``, its standard error,
    runs): the standard error is the mean of the per-budget ones, an upper bound under any correlation between
    budgets."""
    panel = _panel_rows(errors, "TwoGroup", k)
    x = panel[panel["agent"] == agent].set_index("budget")
    y = panel[panel["agent"] == "OptMAI"].set_index("budget")
    budgets = x.index.intersection(y.index)
    pa, pb = x.loc[budgets, "mean"].to_numpy(), y.loc[budgets, "mean"].to_numpy()
    na, nb = x.loc[budgets, "runs"].to_numpy(), y.loc[budgets, "runs"].to_numpy()
    se = np.sqrt(pa * (1 - pa) / na + pb * (1 - pb) / nb)
    return float((pb - pa).mean()), float(se.mean()), int(min(na.min(), nb.min()))


def _grows_with_k(errors: Any, agent: str, suffix: str) -> Claim:
    ks = sorted(int(k) for _, k in _panels(errors, datasets=("TwoGroup",)))
    advantage = {k: _advantage(errors, agent, k) for k in ks}
    steps = tuple(z_difference(rf"advantage at \(K = {k2}\) minus at \(K = {k1}\)", advantage[k2][0] - advantage[k1][0],
                               float(np.hypot(advantage[k1][1], advantage[k2][1])), advantage[k2][2],
                               f"advantage {fmt(advantage[k1][0], 2)} to {fmt(advantage[k2][0], 2)}")
                  for k1, k2 in itertools.pairwise(ks))
    last = _panel(errors, "TwoGroup", ks[-1], agent, "OptMAI")
    group = Group("parts of the claim", (*steps, last))
    method = Method("two-sided normal tests of the change of the mean advantage (OptMAI's failure rate minus "
                    r"AdaptiveTopK's, averaged over the budgets) between consecutive \(K\), and Fisher's exact tests "
                    r"per budget at the largest \(K\)", paired=False, runs_paired=False,
                    design="independent runs; the advantage's standard error is the mean of the per-budget ones, an "
                           r"upper bound under any correlation between budgets; the values of \(K\) are separate "
                           "experiments")
    return _claim(errors, f"5{suffix}", "§3, Figure 1", r"As \(K\) increases, the advantage of AdaptiveTopK over "
                  "OptMAI becomes more significant (TWOGROUP).", agent, f"TwoGroup; {agent} against OptMAI",
                  "mean failure of OptMAI minus AdaptiveTopK's over the budgets: " + ", ".join(
                      rf"{fmt(advantage[k][0], 2)} at \(K = {k}\)" for k in ks), group,
                  r"Read as: the advantage grows significantly at each step of \(K\) and AdaptiveTopK is better than "
                  rf"OptMAI at \(K = {ks[-1]}\) (significantly at some budget, worse at none).", method,
                  rf"the {len(steps)} steps of \(K\) and the {len(last.members)} budgets at \(K = {ks[-1]}\)")


def _extremes(errors: Any, agent: str, suffix: str) -> Claim:
    panels = _panels(errors, datasets=("Synthetic0.5", "Synthetic6"))
    outcomes = _outcomes(_tests(errors, agent, "OptMAI", panels))
    group = Group("datasets", tuple(Group(r"values of \(K\)", tuple(_panel(errors, d, k, agent, "OptMAI")
                                                               for d, k in panels if d == dataset), ANY)
                                    for dataset in ("Synthetic0.5", "Synthetic6")))
    return _claim(errors, f"6{suffix}", "§3, Figures 2-4", "The advantage of AdaptiveTopK over OptMAI becomes "
                  "significant in both extreme scenarios, SYNTHETIC-.5 (arms well separated) and SYNTHETIC-6 (arms "
                  "close to the boundary).", agent, rf"SYNTHETIC-.5 and SYNTHETIC-6, every \(K\); {agent} against "
                  "OptMAI",
                  _describe(outcomes), group,
                  r"Read as: on both datasets AdaptiveTopK is significantly better at some \(K\) and never "
                  "significantly worse.")


def _theorem1() -> Claim:
    evidence = Evidence(Kind.OUT_OF_REACH, reason="the paper's experiments, and ours, run the fixed-budget conversion "
                        r"only; the PAC form at \(n = 1000\), \(\delta = 0.01\) needs over \(10^6\) pulls per run "
                        "before its first decision, and the bound's constant is not given.")
    return Claim(f"{PAPER}.7", PAPER, "Theorem 1",
                 r"AdaptiveTopK returns an \(\epsilon\)-top-\(K\) set with probability at least \(1 - \delta\) after "
                 r"\(O\big((\log\log 1/\epsilon + \log n + \log 1/\delta) H^{(t, \epsilon)}\big)\) pulls.",
                 "the PAC form of Algorithm 1 (`AdaptiveTopK(form='pac')`)", r"not run at \(n = 1000\)",
                 decide(evidence))


def _losses(errors: Any, versions: list[str]) -> list[Loss]:
    """Every budget where an AdaptiveTopK fails significantly more often than OptMAI or CLUCB-PAC (Fisher, before
    correction); Holm over all of those comparisons."""
    tables = [_tests(errors, a, b, _panels(errors)).assign(a=a, other=b) for a in versions
              for b in ("OptMAI", "CLUCB-PAC")]
    table = pd.concat(tables, ignore_index=True)
    table["q"] = holm(table["p"].to_numpy())
    family = f"all {len(table)} comparisons of the AdaptiveTopKs with OptMAI and CLUCB-PAC"
    lost = table[(table["p"] < ALPHA) & (table["ea"] > table["eb"])]
    return [Loss(PAPER, r["a"], r["other"], rf"{r['dataset']} \(K = {r['k']}\), \(Q = {r['budget']}\)", "failure",
                 f"{fmt(r['ea'])} vs {fmt(r['eb'])}", float(r["p"]), float(r["q"]), family)
            for _, r in lost.iterrows()]
