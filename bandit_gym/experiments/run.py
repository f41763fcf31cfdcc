"""Running specs: ``play_cell`` (the numba backend here, the JAX one in ``bandit_gym.jax.engine``), ``run_cell``,
``run_experiment`` and ``run_experiments`` over joblib's, Dask's or Ray's workers; ``stored_cells`` tallies what the
runs of a block did with the cells already stored."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import os
import traceback
import warnings
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from bandit_gym import _validation as check
from bandit_gym._workers import end_with_parent
from bandit_gym.experiments.cells import Cell, _seed, build_agent, expand
from bandit_gym.experiments.results import ExperimentResult, _stale_lines, collect
from bandit_gym.experiments.spec import BACKENDS, MAX_CLUSTER_JOBS, ExperimentError, ExperimentSpec
from bandit_gym.experiments.store import CellStore, _write_atomic
from bandit_gym.families import Family
from bandit_gym.rollout import play_batched, play_compiled, play_vector


def play_cell(spec: ExperimentSpec, cell: Cell) -> tuple[dict[str, np.ndarray], Any]:
    """Play one cell as the engine does (its env, seeds and rollout path) and return the rollout's raw result
    and the agent after the play (whose state, e.g. BayesGap's beta, a study may read; the JAX agent, which keeps
    none, with ``backend="jax"``). Both backends draw the same seeds: the env's from the chunk, the agent's own
    also from its label."""
    agent_spec = spec.agents[cell.agent]
    env_seed = _seed(spec, cell.chunk)
    agent_seed = _seed(spec, cell.chunk, zlib.crc32(agent_spec.display.encode()))
    if spec.backend == "jax":
        from bandit_gym.jax.engine import play_cell as play_jax_cell

        return play_jax_cell(spec, cell, env_seed, agent_seed)
    runs = cell.runs(spec)
    facts = spec.facts
    horizon = spec.budgets[-1] if cell.budget is None else cell.budget
    budgets = list(spec.budgets) if cell.budget is None else [cell.budget]
    kwargs = dict(spec.env_kwargs)
    kwargs[facts.horizon_argument] = horizon
    if facts.takes_common_random_numbers:
        kwargs["common_random_numbers"] = spec.common_random_numbers
    env = gym.make_vec(spec.env, num_envs=len(runs), vectorization_mode="vector_entry_point", copy=False, **kwargs)
    env.reset(seed=env_seed)
    agent = build_agent(agent_spec, env)
    # the thresholding bandit's answers are scored at the cell's budgets from the rollout's checkpoints
    anytime = budgets if facts.family is Family.THRESHOLDING or cell.budget is None else None
    # Batched pulls where the agent has them (best arm, top K), else the compiled rollout where one exists (same
    # numbers, bit for bit), else the vector env step by step.
    result = None
    if agent.batches_on(facts.family):
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
    budgets = list(spec.budgets) if cell.budget is None else [cell.budget]
    out = {"budgets": np.asarray(budgets), "first_run": np.asarray(cell.runs(spec).start)}
    if spec.family is Family.THRESHOLDING:  # scored at the cell's budgets (play_cell)
        out["aggregate_regret"] = result["anytime_regret"]
        out["error"] = result["anytime_error"]
    elif cell.budget is None:  # pulls: made by the end of the episode, capped by each budget
        out["regret"], out["error"] = result["anytime_regret"], result["anytime_error"]
        out["pulls"] = np.minimum(result["pulls"][:, None], np.asarray(budgets)[None, :]).astype(np.float64)
    else:
        for metric in spec.metrics:
            out[metric] = result[metric][:, None].astype(np.float64)
    return out


def _safe_run_cell(spec: ExperimentSpec, cell: Cell) -> tuple[Cell, dict[str, np.ndarray] | str]:
    try:
        return cell, run_cell(spec, cell)
    except Exception:  # reported by the parent with the cell's spec; the other cells go on
        return cell, traceback.format_exc()




def run_experiment(
    spec: ExperimentSpec,
    out: str | Path | None = None,
    jobs: int = 1,
    backend: str | None = None,
    progress: bool = True,
    on_cell: Callable[[Cell], None] | None = None,
    force: bool = False,
) -> ExperimentResult:
    """Run every cell of ``spec`` not already in ``out`` and return the results.

    A cell in ``out`` is reused only if the agent's code and the package version that made it are the ones
    installed now (``bandit_gym.provenance``); the others are recomputed, with a warning that says why
    (``result.stale``); ``result.reused`` counts the cells reused. ``force=True`` recomputes every cell.

    ``jobs`` parallel workers through joblib's ``backend`` (default: local processes when ``jobs > 1``,
    in-process otherwise; ``"dask"`` needs a ``dask.distributed.Client``, ``"ray"`` a Ray runtime). Each finished
    cell is written before the next result is awaited; cells that fail are reported together at the end, in an
    ``ExperimentError``, after the others completed.
    """
    return run_experiments([spec], [out], jobs, backend, progress, on_cell, force)[0]


def run_experiments(
    specs: Sequence[ExperimentSpec],
    outs: Sequence[str | Path | None],
    jobs: int = 1,
    backend: str | None = None,
    progress: bool = True,
    on_cell: Callable[[Cell], None] | None = None,
    force: bool = False,
) -> list[ExperimentResult]:
    """``run_experiment`` for several specs (spec i's cells in ``outs[i]``) through one pool of workers, so
    that a worker done with one spec's cells starts on the next spec's instead of waiting for the longest cell."""
    if backend is not None:
        check.choice("backend", backend, BACKENDS)
    check_jobs(jobs, backend)
    if backend == "jax":  # the specs' cells played with JAX, in this process
        specs = [dataclasses.replace(spec, backend="jax") for spec in specs]
    if len(outs) != len(specs):
        raise ValueError(f"outs must hold one folder (or None) per spec: {len(specs)} specs, {len(outs)} outs")
    tally = _STORED.get()
    force = force or (tally is not None and tally.force)
    stores: list[CellStore] = []
    try:
        for spec, out in zip(specs, outs, strict=True):
            stores.append(CellStore(spec, out, force=force))
        results = _run_stores(specs, stores, jobs, backend, progress, on_cell)
        if tally is not None:
            tally.add(stores)
        return results
    finally:
        for store in stores:
            store.close()


@dataclasses.dataclass
class StoredCells:
    """What the runs inside ``stored_cells()`` did with the cells stored in their folders, for a caller that runs
    specs through other code (``bandit-gym reproduce``), to report as ``bandit-gym run`` does."""

    #: the runs recompute every stored cell (``run_experiments(force=True)``)
    force: bool = False
    #: stored cells reused (sound, and made by the code installed now)
    reused: int = 0
    #: the damaged cells moved aside and recomputed: "FOLDER/cells/NAME.npz (why) -> cells/damaged/NAME.npz"
    damaged: list[str] = dataclasses.field(default_factory=list)
    #: why stored cells were recomputed -> how many cells
    stale: dict[str, int] = dataclasses.field(default_factory=dict)

    def add(self, stores: Sequence[CellStore]) -> None:
        """Count the stored cells of a run's ``stores`` (once the run is done)."""
        for store in stores:
            self.reused += store.reused
            self.damaged += [f"{store.folder}/{line}" for line in store.damaged]
            for why, count in store.stale.items():
                self.stale[why] = self.stale.get(why, 0) + count

    def recomputed(self) -> list[str]:
        """Why stored cells were recomputed, with how many: "4 cells: KLAPT's code changed"."""
        return [f"{count} cell{'s' if count > 1 else ''}: {why}" for why, count in self.stale.items()]


_STORED: contextvars.ContextVar[StoredCells | None] = contextvars.ContextVar("stored_cells", default=None)


@contextlib.contextmanager
def stored_cells(force: bool = False) -> Iterator[StoredCells]:
    """Tally the stored cells that every ``run_experiments`` in the block reuses or recomputes, and with ``force``
    make each of them recompute every stored cell (``bandit-gym reproduce --force``, whose papers run their own
    specs)."""
    tally = StoredCells(force)
    token = _STORED.set(tally)
    try:
        yield tally
    finally:
        _STORED.reset(token)


def current_stored_cells() -> StoredCells | None:
    """The tally of the ``stored_cells()`` block the caller runs in (None outside one): for code that keeps cells
    of its own (the fixed-confidence delta-sweep), to honour its ``force`` and count what it reused."""
    return _STORED.get()


def check_jobs(jobs: Any, backend: str | None) -> int:
    """``jobs`` as an int: at least 1, and at most this machine's cores for a local backend (more local workers
    than cores only queue for them, and each holds its own copy of a cell's arrays); a Dask or Ray cluster
    may have more, up to ``MAX_CLUSTER_JOBS``."""
    local = backend not in ("dask", "ray")
    limit = cores() if local else MAX_CLUSTER_JOBS
    where = f"the {limit} cores of this machine" if local else "a cluster's workers"
    value = check.integer("jobs", jobs, minimum=1)
    if value > limit:
        raise ValueError(f"jobs={value} is more than {where}; give at most {limit}"
                         f"{'' if not local else ', or a Dask or Ray backend for a cluster'}")
    return value


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _run_stores(specs: Sequence[ExperimentSpec], stores: list[CellStore], jobs: int, backend: str | None,
                progress: bool, on_cell: Callable[[Cell], None] | None) -> list[ExperimentResult]:
    pending = [(i, spec, cell) for i, (spec, store) in enumerate(zip(specs, stores, strict=True))
               for cell in expand(spec) if not store.has(cell)]
    reused = [store.reused for store in stores]
    for spec, store in zip(specs, stores, strict=True):
        if store.stale and not store.force:
            warnings.warn(f"{spec.title}: recomputing {'; '.join(_stale_lines(store))}", stacklevel=3)
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
    for result, store, count in zip(results, stores, reused, strict=True):
        result.damaged, result.reused, result.stale = store.damaged, count, _stale_lines(store)
    for result, store in zip(results, stores, strict=True):
        if store.folder is not None:  # the tidy table beside the cells, as `bandit-gym run` writes it
            _write_atomic(store.folder / "results.csv", result.summary().to_csv(index=False))
    return results


Work = tuple[int, ExperimentSpec, Cell]
"""A cell of spec number i: (i, spec, cell); a worker returns (i, cell) and the cell's data or error text."""
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
    end_with_parent()  # a worker of a killed run stops within a second instead of finishing its cell
    done, outcome = _safe_run_cell(spec, cell)
    return (index, done), outcome


def _results(work: Sequence[Work], jobs: int, backend: str | None) -> Iterator[Done]:
    if (jobs == 1 and backend in (None, "sequential")) or backend == "jax" or all(
            spec.backend == "jax" for _, spec, _ in work):  # JAX cells: in this process, on its device
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
