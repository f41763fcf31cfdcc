"""Experiment engine: a spec (env, agents, budgets, runs, seed) expands into cells that run on the native vector
envs; results come back as a tidy ``pandas.DataFrame`` and are written to disk cell by cell, so an interrupted
sweep resumes where it stopped.

Cells. An anytime agent (one that does not read T) runs once per chunk of runs to the largest budget, and the
anytime wrapper records its answer at every budget of the grid (on best-arm and top-K envs only agents without
batched pulls: a batch may jump past a budget). A horizon-aware agent (UCBE, UCB with ``delta = T^-2/2``) runs
once per budget and chunk. Each cell is a vector env of ``chunk`` copies.

Seeds and pairing. Per-cell seeds come from ``numpy.random.SeedSequence(seed, spawn_key=...)``: the env seed of
a chunk depends only on the spec's seed and the chunk, the agent's own seed also on the agent's label. With
``common_random_numbers`` (the default) run r of every agent reads the same sample streams (the papers do not
say how they paired runs), so paired tests over runs compare like with like. Results do not depend on the
backend or the number of workers.

Parallelism. Cells run through joblib: local processes by default (``backend="loky"``); the same spec runs on a
Dask or Ray cluster through joblib's ``"dask"`` or ``"ray"`` backends. The parent process writes each finished
cell atomically; a failing cell is reported with its spec and does not take the others with it.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
import tempfile
import traceback
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents import agent_class
from bandit_gym.agents.base import Agent
from bandit_gym.envs._base import engine_of
from bandit_gym.rollout import play_batched, play_compiled, play_vector

#: metrics recorded per family of env
METRICS = {"thresholding": ("aggregate_regret", "error"), "threshold": ("regret",), "multi_armed": ("regret",),
           "best_arm": ("error", "regret", "pulls"), "top_k": ("error", "regret", "pulls")}
#: the env argument that sets the horizon (the budget, or the cap of a fixed-confidence env), per family
HORIZON_ARGUMENT = {"thresholding": "budget", "threshold": "horizon", "multi_armed": "budget", "best_arm": "budget",
                    "top_k": "budget"}
BACKENDS = ("loky", "threading", "multiprocessing", "sequential", "dask", "ray")


class ExperimentError(RuntimeError):
    """Some cells failed; the others were completed and saved."""


@dataclass(frozen=True)
class AgentSpec:
    """One agent of an experiment: its name, its parameters and an optional display label.

    The name is a built-in agent (``bandit_gym.agents.AGENTS``), a name given to ``bandit_gym.agents.register`` or
    declared by an installed package's ``bandit_gym.agents`` entry point, or an import path ``package.module:Class``
    (see ``bandit_gym.agents.agent_class``). It is resolved once, by the :class:`ExperimentSpec` that holds it, in
    the process that builds the spec; the class travels with the spec to parallel workers (by reference if
    importable there, else by value through cloudpickle, as for a class defined in a notebook), so workers need
    no registration of their own.
    """

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""

    @property
    def display(self) -> str:
        if self.label:
            return self.label
        args = ",".join(f"{value:g}" if isinstance(value, float) else str(value) for value in self.params.values())
        return f"{self.name}({args})" if args else self.name

    @property
    def cls(self) -> type[Agent]:
        """The agent's class, resolved from ``name`` at first use and kept (it is pickled with the spec)."""
        cls: type[Agent] | None = self.__dict__.get("_cls")
        if cls is None:
            cls = agent_class(self.name)
            object.__setattr__(self, "_cls", cls)
        return cls

    @property
    def anytime(self) -> bool:
        return self.cls.is_anytime(self.params)


@dataclass(frozen=True)
class ExperimentSpec:
    """What to run: ``agents`` on ``env`` (with ``env_kwargs``) at each of ``budgets``, ``runs`` times."""

    env: str
    agents: tuple[AgentSpec, ...]
    budgets: tuple[int, ...]
    runs: int = 5000
    seed: int = 0
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    chunk: int = 2500
    common_random_numbers: bool = True
    name: str = ""

    def __post_init__(self) -> None:
        if self.env not in gym.registry:
            raise ValueError(f"env={self.env!r} is not a registered id; `bandit-gym list` shows them")
        if not self.agents:
            raise ValueError("agents is empty; name at least one agent of bandit_gym.agents.AGENTS")
        for agent in self.agents:
            if self.family not in agent.cls.families:
                raise ValueError(f"agent {agent.display} plays {agent.cls.families} envs, not {self.env} "
                                 f"({self.family})")
        labels = [agent.display for agent in self.agents]
        if len(set(labels)) != len(labels):
            raise ValueError(f"agent labels must be distinct, got {labels}; give each agent a label")
        budgets = [check.integer("budgets[]", b, minimum=1) for b in self.budgets]
        if not budgets or any(b2 <= b1 for b1, b2 in itertools.pairwise(budgets)):
            raise ValueError(f"budgets must be a non-empty strictly increasing list, got {list(self.budgets)}")
        check.integer("runs", self.runs, minimum=2)
        check.integer("chunk", self.chunk, minimum=1)
        check.integer("seed", self.seed, minimum=0)
        if HORIZON_ARGUMENT[self.family] in self.env_kwargs:
            raise ValueError(f"env_kwargs sets {HORIZON_ARGUMENT[self.family]!r}; the budgets list sets it")

    @property
    def family(self) -> str:
        return _env_facts(self.env, "{}")[0]

    @property
    def title(self) -> str:
        return self.name or self.env

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ExperimentSpec:
        """Build a spec from plain data (as read from TOML or JSON); unknown keys are an error."""
        data = dict(data)
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown spec keys {sorted(unknown)}; allowed: {sorted(known)}")
        agents = []
        for entry in data.pop("agents", []):
            if isinstance(entry, str):
                entry = {"name": entry}
            if not isinstance(entry, Mapping) or "name" not in entry or set(entry) - {"name", "params", "label"}:
                raise ValueError(f"agents[] entry {entry!r} must be a name or a table with 'name' and optional "
                                 "'params' and 'label'")
            agents.append(AgentSpec(name=entry["name"], params=dict(entry.get("params", {})),
                                    label=entry.get("label", "")))
        return cls(agents=tuple(agents), budgets=tuple(data.pop("budgets", ())), **data)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["agents"] = [{"name": a.name, "params": dict(a.params), "label": a.label} for a in self.agents]
        out["budgets"] = list(self.budgets)
        out["env_kwargs"] = dict(self.env_kwargs)
        return out


def load_specs(path: str | Path) -> list[ExperimentSpec]:
    """Read one spec, or several under ``[[experiment]]`` (TOML) / a JSON list, from a ``.toml`` or ``.json``."""
    path = Path(path)
    text = path.read_text()
    if path.suffix == ".toml":
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        data: Any = tomllib.loads(text)
    elif path.suffix == ".json":
        data = json.loads(text)
    else:
        raise ValueError(f"spec file {path} must end in .toml or .json")
    entries = data.get("experiment", [data]) if isinstance(data, dict) else data
    return [ExperimentSpec.from_dict(entry) for entry in entries]


@dataclass(frozen=True)
class Cell:
    """One unit of work: an agent, a budget (``None``: anytime, evaluated at every budget), a chunk of runs."""

    agent: int
    budget: int | None
    chunk: int

    def key(self, spec: ExperimentSpec) -> str:
        label = re.sub(r"[^A-Za-z0-9.+-]+", "_", spec.agents[self.agent].display).strip("_")
        when = "anytime" if self.budget is None else f"T{self.budget}"
        return f"{label}__{when}__chunk{self.chunk}"

    def runs(self, spec: ExperimentSpec) -> range:
        start = self.chunk * spec.chunk
        return range(start, min(start + spec.chunk, spec.runs))


def expand(spec: ExperimentSpec) -> list[Cell]:
    """Every cell of a spec."""
    chunks = range(-(-spec.runs // spec.chunk))
    cells: list[Cell] = []
    for index, agent in enumerate(spec.agents):
        budgets: Iterable[int | None] = [None] if _prefix(spec, agent) else spec.budgets
        cells.extend(Cell(index, budget, chunk) for budget in budgets for chunk in chunks)
    return cells


def _prefix(spec: ExperimentSpec, agent: AgentSpec) -> bool:
    """Whether the agent is scored at every budget from one episode per run (prefix evaluation by the anytime
    wrapper, which scores pure-exploration answers; threshold-bandit regret is recorded per horizon): an anytime
    agent, and on best-arm and top-K envs one without batched pulls (a batch may jump past a budget)."""
    if not agent.anytime:
        return False
    return spec.family == "thresholding" or (spec.family in ("best_arm", "top_k") and not agent.cls.batched)


def _seed(spec: ExperimentSpec, *key: int) -> int:
    return int(np.random.SeedSequence(spec.seed, spawn_key=key).generate_state(1, np.uint32)[0])


def build_agent(agent: AgentSpec, env: Any) -> Agent:
    """Instantiate an agent, filling the oracle parameters it was not given (e.g. UCBE's H) from the env's fixed
    instance."""
    params = dict(agent.params)
    missing = _oracle_filled(agent)
    if missing:
        engine: Any = engine_of(env)
        if getattr(engine, "fixed_means", None) is None:
            raise ValueError(f"{agent.display} needs oracle parameters {missing} of a fixed instance, but this env "
                             "draws its instance per episode; pass them in the agent's params")
        truth = engine.oracle_values()
        params = {**{key: truth[key] for key in missing}, **params}
    return agent.cls(**params)


def _oracle_filled(agent: AgentSpec) -> tuple[str, ...]:
    """The oracle parameters the engine fills from the true instance: those not given in the agent's params
    (none if an alternative to them, such as UGapEb's ``a``, is given)."""
    if any(key in agent.params for key in agent.cls.oracle_alternatives):
        return ()
    return tuple(key for key in agent.cls.oracle_parameters if key not in agent.params)


def play_cell(spec: ExperimentSpec, cell: Cell) -> tuple[dict[str, np.ndarray], Agent]:
    """Play one cell as the engine does (its env, seeds and rollout path) and return the rollout's raw result
    and the agent after the play (whose state, e.g. BayesGap's beta, a study may read)."""
    runs = cell.runs(spec)
    family = spec.family
    horizon = spec.budgets[-1] if cell.budget is None else cell.budget
    budgets = list(spec.budgets) if cell.budget is None else [cell.budget]
    kwargs = dict(spec.env_kwargs)
    kwargs[HORIZON_ARGUMENT[family]] = horizon
    if family != "threshold":
        kwargs["common_random_numbers"] = spec.common_random_numbers
    env = gym.make_vec(spec.env, num_envs=len(runs), vectorization_mode="vector_entry_point", copy=False, **kwargs)
    env_seed = _seed(spec, cell.chunk)
    env.reset(seed=env_seed)
    agent_spec = spec.agents[cell.agent]
    agent = build_agent(agent_spec, env)
    agent_seed = _seed(spec, cell.chunk, zlib.crc32(agent_spec.display.encode()))
    anytime = budgets if family == "thresholding" or cell.budget is None else None
    # Batched pulls where the agent has them (best arm, top K), else the compiled rollout where one exists (same
    # numbers, bit for bit), else the vector env step by step.
    result = None
    if family in ("best_arm", "top_k") and agent.batched:
        result = play_batched(env, agent, seed=env_seed, agent_seed=agent_seed)
    if result is None:
        result = play_compiled(env, agent, seed=env_seed, budgets=anytime, agent_seed=agent_seed)
    if result is None:
        result = play_vector(env, agent, seed=env_seed, budgets=anytime, agent_seed=agent_seed)
    env.close()
    return result, agent


def run_cell(spec: ExperimentSpec, cell: Cell) -> dict[str, np.ndarray]:
    """Run one cell and return its per-run metrics, each of shape ``(runs in the chunk, budgets of the cell)``."""
    result, _ = play_cell(spec, cell)
    family = spec.family
    budgets = list(spec.budgets) if cell.budget is None else [cell.budget]
    out = {"budgets": np.asarray(budgets), "first_run": np.asarray(cell.runs(spec).start)}
    if family == "thresholding":
        out["aggregate_regret"] = result["anytime_regret"]
        out["error"] = result["anytime_error"]
    elif cell.budget is None:  # pulls: made by the end of the episode, capped by each budget
        out["regret"], out["error"] = result["anytime_regret"], result["anytime_error"]
        out["pulls"] = np.minimum(result["pulls"][:, None], np.asarray(budgets)[None, :]).astype(np.float64)
    else:
        for metric in METRICS[family]:
            out[metric] = result[metric][:, None].astype(np.float64)
    return out


def _safe_run_cell(spec: ExperimentSpec, cell: Cell) -> tuple[Cell, dict[str, np.ndarray] | str]:
    try:
        return cell, run_cell(spec, cell)
    except Exception:  # reported by the parent with the cell's spec; the other cells go on
        return cell, traceback.format_exc()


class CellStore:
    """Where finished cells live: a folder of ``.npz`` files (written atomically), or memory."""

    def __init__(self, spec: ExperimentSpec, out: str | Path | None) -> None:
        self.spec = spec
        self.memory: dict[str, dict[str, np.ndarray]] = {}
        self.folder = None if out is None else Path(out)
        if self.folder is not None:
            (self.folder / "cells").mkdir(parents=True, exist_ok=True)
            for stale in (self.folder / "cells").glob("*.npz.tmp"):  # half-written by a killed run
                stale.unlink()
            spec_file = self.folder / "spec.json"
            written = json.dumps(spec.to_dict(), indent=2, sort_keys=True)
            if spec_file.exists() and spec_file.read_text() != written:
                raise ValueError(f"{self.folder} holds the results of a different spec; use another output folder")
            spec_file.write_text(written)

    def _path(self, cell: Cell) -> Path:
        assert self.folder is not None
        return self.folder / "cells" / f"{cell.key(self.spec)}.npz"

    def has(self, cell: Cell) -> bool:
        return cell.key(self.spec) in self.memory or (self.folder is not None and self._path(cell).exists())

    def put(self, cell: Cell, data: dict[str, np.ndarray]) -> None:
        if self.folder is None:
            self.memory[cell.key(self.spec)] = data
            return
        handle, tmp = tempfile.mkstemp(dir=self._path(cell).parent, suffix=".npz.tmp")
        with os.fdopen(handle, "wb") as stream:
            np.savez(stream, **data)  # type: ignore[arg-type]
        os.replace(tmp, self._path(cell))

    def get(self, cell: Cell) -> dict[str, np.ndarray]:
        if cell.key(self.spec) in self.memory:
            return self.memory[cell.key(self.spec)]
        with np.load(self._path(cell)) as data:
            return {key: data[key] for key in data.files}


@dataclass
class ExperimentResult:
    """The per-run metrics of a finished experiment, and their summaries."""

    spec: ExperimentSpec
    #: (agent label, metric) -> array of shape (runs, budgets), runs in run order
    runs: dict[tuple[str, str], np.ndarray]

    @classmethod
    def load(cls, folder: str | Path) -> ExperimentResult:
        """The result of a finished experiment, from the folder ``run_experiment(spec, out=folder)`` wrote (its
        ``spec.json`` and ``cells/``); a ValueError names the cells that are missing (an unfinished run: run the
        same spec with the same ``out`` to complete it)."""
        folder = Path(folder)
        spec_file = folder / "spec.json"
        if not spec_file.exists():
            raise ValueError(f"{folder} holds no experiment (no spec.json); pass the out folder of run_experiment")
        spec = ExperimentSpec.from_dict(json.loads(spec_file.read_text()))
        store = CellStore(spec, folder)
        missing = [cell.key(spec) for cell in expand(spec) if not store.has(cell)]
        if missing:
            raise ValueError(f"{folder} is unfinished: {len(missing)} of {len(expand(spec))} cells missing (e.g. "
                             f"{missing[0]}); run the same spec with out={str(folder)!r} to complete it")
        return collect(spec, store)

    def summary(self) -> Any:
        """Tidy table: one row per agent x budget x metric with mean, standard error, 95% CI and runs."""
        import pandas as pd
        from scipy import stats

        rows = []
        for agent in self.spec.agents:
            for metric in METRICS[self.spec.family]:
                values = self.runs[(agent.display, metric)]
                n = values.shape[0]
                mean = values.mean(axis=0)
                se = values.std(axis=0, ddof=1) / np.sqrt(n)
                half = stats.t.ppf(0.975, n - 1) * se
                for j, budget in enumerate(self.spec.budgets):
                    rows.append({
                        "experiment": self.spec.title, "env": self.spec.env, "agent": agent.display,
                        "name": agent.name, "params": json.dumps(dict(agent.params), sort_keys=True),
                        "oracle": bool(_oracle_filled(agent)), "budget": budget, "metric": metric,
                        "mean": mean[j], "se": se[j], "ci_low": mean[j] - half[j], "ci_high": mean[j] + half[j],
                        "runs": n, "num_arms": _num_arms(self.spec),
                    })
        return pd.DataFrame(rows)

    def paired_tests(self, reference: str, metric: str | None = None) -> Any:
        """Two-tailed paired t-tests of ``reference`` against every other agent at every budget, over runs
        (tao2019 Table 1): mean difference (other - reference), t statistic, p-value."""
        import pandas as pd
        from scipy import stats

        metric = metric or METRICS[self.spec.family][0]
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


def _num_arms(spec: ExperimentSpec) -> int:
    return _env_facts(spec.env, json.dumps(dict(spec.env_kwargs), sort_keys=True))[1]


@functools.lru_cache(maxsize=64)
def _env_facts(env_id: str, kwargs_json: str) -> tuple[str, int]:
    """(family, K) of an env id with the given keyword arguments (JSON), from one construction (cached)."""
    engine = engine_of(gym.make(env_id, **json.loads(kwargs_json)))
    return engine.family, int(engine.num_arms)


def run_experiment(
    spec: ExperimentSpec,
    out: str | Path | None = None,
    jobs: int = 1,
    backend: str | None = None,
    progress: bool = True,
    on_cell: Callable[[Cell], None] | None = None,
) -> ExperimentResult:
    """Run every cell of ``spec`` not already in ``out`` and return the results.

    ``jobs`` parallel workers through joblib's ``backend`` (default: local processes when ``jobs > 1``,
    in-process otherwise; ``"dask"`` needs a ``dask.distributed.Client``, ``"ray"`` a Ray runtime). Each finished
    cell is written before the next result is awaited; cells that fail are reported together at the end, in an
    :class:`ExperimentError`, after the others completed.
    """
    return run_experiments([spec], [out], jobs, backend, progress, on_cell)[0]


def run_experiments(
    specs: Sequence[ExperimentSpec],
    outs: Sequence[str | Path | None],
    jobs: int = 1,
    backend: str | None = None,
    progress: bool = True,
    on_cell: Callable[[Cell], None] | None = None,
) -> list[ExperimentResult]:
    """:func:`run_experiment` for several specs (spec i's cells in ``outs[i]``) through one pool of workers, so
    that a worker done with one spec's cells starts on the next spec's instead of waiting for the longest cell."""
    if backend is not None:
        check.choice("backend", backend, BACKENDS)
    check.integer("jobs", jobs, minimum=1)
    if len(outs) != len(specs):
        raise ValueError(f"outs must hold one folder (or None) per spec: {len(specs)} specs, {len(outs)} outs")
    stores = [CellStore(spec, out) for spec, out in zip(specs, outs, strict=True)]
    pending = [(i, spec, cell) for i, (spec, store) in enumerate(zip(specs, stores, strict=True))
               for cell in expand(spec) if not store.has(cell)]
    # Longest cells first (pulls = runs x horizon), so that no worker is left with a long cell at the end.
    pending.sort(key=lambda item: -len(item[2].runs(item[1])) * (item[2].budget or item[1].budgets[-1]))
    title = specs[0].title if len(specs) == 1 else f"{len(specs)} experiments"
    failures: list[str] = []
    for (i, cell), outcome in _execute(title, pending, jobs, backend, progress):
        spec = specs[i]
        if isinstance(outcome, str):
            failures.append(f"cell {cell.key(spec)} of experiment {spec.title} ({spec.to_dict()}) failed:\n{outcome}")
            continue
        stores[i].put(cell, outcome)
        if on_cell is not None:
            on_cell(cell)
    if failures:
        raise ExperimentError("\n".join(failures))
    results = [collect(spec, store) for spec, store in zip(specs, stores, strict=True)]
    for result, store in zip(results, stores, strict=True):
        if store.folder is not None:  # the tidy table beside the cells, as `bandit-gym run` writes it
            result.summary().to_csv(store.folder / "results.csv", index=False)
    return results


#: a cell of spec number i: (i, spec, cell); a worker returns (i, cell) and the cell's data or error text
Work = tuple[int, ExperimentSpec, Cell]
Done = tuple[tuple[int, Cell], dict[str, np.ndarray] | str]


def _execute(title: str, work: Sequence[Work], jobs: int, backend: str | None, progress: bool) -> Iterator[Done]:
    bar = _progress(len(work), title) if progress and work else None
    try:
        for item in _results(work, jobs, backend):
            if bar is not None:
                bar.update()
            yield item
    finally:
        if bar is not None:
            bar.close()


def _run_work(index: int, spec: ExperimentSpec, cell: Cell) -> Done:
    done, outcome = _safe_run_cell(spec, cell)
    return (index, done), outcome


def _results(work: Sequence[Work], jobs: int, backend: str | None) -> Iterator[Done]:
    if jobs == 1 and backend in (None, "sequential"):
        for item in work:
            yield _run_work(*item)
        return
    import joblib

    if backend == "ray":
        from ray.util.joblib import register_ray

        register_ray()
    with joblib.parallel_config(backend=backend or "loky", n_jobs=jobs):
        active, _ = joblib.parallel.get_active_backend()
        if getattr(active, "supports_return_generator", False):
            tasks = (joblib.delayed(_run_work)(*item) for item in work)
            yield from joblib.Parallel(return_as="generator_unordered")(tasks)
            return
        # Backends without result generators (Ray): batches of a few cells per worker, each batch saved as it
        # returns, so an interruption loses at most one batch.
        size = 4 * jobs
        for start in range(0, len(work), size):
            batch = work[start:start + size]
            yield from joblib.Parallel(return_as="list")(joblib.delayed(_run_work)(*item) for item in batch)


def _progress(total: int, title: str) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=title, unit="cell", leave=False)


def collect(spec: ExperimentSpec, store: CellStore) -> ExperimentResult:
    """Assemble the per-run arrays of every agent and metric from the stored cells."""
    runs: dict[tuple[str, str], np.ndarray] = {}
    chunks = range(-(-spec.runs // spec.chunk))
    for index, agent in enumerate(spec.agents):
        for metric in METRICS[spec.family]:
            if _prefix(spec, agent):
                parts = [store.get(Cell(index, None, c))[metric] for c in chunks]
                runs[(agent.display, metric)] = np.concatenate(parts, axis=0)
            else:
                columns = [np.concatenate([store.get(Cell(index, b, c))[metric][:, 0] for c in chunks])
                           for b in spec.budgets]
                runs[(agent.display, metric)] = np.stack(columns, axis=1)
    return ExperimentResult(spec, runs)
