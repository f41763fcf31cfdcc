"""The wheel's package list covers every package of the checkout: a non-editable install imports them all."""

from __future__ import annotations

import pathlib
import re

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


def test_the_distribution_carries_the_package_version() -> None:
    """One version, semantic (MAJOR.MINOR.PATCH), read by the build from ``bandit_gym._version`` (re-exported as
    ``bandit_gym.__version__``); the distribution is installed under its own name (``bandit-gym`` is another
    project's on the package index)."""
    import importlib.metadata
    import re

    import bandit_gym

    assert re.fullmatch(r"\d+\.\d+\.\d+", bandit_gym.__version__)
    assert importlib.metadata.version("pure-exploration-gym") == bandit_gym.__version__
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "pure-exploration-gym" and project["dynamic"] == ["version"]
    assert f"## {bandit_gym.__version__} " in (ROOT / "CHANGELOG.md").read_text()


def test_the_distribution_carries_the_licence() -> None:
    """The MIT licence's text travels with every copy, as its terms require: ``LICENSE`` at the checkout's root,
    named by ``license-files`` (PEP 639), so that setuptools puts it in the sdist and in the wheel's
    ``.dist-info/licenses/``; the installed distribution declares and carries it."""
    import importlib.metadata

    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "The above copyright notice and this permission notice" in text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    distribution = importlib.metadata.distribution("pure-exploration-gym")
    assert distribution.metadata["License-Expression"] == "MIT"
    assert "LICENSE" in (distribution.metadata.get_all("License-File") or [])
    carried = [f for f in distribution.files or [] if f.name == "LICENSE" and "licenses" in f.parts]
    assert carried and carried[0].read_text() == text


def test_the_metadata_and_the_citation_file_say_what_the_project_is() -> None:
    """Authors, keywords and classifiers in the metadata (the licence by its SPDX expression, not a classifier:
    PEP 639); ``CITATION.cff`` (Citation File Format 1.2.0) names the same title, licence and version, released on
    the date of its heading in ``CHANGELOG.md``."""
    import importlib.metadata

    import bandit_gym

    yaml = pytest.importorskip("yaml")
    metadata = importlib.metadata.metadata("pure-exploration-gym")
    assert metadata["Author"] == "The bandit_gym developers"
    classifiers = metadata.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3.13" in classifiers and "Typing :: Typed" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]
    assert "best-arm identification" in metadata["Keywords"]
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0" and citation["license"] == "MIT"
    assert citation["version"] == bandit_gym.__version__ and citation["title"].startswith("bandit_gym")
    released = re.search(rf"^## {re.escape(bandit_gym.__version__)} \((\d{{4}}-\d{{2}}-\d{{2}})\)$",
                         (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert released is not None, f"CHANGELOG.md has no heading '## {bandit_gym.__version__} (YYYY-MM-DD)'"
    assert str(citation["date-released"]) == released.group(1)  # the release's date, in both


def test_the_suite_tests_the_package_it_was_asked_to() -> None:
    """``BANDIT_GYM_TESTED=installed`` (``.ci/run`` sets it): the ``bandit_gym`` under test, in every worker, is an
    installed copy (the wheel), not the checkout's source; ``=checkout``: the checkout (an editable install)."""
    import os

    import bandit_gym

    wanted = os.environ.get("BANDIT_GYM_TESTED")
    if wanted is None:
        pytest.skip("BANDIT_GYM_TESTED is not set (installed or checkout)")
    where = pathlib.Path(bandit_gym.__file__).resolve().parent
    agents = pathlib.Path(__import__("bandit_gym.agents").agents.__file__).resolve().parent
    if wanted == "installed":
        assert not where.is_relative_to(ROOT) and agents == where / "agents", (where, agents)
    else:
        assert (wanted, where, agents) == ("checkout", ROOT / "bandit_gym", ROOT / "agents")


def test_the_teaching_extra_brings_what_renders_the_notebooks() -> None:
    """``pip install ".[teach]"`` gives nbconvert, which the course page's command line uses to run or render a
    notebook, beside jupytext, nbclient and ipykernel."""
    import importlib.metadata

    wanted = [requirement for requirement in importlib.metadata.requires("pure-exploration-gym") or []
              if 'extra == "teach"' in requirement]
    names = {re.split(r"[<>=!~; \[]", requirement, maxsplit=1)[0] for requirement in wanted}
    assert {"nbconvert", "jupytext", "nbclient", "ipykernel"} <= names, names
