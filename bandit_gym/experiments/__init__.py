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

Accelerators. A spec's ``backend`` is ``"numba"`` (the default: the numpy envs and numba agents above) or
``"jax"``: its cells are played by ``bandit_gym.jax.engine`` on the JAX twins of its env and agents, in this
process, one compiled call per cell, on the device JAX finds (the ``jax`` extra). The numbers are then equal in
distribution to the numba backend's, not bit for bit, so the backend is part of the spec (written in
``spec.json`` when it is ``"jax"``): a folder never mixes the two. ``run_experiments(..., backend="jax")`` (and
``--backend jax`` on the command line) runs its specs with the JAX backend.

Files. A run writes only inside its folder: ``spec.json``, ``layout.json`` (how each agent's cells are stored),
``cells/*.npz`` (one per cell, named injectively from the agent's label), ``results.csv`` and a lock file
``.bandit-gym.lock`` that keeps a second run out of the folder while the first writes. It refuses a folder that
holds a ``results.csv``, ``layout.json`` or cells without a ``spec.json`` (files it did not write). Reading a
folder (``ExperimentResult.load``, ``bandit-gym stats``) never writes, moves or deletes anything in it and never
imports code: the agents' names in ``spec.json`` are data, so a folder received from someone else runs nothing
when it is read, and any number of readers can work beside a run.

Provenance. Each cell records the fingerprints of its agent's code and of its env's code (a built-in env or a
user's registered one) and the package version (``bandit_gym.provenance``); a run recomputes the stored cells that
other code made, says which and why, and reuses the rest
(``ExperimentResult.reused``, ``.stale``), ``force=True`` recomputes all, and reading reports them;
``stored_cells()`` tallies them (and forces) over every run of a block, such as a paper's reproduction
(``current_stored_cells()`` gives code that keeps cells of its own the block's tally).

Modules, by concern, each importing only those before it: ``spec`` (the spec and its checks), ``cells`` (a spec's
cells, seeds and agents), ``store`` (the folder a run writes), ``results`` (reading results), ``run`` (running
specs, with the numba backend here and the JAX one in ``bandit_gym.jax.engine``, which reads ``spec`` and
``cells``). Import from ``bandit_gym.experiments``.
"""

from bandit_gym.experiments.cells import Cell, build_agent, expand
from bandit_gym.experiments.results import ExperimentResult, collect
from bandit_gym.experiments.run import (
    StoredCells,
    check_jobs,
    cores,
    current_stored_cells,
    play_cell,
    run_cell,
    run_experiment,
    run_experiments,
    stored_cells,
)
from bandit_gym.experiments.spec import (
    BACKENDS,
    CELL_BACKENDS,
    LAYOUT_FILE,
    LOCK_FILE,
    MAX_CELLS,
    MAX_CLUSTER_JOBS,
    MAX_RUNS,
    AgentCells,
    AgentSpec,
    EnvFacts,
    ExperimentError,
    ExperimentSpec,
    cell_name,
    load_specs,
)
from bandit_gym.experiments.store import CellStore

__all__ = ["BACKENDS", "CELL_BACKENDS", "LAYOUT_FILE", "LOCK_FILE", "MAX_CELLS", "MAX_CLUSTER_JOBS", "MAX_RUNS",
           "AgentCells", "AgentSpec", "Cell", "CellStore", "EnvFacts", "ExperimentError", "ExperimentResult",
           "ExperimentSpec", "StoredCells", "build_agent", "cell_name", "check_jobs", "collect", "cores",
           "current_stored_cells", "expand", "load_specs", "play_cell", "run_cell", "run_experiment", "run_experiments",
           "stored_cells"]
