r"""chen2017 §3, Figures 1-4: failure probability \(P(R > \epsilon)\) against the total budget, one figure per
dataset, one panel per \(K\) (\(n = 1000\), \(\epsilon = \delta = 0.01\), 200 runs per point).

Algorithm 1 as printed (Claim 1's rounds \(m_r = 4^r \ln(2 n r^2 / \delta)\)) allocates like Uniform over the whole
budget range of the paper's figures, so the reproduction carries two AdaptiveTopKs: the printed one and an
experimental one with shortened rounds and pooled means (``AdaptiveTopK(schedule=..., scale=...)``), whose constant
the paper does not give. Four parts:

(a) tuning: the experimental constant is chosen by code, on seeds that are not reported: every candidate of
    ``CANDIDATES`` runs ``TUNING_RUNS`` times on every dataset and \(K\) at ``TUNING_BUDGETS`` from
    ``TUNING_SEED``; the candidate of smallest mean failure over those cells wins (ties: the earlier
    candidate, i.e. the longer rounds) -> ``tuning.csv``;
(b) Figures 1-4 on the reported seeds: AdaptiveTopK as printed, the experimental AdaptiveTopK with the tuned
    constant, OptMAI, CLUCB-PAC and Uniform at every budget of ``CHEN2017_BUDGETS`` -> ``results.csv``,
    ``failure.md``, ``figure_<dataset>.png``;
(c) CLUCB-PAC's readings (\(R = 1\) against the default 1/2; \(\epsilon_{\text{sum}} = \epsilon\) against
    \(K \epsilon\)) on a subset, for the compute budget (CLUCB-PAC does \(O(n)\) work per pull and runs every
    episode to the largest budget): \(K = 100\) on the four datasets, budgets up to ``CLUCB_VARIANT_MAX_BUDGET``,
    from the seeds of (b), so that the runs and sample streams are those of (b)'s CLUCB-PAC -> rows of
    ``results.csv`` marked in their ``scope`` column, ``clucb_variants.png``;
(d) sensitivity: failure against the scale, on the printed schedule (1 and 1/16 .. 1/128) and the log-free one
    (1 .. 1/8), on every dataset and \(K\) at ``SENSITIVITY_BUDGETS``, from the same seeds as (b) (so the tuned
    candidate's numbers there are those of its curve in the figures) -> ``sensitivity.csv``, ``sensitivity.png``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from bandit_gym.experiments import AgentSpec, ExperimentSpec
from bandit_gym.instances import CHEN2017_DATASETS
from bandit_gym.plotting import PAGE_WIDTH, _errorbars, _finish, _grid
from bandit_gym.studies._figures import plot_failure_against_budget
from bandit_gym.studies._report import Report, exact_error_intervals, markdown_table, run_specs, with_agents

PRINTED = AgentSpec("AdaptiveTopK", {}, "AdaptiveTopK (as printed)")
BASELINES = (AgentSpec("OptMAI", {}, "OptMAI"), AgentSpec("CLUCBPAC", {}, "CLUCB-PAC"),
             AgentSpec("Uniform", {}, "Uniform"))
CLUCB_VARIANTS = (AgentSpec("CLUCBPAC", {"R": 1.0}, "CLUCB-PAC (R = 1)"),
                  AgentSpec("CLUCBPAC", {"epsilon_sum": "epsilon"}, "CLUCB-PAC (epsilon_sum = epsilon)"))
r"""CLUCB-PAC's readings, run on the \(K\)s of ``CLUCB_VARIANT_KS`` only, up to ``CLUCB_VARIANT_MAX_BUDGET``
pulls."""
CLUCB_VARIANT_KS, CLUCB_VARIANT_MAX_BUDGET = (100,), 50_000
CANDIDATES: tuple[tuple[str, float], ...] = (
    ("printed", 1 / 16), ("printed", 1 / 32), ("printed", 1 / 64), ("printed", 1 / 128),
    ("log-free", 1.0), ("log-free", 1 / 2), ("log-free", 1 / 4), ("log-free", 1 / 8),
)
"""The experimental AdaptiveTopK's candidates (schedule, scale), from the longest rounds to the shortest within
each schedule; the tuning breaks ties by this order.
"""
SENSITIVITY = (("printed", 1.0), *CANDIDATES)
"""The sensitivity study: the candidates and the printed constants as the reference."""
CHEN2017_BUDGETS = (5_000, 10_000, 15_000, 20_000, 25_000, 30_000, 40_000, 50_000, 70_000, 100_000)
r"""The paper gives no grid (only its figures do). Measured: at \(20n\) pulls (\(n = 1000\)) CLUCB-PAC still fails
0.45-0.93 of the time on SYNTHETIC-6 and UNIFORM and 0-0.03 on SYNTHETIC-.5; every agent is at 0 by \(100n\). So
the grid spans \(5n\) .. \(100n\), densest between \(15n\) and \(50n\), where the failures fall from 1 to 0.
"""
CHEN2017_KS = (100, 250, 500)
SENSITIVITY_BUDGETS = (15_000, 25_000, 40_000, 100_000)
TUNING_BUDGETS, TUNING_RUNS, TUNING_SEED = (20_000, 40_000), 100, 7102
@dataclass(frozen=True)
class Quick:
    r"""The grid of ``--quick``: datasets, \(K\) values and budgets (the budgets also of the sensitivity and tuning
    studies)."""

    datasets: tuple[str, ...]
    ks: tuple[int, ...]
    budgets: tuple[int, ...]


QUICK = Quick(datasets=("TwoGroup",), ks=(100,), budgets=(10_000, 30_000))
EVERY_PANEL = "every dataset and K"


def scale_text(scale: float) -> str:
    """``x1/64`` for 1/64, ``x1`` for 1, ``x0.3`` otherwise."""
    fraction = Fraction(scale).limit_denominator(4096)
    if float(fraction) == scale and fraction.numerator == 1:
        return f"x1/{fraction.denominator}" if fraction.denominator > 1 else "x1"
    return f"x{scale:g}"


def experimental_agent(schedule: str, scale: float) -> AgentSpec:
    """The experimental AdaptiveTopK (pooled means: its default when the rounds are shortened)."""
    return AgentSpec("AdaptiveTopK", {"schedule": schedule, "scale": scale},
                     f"AdaptiveTopK ({schedule}, {scale_text(scale)})")


def variant_scope() -> str:
    """The ``scope`` of CLUCB-PAC's readings in ``results.csv``."""
    ks = ", ".join(str(k) for k in CLUCB_VARIANT_KS)
    return f"K = {ks} only, budgets up to {CLUCB_VARIANT_MAX_BUDGET:,} (compute budget)"


def _panels(quick: bool) -> list[tuple[int, int, str, int]]:
    r"""(dataset index, \(K\) index, dataset, \(K\)) of every panel."""
    datasets = QUICK.datasets if quick else tuple(CHEN2017_DATASETS)
    ks = QUICK.ks if quick else CHEN2017_KS
    return [(i, j, dataset, k) for i, dataset in enumerate(datasets) for j, k in enumerate(ks)]


def _spec(dataset: str, k: int, agents: Sequence[AgentSpec], budgets: Sequence[int], runs: int, seed: int,
          prefix: str = "") -> ExperimentSpec:
    return ExperimentSpec(env=f"TopKIdentification-Chen2017{dataset}K{k}-v0", agents=tuple(agents),
                          budgets=tuple(budgets), runs=runs, seed=seed, chunk=runs, common_random_numbers=False,
                          name=f"{prefix}{dataset} K={k}")


def chen2017_specs(runs: int = 200, quick: bool = False, seed: int = 2017,
                   experimental: tuple[str, float] | None = None) -> list[ExperimentSpec]:
    r"""Figures 1-4: one experiment per dataset and \(K\), AdaptiveTopK as printed, the experimental AdaptiveTopK
    ``experimental = (schedule, scale)`` (left out if None; the reproduction passes the tuned constant), OptMAI,
    CLUCB-PAC and Uniform.

    No common random numbers: the sums of batched pulls are drawn exactly (binomial) rather than from per-arm
    streams, which would cost one draw per pull, and CLUCB-PAC's compiled episodes draw from fresh streams keyed
    from the env's generator. Run \(r\) of every agent starts the env from the same seed, so two agents that ask for
    the same allocations draw the same sums (AdaptiveTopK as printed and Uniform do at every budget of the grid:
    their results coincide); otherwise the draws differ. CLUCB-PAC never reads the budget: one episode per run is
    scored at every budget of the grid."""
    budgets = QUICK.budgets if quick else CHEN2017_BUDGETS
    agents = [PRINTED, *([] if experimental is None else [experimental_agent(*experimental)]), *BASELINES]
    return [_spec(dataset, k, agents, budgets, runs, seed + 10 * i + j) for i, j, dataset, k in _panels(quick)]


def clucb_variant_specs(runs: int = 200, quick: bool = False, seed: int = 2017) -> list[ExperimentSpec]:
    r"""CLUCB-PAC's readings (``CLUCB_VARIANTS``) at the \(K\)s of ``CLUCB_VARIANT_KS``, at the budgets of the
    grid up to ``CLUCB_VARIANT_MAX_BUDGET``, from the seeds of ``chen2017_specs``: the same runs (instances
    and sample streams) as its CLUCB-PAC, which a CLUCB-PAC episode reads whatever its horizon."""
    grid = QUICK.budgets if quick else CHEN2017_BUDGETS
    budgets = tuple(b for b in grid if b <= CLUCB_VARIANT_MAX_BUDGET) or tuple(grid[:1])
    return [_spec(dataset, k, CLUCB_VARIANTS, budgets, runs, seed + 10 * i + j, "CLUCB-PAC readings ")
            for i, j, dataset, k in _panels(quick) if k in CLUCB_VARIANT_KS]


def sensitivity_specs(runs: int = 200, quick: bool = False, seed: int = 2017) -> list[ExperimentSpec]:
    r"""The sensitivity study: AdaptiveTopK at every (schedule, scale) of ``SENSITIVITY``, per dataset and \(K\),
    at ``SENSITIVITY_BUDGETS``, from the seeds of ``chen2017_specs`` (same runs)."""
    budgets = QUICK.budgets if quick else SENSITIVITY_BUDGETS
    agents = [experimental_agent(schedule, scale) for schedule, scale in SENSITIVITY]
    return [_spec(dataset, k, agents, budgets, runs, seed + 10 * i + j, "sensitivity ")
            for i, j, dataset, k in _panels(quick)]


def tuning_specs(runs: int = TUNING_RUNS, quick: bool = False, seed: int = TUNING_SEED) -> list[ExperimentSpec]:
    r"""The tuning: every candidate of ``CANDIDATES``, per dataset and \(K\), at ``TUNING_BUDGETS``, from
    seeds that no reported experiment uses."""
    budgets = QUICK.budgets if quick else TUNING_BUDGETS
    agents = [experimental_agent(schedule, scale) for schedule, scale in CANDIDATES]
    return [_spec(dataset, k, agents, budgets, runs, seed + 10 * i + j, "tuning ")
            for i, j, dataset, k in _panels(quick)]


def _describe(summary: Any, spec: ExperimentSpec) -> Any:
    r"""The spec's summary with its panel (dataset, \(K\)), seed, failure counts and scope."""
    import pandas as pd

    dataset, k = spec.name.split(" ")[-2], int(spec.name.split(" K=")[-1])
    out = exact_error_intervals(summary.assign(dataset=dataset, k=k, seed=spec.seed))
    errors = out["metric"] == "error"
    out["failures"] = pd.array([round(m * r) if e else None for m, r, e in
                                zip(out["mean"], out["runs"], errors, strict=True)], dtype="Int64")
    variants = {agent.display for agent in CLUCB_VARIANTS}
    out["scope"] = [variant_scope() if agent in variants else EVERY_PANEL for agent in out["agent"]]
    return out


RESULT_COLUMNS = ("dataset", "k", "agent", "budget", "metric", "mean", "ci_low", "ci_high", "failures", "runs",
                  "se", "scope", "name", "params", "seed", "experiment", "env", "num_arms", "oracle")


def _constant(params: str) -> tuple[str, float]:
    """(schedule, scale) of an AdaptiveTopK's params (JSON)."""
    values = json.loads(params)
    return values.get("schedule", "printed"), float(values.get("scale", 1.0))


def _constant_table(summary: Any) -> Any:
    """The error rows of AdaptiveTopK experiments, with their (schedule, scale), tidy."""
    rows = summary[summary["metric"] == "error"].copy()
    constants = [_constant(params) for params in rows["params"]]
    rows["schedule"], rows["scale"] = [c[0] for c in constants], [c[1] for c in constants]
    return rows[["dataset", "k", "schedule", "scale", "agent", "budget", "runs", "failures", "mean", "ci_low",
                 "ci_high", "seed"]].reset_index(drop=True)


CRITERION = "smallest mean failure over the (dataset, K, budget) cells of the tuning; ties: the earlier candidate"


def choose_constant(summary: Any) -> tuple[tuple[str, float], Any]:
    r"""The tuning's choice and the table it was chosen from: per candidate, the mean failure over every
    (dataset, \(K\), budget) cell of the tuning (``score``); the smallest wins, ties going to the earlier candidate of
    ``CANDIDATES``. Returns ``((schedule, scale), table)``, the table with ``score``, ``rank`` and
    ``chosen``."""
    table = _constant_table(summary)
    order = {candidate: i for i, candidate in enumerate(CANDIDATES)}
    scores = table.groupby(["schedule", "scale"], sort=False)["mean"].mean()
    ranked = sorted(scores.index, key=lambda c: (round(float(scores[c]), 12), order.get(c, len(order))))
    choice = ranked[0]
    keys = list(zip(table["schedule"], table["scale"], strict=True))
    table["score"] = [float(scores[key]) for key in keys]
    table["rank"] = [ranked.index(key) + 1 for key in keys]
    table["chosen"] = [key == choice for key in keys]
    table["criterion"] = CRITERION
    return (str(choice[0]), float(choice[1])), table


def tuning_markdown(table: Any, choice: tuple[str, float]) -> list[str]:
    """How the experimental constant was chosen, as Markdown lines."""
    runs, seeds = int(table["runs"].iloc[0]), sorted(set(table["seed"]))
    budgets = ", ".join(f"{b:,}" for b in sorted(set(table["budget"])))
    panels = len(set(zip(table["dataset"], table["k"], strict=True)))
    order = {candidate: i for i, candidate in enumerate(CANDIDATES)}
    scores = table.drop_duplicates(["schedule", "scale"])
    scores = scores.assign(position=[order.get(c, len(order)) for c in zip(scores["schedule"], scores["scale"],
                                                                               strict=True)]).sort_values("position")
    lines = ["## How the experimental constant was chosen", "",
             f"By code, not by hand, and not on the reported runs: every candidate (schedule, scale) ran {runs} times "
             f"on each of the {panels} panels (dataset, K) at the budgets {budgets}, from the tuning seeds "
             f"{', '.join(str(seed) for seed in seeds)} (the reported experiments use other seeds). The score is "
             "the mean failure probability over those cells; the smallest wins (ties: the candidate listed first "
             "below, in the order printed before log-free, longer rounds before shorter). Chosen: "
             f"**{experimental_agent(*choice).display}**. The per-cell table is `tuning.csv`.", "",
             "| schedule | scale | mean failure | rank |", "|---|---|---|---|"]
    lines += [f"| {s} | {scale_text(x)} | {v:.4f} | {r} |" for s, x, v, r in
              zip(scores["schedule"], scores["scale"], scores["score"], scores["rank"], strict=True)]
    return [*lines, ""]


def failure_markdown(summary: Any, runs: int, tuning: list[str] | None = None) -> str:
    r"""Failure probability (mean and 95% CI) per dataset, \(K\), agent and budget, after the tuning's account."""
    rows = summary[summary["metric"] == "error"]
    cells = rows.assign(text=[f"{m:.3f} [{lo:.3f}, {hi:.3f}]" for m, lo, hi in
                              zip(rows["mean"], rows["ci_low"], rows["ci_high"], strict=True)])
    lines = list(tuning or [])
    lines += ["## Failure probability", "",
              f"Failure probability P(R > 0.01) over {runs} runs, with its 95% Clopper-Pearson interval. The "
              f"CLUCB-PAC readings (R = 1, epsilon_sum = epsilon) ran on a subset, {variant_scope()}, on the runs of "
              "the default CLUCB-PAC (same seeds, instances and sample streams); the sensitivity to the "
              "round sizes is in `sensitivity.csv`.", ""]
    for (dataset, k), table in cells.groupby(["dataset", "k"], sort=False):
        lines += [f"### {dataset}, K = {k}", ""]
        pivot = table.pivot_table(index="agent", columns="budget", values="text", aggfunc="first", sort=False)
        lines += markdown_table(pivot.fillna("not run"), lambda b: f"Q={b}")
    return "\n".join(lines)


def reproduce_chen2017(
    out: str | Path, runs: int | None = None, quick: bool = False, jobs: int = 2, backend: str | None = None,
    progress: bool = True, agents: Sequence[AgentSpec] = (),
) -> Report:
    r"""Tune the experimental constant, run the experiments and write ``tuning.csv``, ``results.csv``,
    ``failure.md``, one figure per dataset ``figure_<dataset>.png`` (failure probability against the budget, one
    panel per \(K\)), ``clucb_variants.png``, ``sensitivity.csv`` and ``sensitivity.png``. ``agents`` are added to
    the experiments of Figures 1-4 (``chen2017_specs``), as rows of ``failure.md`` and curves of the figures; not
    to the tuning, the sensitivity study nor CLUCB-PAC's readings."""

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = runs if runs is not None else (20 if quick else 200)
    start = time.perf_counter()
    with_agents(chen2017_specs(runs=runs, quick=quick), agents)  # a repeated label: refused before the tuning
    tuned = run_specs(tuning_specs(runs=runs if quick else TUNING_RUNS, quick=quick), out, _describe, jobs, backend,
                      progress)
    choice, tuning = choose_constant(tuned)
    tuning.to_csv(out / "tuning.csv", index=False)

    main = with_agents(chen2017_specs(runs=runs, quick=quick, experimental=choice), agents)
    main += clucb_variant_specs(runs, quick)
    sensitivity = sensitivity_specs(runs, quick)
    both = run_specs([*main, *sensitivity], out, _describe, jobs, backend, progress)
    names = {spec.name for spec in main}
    summary = both[both["experiment"].isin(names)][list(RESULT_COLUMNS)].reset_index(drop=True)
    summary.to_csv(out / "results.csv", index=False)
    table = _constant_table(both[~both["experiment"].isin(names)])
    table["tuned"] = [(s, x) == choice for s, x in zip(table["schedule"], table["scale"], strict=True)]
    table.to_csv(out / "sensitivity.csv", index=False)
    (out / "failure.md").write_text(failure_markdown(summary, runs, tuning_markdown(tuning, choice)))

    variants = {agent.display for agent in CLUCB_VARIANTS}
    shown = summary[~summary["agent"].isin(variants)]
    figures = [plot_failure_against_budget(shown[shown["dataset"] == dataset], out / f"figure_{dataset}.png",
                                           title=f"chen2017: {dataset}, n = 1000, {runs} runs per point")
               for dataset in dict.fromkeys(shown["dataset"])]
    readings = {agent.display for agent in (*BASELINES, *CLUCB_VARIANTS) if agent.name == "CLUCBPAC"}
    clucb = summary[summary["agent"].isin(readings)]  # the paper's readings, not a user's added CLUCBPAC row
    clucb = clucb[clucb["k"].isin(CLUCB_VARIANT_KS)]
    if not clucb.empty:
        figures.append(plot_failure_against_budget(
            clucb.assign(k=clucb["dataset"]), out / "clucb_variants.png", panel="{}, K = " + str(CLUCB_VARIANT_KS[0]),
            title=f"chen2017: CLUCB-PAC, K = {CLUCB_VARIANT_KS[0]}, {runs} runs (readings to Q = "
                  f"{CLUCB_VARIANT_MAX_BUDGET:,})"))
    figures.append(plot_failure_against_scale(
        table, out / "sensitivity.png", chosen=choice,
        title=f"chen2017: AdaptiveTopK's failure against the scale of its round sizes, {runs} runs per point; "
              f"ringed: the constant tuned on other seeds ({choice[0]}, {scale_text(choice[1])})"))
    files = [out / "tuning.csv", out / "results.csv", out / "sensitivity.csv", out / "failure.md", *figures]
    return Report(summary=summary, figures=figures, seconds=time.perf_counter() - start, files=files,
                  extras={"tuning": tuning, "sensitivity": table, "choice": choice})


# ----------------------------------------------------------------------------------------- figures
def plot_failure_against_scale(table: Any, path: str | Path, title: str = "",
                               chosen: tuple[str, float] | None = None) -> Path:
    r"""chen2017's sensitivity study: one panel per dataset (rows) and \(K\) (columns), failure probability against the
    scale of AdaptiveTopK's round sizes (\(\log_2\) axis), one curve per budget (colour) and schedule (line style), with
    95% intervals, the schedules dodged sideways by a few percent; ``chosen = (schedule, scale)`` is ringed. ``table``
    has the columns ``dataset``, ``k``, ``schedule``, ``scale``, ``budget``, ``mean``, ``ci_low``, ``ci_high``."""
    table = table.copy()
    table["ci_low"], table["ci_high"] = table["ci_low"].clip(lower=0.0), table["ci_high"].clip(upper=1.0)
    panels = list(dict.fromkeys(zip(table["dataset"], table["k"], strict=True)))
    ks = list(dict.fromkeys(table["k"]))
    budgets = sorted(set(table["budget"]))
    schedules = list(dict.fromkeys(table["schedule"]))
    fig, axes = _grid(len(panels), len(ks), width=PAGE_WIDTH / len(ks) if len(ks) > 1 else 6.5,
                      height=2.5 if len(ks) > 2 else 3.3 if len(ks) > 1 else 4.6)
    for ax, (dataset, k) in zip(axes, panels, strict=True):
        panel = table[(table["dataset"] == dataset) & (table["k"] == k)]
        for (schedule, budget), curve in panel.groupby(["schedule", "budget"], sort=False):
            s = schedules.index(schedule)
            curve = curve.sort_values("scale")
            dodge = 1.0 + 0.05 * (s - (len(schedules) - 1) / 2)
            _errorbars(ax, curve["scale"] * dodge, curve, f"{schedule}, Q = {budget:,}", budgets.index(budget),
                       linestyle=("-", "--", ":", "-.")[s % 4], markersize=5 - s)
            if chosen is not None and schedule == chosen[0]:
                point = curve[curve["scale"] == chosen[1]]
                ax.plot(point["scale"] * dodge, point["mean"], "o", markersize=11, markerfacecolor="none",
                        markeredgecolor="black", label=f"tuned: {chosen[0]}, scale {_power_of_two(chosen[1])}")
        ax.set_xscale("log", base=2)
        ax.set(xlabel="scale of the round sizes", ylabel="failure probability", ylim=(-0.02, 1.02),
               title=f"{dataset}, K = {k}")
        ax.grid(alpha=0.3, which="both")
    return _finish(fig, axes, path, title, columns=len(budgets))


def _power_of_two(value: float) -> str:
    """``1/64`` for 1/64, ``2`` for 2, ``0.3`` otherwise."""
    exponent = np.log2(value)
    if exponent == round(exponent):
        return f"1/{round(2.0 ** -exponent)}" if exponent < 0 else f"{round(value)}"
    return f"{value:g}"
