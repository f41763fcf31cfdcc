"""Finding an agent's class by name: the built-in ``AGENTS``, names given to ``register``, names that installed
packages declare in the entry-point group ``bandit_gym.agents``, and import paths ``package.module:Class``.

Experiment specs (``bandit_gym.experiments.AgentSpec``) and ``bandit-gym run`` look agents up here, in that
order; the built-in names are ``shipped_agents()``: ``AGENTS`` and the learned agents of the RL study, which this
package declares in that same entry-point group. A third-party package makes its agents known to every spec and
to the CLI, without an import, by declaring them in its ``pyproject.toml`` (loaded only when a spec names them,
as Gymnasium loads its plugins):

    [project.entry-points."bandit_gym.agents"]
    MyRule = "my_package.my_rule:MyRule"
"""

from __future__ import annotations

import difflib
import functools
import importlib
import sys
from importlib import metadata
from typing import Any

from bandit_gym.agents.base import Agent

ENTRY_POINT_GROUP = "bandit_gym.agents"
"""The entry-point group in which packages declare agents (name = "package.module:Class")."""
DISTRIBUTION = "pure-exploration-gym"
"""The distribution name of this package, whose own entry points are the learned agents of its RL study."""
REGISTERED: dict[str, type[Agent]] = {}
"""Names registered by ``register``, and entry points of other packages loaded so far."""


@functools.cache
def shipped_agents() -> dict[str, type[Agent]]:
    """Every agent this package ships, by name: ``bandit_gym.agents.AGENTS`` (the algorithms), then the learned
    agents of its RL study (``SB3Agent``, ``ArmwisePPO`` in ``bandit_gym.rl``), which register through this
    package's own ``bandit_gym.agents`` entry points, as a user's package does (importing them loads nothing of
    stable-baselines3). Without the package's metadata (a checkout on the path, not installed) the learned
    agents are absent."""
    from bandit_gym.agents import AGENTS

    learned = {}
    for point in _entry_points():
        if point.dist is not None and point.dist.name == DISTRIBUTION and point.name not in AGENTS:
            learned[point.name] = _check_class(f"the {ENTRY_POINT_GROUP!r} entry point {point.name} = "
                                               f"{point.value!r}", point.load())
    return {**AGENTS, **learned}


def _allowed(name: str) -> str:
    close = difflib.get_close_matches(name, [*shipped_agents(), *REGISTERED], n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return (f"agent name={name!r} is unknown{hint}; allowed: a built-in name (bandit_gym.agents.registry."
            f"shipped_agents(): {', '.join(shipped_agents())}), a name given to bandit_gym.agents.register(name, cls) "
            f"in this process"
            f"{' (' + ', '.join(REGISTERED) + ')' if REGISTERED else ''}, a name of an installed package's "
            f"{ENTRY_POINT_GROUP!r} entry point, or an import path 'package.module:Class'")


def _check_class(what: str, cls: Any) -> type[Agent]:
    if not (isinstance(cls, type) and issubclass(cls, Agent)):
        shown = cls.__name__ if isinstance(cls, type) else f"a {type(cls).__name__}"
        raise TypeError(f"{what} must be a subclass of bandit_gym.agents.Agent, got {shown}")
    return cls


def _same(a: type, b: type) -> bool:
    """The same class, or one defined again by re-running its code (a notebook cell): same module and name."""
    return a is b or (a.__module__, a.__qualname__) == (b.__module__, b.__qualname__)


def register(name: str, cls: type[Agent], *, override: bool = False) -> None:
    """Make ``cls`` known under ``name`` to experiment specs (``{"name": name}``) and ``bandit-gym run``.

    Registering the same class again under the same name does nothing (a class defined again by re-running a
    notebook cell counts as the same and replaces the old one). The built-in names (``shipped_agents()``) are
    reserved; another class under a registered name needs ``override=True``. Parallel workers need no
    registration of their own: the engine resolves names in the calling process and ships the class.

    >>> register("MyRule", MyRule)                   # doctest: +SKIP
    >>> run_experiment(ExperimentSpec.from_dict({..., "agents": ["MyRule", "LSA"]}), jobs=2)  # doctest: +SKIP
    """
    if not isinstance(name, str) or not name.strip() or ":" in name:
        raise ValueError(f"name must be a non-empty string without ':' (which marks an import path), got {name!r}")
    _check_class("cls", cls)
    builtin = shipped_agents()
    if name in builtin:
        if builtin[name] is cls:
            return
        raise ValueError(f"name={name!r} is a built-in agent ({builtin[name].__module__}."
                         f"{builtin[name].__qualname__}); register {cls.__qualname__} under another name")
    old = REGISTERED.get(name)
    if old is not None and not override and not _same(old, cls):
        raise ValueError(f"name={name!r} is already registered to {old.__module__}.{old.__qualname__}; pass "
                         f"override=True to replace it with {cls.__module__}.{cls.__qualname__}")
    REGISTERED[name] = cls


def _entry_points() -> Any:
    """The installed packages' entry points of ``ENTRY_POINT_GROUP``."""
    return metadata.entry_points(group=ENTRY_POINT_GROUP)


def _from_entry_point(name: str) -> type[Agent] | None:
    """The class of another package's entry point ``name`` (this package's own are ``shipped_agents``)."""
    for point in _entry_points():
        if point.name != name:
            continue
        try:
            loaded = point.load()
        except Exception as error:
            raise ValueError(f"agent name={name!r}: the {ENTRY_POINT_GROUP!r} entry point {point.value!r} failed to "
                             f"load ({type(error).__name__}: {error})") from error
        cls = _check_class(f"the {ENTRY_POINT_GROUP!r} entry point {name} = {point.value!r}", loaded)
        REGISTERED[name] = cls
        return cls
    return None


def _from_import_path(name: str) -> type[Agent]:
    module_name, _, attribute = name.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"agent name={name!r} is not an import path; write 'package.module:Class'")
    try:
        value: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"agent name={name!r}: cannot import module {module_name!r} ({error}); is it on the "
                         "Python path (PYTHONPATH, or the working directory)?") from error
    except SyntaxError as error:  # the user's module does not parse
        raise ValueError(f"agent name={name!r}: module {module_name!r} has a syntax error ({error.msg}, "
                         f"{error.filename} line {error.lineno})") from error
    except Exception as error:  # the user's module raised while it was imported
        raise ValueError(f"agent name={name!r}: importing module {module_name!r} raised {type(error).__name__}: "
                         f"{error}") from error
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise ValueError(f"agent name={name!r}: {value.__name__} has no attribute {part!r}")
        value = getattr(value, part)
    return _check_class(f"agent name={name!r}", value)


def loaded_class(name: str) -> type[Agent] | None:
    """The class ``name`` stands for if finding it imports nothing (a built-in or registered name, an entry point
    loaded already, an import path whose module is imported already), else None. Reading a results folder uses
    it: a name there is data, never a reason to run code."""
    if not isinstance(name, str):
        return None
    found = shipped_agents().get(name) or REGISTERED.get(name)
    if found is not None or ":" not in name:
        return found
    module_name, _, attribute = name.partition(":")
    value: Any = sys.modules.get(module_name)
    for part in attribute.split(".") if value is not None else ():
        value = getattr(value, part, None)
    return value if isinstance(value, type) and issubclass(value, Agent) else None


def agent_class(name: str) -> type[Agent]:
    """The class an agent ``name`` stands for: a built-in name, a registered one, an entry point, or an import
    path ``package.module:Class`` (a ValueError names the allowed forms; a TypeError says that an import path
    or entry point does not give an ``Agent`` subclass)."""
    if not isinstance(name, str):
        raise TypeError(f"agent name must be a string, got {type(name).__name__}")
    builtin = shipped_agents()
    if name in builtin:
        return builtin[name]
    if name in REGISTERED:
        return REGISTERED[name]
    if ":" in name:
        return _from_import_path(name)
    cls = _from_entry_point(name)
    if cls is None:
        raise ValueError(_allowed(name))
    return cls
