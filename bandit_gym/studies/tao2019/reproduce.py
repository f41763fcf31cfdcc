r"""tao2019 §5: the three setups of Figure 1, eleven algorithms, paired \(t\)-tests against LSA; and what the paper
states without showing it here: LSA's robustness to \(\alpha\) (Appendix F.4) and LSA against APT(0) on the simple
regret (Appendix F.1), from the same paired runs."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bandit_gym.experiments import AgentSpec, ExperimentResult, ExperimentSpec, run_experiment
from bandit_gym.plotting import plot_log_regret
from bandit_gym.studies._report import Report, with_agents

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
"""tao2019 §5: the eleven algorithms, with the paper's labels."""

TAO2019_ALPHAS = (0.5, 1.0, 2.0, 4.0, 8.0)
r"""LSA's \(\alpha\) sweep (the paper fixes \(\alpha = 1.35\) and says the choice is robust, Appendix F.4, not
shown)."""
ALPHA_AGENTS = tuple(AgentSpec("LSA", {"alpha": a}, f"LSA(alpha={a:g})") for a in TAO2019_ALPHAS)
TAO2019_GRIDS = {1: tuple(range(100, 1001, 100)), 2: (200, 500, 1000, *range(2000, 40001, 2000)),
                 3: (500, 1000, 2000, *range(5000, 100001, 5000))}
"""Budget grids read off the axes of tao2019 Figure 1 (the paper gives no grid: Setup 1's axis spans 100..1000,
Setup 2's 0..40000, Setup 3's 0..100000): the low-budget ends of Setups 2 and 3 are sampled too.
"""
TAO2019_QUICK_GRIDS = {1: (200, 500, 1000), 2: (2000, 4000), 3: (5000, 10000)}
"""--quick: the start of each grid, on fewer runs, so the whole command takes well under a minute."""


def tao2019_specs(runs: int = 5000, quick: bool = False, seed: int = 2019) -> list[ExperimentSpec]:
    r"""The three setups of tao2019 §5, each with the eleven algorithms and LSA's \(\alpha\) sweep. Full runs split each
    cell's runs in two chunks (two workers share the long Setup 3 cells); quick runs keep one chunk (small cells are
    dominated by per-step overhead, and the many cells already keep two workers busy)."""
    grids = TAO2019_QUICK_GRIDS if quick else TAO2019_GRIDS
    return [
        ExperimentSpec(
            env=f"ThresholdingBandit-Tao2019Setup{setup}-v0", agents=TAO2019_AGENTS + ALPHA_AGENTS,
            budgets=tuple(grids[setup]),
            runs=runs, seed=seed + setup, chunk=runs if quick else -(-runs // 2), name=f"Setup {setup}",
        )
        for setup in (1, 2, 3)
    ]


def ttest_markdown(tests: Any) -> str:
    r"""The paired \(t\)-tests as one Markdown table per experiment: rows are algorithms, columns budgets; a cell
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
    progress: bool = True, agents: Sequence[AgentSpec] = (),
) -> Report:
    r"""Run tao2019's experiment and write ``results.csv``, ``figure.png``, ``ttests.csv`` and ``ttests.md`` to
    ``out`` (each setup's cells under ``out/setupN``, so an interrupted run resumes). ``agents`` are added to
    every setup (``with_agents``) and shown with the paper's algorithms in the \(t\)-tests and the figure."""
    import pandas as pd

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = runs if runs is not None else (200 if quick else 5000)
    start = time.perf_counter()
    results: list[ExperimentResult] = []
    for spec in with_agents(tao2019_specs(runs=runs, quick=quick), agents):
        folder = out / spec.name.replace(" ", "").lower()
        results.append(run_experiment(spec, out=folder, jobs=jobs, backend=backend, progress=progress))
    summary = pd.concat([r.summary() for r in results], ignore_index=True)
    tests = pd.concat([paired_tests(r) for r in results], ignore_index=True)
    summary.to_csv(out / "results.csv", index=False)
    tests.to_csv(out / "ttests.csv", index=False)
    regret = tests[(tests["metric"] == "aggregate_regret") & (tests["reference"] == "LSA")]
    paper = {agent.display for agent in (*TAO2019_AGENTS, *agents)}
    (out / "ttests.md").write_text(
        "Two-tailed paired t-tests of aggregate regret, LSA against each algorithm, over "
        f"{runs} paired runs (common random numbers). p-values (not corrected for multiple comparisons; "
        "`docs/claims.md` corrects them claim by claim); `+`: LSA significantly lower (p < 0.05), "
        "`-`: significantly higher.\n\n" + ttest_markdown(regret[regret["agent"].isin(paper)])
    )
    figure = plot_log_regret(summary[summary["agent"].isin(paper)], out / "figure.png",
                             title=f"tao2019 Figure 1 reproduced ({runs} runs per point)")
    lsa = summary[summary["name"] == "LSA"]
    alpha = plot_log_regret(lsa.assign(agent=lsa["agent"].replace({"LSA": "LSA(alpha=1.35)"})),
                            out / "alpha.png", highlight="LSA(alpha=1.35)",
                            title=f"tao2019: LSA's alpha ({runs} runs per point)")
    elapsed = time.perf_counter() - start
    return Report(summary=summary, figures=[figure, alpha], seconds=elapsed,
                  files=[out / name for name in ("results.csv", "ttests.csv", "ttests.md", "figure.png")] + [alpha],
                  extras={"tests": tests,
                          "largest_budget": {r.spec.name: int(np.max(r.spec.budgets)) for r in results}})


APT_PAIRS = (("APT(.05)", "APT(.025)"), ("APT(.05)", "APT(.1)"), ("APT(.05)", "APT(0)"), ("APT(.025)", "APT(.1)"),
             ("APT(.025)", "APT(0)"), ("APT(.1)", "APT(0)"))
r"""The APT pairs whose paired tests say which \(\epsilon\) is best where (tao2019 §5: "the best parameter is
different for small and big \(T\) and across setups").
"""


def paired_tests(result: ExperimentResult) -> Any:
    r"""The paired \(t\)-tests the claims need, one row per (reference, agent, budget, metric): LSA against every
    algorithm on the aggregate regret and on the error indicator (the simple regret with no indifference zone,
    Appendix F.1), and the APTs against each other on the aggregate regret."""
    import pandas as pd

    frames = [result.paired_tests("LSA", metric) for metric in ("aggregate_regret", "error")]
    for reference, other in APT_PAIRS:
        tests = result.paired_tests(reference)
        frames.append(tests[tests["agent"] == other])
    return pd.concat(frames, ignore_index=True)
