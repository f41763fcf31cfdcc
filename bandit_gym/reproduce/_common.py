"""Shared by the reproductions: running a list of specs into one table, Markdown tables."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bandit_gym.experiments import ExperimentSpec, run_experiment


def run_specs(specs: Sequence[ExperimentSpec], out: Path, describe: Callable[[Any, ExperimentSpec], Any], jobs: int,
              backend: str | None, progress: bool) -> Any:
    """Run each spec, its cells under ``out/<spec name>`` (so an interrupted run resumes), and return the
    concatenated summaries, each passed through ``describe(summary, spec)`` to add the spec's columns."""
    import pandas as pd

    tables = []
    for spec in specs:
        folder = out / re.sub(r"[^A-Za-z0-9.]+", "-", spec.name).strip("-")
        result = run_experiment(spec, out=folder, jobs=jobs, backend=backend, progress=progress)
        tables.append(describe(result.summary(), spec))
    return pd.concat(tables, ignore_index=True)


def markdown_table(pivot: Any, header: Any) -> list[str]:
    """A pivot table as Markdown lines: the index levels as leading columns, ``header(column)`` as titles."""
    rows = [" | ".join(str(part) for part in (key if isinstance(key, tuple) else (key,))) for key in pivot.index]
    width = len(pivot.index.names)
    lines = ["| " + " | ".join(pivot.index.names) + " | " + " | ".join(header(c) for c in pivot.columns) + " |",
             "|" + "---|" * (width + len(pivot.columns))]
    for label, (_, values) in zip(rows, pivot.iterrows(), strict=True):
        lines.append(f"| {label} | " + " | ".join(str(v) for v in values) + " |")
    return [*lines, ""]
