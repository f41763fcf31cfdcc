"""tao2019 §5: the three setups of Figure 1, eleven algorithms, paired t-tests against LSA."""

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
