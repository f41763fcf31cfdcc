"""The spec of an experiment (env, agents, budgets, runs, seed) and its checks: ``AgentSpec``, ``ExperimentSpec``,
``load_specs`` (a TOML or JSON file), and the facts of an env that the checks read (``EnvFacts``). The checks that
read no spec (its name, its budgets, the hints its messages give) are in ``bandit_gym.experiments._checks``."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from bandit_gym import _validation as check

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

from bandit_gym.agents import agent_class
from bandit_gym.agents.base import Agent, family_names
from bandit_gym.envs._base import engine_of
from bandit_gym.experiments._checks import _agents_of, _budgets, _check_name, _did_you_mean, _env_arguments, _in_context
from bandit_gym.families import Family
from bandit_gym.provenance import code_fingerprint

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
"""The file of a results folder that says how each agent's cells are stored."""
LOCK_FILE = ".bandit-gym.lock"
"""The lock file of a results folder, held by the run that writes it."""


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
    def oracle_filled(self) -> tuple[str, ...]:
        """The oracle parameters the engine fills from the true instance: those not given in the agent's params
        (none if an alternative to them, such as UGapEb's ``a``, is given)."""
        if any(key in self.params for key in self.cls.oracle_alternatives):
            return ()
        return tuple(key for key in self.cls.oracle_parameters if key not in self.params)

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
            layout = tuple(AgentCells(agent.display, _prefix(self, agent), agent.oracle_filled)
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
        needs = [(index, agent, agent.oracle_filled) for index, agent in enumerate(self.agents)
                 if agent.oracle_filled]
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


def _prefix(spec: ExperimentSpec, agent: AgentSpec) -> bool:
    """Whether the agent is scored at every budget from one episode per run (prefix evaluation by the anytime
    wrapper, which scores pure-exploration answers; the online regret of the threshold and multi-armed bandits
    is recorded per horizon): an anytime agent, and on best-arm and top-K envs one without batched pulls (a
    batch may jump past a budget)."""
    return agent.anytime and spec.family.pure_exploration and not agent.cls.batches_on(spec.family)
