"""The wheel's package list covers every package of the checkout: a non-editable install imports them all."""

from __future__ import annotations

import pathlib

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11 and later


ROOT = pathlib.Path(__file__).resolve().parents[1]
#: checkout folder -> the package it is installed as
INSTALLED_AS = {"bandit_gym": "bandit_gym", "agents": "bandit_gym.agents", "wrappers": "bandit_gym.wrappers"}


def packages_on_disk() -> set[str]:
    found = set()
    for folder, installed in INSTALLED_AS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((installed, *parts)))
    return found


def test_every_package_of_the_checkout_is_listed_for_the_wheel() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    missing = packages_on_disk() - listed
    assert not missing, f"add {sorted(missing)} to [tool.setuptools] packages in pyproject.toml"
    assert "bandit_gym.agents.multi_armed" in listed
