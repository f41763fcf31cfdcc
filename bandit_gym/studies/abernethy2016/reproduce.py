r"""abernethy2016 has no experiments: a study of its theorems' \(m\)- and \(T\)-scaling, uncensored and censored.

(a) Uncensored feedback, i.i.d. thresholds: regret against \(T\) for \(m \in \{2, 8, 32\}\) on
    ``fixed_gap_distributions`` (four arms, two of them never best, every gap the same
    for every \(m\)), so that the \(m\)'s differ only in the number of levels (Theorem 2: DKWUCB's bound has no
    \(m\)).
(b) Censored feedback: each threshold order with the algorithm made for it and PerThresholdUCB, regret against
    \(m\) at \(T = 20000\), on the two-arm staircase instances (gaps 0.4 and 0.5 for every \(m\)).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bandit_gym.experiments import AgentSpec, ExperimentSpec
from bandit_gym.plotting import COLORS, MARKERS, Band, _finish, _grid, shade_bands
from bandit_gym.studies._report import Report, markdown_table, run_specs, with_agents


@dataclass(frozen=True)
class Uncensored:
    r"""(a) uncensored feedback, i.i.d. thresholds: regret against \(T\) for several \(m\) (fixed-gap instances,
    \(K = 4\))."""

    agents: tuple[str, ...]
    levels: tuple[int, ...]
    horizons: tuple[int, ...]


@dataclass(frozen=True)
class Censored:
    r"""(b) censored feedback: each threshold order with the algorithm made for it and PerThresholdUCB, regret
    against \(m\) at a fixed \(T\) (staircase instances, \(K = 2\), gaps 0.4 and 0.5, so that KMUCB's radius can resolve
    levels within the horizon)."""

    orders: dict[str, tuple[str, ...]]
    arms: int
    levels: tuple[int, ...]
    horizon: int


@dataclass(frozen=True)
class Quick:
    r"""The grid of ``--quick``: part (a)'s \(m\) and horizons, part (b)'s \(m\) and horizon."""

    levels_a: tuple[int, ...]
    horizons: tuple[int, ...]
    levels_b: tuple[int, ...]
    horizon: int


ABERNETHY_UNCENSORED = Uncensored(agents=("DKWUCB", "PerThresholdUCB", "UCB"), levels=(2, 8, 32),
                                  horizons=(1000, 3000, 10000, 30000))
ABERNETHY_CENSORED = Censored(orders={"increasing": ("PerThresholdUCB", "OPTIM"),
                                      "decreasing": ("OPTIM", "PerThresholdUCB"),
                                      "cyclic": ("KMUCB", "PerThresholdUCB")},
                              arms=2, levels=(2, 4, 8, 16, 32), horizon=20000)
ABERNETHY_QUICK = Quick(levels_a=(2, 8), horizons=(1000, 3000), levels_b=(2, 8), horizon=3000)


def abernethy2016_specs(runs: int = 200, quick: bool = False, seed: int = 2016) -> list[ExperimentSpec]:
    """The study's experiments (the paper has none): part (a) uncensored, part (b) censored."""
    from bandit_gym.instances import fixed_gap_distributions, staircase_distributions

    a, b = ABERNETHY_UNCENSORED, ABERNETHY_CENSORED
    levels_a, horizons = (ABERNETHY_QUICK.levels_a, ABERNETHY_QUICK.horizons) if quick else \
        (a.levels, a.horizons)
    levels_b, horizon = (ABERNETHY_QUICK.levels_b, ABERNETHY_QUICK.horizon) if quick else \
        (b.levels, b.horizon)
    specs = []
    for m in levels_a:
        kwargs = {"distributions": fixed_gap_distributions(m).tolist(), "feedback": "uncensored",
                  "thresholds": "iid"}
        specs.append(ExperimentSpec(env="ThresholdBandit-v0", agents=tuple(AgentSpec(n) for n in a.agents),
                                    budgets=tuple(horizons), runs=runs, seed=seed + m, env_kwargs=kwargs,
                                    name=f"uncensored m={m}"))
    for order, agents in b.orders.items():
        for m in levels_b:
            kwargs = {"distributions": staircase_distributions(b.arms, m).tolist(), "feedback": "censored",
                      "thresholds": order}
            specs.append(ExperimentSpec(env="ThresholdBandit-v0", agents=tuple(AgentSpec(n) for n in agents),
                                        budgets=(horizon,), runs=runs, seed=seed + 100 + m, env_kwargs=kwargs,
                                        name=f"censored {order} m={m}"))
    return specs


def reproduce_abernethy2016(
    out: str | Path, runs: int | None = None, quick: bool = False, jobs: int = 2, backend: str | None = None,
    progress: bool = True, agents: Sequence[AgentSpec] = (),
) -> Report:
    r"""Run the abernethy2016 study and write ``results.csv`` (cumulative pseudo-regret per agent, \(T\) and \(m\),
    with 95% CIs), ``regret.md`` (the same as Markdown tables), ``uncensored.png`` (regret against \(T\), one panel
    per \(m\)) and ``censored.png`` (regret against \(m\), one curve per threshold order and algorithm). ``agents`` are
    added to every experiment, parts (a) and (b) (``with_agents``), as rows of every table and curves of both
    figures."""

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = runs if runs is not None else (50 if quick else 200)
    start = time.perf_counter()
    specs = with_agents(abernethy2016_specs(runs=runs, quick=quick), agents)
    summary = run_specs(specs, out, _describe, jobs, backend, progress)
    summary.to_csv(out / "results.csv", index=False)
    (out / "regret.md").write_text(regret_markdown(summary, runs))
    figures = [plot_regret_against_horizon(summary[summary.feedback == "uncensored"], out / "uncensored.png",
                                           title=f"abernethy2016 (a): uncensored, i.i.d. thresholds, {runs} runs"),
               plot_regret_against_levels(summary[summary.feedback == "censored"], out / "censored.png",
                                          title=f"abernethy2016 (b): censored feedback, {runs} runs")]
    return Report(summary=summary, figures=figures, seconds=time.perf_counter() - start,
                  files=[out / "results.csv", out / "regret.md", *figures])


def _describe(summary: Any, spec: ExperimentSpec) -> Any:
    r"""Add the part (feedback), the threshold order and the number of levels \(m\) from the spec's name."""
    part, *order, m = spec.name.split(" ")
    return summary.assign(feedback=part, order=order[0] if order else "iid", levels=int(m[2:]))


def regret_markdown(summary: Any, runs: int) -> str:
    r"""Mean cumulative pseudo-regret \(\pm\) the 95% CI half-width, as Markdown: (a) agents \(\times\) \((m, T)\),
    (b) (order, agent) \(\times\) \(m\)."""
    lines = [f"Cumulative pseudo-regret, mean +- 95% CI half-width over {runs} runs.", ""]
    cell = summary.assign(text=[f"{m:.1f} +- {h - m:.1f}" for m, h in zip(summary["mean"], summary["ci_high"],
                                                                         strict=True)])
    part_a = cell[cell.feedback == "uncensored"]
    if len(part_a):
        lines += ["### (a) uncensored feedback, i.i.d. thresholds", ""]
        pivot = part_a.pivot_table(index="agent", columns=["levels", "budget"], values="text", aggfunc="first",
                                   sort=False)
        lines += markdown_table(pivot, lambda c: f"m={c[0]}, T={c[1]}")
    part_b = cell[cell.feedback == "censored"]
    if len(part_b):
        lines += ["### (b) censored feedback, T = " + str(int(part_b["budget"].iloc[0])), ""]
        pivot = part_b.pivot_table(index=["order", "agent"], columns="levels", values="text", aggfunc="first",
                                   sort=False)
        lines += markdown_table(pivot, lambda c: f"m={c}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------- figures
def _line(ax: Any, x: Any, curve: Any, label: str, i: int) -> Band:
    """Draw one curve's mean; return its 95% band for ``shade_bands`` (drawn once the panel's scales are set)."""
    color = COLORS[i % len(COLORS)]
    ax.plot(x, curve["mean"], marker=MARKERS[i % len(MARKERS)], markersize=4, color=color, label=label)
    return (x, curve["ci_low"], curve["ci_high"], color)


def plot_regret_against_horizon(summary: Any, path: str | Path, title: str = "") -> Path:
    r"""One panel per number of levels \(m\): mean cumulative pseudo-regret against the horizon \(T\) (log-log), a 95%
    confidence band per agent (a band whose lower end is at or below 0 is cut at the axis and marked with a caret,
    ``bandit_gym.plotting.shade_bands``)."""
    rows = summary[summary["metric"] == "regret"]
    levels = sorted(set(rows["levels"]))
    fig, axes = _grid(len(levels), 2)
    for ax, m in zip(axes, levels, strict=True):
        panel = rows[rows["levels"] == m]
        ax.set(xscale="log", yscale="log", xlabel="T (horizon)", ylabel="cumulative pseudo-regret", title=f"m = {m}")
        shade_bands(ax, [_line(ax, curve["budget"], curve, agent, i)
                         for i, (agent, curve) in enumerate(panel.groupby("agent", sort=False))], alpha=0.2)
        ax.grid(alpha=0.3, which="both")
    return _finish(fig, axes, path, title)


def plot_regret_against_levels(summary: Any, path: str | Path, title: str = "") -> Path:
    r"""Mean cumulative pseudo-regret at a fixed \(T\) against the number of levels \(m\) (\(\log_2\) \(x\)-axis), one
    curve per threshold order and agent, with 95% confidence bands; one panel per order and one with all curves (log
    \(y\) axis, where a band whose lower end is at or below 0 is cut at the axis and marked, ``shade_bands``)."""
    rows = summary[summary["metric"] == "regret"]
    orders = list(dict.fromkeys(rows["order"]))
    fig, axes = _grid(len(orders) + 1, 2)
    for ax, name in zip(axes, [*orders, "all"], strict=True):
        ax.set(xlabel="m (threshold levels)", ylabel="cumulative pseudo-regret", title=name)
        ax.set_xscale("log", base=2)
    axes[-1].set_yscale("log")
    bands: list[list[Band]] = [[] for _ in axes]
    for i, ((order, agent), curve) in enumerate(rows.groupby(["order", "agent"], sort=False)):
        label = f"{agent}, {order} thresholds"
        bands[orders.index(order)].append(_line(axes[orders.index(order)], curve["levels"], curve, label, i))
        bands[-1].append(_line(axes[-1], curve["levels"], curve, label, i))
    for ax, panel_bands in zip(axes, bands, strict=True):
        shade_bands(ax, panel_bands, alpha=0.2)
        ax.grid(alpha=0.3, which="both")
    return _finish(fig, axes[-1:], path, title)
