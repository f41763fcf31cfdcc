"""The checks of an experiment spec's keys that need no spec (``bandit_gym.experiments.spec`` runs them): its
name, its budgets, and the hints and context its error messages give (the closest allowed name, an env's keyword
arguments, the agents of a family)."""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from bandit_gym import _validation as check
from bandit_gym.envs._base import engine_of
from bandit_gym.families import Family


def _check_name(name: str) -> None:
    """An experiment's ``name`` names its folder inside the output folder: one plain folder name."""
    if name in (".", "..") or "/" in name or "\\" in name or any(ord(c) < 32 for c in name) or (
            len(name) > 1 and name[1] == ":"):
        raise ValueError(f"name={name!r} must be a plain folder name: no '/' or '\\', not '.' or '..', no drive "
                         "letter or control characters (an experiment's folder stays inside the output folder)")


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
