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
(``ExperimentResult.reused``, ``.stale``), ``force=True`` recomputes all, and reading reports them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import inspect
import itertools
import json
import os
import re
import sys
import tempfile
import traceback
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from bandit_gym import _validation as check

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib
from bandit_gym._workers import end_with_parent
from bandit_gym.agents import agent_class
from bandit_gym.agents.base import Agent, family_names
from bandit_gym.agents.registry import loaded_class
from bandit_gym.envs._base import engine_of
from bandit_gym.families import Family
from bandit_gym.provenance import (
    Recorded,
    agent_fingerprint,
    code_fingerprint,
    env_fingerprint,
    record,
    stale_reason,
    stored,
)
from bandit_gym.registration import JAX_NAMESPACE
from bandit_gym.rollout import play_batched, play_compiled, play_vector

BACKENDS = ("loky", "threading", "multiprocessing", "sequential", "dask", "ray", "jax")
"""How the cells run: joblib's backends, or ``"jax"`` (the spec's cells played with JAX, in this process)."""
CELL_BACKENDS = ("numba", "jax")
"""A spec's ``backend``: what plays its cells."""
MAX_RUNS = 10**7
"""The most runs a spec may ask for (tao2019's full reproduction uses 5000 per point)."""
MAX_CELLS = 100_000
"""The most cells a spec may expand to, counted as agents x budgets x chunks of runs (an anytime agent needs
fewer): each cell is a file and a task, so a larger sweep is several specs or a larger ``chunk``."""
MAX_CLUSTER_JOBS = 4096
"""The most workers (``jobs``) on a Dask or Ray cluster; on this machine's backends, its cores."""
LAYOUT_FILE = "layout.json"
LOCK_FILE = ".bandit-gym.lock"


class ExperimentError(RuntimeError):
    """Some cells failed; the others were completed and saved."""


@dataclass(frozen=True)
class AgentSpec:
    """One agent of an experiment: its name, its parameters and an optional display label.

    The name is a built-in agent (``bandit_gym.agents.AGENTS``), a name given to ``bandit_gym.agents.register`` or
    declared by an installed package's ``bandit_gym.agents`` entry point, or an import path ``package.module:Class``
    (see ``bandit_gym.agents.agent_class``). It is resolved once, by the ``ExperimentSpec`` that holds it, in
    the process that builds the spec; the class travels with the spec to parallel workers (by reference if
    importable there, else by value through cloudpickle, as for a class defined in a notebook), so workers need
    no registration of their own.
    """

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""

    def __post_init__(self) -> None:
        for key, kind, what in (("name", str, "a string"), ("params", Mapping, "a table (dict) of keyword arguments"),
                                ("label", str, "a string")):
            if not isinstance(getattr(self, key), kind):
                raise TypeError(f"{key} must be {what}, got {getattr(self, key)!r}")
        for key in self.params:
            if not isinstance(key, str):
                raise TypeError(f"params keys must be parameter names (strings), got {key!r}")

    @property
    def display(self) -> str:
        if self.label:
            return self.label
        args = ",".join(f"{value:g}" if isinstance(value, float) else str(value) for value in self.params.values())
        return f"{self.name}({args})" if args else self.name

    @property
    def cls(self) -> type[Agent]:
        """The agent's class, resolved from ``name`` at first use and kept (it is pickled with the spec). Never
        for an agent read from a results folder (``ExperimentSpec.from_record``): its name is data there."""
        cls: type[Agent] | None = self.__dict__.get("_cls")
        if cls is None:
            if self.__dict__.get("_record"):
                raise ValueError(f"agent {self.display!r} was read from a results folder, where agent names are data "
                                 "and never resolved (reading imports no code); build the spec with "
                                 "ExperimentSpec.from_dict to run it")
            cls = agent_class(self.name)
            code_fingerprint(cls)  # read the source now, as it was imported, not as it may be edited later
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
    #: what plays the cells: ``"numba"`` (the numpy envs and numba agents) or ``"jax"`` (their JAX twins)
    backend: str = "numba"

    def __post_init__(self) -> None:
        """Check everything before any work starts: each mistake is one error naming the key, the value and what
        is allowed."""
        budgets = self._check_data()
        first = self._check_env(budgets[0])
        if len(budgets) > 1:  # the budgets increase: the largest is the one an env's maximum refuses
            self._check_env(budgets[-1])
        for index, agent in enumerate(self.agents):
            try:
                families = agent.cls.families_of(agent.params)
            except (ValueError, TypeError) as error:  # an unknown name or a bad import path
                raise _in_context(error, f"agents[{index}]") from error
            if self.family not in families:
                raise ValueError(f"agents[{index}] = {agent.name!r} plays {family_names(families)} envs, not "
                                 f"{self.env} ({self.family}); agents for {self.family}: "
                                 f"{', '.join(_agents_of(self.family))}")
            built = _check_params(index, agent)
            if built is not None and type(built).check_env is not Agent.check_env:
                self._check_agent_env(index, agent, built, budgets[0])
        self._check_oracles(first)
        if self.backend == "jax":
            self._check_jax()

    def _check_jax(self) -> None:
        """A JAX run needs the ``jax`` extra and JAX twins of the env and of every agent (``bandit_gym.jax``)."""
        try:
            from bandit_gym.jax.engine import check_spec
        except ImportError as error:
            raise ValueError(f"backend='jax' needs JAX: {error}") from None
        check_spec(self)

    def _check_data(self) -> list[int]:
        """The checks that need no agent class and no env: types, ranges and sizes of the keys, distinct labels
        and cell names; returns the budgets."""
        if not isinstance(self.env, str) or self.env not in gym.registry:
            raise ValueError(f"env={self.env!r} is not a registered id{_did_you_mean(self.env, gym.registry)}; "
                             "`bandit-gym list` shows them")
        budgets = _budgets(self.budgets)
        check.integer("runs", self.runs, minimum=2, maximum=MAX_RUNS)
        check.integer("chunk", self.chunk, minimum=1)
        check.integer("seed", self.seed, minimum=0)
        for key, kind in (("name", str), ("common_random_numbers", bool), ("env_kwargs", Mapping)):
            if not isinstance(getattr(self, key), kind):
                raise TypeError(f"{key} must be a {'table' if kind is Mapping else kind.__name__}, got "
                                f"{getattr(self, key)!r}")
        _check_name(self.name)
        check.choice("backend", self.backend, CELL_BACKENDS)
        if not isinstance(self.agents, Sequence) or isinstance(self.agents, str) or not all(
                isinstance(agent, AgentSpec) for agent in self.agents):
            raise TypeError(f"agents must be a tuple of AgentSpec (e.g. (AgentSpec('APT'),)), got {self.agents!r}; "
                            "ExperimentSpec.from_dict also takes agent names and tables")
        if not self.agents:
            raise ValueError("agents is empty; name at least one agent (`bandit-gym list` shows them)")
        cells = len(self.agents) * len(budgets) * -(-self.runs // self.chunk)
        if cells > MAX_CELLS:
            raise ValueError(f"the spec expands to up to {cells} cells ({len(self.agents)} agents x {len(budgets)} "
                             f"budgets x {-(-self.runs // self.chunk)} chunks of runs = runs / chunk); at most "
                             f"{MAX_CELLS} are allowed: raise chunk (now {self.chunk}) or split the spec")
        labels = [agent.display for agent in self.agents]
        if len(set(labels)) != len(labels):
            raise ValueError(f"agent labels must be distinct, got {labels}; give each agent a label")
        keys = [cell_name(label).casefold() for label in labels]
        if len(set(keys)) != len(keys):  # distinct labels whose file names meet (or differ only in case)
            first = next(label for label, key in zip(labels, keys, strict=True) if keys.count(key) > 1)
            raise ValueError(f"agent label {first!r} shares its cell file name with another label of {labels} on a "
                             "case-insensitive file system; give the agents labels that differ in more than case")
        return budgets

    @classmethod
    def from_record(cls, data: Mapping[str, Any], layout: Sequence[AgentCells]) -> ExperimentSpec:
        """The spec of a results folder, read back from its ``spec.json`` (``data``) and ``layout.json``
        (``layout``) as data: its agents' names are never resolved to classes and nothing is imported (only
        registered env ids are accepted, as everywhere), so reading a folder from elsewhere runs no code. The
        spec cannot be run; ``ExperimentSpec.from_dict(data)`` gives one that can."""
        fields = _spec_fields(cls, data)
        spec = cls.__new__(cls)
        for dataclass_field in dataclasses.fields(cls):
            default = dataclass_field.default_factory() if dataclass_field.default_factory is not dataclasses.MISSING \
                else dataclass_field.default
            value = fields.get(dataclass_field.name, default)
            if value is dataclasses.MISSING:
                raise ValueError(f"the spec lacks the key {dataclass_field.name!r}")
            object.__setattr__(spec, dataclass_field.name, value)
        for agent in spec.agents:
            object.__setattr__(agent, "_record", True)
        spec._check_data()
        if [entry.label for entry in layout] != [agent.display for agent in spec.agents]:
            raise ValueError(f"{LAYOUT_FILE} names the agents {[entry.label for entry in layout]}, spec.json "
                             f"{[agent.display for agent in spec.agents]}; the folder is not one run's")
        object.__setattr__(spec, "_layout", tuple(layout))
        return spec

    @property
    def layout(self) -> tuple[AgentCells, ...]:
        """How each agent's cells are stored: decided from the agents' classes for a spec that runs, read from
        ``layout.json`` for a spec read from a folder (``from_record``)."""
        layout: tuple[AgentCells, ...] | None = self.__dict__.get("_layout")
        if layout is None:
            layout = tuple(AgentCells(agent.display, _prefix(self, agent), _oracle_filled(agent))
                           for agent in self.agents)
            object.__setattr__(self, "_layout", layout)
        return layout

    def _check_agent_env(self, index: int, agent: AgentSpec, built: Agent, budget: int) -> None:
        """An agent that checks what it can play (``Agent.check_env``: a trained policy's observation space and
        budget) is shown the env at the first budget, so that a mismatch is the spec's error, not a failed cell."""
        env = gym.make(self.env, **{**self.env_kwargs, self.facts.horizon_argument: budget})
        try:
            built.check_env(env)
        except (ValueError, TypeError) as error:
            raise _in_context(error, f"agents[{index}] ({agent.display})") from error
        finally:
            env.close()

    def _check_oracles(self, facts: EnvFacts) -> None:
        """Agents whose oracle parameters the engine fills (UCB-E's H) need an env with a fixed instance (``facts``:
        the env of the spec at its first budget)."""
        needs = [(index, agent, _oracle_filled(agent)) for index, agent in enumerate(self.agents)
                 if _oracle_filled(agent)]
        if needs and not facts.fixed_instance:
            index, agent, missing = needs[0]
            raise ValueError(f"agents[{index}] ({agent.display}) needs the oracle parameters {list(missing)} of a "
                             f"fixed instance, but {self.env} draws its instance per episode; give them in the "
                             "agent's params, or fix the instance with env_kwargs means")

    def _check_env(self, budget: int) -> EnvFacts:
        """The env is made with ``env_kwargs`` at ``budget`` once, here (its errors name the argument); its facts."""
        horizon = self.facts.horizon_argument
        if horizon in self.env_kwargs:
            raise ValueError(f"env_kwargs sets {horizon!r}; the budgets list sets it")
        if self.facts.takes_common_random_numbers and "common_random_numbers" in self.env_kwargs:
            raise ValueError("env_kwargs sets 'common_random_numbers'; set it as a key of the experiment instead")
        kwargs = {**self.env_kwargs, horizon: budget}
        try:
            try:
                text = json.dumps(kwargs, sort_keys=True)
            except TypeError:  # values from Python (a means sampler, distributions): made without the cache
                facts = _facts_of(gym.make(self.env, **kwargs))
            else:
                facts = _env_facts(self.env, text)
        except (ValueError, TypeError) as error:
            message = str(error).split(" was raised from the environment creator")[0]  # gym's note repeats kwargs
            if "unexpected keyword argument" in message:
                message += f"; {self.env} takes {_env_arguments(self.env, horizon)}"
            raise _in_context(message, f"{self.env} with env_kwargs {dict(self.env_kwargs)}", error) from error
        try:  # a cell is a vector env of `chunk` copies: its memory, checked here rather than in every cell
            check.check_env_memory(min(self.chunk, self.runs), *facts.memory)
        except ValueError as error:
            raise ValueError(f"chunk={self.chunk}: a cell's {error}; give a smaller chunk") from None
        return facts

    @property
    def facts(self) -> EnvFacts:
        """What the experiment engine asks of the env (its family, metrics, horizon argument), answered by the
        env's engine with its default arguments."""
        return _env_facts(self.env, "{}")

    @property
    def family(self) -> Family:
        return self.facts.family

    @property
    def metrics(self) -> tuple[str, ...]:
        """The per-run metrics recorded for this env, the main one first."""
        return self.facts.metric_names

    @property
    def title(self) -> str:
        return self.name or self.env

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ExperimentSpec:
        """Build a spec from plain data (as read from TOML or JSON); unknown keys are an error."""
        return cls(**_spec_fields(cls, data))

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["agents"] = [{"name": a.name, "params": dict(a.params), "label": a.label} for a in self.agents]
        out["budgets"] = list(self.budgets)
        out["env_kwargs"] = dict(self.env_kwargs)
        if self.backend == "numba":  # the default, left out: the spec.json of every numba run stays as it was
            del out["backend"]
        return out


def _spec_fields(cls: type[ExperimentSpec], data: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of ``ExperimentSpec`` from plain data: unknown or missing keys are an error, the
    agents become ``AgentSpec`` and the budgets a tuple."""
    if not isinstance(data, Mapping):
        raise TypeError(f"an experiment must be a table of keys (env, agents, budgets, ...), got {data!r}")
    data = dict(data)
    known = set(cls.__dataclass_fields__)
    unknown = set(data) - known
    if unknown:
        first = sorted(unknown)[0]
        raise ValueError(f"unknown spec keys {sorted(unknown)}{_did_you_mean(first, known)}; allowed: "
                         f"{', '.join(sorted(known))}")
    missing = [key for key in ("env", "agents", "budgets") if key not in data]
    if missing:
        raise ValueError(f"the spec lacks the keys {missing}; an experiment needs env, agents and budgets")
    entries, budgets = data.pop("agents"), data.pop("budgets")
    if not isinstance(entries, list):
        raise TypeError(f"agents must be a list of agent names or tables, got {entries!r}")
    if not isinstance(budgets, list):
        raise TypeError(f"budgets must be a non-empty list of strictly increasing positive integers, got "
                        f"{budgets!r}")
    return {"agents": tuple(_agent_from(i, entry) for i, entry in enumerate(entries)), "budgets": tuple(budgets),
            **data}


def _check_name(name: str) -> None:
    """An experiment's ``name`` names its folder inside the output folder: one plain folder name."""
    if name in (".", "..") or "/" in name or "\\" in name or any(ord(c) < 32 for c in name) or (
            len(name) > 1 and name[1] == ":"):
        raise ValueError(f"name={name!r} must be a plain folder name: no '/' or '\\', not '.' or '..', no drive "
                         "letter or control characters (an experiment's folder stays inside the output folder)")


@dataclass(frozen=True)
class AgentCells:
    """How the cells of one agent are stored, as the run that wrote them decided from the agent's class."""

    label: str
    #: one cell per chunk of runs, scored at every budget (else one per budget and chunk)
    anytime: bool
    #: the oracle parameters the engine filled from the true instance (UCB-E's H)
    oracle: tuple[str, ...]


def cell_name(label: str) -> str:
    """The file-name part of an agent's label, one-to-one: a label of letters, digits, ``.``, ``+`` and ``-``
    (not starting with ``.``) is its own name; any other is its characters outside that set replaced by ``_``
    and ten hex digits of its SHA-256 appended after ``_``. Plain labels never contain ``_``, so the two forms
    never meet; two other labels meet only if their digests do, which ``ExperimentSpec`` refuses."""
    if re.fullmatch(r"[A-Za-z0-9+-][A-Za-z0-9.+-]*", label):
        return label
    readable = re.sub(r"[^A-Za-z0-9.+-]+", "_", label).strip("_")[:60]
    return f"{readable}_{hashlib.sha256(label.encode()).hexdigest()[:10]}"


def _agent_from(index: int, entry: Any) -> AgentSpec:
    """An ``agents[index]`` entry of a spec: a name, or a table with ``name`` and optional ``params``, ``label``."""
    if isinstance(entry, str):
        entry = {"name": entry}
    if not isinstance(entry, Mapping) or "name" not in entry or set(entry) - {"name", "params", "label"}:
        extra = sorted(set(entry) - {"name", "params", "label"}) if isinstance(entry, Mapping) else []
        what = f" (unknown keys {extra})" if extra else " (no 'name')" if isinstance(entry, Mapping) else ""
        raise ValueError(f"agents[{index}] = {entry!r}{what} must be a name or a table with 'name' and optional "
                         "'params' and 'label'")
    try:
        return AgentSpec(name=entry["name"], params=entry.get("params", {}), label=entry.get("label", ""))
    except TypeError as error:
        raise TypeError(f"agents[{index}] = {entry!r}: {error}") from None


def _budgets(budgets: Any) -> list[int]:
    """The budgets of a spec as ints, after checking that they are a non-empty increasing list of positive ints."""
    allowed = "budgets must be a non-empty list of strictly increasing positive integers"
    if isinstance(budgets, str | bytes | Mapping) or not isinstance(budgets, Sequence | np.ndarray):
        raise TypeError(f"{allowed}, got {budgets!r}")
    values = [check.integer(f"budgets[{i}]", b, minimum=1) for i, b in enumerate(budgets)]
    if not values or any(b2 <= b1 for b1, b2 in itertools.pairwise(values)):
        raise ValueError(f"{allowed}, got {list(budgets)}")
    return values


def _in_context(error: Exception | str, where: str, kind: Exception | None = None) -> Exception:
    """``error`` (or a message, of the type of ``kind``) as a TypeError or ValueError prefixed with ``where``."""
    kind = kind if kind is not None else error if isinstance(error, Exception) else None
    return (TypeError if isinstance(kind, TypeError) else ValueError)(f"{where}: {error}")


def _env_arguments(env_id: str, horizon_argument: str) -> str:
    """The keyword arguments an env id takes (those of its engine), for an error message."""
    try:
        engine = engine_of(gym.make(env_id))
        names = [name for name, p in inspect.signature(type(engine)).parameters.items()
                 if p.kind is p.KEYWORD_ONLY or p.kind is p.POSITIONAL_OR_KEYWORD]
    except Exception:  # the message is a hint; never hide the original error
        return "the arguments `help(gym.spec(id).entry_point)` lists"
    engine_set = {horizon_argument, "num", "common_random_numbers"}  # set by the engine per cell
    return ", ".join(name for name in names if name not in engine_set)


def _did_you_mean(value: object, allowed: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest allowed string, or nothing."""
    import difflib

    close = difflib.get_close_matches(str(value), list(allowed), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _agents_of(family: Family) -> list[str]:
    """The built-in agents that play a family of envs."""
    from bandit_gym.agents import AGENTS

    return [name for name, cls in AGENTS.items() if family in cls.families]


def _check_params(index: int, agent: AgentSpec) -> Agent | None:
    """Build the agent once with its parameters (its own checks name them) and return it; an agent whose oracle
    parameters come from the env's instance (UCB-E's H) has only its parameter names checked (None)."""
    cls = agent.cls
    where = f"agents[{index}] ({agent.display})"
    parameters = inspect.signature(cls).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        names = [name for name, p in parameters.items() if p.kind is not inspect.Parameter.VAR_POSITIONAL]
        unknown = [key for key in agent.params if key not in names]
        if unknown:
            raise TypeError(f"{where}: unknown params {unknown}{_did_you_mean(unknown[0], names)}; "
                            f"{cls.__name__} takes {', '.join(names) or 'no parameters'}")
    try:
        if set(cls.oracle_parameters) - set(agent.params):
            inspect.signature(cls).bind(**agent.params)
            return None
        return cls(**agent.params)
    except (ValueError, TypeError) as error:
        raise _in_context(error, where) from error
    except Exception as error:  # a user's agent whose constructor fails: their mistake, named; ours propagate
        if cls.__module__.startswith("bandit_gym."):
            raise
        raise ValueError(f"{where}: {cls.__module__}.{cls.__qualname__}(**{dict(agent.params)}) raised "
                         f"{type(error).__name__}: {error}") from error


def load_specs(path: str | Path) -> list[ExperimentSpec]:
    """Read one spec, or several under ``[[experiment]]`` (TOML) / a JSON list, from a ``.toml`` or ``.json``.

    Every mistake is a ValueError or TypeError naming the file, the experiment and the key; a file without an
    experiment is one."""
    path = Path(path)
    if path.suffix not in (".toml", ".json"):
        raise ValueError(f"spec file {path} must end in .toml or .json")
    if not path.exists():
        raise FileNotFoundError(f"spec file {path} does not exist")
    if path.is_dir():
        raise IsADirectoryError(f"spec file {path} is a folder; pass a .toml or .json file")
    text = path.read_text()
    try:
        if path.suffix == ".toml":
            data: Any = tomllib.loads(text)
        else:
            data = json.loads(text)
    except ValueError as error:  # TOMLDecodeError and JSONDecodeError are ValueErrors
        raise ValueError(f"{path} is not valid {path.suffix[1:].upper()}: {error}") from error
    if isinstance(data, dict) and "experiment" in data and set(data) - {"experiment"}:
        raise ValueError(f"{path}: keys {sorted(set(data) - {'experiment'})} sit beside [[experiment]]; put them "
                         "inside each [[experiment]] table")
    entries = data.get("experiment", [data]) if isinstance(data, dict) else data
    if isinstance(entries, dict):
        raise TypeError(f"{path}: experiment must be a list of tables ([[experiment]] in TOML), got one table")
    if not isinstance(entries, list) or not entries or entries == [{}]:
        raise ValueError(f"{path} holds no experiment: write env, agents and budgets at the top level, or one "
                         "[[experiment]] table per experiment")
    specs = []
    for index, entry in enumerate(entries):
        try:
            specs.append(ExperimentSpec.from_dict(entry))
        except (ValueError, TypeError) as error:
            where = f"experiment[{index}]: " if len(entries) > 1 or "experiment" in data else ""
            raise _in_context(error, f"{path}: {where}".rstrip(": ")) from error
    return specs


@dataclass(frozen=True)
class Cell:
    """One unit of work: an agent, a budget (``None``: anytime, evaluated at every budget), a chunk of runs."""

    agent: int
    budget: int | None
    chunk: int

    def key(self, spec: ExperimentSpec) -> str:
        """The cell's file name (without ``.npz``): ``cell_name(label)__T{budget}__chunk{c}`` (``anytime`` for
        the budget of an anytime cell), distinct for distinct cells of a spec."""
        when = "anytime" if self.budget is None else f"T{self.budget}"
        return f"{cell_name(spec.agents[self.agent].display)}__{when}__chunk{self.chunk}"

    def runs(self, spec: ExperimentSpec) -> range:
        start = self.chunk * spec.chunk
        return range(start, min(start + spec.chunk, spec.runs))


def expand(spec: ExperimentSpec) -> list[Cell]:
    """Every cell of a spec."""
    chunks = range(-(-spec.runs // spec.chunk))
    cells: list[Cell] = []
    for index, layout in enumerate(spec.layout):
        budgets: Iterable[int | None] = [None] if layout.anytime else spec.budgets
        cells.extend(Cell(index, budget, chunk) for budget in budgets for chunk in chunks)
    return cells


def _prefix(spec: ExperimentSpec, agent: AgentSpec) -> bool:
    """Whether the agent is scored at every budget from one episode per run (prefix evaluation by the anytime
    wrapper, which scores pure-exploration answers; the online regret of the threshold and multi-armed bandits
    is recorded per horizon): an anytime agent, and on best-arm and top-K envs one without batched pulls (a
    batch may jump past a budget)."""
    return agent.anytime and spec.family.pure_exploration and not agent.cls.batches_on(spec.family)


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


def play_cell(spec: ExperimentSpec, cell: Cell) -> tuple[dict[str, np.ndarray], Any]:
    """Play one cell as the engine does (its env, seeds and rollout path) and return the rollout's raw result
    and the agent after the play (whose state, e.g. BayesGap's beta, a study may read; the JAX agent, which keeps
    none, with ``backend="jax"``)."""
    if spec.backend == "jax":
        from bandit_gym.jax.engine import play_cell as play_jax_cell

        return play_jax_cell(spec, cell)
    runs = cell.runs(spec)
    facts = spec.facts
    horizon = spec.budgets[-1] if cell.budget is None else cell.budget
    budgets = list(spec.budgets) if cell.budget is None else [cell.budget]
    kwargs = dict(spec.env_kwargs)
    kwargs[facts.horizon_argument] = horizon
    if facts.takes_common_random_numbers:
        kwargs["common_random_numbers"] = spec.common_random_numbers
    env = gym.make_vec(spec.env, num_envs=len(runs), vectorization_mode="vector_entry_point", copy=False, **kwargs)
    env_seed = _seed(spec, cell.chunk)
    env.reset(seed=env_seed)
    agent_spec = spec.agents[cell.agent]
    agent = build_agent(agent_spec, env)
    agent_seed = _seed(spec, cell.chunk, zlib.crc32(agent_spec.display.encode()))
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


class CellStore:
    """Where finished cells live: a folder of ``.npz`` files (written atomically), or memory.

    Every stored cell is verified when it is first looked at (``damage``): a file that does not load, lacks
    a metric or holds arrays of the wrong shape, type or values is damaged. With ``heal=True`` (a run) a damaged
    cell is moved aside into ``cells/damaged/`` (never deleted, never over an earlier one), reported in
    ``damaged`` and counts as missing, so that the run recomputes it; with ``heal=False`` (reading a folder) it is
    a ValueError that names the file.

    A store that heals is a run's: it takes the folder's lock (a second run on the folder is refused while it
    holds it), refuses a folder of files it did not write, and writes ``spec.json`` and ``layout.json``; call
    ``close`` when done. A store that does not heal only reads: it creates, moves and deletes nothing.

    Provenance. Every cell written to a folder records the fingerprints of its agent's code and of its env's code
    and the package version (``bandit_gym.provenance``). A run's store counts a cell whose agent's code, env's code
    or version changed as missing, so the run recomputes it (``stale`` says why; ``force=True`` counts every stored
    cell as missing); a reading store reports such cells in ``stale`` and serves them. Reading compares only agents
    whose class it can find without importing anything (built-in and registered names, import paths of modules
    already imported), and the env only where its entry point's module is imported or built in."""

    def __init__(self, spec: ExperimentSpec, out: str | Path | None, heal: bool = True, force: bool = False) -> None:
        self.spec = spec
        self.memory: dict[str, dict[str, np.ndarray]] = {}
        self.heal = heal
        self.force = force
        #: the damaged cells moved aside by this store: "cells/NAME.npz (why) -> cells/damaged/NAME.npz"
        self.damaged: list[str] = []
        #: why stored cells were not made by the code installed now -> how many cells
        self.stale: dict[str, int] = {}
        #: stored cells found sound and current (a run reuses them)
        self.reused = 0
        self._verified: set[str] = set()
        self._codes: dict[int, str | None] = {}
        self._recorded: dict[str, Recorded] = {}
        self._lock: Any = None
        self.folder = None if out is None else Path(out)
        if self.folder is not None and heal:
            self._open_for_writing(self.folder)

    def _open_for_writing(self, folder: Path) -> None:
        spec_file = folder / "spec.json"
        written = json.dumps(self.spec.to_dict(), indent=2, sort_keys=True)
        if spec_file.exists() and spec_file.read_text() != written:
            raise ValueError(f"{folder} holds the results of a different spec; use another output folder")
        if not spec_file.exists():
            foreign = [name for name in ("results.csv", LAYOUT_FILE) if (folder / name).exists()]
            foreign += ["cells/*.npz"] if any((folder / "cells").glob("*.npz")) else []
            if foreign:
                raise ValueError(f"{folder} holds {', '.join(foreign)} but no spec.json: files that no run of a spec "
                                 "wrote there, which a run would overwrite; give an empty or new output folder")
        (folder / "cells").mkdir(parents=True, exist_ok=True)
        self._lock = _lock(folder)
        for stale in (folder / "cells").glob("*.npz.tmp"):  # half-written by a killed run (we hold the lock)
            stale.unlink()
        _write_atomic(spec_file, written)
        layout = [dataclasses.asdict(entry) for entry in self.spec.layout]
        _write_atomic(folder / LAYOUT_FILE, json.dumps({"agents": layout}, indent=2))

    def close(self) -> None:
        """Release the folder's lock (a run's store)."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def _path(self, cell: Cell) -> Path:
        assert self.folder is not None
        return self.folder / "cells" / f"{cell.key(self.spec)}.npz"

    def has(self, cell: Cell) -> bool:
        """Whether the cell is stored and sound (see the class docstring for a damaged one), and, in a run, made
        by the agent's code installed now (else it is counted in ``stale`` and recomputed)."""
        key = cell.key(self.spec)
        if key in self.memory or key in self._verified:
            return True
        if self.folder is None or not self._path(cell).exists():
            return False
        why = self.damage(cell)
        if why is None:
            current = self._current(cell)
            if current is not None:
                self.stale[current] = self.stale.get(current, 0) + 1
                if self.heal:
                    return False
            self._verified.add(key)
            self.reused += 1
            return True
        path = self._path(cell)
        if not self.heal:
            raise ValueError(f"{path} is damaged ({why}); run the same spec with out={str(self.folder)!r} to "
                             "recompute it (the damaged file is moved aside, not deleted)")
        aside = _free_name(path.parent / "damaged" / path.name)
        aside.parent.mkdir(exist_ok=True)
        os.replace(path, aside)
        self.damaged.append(f"{path.relative_to(self.folder)} ({why}) -> {aside.relative_to(self.folder)}")
        warnings.warn(f"{path} was damaged ({why}); moved to {aside} and recomputed", stacklevel=2)
        return False

    def _current(self, cell: Cell) -> str | None:
        """Why the stored ``cell`` was not made by the agent's code installed now (``--force``: "recomputed on
        request"), or None if it was, or if that cannot be known without importing code (a reading store)."""
        recorded = self._recorded.pop(cell.key(self.spec), Recorded(None, None, None))
        if self.force:
            return "recomputed on request (force)"
        code = self._code(cell.agent)
        if code is None:
            return None
        return stale_reason(self.spec.agents[cell.agent].display, recorded, code, self._env_id(), self._env)

    def _env_id(self) -> str:
        """The id of the registered env that plays the cells (the JAX twin's for a JAX spec)."""
        return f"{JAX_NAMESPACE}/{self.spec.env}" if self.spec.backend == "jax" else self.spec.env

    @functools.cached_property
    def _env(self) -> str | None:
        """The fingerprint of the env's code as installed and registered now (read once per store); None for a
        reading store that cannot read it without importing code."""
        return env_fingerprint(self._env_id(), imported_only=not self.heal)

    def _code(self, index: int) -> str | None:
        """The fingerprint of agent ``index``'s code as installed now; None for a reading store that cannot find
        its class without importing code."""
        if index not in self._codes:
            agent = self.spec.agents[index]
            cls = agent.cls if self.heal else loaded_class(agent.name)
            if self.spec.backend == "jax":  # the JAX twin's code made the cells (reading imports no JAX)
                jax_agents = sys.modules.get("bandit_gym.jax.agents")
                cls = None if jax_agents is None else jax_agents.JAX_AGENTS.get(agent.name)
            self._codes[index] = None if cls is None else agent_fingerprint(cls, agent.params)
        return self._codes[index]

    def damage(self, cell: Cell) -> str | None:
        """What is wrong with the stored file of ``cell``, or None if it is sound: it loads, and holds exactly
        the arrays the cell wrote (its budgets, its first run, and each metric as finite numbers of shape
        ``(runs of the chunk, budgets of the cell)``)."""
        budgets = list(self.spec.budgets) if cell.budget is None else [cell.budget]
        try:
            with np.load(self._path(cell), allow_pickle=False) as data:
                arrays = {key: data[key] for key in data.files}
        except Exception as error:  # any failure to read the file is damage, named in the report
            return f"unreadable: {type(error).__name__}: {error}"
        self._recorded[cell.key(self.spec)] = stored(arrays)
        want = {"budgets", "first_run", *self.spec.metrics}
        if not want <= arrays.keys():
            return f"lacks {sorted(want - arrays.keys())}"
        if arrays["budgets"].tolist() != budgets or arrays["first_run"].tolist() != cell.runs(self.spec).start:
            return "budgets or first run differ from the cell's"
        shape = (len(cell.runs(self.spec)), len(budgets))
        for metric in want - {"budgets", "first_run"}:
            values = arrays[metric]
            if values.shape != shape:
                return f"{metric} has shape {values.shape}, not {shape}"
            if values.dtype.kind not in "biuf" or not np.isfinite(values).all():
                return f"{metric} holds non-numbers or non-finite values"
        return None

    def put(self, cell: Cell, data: dict[str, np.ndarray]) -> None:
        if self.folder is None:
            self.memory[cell.key(self.spec)] = data
            return
        code, env = self._code(cell.agent), self._env
        assert code is not None and env is not None  # a run's store finds every agent's class and its env
        handle, tmp = tempfile.mkstemp(dir=self._path(cell).parent, suffix=".npz.tmp")
        with os.fdopen(handle, "wb") as stream:
            np.savez(stream, **data, **record(code, env))  # type: ignore[arg-type]
        os.replace(tmp, self._path(cell))
        self._verified.add(cell.key(self.spec))  # sound and current: written by this run

    def get(self, cell: Cell) -> dict[str, np.ndarray]:
        if cell.key(self.spec) in self.memory:
            return self.memory[cell.key(self.spec)]
        if not self.has(cell):  # verified (and, in a run, moved aside if damaged)
            raise ValueError(f"{self._path(cell)} is missing; run the same spec with out={str(self.folder)!r}")
        with np.load(self._path(cell), allow_pickle=False) as data:
            return {key: data[key] for key in data.files}


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file beside it: a reader sees the old file or the new one."""
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as stream:
            stream.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _lock(folder: Path) -> Any:
    """Hold the run lock of ``folder`` (``LOCK_FILE``, an advisory ``flock``) and return its open file, or refuse
    if another run holds it. Where ``fcntl`` does not exist (Windows) there is no lock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return None
    stream = open(folder / LOCK_FILE, "a")  # noqa: SIM115 - held open until the run ends
    try:
        fcntl.flock(stream.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        stream.close()
        raise ValueError(f"{folder} is being written by another run (it holds {folder / LOCK_FILE}); wait for it "
                         "to finish, or give another output folder") from None
    return stream



def _free_name(path: Path) -> Path:
    """``path``, or ``path`` with ``.1``, ``.2``, ... appended if taken: a moved-aside file never replaces another."""
    candidate, number = path, 0
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.{number}")
    return candidate


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


def _num_arms(spec: ExperimentSpec) -> int:
    return _env_facts(spec.env, json.dumps(dict(spec.env_kwargs), sort_keys=True)).num_arms


@dataclass(frozen=True)
class EnvFacts:
    """What the experiment engine asks of an env, as its engine answers."""

    family: Family
    num_arms: int
    #: the per-run metrics recorded, the main one first
    metric_names: tuple[str, ...]
    #: the constructor argument that the budgets list sets
    horizon_argument: str
    #: the env takes ``common_random_numbers`` (set from the experiment's key of that name)
    takes_common_random_numbers: bool
    #: the sizes its memory is checked with: arms, threshold levels, bytes shared by the copies
    memory: tuple[int, int, int]
    #: the instance is fixed (``means=`` or a preset), not drawn per episode: the oracle parameters exist
    fixed_instance: bool


@functools.lru_cache(maxsize=64)
def _env_facts(env_id: str, kwargs_json: str) -> EnvFacts:
    """The ``EnvFacts`` of an env id with the given keyword arguments (JSON), from one construction
    (cached)."""
    return _facts_of(gym.make(env_id, **json.loads(kwargs_json)))


def _facts_of(env: Any) -> EnvFacts:
    engine = engine_of(env)
    return EnvFacts(engine.family, int(engine.num_arms), engine.metric_names, engine.horizon_argument,
                    engine.takes_common_random_numbers, engine.memory,
                    getattr(engine, "fixed_means", None) is not None)


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
    stores: list[CellStore] = []
    try:
        for spec, out in zip(specs, outs, strict=True):
            stores.append(CellStore(spec, out, force=force))
        return _run_stores(specs, stores, jobs, backend, progress, on_cell)
    finally:
        for store in stores:
            store.close()


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
