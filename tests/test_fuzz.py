"""Fuzzing with Hypothesis: no input to a public constructor, ``reset``, ``step`` or ``act`` raises anything but
ValueError, TypeError or RuntimeError, ends the process, or makes an agent return an action outside the action
space.

Constructors run here; actions, reset options and agent observations reach compiled code and run in a subprocess
(tests/_fuzz_worker.py), so that a crash is a failure that names its input. A few hundred examples per category
by default, thousands under ``-m slow``."""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import subprocess
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import bandit_gym
from bandit_gym.envs._base import Engine
from tests.conftest import AGENTS, TESTS, module_command

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = (ValueError, TypeError, RuntimeError)
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
                   st.text(max_size=4), st.lists(st.floats(allow_nan=True), max_size=6),
                   hnp.arrays(st.sampled_from(["f8", "i8", "U2", "c16"]), hnp.array_shapes(max_dims=2, max_side=5)))


def _parameters(cls: type) -> list[str]:
    return [name for name, p in inspect.signature(cls).parameters.items()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and name not in ("self", "num")]


def _env_arguments(env_id: str) -> list[str]:
    """The env's own arguments (its class's and its engine's). Not ``render_mode``: ``gym.make`` reads it before
    the env does, and Gymnasium's own code fails on a non-string mode (an AttributeError in gymnasium)."""
    module_name, name = str(gym.spec(env_id).entry_point).split(":")
    module = importlib.import_module(module_name)
    engines = [cls for _, cls in inspect.getmembers(module, inspect.isclass)
               if issubclass(cls, Engine) and cls.__module__ == module_name]
    names = [arg for cls in [getattr(module, name), *engines] for arg in _parameters(cls)]
    return sorted(set(names) - {"render_mode", "kwargs"})


ENV_ARGUMENTS = {env_id: _env_arguments(env_id) for env_id in bandit_gym.ENV_SPECS}
AGENT_ARGUMENTS = {name: _parameters(cls) for name, cls in AGENTS.items() if name != "SB3Agent"}


@settings(max_examples=200, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(env_id=st.sampled_from(sorted(ENV_ARGUMENTS)), pick=st.integers(0, 100), value=VALUES)
def test_env_constructors_raise_only_clear_errors(env_id: str, pick: int, value: Any) -> None:
    names = ENV_ARGUMENTS[env_id]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.suppress(ALLOWED):
            gym.make(env_id, **{names[pick % len(names)]: value})


@settings(max_examples=200, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(sorted(AGENT_ARGUMENTS)), pick=st.integers(0, 100), value=VALUES)
def test_agent_constructors_raise_only_clear_errors(name: str, pick: int, value: Any) -> None:
    names = AGENT_ARGUMENTS[name]
    if not names:
        return
    with contextlib.suppress(ALLOWED):
        AGENTS[name](**{names[pick % len(names)]: value})


def _fuzz(examples: int) -> dict[str, Any]:
    done = subprocess.run(module_command("tests._fuzz_worker", str(examples)), cwd=TESTS, capture_output=True,
                          text=True)
    last = [line for line in done.stderr.splitlines() if line.startswith("[")][-1:] or ["(none)"]
    assert done.returncode == 0, f"the fuzz worker ended with code {done.returncode}; its last input: {last[0]}\n" \
                                 f"{done.stderr[-3000:]}"
    report = json.loads(done.stdout.splitlines()[-1])
    print(f"examples per category: {report['examples']}")
    assert not report["failures"], report["failures"][:10]
    return report


def test_actions_reset_options_and_observations() -> None:
    report = _fuzz(150)
    assert all(count >= 150 for count in report["examples"].values()), report["examples"]


@pytest.mark.slow
def test_actions_reset_options_and_observations_at_length() -> None:
    _fuzz(4000)
