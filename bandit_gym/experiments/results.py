"""Reading results: ``ExperimentResult`` (a tidy table, per-run arrays; ``load`` reads a folder without writing to it
or importing code) and ``collect``, which assembles it from a store."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bandit_gym.experiments.cells import Cell, expand
from bandit_gym.experiments.spec import LAYOUT_FILE, AgentCells, ExperimentSpec, _num_arms
from bandit_gym.experiments.store import CellStore


@dataclass
class ExperimentResult:
    """The per-run metrics of a finished experiment, and their summaries."""

    spec: ExperimentSpec
    #: (agent label, metric) -> array of shape (runs, budgets), runs in run order
    runs: dict[tuple[str, str], np.ndarray]
    #: the damaged cells found, moved aside and recomputed by the run that made this result
    damaged: list[str] = field(default_factory=list)
    #: stored cells that the run reused (made by the code installed now), or that ``load`` read
    reused: int = 0
    #: a run: why it recomputed stored cells, with how many ("4 cells: KLAPT's code changed"); ``load``: the cells
    #: made by code other than the code installed now (read all the same)
    stale: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, folder: str | Path) -> ExperimentResult:
        """The result of a finished experiment, from the folder ``run_experiment(spec, out=folder)`` wrote (its
        ``spec.json`` and ``cells/``); a ValueError names the cells that are missing (an unfinished run: run the
        same spec with the same ``out`` to complete it). Cells made by agent code other than the code installed
        now are read all the same, listed in ``stale`` and named in a warning."""
        folder = Path(folder)
        spec_file = folder / "spec.json"
        if not spec_file.exists():
            raise ValueError(f"{folder} holds no experiment (no spec.json); pass the out folder of run_experiment")
        data = _read_json(spec_file)
        if not (folder / LAYOUT_FILE).exists():
            raise ValueError(f"{folder} is unfinished or was written by an older bandit_gym (no {LAYOUT_FILE}); run "
                             f"the same spec with out={str(folder)!r} to complete it")
        spec = ExperimentSpec.from_record(data, _read_layout(folder / LAYOUT_FILE))
        store = CellStore(spec, folder, heal=False)
        missing = [cell.key(spec) for cell in expand(spec) if not store.has(cell)]
        if missing:
            raise ValueError(f"{folder} is unfinished: {len(missing)} of {len(expand(spec))} cells missing (e.g. "
                             f"{missing[0]}); run the same spec with out={str(folder)!r} to complete it")
        result = collect(spec, store)
        result.reused, result.stale = store.reused, _stale_lines(store)
        if result.stale:
            warnings.warn(f"{folder} holds cells made by code other than the code installed now: "
                          f"{'; '.join(result.stale)}; run the spec again into the folder to recompute them",
                          stacklevel=2)
        return result

    def summary(self) -> Any:
        """Tidy table: one row per agent x budget x metric with mean, standard error, 95% CI and runs."""
        import pandas as pd
        from scipy import stats

        rows = []
        for agent, layout in zip(self.spec.agents, self.spec.layout, strict=True):
            for metric in self.spec.metrics:
                values = self.runs[(agent.display, metric)]
                n = values.shape[0]
                mean = values.mean(axis=0)
                se = values.std(axis=0, ddof=1) / np.sqrt(n)
                half = stats.t.ppf(0.975, n - 1) * se
                for j, budget in enumerate(self.spec.budgets):
                    rows.append({
                        "experiment": self.spec.title, "env": self.spec.env, "family": str(self.spec.family),
                        "agent": agent.display,
                        "name": agent.name, "params": json.dumps(dict(agent.params), sort_keys=True),
                        "oracle": bool(layout.oracle), "budget": budget, "metric": metric,
                        "mean": mean[j], "se": se[j], "ci_low": mean[j] - half[j], "ci_high": mean[j] + half[j],
                        "runs": n, "num_arms": _num_arms(self.spec),
                    })
        return pd.DataFrame(rows)

    def paired_tests(self, reference: str, metric: str | None = None) -> Any:
        """Two-tailed paired t-tests of ``reference`` against every other agent at every budget, over runs
        (tao2019 Table 1): mean difference (other - reference), t statistic, p-value."""
        import pandas as pd
        from scipy import stats

        metric = metric or self.spec.metrics[0]
        base = self.runs[(reference, metric)]
        rows = []
        for agent in self.spec.agents:
            if agent.display == reference:
                continue
            other = self.runs[(agent.display, metric)]
            for j, budget in enumerate(self.spec.budgets):
                diff = other[:, j] - base[:, j]
                if np.all(diff == diff[0]):
                    t, p = (0.0, 1.0) if diff[0] == 0 else (np.copysign(np.inf, diff[0]), 0.0)
                else:
                    test = stats.ttest_rel(other[:, j], base[:, j])
                    t, p = float(test.statistic), float(test.pvalue)
                rows.append({"experiment": self.spec.title, "reference": reference, "agent": agent.display,
                             "budget": budget, "metric": metric, "mean_difference": diff.mean(), "t": t,
                             "p_value": p, "significant": p < 0.05, "runs": len(diff)})
        return pd.DataFrame(rows)


def _stale_lines(store: CellStore) -> list[str]:
    return [f"{count} cell{'s' if count > 1 else ''}: {why}" for why, count in store.stale.items()]


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"{path} is not JSON ({error})") from None


def _read_layout(path: Path) -> list[AgentCells]:
    """The ``AgentCells`` of a folder's ``layout.json``, checked as data."""
    data = _read_json(path)
    entries = data.get("agents") if isinstance(data, dict) else None
    layout = []
    for entry in entries if isinstance(entries, list) else [None]:
        if not (isinstance(entry, dict) and isinstance(entry.get("label"), str)
                and isinstance(entry.get("anytime"), bool) and isinstance(entry.get("oracle"), list)
                and all(isinstance(name, str) for name in entry["oracle"])):
            raise ValueError(f"{path} is not a layout written by a run: 'agents' must list tables of label "
                             f"(string), anytime (true or false) and oracle (list of strings), got {entry!r}")
        layout.append(AgentCells(entry["label"], entry["anytime"], tuple(entry["oracle"])))
    return layout




def collect(spec: ExperimentSpec, store: CellStore) -> ExperimentResult:
    """Assemble the per-run arrays of every agent and metric from the stored cells."""
    runs: dict[tuple[str, str], np.ndarray] = {}
    chunks = range(-(-spec.runs // spec.chunk))
    for index, (agent, layout) in enumerate(zip(spec.agents, spec.layout, strict=True)):
        for metric in spec.metrics:
            if layout.anytime:
                parts = [store.get(Cell(index, None, c))[metric] for c in chunks]
                runs[(agent.display, metric)] = np.concatenate(parts, axis=0)
            else:
                columns = [np.concatenate([store.get(Cell(index, b, c))[metric][:, 0] for c in chunks])
                           for b in spec.budgets]
                runs[(agent.display, metric)] = np.stack(columns, axis=1)
    return ExperimentResult(spec, runs)
