"""Paper reproductions: the experiment specs of each paper and the artefacts they produce."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from bandit_gym.experiments import AgentSpec, ExperimentResult, ExperimentSpec, run_experiment
from bandit_gym.plotting import plot_log_regret

#: tao2019 §5: the eleven algorithms, with the paper's labels.
TAO2019_AGENTS = (
    AgentSpec("LSA", {"alpha": 1.35}, "LSA"),
    AgentSpec("Uniform", {}, "Uniform"),
    AgentSpec("APT", {"epsilon": 0.0}, "APT(0)"),
    AgentSpec("APT", {"epsilon": 0.025}, "APT(.025)"),
    AgentSpec("APT", {"epsilon": 0.05}, "APT(.05)"),
    AgentSpec("APT", {"epsilon": 0.1}, "APT(.1)"),
    AgentSpec("UCBE", {"b": -1.0}, "UCBE(-1)"),
    AgentSpec("UCBE", {"b": 0.0}, "UCBE(0)"),
    AgentSpec("UCBE", {"b": 4.0}, "UCBE(4)"),
    AgentSpec("OptKG", {"a0": 1.0, "b0": 1.0}, "Opt-KG(1,1)"),
    AgentSpec("OptKG", {"a0": 0.5, "b0": 0.5}, "Opt-KG(.5,.5)"),
)

#: Budget grids read off the axes of tao2019 Figure 1 (ALGORITHMS.md §A.8, UNSURE: the paper gives no grid).
TAO2019_GRIDS = {1: range(100, 1001, 100), 2: range(2000, 40001, 2000), 3: range(5000, 100001, 5000)}
#: --quick: the start of each grid, on fewer runs, so the whole command takes well under a minute.
TAO2019_QUICK_GRIDS = {1: (200, 500, 1000), 2: (2000, 4000), 3: (5000, 10000)}


def tao2019_specs(runs: int = 5000, quick: bool = False, seed: int = 2019) -> list[ExperimentSpec]:
    """The three setups of tao2019 §5, each with the eleven algorithms. Full runs split each cell's runs in two
    chunks (two workers share the long Setup 3 cells); quick runs keep one chunk (small cells are dominated by
    per-step overhead, and the many cells already keep two workers busy)."""
    grids = TAO2019_QUICK_GRIDS if quick else TAO2019_GRIDS
    return [
        ExperimentSpec(
            env=f"ThresholdingBandit-Tao2019Setup{setup}-v0", agents=TAO2019_AGENTS, budgets=tuple(grids[setup]),
            runs=runs, seed=seed + setup, chunk=runs if quick else -(-runs // 2), name=f"Setup {setup}",
        )
        for setup in (1, 2, 3)
    ]


def ttest_markdown(tests: Any) -> str:
    """The paired t-tests as one Markdown table per experiment: rows are algorithms, columns budgets; a cell
    holds the p-value, marked ``+`` where LSA's regret is significantly lower and ``-`` where it is higher."""
    lines = []
    for experiment, table in tests.groupby("experiment", sort=False):
        budgets = list(dict.fromkeys(table["budget"]))
        lines += [f"### {experiment}", "", "| algorithm | " + " | ".join(f"T={b}" for b in budgets) + " |",
                  "|---|" + "---|" * len(budgets)]
        for agent, rows in table.groupby("agent", sort=False):
            cells = []
            for _, row in rows.iterrows():
                mark = "" if not row["significant"] else ("+" if row["mean_difference"] > 0 else "-")
                cells.append(f"{row['p_value']:.2g}{mark}")
            lines.append(f"| {agent} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def reproduce_tao2019(
    out: str | Path, runs: int | None = None, quick: bool = False, jobs: int = 2, backend: str | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Run tao2019's experiment and write ``results.csv``, ``figure.png``, ``ttests.csv`` and ``ttests.md`` to
    ``out`` (each setup's cells under ``out/setupN``, so an interrupted run resumes)."""
    import pandas as pd

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = runs if runs is not None else (200 if quick else 5000)
    start = time.perf_counter()
    results: list[ExperimentResult] = []
    for spec in tao2019_specs(runs=runs, quick=quick):
        folder = out / spec.name.replace(" ", "").lower()
        results.append(run_experiment(spec, out=folder, jobs=jobs, backend=backend, progress=progress))
    summary = pd.concat([r.summary() for r in results], ignore_index=True)
    tests = pd.concat([r.paired_tests("LSA") for r in results], ignore_index=True)
    summary.to_csv(out / "results.csv", index=False)
    tests.to_csv(out / "ttests.csv", index=False)
    (out / "ttests.md").write_text(
        "Two-tailed paired t-tests of aggregate regret, LSA against each algorithm, over "
        f"{runs} paired runs (common random numbers). p-values; `+`: LSA significantly lower (p < 0.05), "
        "`-`: significantly higher.\n\n" + ttest_markdown(tests)
    )
    figure = plot_log_regret(summary, out / "figure.png",
                             title=f"tao2019 Figure 1 reproduced ({runs} runs per point)")
    elapsed = time.perf_counter() - start
    return {"summary": summary, "tests": tests, "figure": figure, "seconds": elapsed,
            "largest_budget": {r.spec.name: int(np.max(r.spec.budgets)) for r in results},
            "files": [out / name for name in ("results.csv", "ttests.csv", "ttests.md", "figure.png")]}


# ----------------------------------------------------------------------------------------- abernethy2016
#: (a) uncensored feedback, i.i.d. thresholds: regret against T for several m (staircase instances, K = 4).
ABERNETHY_UNCENSORED: dict[str, Any] = {"agents": ("DKWUCB", "PerThresholdUCB", "UCB"), "arms": 4, "levels": (2, 8, 32),
                        "horizons": (1000, 3000, 10000, 30000)}
#: (b) censored feedback: each threshold order with the algorithm made for it and PerThresholdUCB, regret
#: against m at a fixed T (staircase instances, K = 2, gaps 0.4 and 0.5, so that KMUCB's radius can resolve
#: levels within the horizon).
ABERNETHY_CENSORED: dict[str, Any] = {
    "orders": {"increasing": ("PerThresholdUCB", "OPTIM"), "decreasing": ("OPTIM", "PerThresholdUCB"),
               "cyclic": ("KMUCB", "PerThresholdUCB")},
    "arms": 2, "levels": (2, 4, 8, 16, 32), "horizon": 20000,
}
ABERNETHY_QUICK: dict[str, Any] = {"levels_a": (2, 8), "horizons": (1000, 3000), "levels_b": (2, 8), "horizon": 3000}


def abernethy2016_specs(runs: int = 200, quick: bool = False, seed: int = 2016) -> list[ExperimentSpec]:
    """The study of ALGORITHMS.md §C.7 (the paper has no experiments): part (a) uncensored, part (b) censored."""
    from bandit_gym.instances import staircase_distributions

    a, b = ABERNETHY_UNCENSORED, ABERNETHY_CENSORED
    levels_a, horizons = (ABERNETHY_QUICK["levels_a"], ABERNETHY_QUICK["horizons"]) if quick else \
        (a["levels"], a["horizons"])
    levels_b, horizon = (ABERNETHY_QUICK["levels_b"], ABERNETHY_QUICK["horizon"]) if quick else \
        (b["levels"], b["horizon"])
    specs = []
    for m in levels_a:
        kwargs = {"distributions": staircase_distributions(a["arms"], m).tolist(), "feedback": "uncensored",
                  "thresholds": "iid"}
        specs.append(ExperimentSpec(env="ThresholdBandit-v0", agents=tuple(AgentSpec(n) for n in a["agents"]),
                                    budgets=tuple(horizons), runs=runs, seed=seed + m, env_kwargs=kwargs,
                                    name=f"uncensored m={m}"))
    for order, agents in b["orders"].items():
        for m in levels_b:
            kwargs = {"distributions": staircase_distributions(b["arms"], m).tolist(), "feedback": "censored",
                      "thresholds": order}
            specs.append(ExperimentSpec(env="ThresholdBandit-v0", agents=tuple(AgentSpec(n) for n in agents),
                                        budgets=(horizon,), runs=runs, seed=seed + 100 + m, env_kwargs=kwargs,
                                        name=f"censored {order} m={m}"))
    return specs


def reproduce_abernethy2016(
    out: str | Path, runs: int | None = None, quick: bool = False, jobs: int = 2, backend: str | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Run the abernethy2016 study and write ``results.csv`` (cumulative pseudo-regret per agent, T and m, with
    95% CIs), ``regret.md`` (the same as Markdown tables), ``uncensored.png`` (regret against T, one panel per
    m) and ``censored.png`` (regret against m, one curve per threshold order and algorithm)."""
    import pandas as pd

    from bandit_gym.plotting import plot_regret_against_horizon, plot_regret_against_levels

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = runs if runs is not None else (50 if quick else 200)
    start = time.perf_counter()
    tables = []
    for spec in abernethy2016_specs(runs=runs, quick=quick):
        folder = out / spec.name.replace(" ", "-").replace("=", "")
        table = run_experiment(spec, out=folder, jobs=jobs, backend=backend, progress=progress).summary()
        part, *order, m = spec.name.split(" ")
        tables.append(table.assign(feedback=part, order=order[0] if order else "iid", levels=int(m[2:])))
    summary = pd.concat(tables, ignore_index=True)
    summary.to_csv(out / "results.csv", index=False)
    (out / "regret.md").write_text(regret_markdown(summary, runs))
    figures = [plot_regret_against_horizon(summary[summary.feedback == "uncensored"], out / "uncensored.png",
                                           title=f"abernethy2016 (a): uncensored, i.i.d. thresholds, {runs} runs"),
               plot_regret_against_levels(summary[summary.feedback == "censored"], out / "censored.png",
                                          title=f"abernethy2016 (b): censored feedback, {runs} runs")]
    return {"summary": summary, "figures": figures, "seconds": time.perf_counter() - start,
            "files": [out / "results.csv", out / "regret.md", *figures]}


def regret_markdown(summary: Any, runs: int) -> str:
    """Mean cumulative pseudo-regret +- the 95% CI half-width, as Markdown: (a) agents x (m, T), (b) (order,
    agent) x m."""
    lines = [f"Cumulative pseudo-regret, mean +- 95% CI half-width over {runs} runs.", ""]
    cell = summary.assign(text=[f"{m:.1f} +- {h - m:.1f}" for m, h in zip(summary["mean"], summary["ci_high"],
                                                                         strict=True)])
    part_a = cell[cell.feedback == "uncensored"]
    if len(part_a):
        lines += ["### (a) uncensored feedback, i.i.d. thresholds", ""]
        pivot = part_a.pivot_table(index="agent", columns=["levels", "budget"], values="text", aggfunc="first",
                                   sort=False)
        lines += _markdown_table(pivot, lambda c: f"m={c[0]}, T={c[1]}")
    part_b = cell[cell.feedback == "censored"]
    if len(part_b):
        lines += ["### (b) censored feedback, T = " + str(int(part_b["budget"].iloc[0])), ""]
        pivot = part_b.pivot_table(index=["order", "agent"], columns="levels", values="text", aggfunc="first",
                                   sort=False)
        lines += _markdown_table(pivot, lambda c: f"m={c}")
    return "\n".join(lines)


def _markdown_table(pivot: Any, header: Any) -> list[str]:
    rows = [" | ".join(str(part) for part in (key if isinstance(key, tuple) else (key,))) for key in pivot.index]
    width = len(pivot.index.names)
    lines = ["| " + " | ".join(pivot.index.names) + " | " + " | ".join(header(c) for c in pivot.columns) + " |",
             "|" + "---|" * (width + len(pivot.columns))]
    for label, (_, values) in zip(rows, pivot.iterrows(), strict=True):
        lines.append(f"| {label} | " + " | ".join(str(v) for v in values) + " |")
    return [*lines, ""]


PAPERS = {"tao2019": reproduce_tao2019, "abernethy2016": reproduce_abernethy2016}
