r"""gabillon2012: UGapE against its baselines on Audibert, Bubeck and Munos's seven problems.

The NIPS paper has no experiments; its technical report, not available here, compares UGapEb with UCB-E and
Successive Rejects and UGapEc with fixed-confidence algorithms (on which instances is not known here). Four
parts:

(a) fixed budget, \(m = 1\), \(\epsilon = 0\): probability of error of every fixed-budget agent on the seven
    problems, at budgets \(n = f H_1\) for \(f\) in ``BUDGET_FACTORS`` (\(n = H_1\) is the reference column);
(b) \((\epsilon, m)\) generality: the same at \(n = H_\epsilon / 4\) (which is \(H_1\) for \(m = 1\),
    \(\epsilon = 0\)) for \(m \in \{1, 2, 3\}\) and \(\epsilon \in \{0, 0.05\}\), skipping \(\epsilon = 0\) where
    the \(m\) best arms are not unique;
(c) fixed confidence: pulls used and empirical error of UGapEc and LUCB for \(\delta \in \{0.1, 0.05, 0.01\}\),
    next to Theorem 2's scale \(H_\epsilon \log(H_\epsilon / \delta)\);
(d) Theorem 1 where it says something: UGapEb with the theory's \(a = (n - K) / (4 H_\epsilon)\) at the smallest
    budget \(n\) where the bound \(2 K n \exp(-2a)\) on its probability of error is at most 0.05 (at
    \(n = H_1\) it is in the tens of thousands), on the two problems where that budget is smallest.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bandit_gym.experiments import AgentSpec, ExperimentSpec
from bandit_gym.instances import AUDIBERT2010_PROBLEMS, best_arm_complexity, gap_complexity
from bandit_gym.plotting import _errorbars, _finish, _grid
from bandit_gym.studies._report import Report, exact_error_intervals, markdown_table, run_specs, with_agents

BUDGET_FACTORS = (0.5, 1.0, 2.0, 4.0)
r"""(a) budgets as multiples of \(H_1\)."""
UGAPEB_TUNED_ETA = 16.0
r"""UGapEb's exploration multiplier next to the theoretical \(a = (n - K) / (4 H_\epsilon)\); 16 was read off
problem 1 (see the UGapEb docstring), so it is a tuned setting, labelled as such.
"""


def fixed_budget_agents(m: int, last: bool = False) -> tuple[AgentSpec, ...]:
    r"""The fixed-budget agents for \(m\) arms: Uniform, SR (\(m = 1\)) or SAR (\(m > 1\)), UCB-E (\(m = 1\)),
    UGapEb with the theoretical oracle \(a\) and with a 16 times larger \(a\) (and, with ``last``, UGapEb with the
    theoretical \(a\) answering the last \(J\) instead of the paper's \(J(t^*)\))."""
    agents = [AgentSpec("Uniform", {}, "Uniform")]
    if m == 1:
        agents += [AgentSpec("SuccessiveRejects", {}, "SR"),
                   AgentSpec("UCBEBestArm", {"c": 1.0}, "UCB-E(a=(n-K)/H1)")]
    else:
        agents.append(AgentSpec("SAR", {}, "SAR"))
    agents += [AgentSpec("UGapEb", {}, "UGapEb(a=(n-K)/4H)"),
               AgentSpec("UGapEb", {"eta": UGAPEB_TUNED_ETA}, "UGapEb(a=16(n-K)/4H)")]
    if last:
        agents.append(AgentSpec("UGapEb", {"recommendation": "last"}, "UGapEb(a=(n-K)/4H, last J)"))
    return tuple(agents)


@dataclass(frozen=True)
class FixedConfidence:
    r"""(c) the fixed-confidence part: instances (problem, \(m\), \(\epsilon\)), deltas, and the cap on the pulls."""

    instances: tuple[tuple[int, int, float], ...]
    deltas: tuple[float, ...]
    cap: int


@dataclass(frozen=True)
class Quick:
    """The grid of ``--quick``: parts (a) to (d) on fewer problems, budgets, instances and deltas."""

    problems: tuple[int, ...]
    factors: tuple[float, ...]
    generality: tuple[tuple[int, int, float], ...]
    instances: tuple[tuple[int, int, float], ...]
    deltas: tuple[float, ...]
    theorem1: tuple[int, ...]


FIXED_CONFIDENCE = FixedConfidence(instances=((4, 1, 0.0), (3, 1, 0.05), (5, 2, 0.05)), deltas=(0.1, 0.05, 0.01),
                                   cap=10**7)
#: (d) the problems on which Theorem 1 is checked (the smallest budgets where its bound is at most
#: ``THEOREM1_LEVEL``)
THEOREM1_PROBLEMS, THEOREM1_LEVEL = (4, 1), 0.05
FIXED_BUDGET_PARTS = ("a", "b")
"""The fixed-budget parts, whose experiments ``reproduce_gabillon2012(agents=...)`` adds agents to."""
QUICK = Quick(problems=(1, 4), factors=(1.0, 2.0), generality=((4, 2, 0.05),), instances=((4, 1, 0.05),),
              deltas=(0.1, 0.01), theorem1=(4,))


def theorem1_bound(n: Any, num_arms: Any, h_eps: Any) -> Any:
    r"""gabillon2012 Theorem 1: with the theory's \(a = (n - K) / (4 H_\epsilon)\),
    \(P(r > \epsilon) \le 2 K n \exp(-2a)\) (numbers or arrays)."""
    return 2 * num_arms * n * np.exp(-2.0 * (n - num_arms) / (4.0 * h_eps))


def theorem1_budget(problem: int, level: float = THEOREM1_LEVEL) -> int:
    r"""The smallest budget, a multiple of 1000, at which Theorem 1's bound (\(m = 1\), \(\epsilon = 0\), \(b = 1\))
    is at most ``level`` (the bound decreases in \(n\) once \(n\) exceeds \(2 H_\epsilon\))."""
    from scipy.optimize import brentq

    means = AUDIBERT2010_PROBLEMS[problem]
    k, h = len(means), gap_complexity(means, 1, 0.0)
    n = brentq(lambda x: np.log(2.0 * k * x) - 2.0 * (x - k) / (4.0 * h) - np.log(level), 2.0 * h, 1e9)
    return int(np.ceil(n / 1000.0) * 1000)


def fixed_confidence_agents(deltas: tuple[float, ...]) -> tuple[AgentSpec, ...]:
    r"""UGapEc and LUCB at each confidence \(\delta\) of ``deltas``, labelled with it."""
    return tuple(AgentSpec(name, {"delta": d}, f"{name}(delta={d:g})") for name in ("UGapEc", "LUCB") for d in deltas)


def generality_instances() -> list[tuple[int, int, float]]:
    r"""(problem, \(m\), \(\epsilon\)) of part (b): every problem, \(m \in \{1, 2, 3\}\), \(\epsilon \in \{0, 0.05\}\),
    without \(\epsilon = 0\) where \(\mu_{(m)} = \mu_{(m+1)}\) (the \(m\) best arms are not unique, \(H_0\) is
    infinite) and without the cases where every arm is within \(\epsilon\) of \(\mu_{(m)}\) (every answer is
    right)."""
    out = []
    for problem, means in AUDIBERT2010_PROBLEMS.items():
        ranked = np.sort(means)[::-1]
        for m in (1, 2, 3):
            for epsilon in (0.0, 0.05):
                unique = epsilon > 0 or ranked[m - 1] > ranked[m]
                if unique and ranked[-1] < ranked[m - 1] - epsilon:
                    out.append((problem, m, epsilon))
    return out


def _budget(problem: int, m: int, epsilon: float) -> int:
    means = AUDIBERT2010_PROBLEMS[problem]
    return max(round(gap_complexity(means, m, epsilon) / 4.0), 2 * len(means))


def gabillon2012_specs(runs: int = 1000, quick: bool = False, seed: int = 2012) -> list[ExperimentSpec]:
    """Every experiment of parts (a), (b) and (c); each spec's name starts with its part."""
    problems = QUICK.problems if quick else tuple(AUDIBERT2010_PROBLEMS)
    factors = QUICK.factors if quick else BUDGET_FACTORS
    specs = []
    for p in problems:
        h1 = best_arm_complexity(AUDIBERT2010_PROBLEMS[p])
        budgets = tuple(sorted({round(f * h1) for f in factors}))
        specs.append(ExperimentSpec(env=f"BestArmIdentification-Audibert2010Problem{p}-v0",
                                    agents=fixed_budget_agents(1, last=True), budgets=budgets, runs=runs, seed=seed + p,
                                    chunk=runs, name=f"a problem {p}"))
    for p, m, epsilon in QUICK.generality if quick else generality_instances():
        specs.append(ExperimentSpec(env=f"BestArmIdentification-Audibert2010Problem{p}-v0",
                                    agents=fixed_budget_agents(m), budgets=(_budget(p, m, epsilon),), runs=runs,
                                    seed=seed + 100 * m + p, env_kwargs={"m": m, "epsilon": epsilon}, chunk=runs,
                                    name=f"b problem {p} m={m} eps={epsilon:g}"))
    deltas = QUICK.deltas if quick else FIXED_CONFIDENCE.deltas
    for p, m, epsilon in QUICK.instances if quick else FIXED_CONFIDENCE.instances:
        specs.append(ExperimentSpec(env=f"BestArmIdentification-Audibert2010Problem{p}-v0",
                                    agents=fixed_confidence_agents(deltas), budgets=(FIXED_CONFIDENCE.cap,),
                                    runs=runs, seed=seed + 1000 + 100 * m + p, chunk=-(-runs // 2),
                                    env_kwargs={"m": m, "epsilon": epsilon, "setting": "fixed_confidence"},
                                    name=f"c problem {p} m={m} eps={epsilon:g}"))
    for p in QUICK.theorem1 if quick else THEOREM1_PROBLEMS:  # chunks of 125 runs: Uniform's batched pulls
        # with common random numbers hold about 64 bytes per pull, 2.4 GB per chunk at n = 310,000
        specs.append(ExperimentSpec(env=f"BestArmIdentification-Audibert2010Problem{p}-v0",
                                    agents=(AgentSpec("UGapEb", {}, "UGapEb(a=(n-K)/4H)"),
                                            AgentSpec("Uniform", {}, "Uniform")),
                                    budgets=(theorem1_budget(p),), runs=runs, seed=seed + 2000 + p,
                                    chunk=min(runs, 125), name=f"d problem {p}"))
    return specs


def _describe(summary: Any, spec: ExperimentSpec) -> Any:
    r"""Add the part, the instance (problem, \(m\), \(\epsilon\), \(K\), \(H_1\), \(H_\epsilon\)) and exact binomial
    CIs of errors."""
    problem = int(re.search(r"problem (\d+)", spec.name).group(1))  # type: ignore[union-attr]
    means = AUDIBERT2010_PROBLEMS[problem]
    m, epsilon = int(spec.env_kwargs.get("m", 1)), float(spec.env_kwargs.get("epsilon", 0.0))
    out = summary.assign(part=spec.name[0], problem=problem, m=m, epsilon=epsilon, num_arms=len(means),
                         H1=best_arm_complexity(means), H_eps=gap_complexity(means, m, epsilon))
    return exact_error_intervals(out)


def _cell(row: Any) -> str:
    return f"{row['mean']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"


def fixed_budget_markdown(summary: Any, runs: int) -> str:
    r"""Part (a) at \(n = H_1\), and the budget sweep; part (b)."""
    rows = summary[summary["metric"] == "error"].assign(text=lambda t: t.apply(_cell, axis=1))
    a = rows[rows.part == "a"].assign(factor=lambda t: (t.budget / t.H1).round(2))
    lines = [f"Probability of error (mean over {runs} runs, 95% Clopper-Pearson interval).", "",
             "### (a) m = 1, epsilon = 0, budget n = H_1", ""]
    at_h1 = a[a.factor == 1.0].assign(n=lambda t: t.budget)
    lines += markdown_table(at_h1.pivot_table(index=["problem", "num_arms", "n"], columns="agent", values="text",
                                              aggfunc="first", sort=False), str)
    lines += ["### (a) budget sweep: n = f H_1", ""]
    lines += markdown_table(a.pivot_table(index=["problem", "factor", "budget"], columns="agent", values="text",
                                          aggfunc="first", sort=False), str)
    b = rows[rows.part == "b"].assign(n=lambda t: t.budget, H_eps=lambda t: t.H_eps.round(0).astype(int))
    if len(b):
        b = b.assign(agent=b.agent.replace({"SR": "SR (m=1) / SAR", "SAR": "SR (m=1) / SAR"}))
        lines += ["### (b) (epsilon, m): budget n = H_epsilon / 4 (UCB-E: m = 1 only)", ""]
        table = b.pivot_table(index=["problem", "m", "epsilon", "H_eps", "n"], columns="agent", values="text",
                              aggfunc="first", sort=False)
        lines += markdown_table(table.fillna("-"), str)
    return "\n".join(lines)


def fixed_confidence_markdown(summary: Any, runs: int) -> str:
    r"""Part (c): pulls (mean \(\pm\) 95% CI) and error (with its exact upper bound) against \(\delta\)."""
    c = summary[summary.part == "c"]
    lines = [f"Fixed confidence, {runs} runs: pulls until the stop (mean +- 95% CI half-width), the empirical "
             "error with its 95% Clopper-Pearson upper bound, and the ratio of pulls to Theorem 2's "
             "scale H_epsilon log(H_epsilon/delta).", "",
             "| instance | H_eps | agent | delta | pulls | pulls / (H_eps log(H_eps/delta)) | error "
             "| error upper bound |",
             "|---|---|---|---|---|---|---|---|"]
    for (name, agent), rows in c.groupby(["experiment", "agent"], sort=False):
        pulls, error = rows[rows.metric == "pulls"].iloc[0], rows[rows.metric == "error"].iloc[0]
        delta = float(re.search(r"delta=([0-9.]+)", agent).group(1))  # type: ignore[union-attr]
        scale = pulls["H_eps"] * np.log(pulls["H_eps"] / delta)
        lines.append(f"| {name[2:]} | {pulls['H_eps']:.0f} | {agent.split('(')[0]} | {delta:g} | "
                     f"{pulls['mean']:.0f} +- {pulls['ci_high'] - pulls['mean']:.0f} | {pulls['mean'] / scale:.2f} | "
                     f"{error['mean']:.4f} | {error['ci_high']:.4f} |")
    return "\n".join([*lines, ""])


def theorem1_markdown(summary: Any, runs: int) -> str:
    r"""Part (d), and Theorem 1's bound at \(n = H_1\) for every problem of part (a)."""
    lines = [f"Theorem 1: P(error) <= 2 K n exp(-2a) for UGapEb with a = (n - K) / (4 H_eps) (m = 1, epsilon = 0, "
             f"b = 1), {runs} runs; errors with their 95% Clopper-Pearson interval.", "",
             "| problem | K | H_eps | n | a | bound 2Kn exp(-2a) | agent | error |",
             "|---|---|---|---|---|---|---|---|"]
    errors = summary[summary.metric == "error"]
    for _, row in errors[errors.part == "d"].iterrows():
        a = (row["budget"] - row["num_arms"]) / (4.0 * row["H_eps"])
        bound = theorem1_bound(row["budget"], row["num_arms"], row["H_eps"])
        lines.append(f"| {row['problem']} | {row['num_arms']} | {row['H_eps']:.0f} | {row['budget']} | {a:.2f} | "
                     f"{bound:.3g} | {row['agent']} | {_cell(row)} |")
    lines += ["", "The bound at the budgets of part (a), n = H_1:", "", "| problem | K | n = H_1 | a | bound |",
              "|---|---|---|---|---|"]
    at_h1 = errors[(errors.part == "a") & ((errors.budget / errors.H1).round(2) == 1.0)]
    for _, row in at_h1.drop_duplicates("problem").iterrows():
        a = (row["budget"] - row["num_arms"]) / (4.0 * row["H_eps"])
        lines.append(f"| {row['problem']} | {row['num_arms']} | {row['budget']} | {a:.3f} | "
                     f"{theorem1_bound(row['budget'], row['num_arms'], row['H_eps']):.3g} |")
    return "\n".join([*lines, ""])


def reproduce_gabillon2012(
    out: str | Path, runs: int | None = None, quick: bool = False, jobs: int = 2, backend: str | None = None,
    progress: bool = True, agents: Sequence[AgentSpec] = (),
) -> Report:
    r"""Run parts (a)-(d) and write ``results.csv`` (every agent \(\times\) instance \(\times\) budget \(\times\)
    metric, errors with Clopper-Pearson CIs), ``fixed_budget.md``, ``fixed_confidence.md``, ``theorem1.md`` (part d),
    ``fixed_budget.png`` (error against \(n / H_1\) per problem), ``generality.png`` (part b) and
    ``fixed_confidence.png`` (pulls and error against \(\delta\)). ``agents`` (fixed-budget agents that answer the
    env's m arms) are added to the fixed-budget parts (a) and (b), as rows of ``fixed_budget.md`` and curves of
    ``fixed_budget.png`` and ``generality.png``; not to (c), fixed confidence, nor (d), UGapEb's Theorem 1."""

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = runs if runs is not None else (100 if quick else 1000)
    start = time.perf_counter()
    specs = [with_agents([spec], agents)[0] if spec.name[0] in FIXED_BUDGET_PARTS else spec
             for spec in gabillon2012_specs(runs=runs, quick=quick)]
    summary = run_specs(specs, out, _describe, jobs, backend, progress)
    summary.to_csv(out / "results.csv", index=False)
    (out / "fixed_budget.md").write_text(fixed_budget_markdown(summary, runs))
    (out / "fixed_confidence.md").write_text(fixed_confidence_markdown(summary, runs))
    (out / "theorem1.md").write_text(theorem1_markdown(summary, runs))
    figures = [
        plot_error_against_budget(summary[summary.part == "a"], out / "fixed_budget.png",
                                  title=f"gabillon2012 (a): probability of error, m = 1, {runs} runs"),
        plot_generality(summary[summary.part == "b"], out / "generality.png",
                        title=f"gabillon2012 (b): (epsilon, m)-best arm at n = H_eps / 4, {runs} runs"),
        plot_fixed_confidence(summary[summary.part == "c"], out / "fixed_confidence.png",
                              title=f"gabillon2012 (c): fixed confidence, {runs} runs"),
    ]
    return Report(summary=summary, figures=figures, seconds=time.perf_counter() - start,
                  files=[out / "results.csv", out / "fixed_budget.md", out / "fixed_confidence.md",
                         out / "theorem1.md", *figures])


# ----------------------------------------------------------------------------------------- figures
def plot_error_against_budget(summary: Any, path: str | Path, title: str = "") -> Path:
    r"""One panel per problem: probability of error against \(n / H_1\) (\(\log_2\) axis), one curve per agent with
    its 95% interval."""
    rows = summary[summary["metric"] == "error"]
    problems = list(dict.fromkeys(rows["problem"]))
    fig, axes = _grid(len(problems), 2)
    for ax, problem in zip(axes, problems, strict=True):
        panel = rows[rows["problem"] == problem]
        for i, (agent, curve) in enumerate(panel.groupby("agent", sort=False)):
            _errorbars(ax, curve["budget"] / curve["H1"], curve, agent, i)
        ax.set_xscale("log", base=2)
        ax.set(xlabel="n / H_1", ylabel="P(error)", ylim=(-0.02, 1.0),
               title=f"problem {problem} (K = {panel['num_arms'].iloc[0]}, H_1 = {panel['H1'].iloc[0]:.0f})")
        ax.grid(alpha=0.3, which="both")
    return _finish(fig, axes, path, title)


def plot_generality(summary: Any, path: str | Path, title: str = "") -> Path:
    r"""One panel per problem: probability of error for each \((m, \epsilon)\) at \(n = H_\epsilon / 4\), one marker
    per agent, the agents side by side around each case's tick (the \(m = 1\) baseline SR and the \(m > 1\)
    baseline SAR share a label: ``SR / SAR``)."""
    rows = summary[summary["metric"] == "error"].copy()
    rows["agent"] = rows["agent"].replace({"SR": "SR / SAR", "SAR": "SR / SAR"})
    problems = list(dict.fromkeys(rows["problem"]))
    fig, axes = _grid(len(problems), 2)
    agents = list(dict.fromkeys(rows["agent"]))
    for ax, problem in zip(axes, problems, strict=True):
        panel = rows[rows["problem"] == problem]
        cases = list(dict.fromkeys(zip(panel["m"], panel["epsilon"], strict=True)))
        for agent, curve in panel.groupby("agent", sort=False):
            i = agents.index(agent)
            x = [cases.index(case) for case in zip(curve["m"], curve["epsilon"], strict=True)]
            _errorbars(ax, x, curve, agent, i, offset=0.6 / len(agents) * (i - (len(agents) - 1) / 2), line=False)
        ax.set_xticks(range(len(cases)), [f"m={m}\neps={e:g}" for m, e in cases], fontsize=8)
        ax.set(ylabel="P(error)", ylim=(-0.02, 1.0), xlim=(-0.5, len(cases) - 0.5), title=f"problem {problem}")
        ax.grid(alpha=0.3)
    return _finish(fig, axes, path, title)


def plot_fixed_confidence(summary: Any, path: str | Path, title: str = "") -> Path:
    r"""One column per instance: pulls used against \(\log(1/\delta)\) with Theorem 2's scale
    \(H_\epsilon \log(H_\epsilon/\delta)\) (top), and the empirical error with its 95% interval against \(\delta\),
    next to the line \(\text{error} = \delta\) (bottom)."""
    instances = list(dict.fromkeys(summary["experiment"]))
    fig, axes = _grid(2 * len(instances), 2, height=3.0)
    for j, name in enumerate(instances):
        panel = summary[summary["experiment"] == name]
        pulls_ax, error_ax = axes[2 * j], axes[2 * j + 1]
        for i, (agent, rows) in enumerate(panel.groupby(panel["agent"].str.split("(").str[0], sort=False)):
            delta = rows["agent"].str.extract(r"delta=([0-9.]+)")[0].astype(float)
            pulls, error = rows["metric"] == "pulls", rows["metric"] == "error"
            _errorbars(pulls_ax, np.log(1.0 / delta[pulls]), rows[pulls], agent, i)
            _errorbars(error_ax, delta[error] * (1.0 + 0.08 * i), rows[error], agent, i)  # side by side
        h = panel["H_eps"].iloc[0]
        grid = np.linspace(0.0, np.log(1.0 / panel["agent"].str.extract(r"delta=([0-9.]+)")[0].astype(float).min()))
        pulls_ax.plot(grid, h * (np.log(h) + grid), "k--", linewidth=1, label="H_eps log(H_eps/delta)")
        pulls_ax.set(xlabel="log(1/delta)", ylabel="pulls until stop", title=name[2:], xlim=(0, None))
        deltas = np.array([0.005, 0.15])
        error_ax.plot(deltas, deltas, "k:", linewidth=1, label="error = delta")
        error_ax.set(xscale="log", xlabel="delta", ylabel="P(error)", title=name[2:])
        for ax in (pulls_ax, error_ax):
            ax.grid(alpha=0.3, which="both")
    return _finish(fig, axes, path, title)
