"""The examples in the docstrings run (doctest), and every env class and every agent class has one."""

from __future__ import annotations

import doctest
import importlib
import pathlib
import warnings

import pytest

import bandit_gym
from tests.conftest import AGENTS

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: checkout folder -> the package it is installed as
PACKAGES = {"bandit_gym": "bandit_gym", "agents": "bandit_gym.agents", "wrappers": "bandit_gym.wrappers"}


def modules_with_examples() -> list[str]:
    """The modules whose source holds a ``>>>`` example, by their installed names (read as text: nothing is
    imported to list them)."""
    names = []
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if ">>> " in path.read_text():
                parts = path.relative_to(ROOT / folder).with_suffix("").parts
                parts = parts[:-1] if parts[-1] == "__init__" else parts
                names.append(".".join((package, *parts)))
    return names


@pytest.mark.parametrize("module", modules_with_examples())
def test_the_docstring_examples_run(module: str) -> None:
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [test for test in finder.find(importlib.import_module(module)) if test.examples]
    assert tests, f"{module} mentions '>>> ' but has no doctest"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the examples' envs may warn (e.g. a non-unique best set)
        for test in tests:
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {module}"


def test_every_env_class_and_every_agent_class_has_an_example() -> None:
    classes = list(AGENTS.values())
    for env_id in bandit_gym.ENV_SPECS:
        spec = bandit_gym.ENV_SPECS[env_id]
        module, stem = spec.stem.split(":")
        owner = importlib.import_module(module)
        classes += [getattr(owner, stem + "Env"), getattr(owner, stem + "VectorEnv")]
    missing = sorted({cls.__qualname__ for cls in classes if ">>>" not in (cls.__doc__ or "")})
    assert not missing, f"no example in the docstring of {missing}"

