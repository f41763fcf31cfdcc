"""Shared by the reproductions: running a list of specs into one table, Markdown tables."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bandit_gym.experiments import AgentSpec, ExperimentSpec, run_experiments


@dataclass
class Report:
    """What a reproduction made: its summary table (one row per experiment, agent, budget and metric), the files
    it wrote, its figures, the seconds it took, and the study's other results by name (tao2019's t-tests,
    chen2017's tuning, hoffman2014's instances, ...)."""

    summary: Any
    files: list[Path]
    figures: list[Path]
    seconds: float
    extras: dict[str, Any] = field(default_factory=dict)


def with_agents(specs: Sequence[ExperimentSpec], agents: Sequence[AgentSpec]) -> list[ExperimentSpec]:
    """The specs with ``agents`` (a user's, or a learned policy such as ``ArmwisePPO``) appended to every spec
    whose env family they play (``Agent.families``): added rows of the reproduction's tables and figures, on the
    same runs as the paper's agents. Refused (ValueError): an agent that plays none of the specs' families, and a
    label that repeats one of a spec's."""
    families = {spec.family for spec in specs}
    taken = {a.display for spec in specs for a in spec.agents}
    for index, agent in enumerate(agents):
        plays = agent.cls.families_of(agent.params)
        if not families & set(plays):
            raise ValueError(f"agent {agent.display!r} plays {', '.join(map(str, plays))} envs; these experiments "
                             f"are {', '.join(sorted(map(str, families)))} envs")
        if agent.display in taken or agent.display in [a.display for a in agents[:index]]:
            raise ValueError(f'added agent (--agent) label "{agent.display}" is taken (by the reproduction\'s agents '
                             f'or an earlier --agent); give it another: {{name = "{agent.name}", label = '
                             f'"{agent.name} (mine)"}}')
    out = []
    for spec in specs:
        extra = tuple(agent for agent in agents if spec.family in agent.cls.families_of(agent.params))
        out.append(dataclasses.replace(spec, agents=spec.agents + extra) if extra else spec)
    return out


def run_specs(specs: Sequence[ExperimentSpec], out: Path, describe: Callable[[Any, ExperimentSpec], Any], jobs: int,
              backend: str | None, progress: bool) -> Any:
    """Run the specs through one pool of workers, each spec's cells under ``out/<spec name>`` (so an interrupted
    run resumes), and return the concatenated summaries, each passed through ``describe(summary, spec)`` to add
    the spec's columns."""
    import pandas as pd

    folders = [out / re.sub(r"[^A-Za-z0-9.]+", "-", spec.name).strip("-") for spec in specs]
    results = run_experiments(specs, folders, jobs=jobs, backend=backend, progress=progress)
    return pd.concat([describe(result.summary(), spec) for result, spec in zip(results, specs, strict=True)],
                     ignore_index=True)


def exact_error_intervals(summary: Any) -> Any:
    """``summary`` with the 95% intervals of its ``error`` rows (proportions) made exact: Clopper-Pearson."""
    from scipy import stats

    out = summary.copy()
    errors = out["metric"] == "error"
    intervals = [stats.binomtest(round(mean * runs), int(runs)).proportion_ci(method="exact")
                 for mean, runs in zip(out.loc[errors, "mean"], out.loc[errors, "runs"], strict=True)]
    out.loc[errors, "ci_low"] = [ci.low for ci in intervals]
    out.loc[errors, "ci_high"] = [ci.high for ci in intervals]
    return out


def markdown_table(pivot: Any, header: Any) -> list[str]:
    """A pivot table as Markdown lines: the index levels as leading columns, ``header(column)`` as titles."""
    rows = [" | ".join(str(part) for part in (key if isinstance(key, tuple) else (key,))) for key in pivot.index]
    width = len(pivot.index.names)
    lines = ["| " + " | ".join(pivot.index.names) + " | " + " | ".join(header(c) for c in pivot.columns) + " |",
             "|" + "---|" * (width + len(pivot.columns))]
    for label, (_, values) in zip(rows, pivot.iterrows(), strict=True):
        lines.append(f"| {label} | " + " | ".join(str(v) for v in values) + " |")
    return [*lines, ""]
