"""The package's layers (``docs/layout.md``), checked by import-linter's contracts in ``pyproject.toml`` on the
installed package: no cycle, no import from a layer to one above it, lazy imports (inside functions) included, and
the core imports no study."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("importlinter", reason="the test extra installs import-linter")


def package_tree(into: Path) -> Path:
    """A copy of the installed ``bandit_gym``'s sources with ``bandit_gym.agents`` and ``bandit_gym.wrappers``
    inside it, as a wheel lays them out (an editable install maps them from the checkout's ``agents/`` and
    ``wrappers/`` at import time, which the import graph does not follow); returns the folder to put on the path."""
    import bandit_gym
    import bandit_gym.agents
    import bandit_gym.wrappers

    source, target = Path(bandit_gym.__file__).parent, into / "bandit_gym"
    compiled = shutil.ignore_patterns("__pycache__", "*.pyc")

    def skip(folder: str, names: list[str]) -> set[str]:  # the top's agents/ and wrappers/ come from their packages
        top = {"agents", "wrappers"} if Path(folder) == source else set()
        return top | set(compiled(folder, names))

    shutil.copytree(source, target, ignore=skip)
    for package in (bandit_gym.agents, bandit_gym.wrappers):
        shutil.copytree(Path(package.__file__).parent, target / package.__name__.rpartition(".")[2], ignore=compiled)
    assert (target / "jax" / "agents" / "__init__.py").is_file()
    return into


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the contracts of ``pyproject.toml`` over ``tree``, run in ``tree`` (no cache written)."""
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return subprocess.run([sys.executable, "-c", code, "--no-cache", str(ROOT / "pyproject.toml")], cwd=tree,
                          env={"PYTHONPATH": str(tree), "PATH": ""}, capture_output=True, text=True)


def test_the_import_contracts_hold(tmp_path: Path) -> None:
    result = lint_imports(package_tree(tmp_path))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "4 kept, 0 broken" in result.stdout


def test_a_lazy_import_from_a_lower_layer_up_breaks_them(tmp_path: Path) -> None:
    # the families' contracts are the bottom of the core: an import of the registration inside a function of theirs
    # (the cycle the package once had) breaks the layers and the acyclic contracts
    tree = package_tree(tmp_path)
    families = tree / "bandit_gym" / "families" / "__init__.py"
    families.write_text(families.read_text() + "\n\ndef lookup(env_id):\n"
                        "    from bandit_gym.registration import ENV_SPECS\n\n    return ENV_SPECS[env_id]\n")
    result = lint_imports(tree)
    assert result.returncode == 1, result.stdout[-4000:]
    assert "bandit_gym.families is not allowed to import bandit_gym.registration" in result.stdout
    assert "2 kept, 2 broken" in result.stdout


def test_a_paper_that_imports_another_breaks_them(tmp_path: Path) -> None:
    # one paper, one folder: what two papers share sits below them (bandit_gym.studies._figures), not in either
    tree = package_tree(tmp_path)
    paper = tree / "bandit_gym" / "studies" / "hoffman2014" / "reproduce.py"
    paper.write_text(paper.read_text() + "\n\ndef chen_figure():\n"
                     "    from bandit_gym.studies.chen2017.reproduce import plot_failure_against_scale\n\n"
                     "    return plot_failure_against_scale\n")
    result = lint_imports(tree)
    assert result.returncode == 1, result.stdout[-4000:]
    assert "no paper imports another" in result.stdout and "BROKEN" in result.stdout
    assert "3 kept, 1 broken" in result.stdout


def test_the_agent_registry_is_the_one_list_of_agents() -> None:
    """``bandit_gym.agents`` imports every built-in agent (``AGENTS``); a family's package re-exports none, so that
    no second list can miss one (as ``agents/best_arm/__init__.py`` once missed SequentialHalving)."""
    import ast

    import bandit_gym.agents

    top = Path(bandit_gym.agents.__file__).parent
    families = sorted(path for path in top.glob("*/__init__.py") if "__pycache__" not in path.parts)
    assert len(families) >= 6
    for path in families:
        body = ast.parse(path.read_text()).body
        assert len(body) == 1 and isinstance(body[0], ast.Expr), f"{path.relative_to(top)}: more than a docstring"
    assert len(bandit_gym.agents.AGENTS) == len(set(bandit_gym.agents.AGENTS.values()))


def test_the_measured_layout_stays_within_its_targets() -> None:
    """docs/layout.md's numbers, from ``scripts/measure_layout.py``: no module over 500 lines, at most four
    functions over 60 lines, no constructor over 40 lines."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("measure_layout", ROOT / "scripts" / "measure_layout.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    numbers = script.measure()
    assert numbers["modules"] > 150, numbers["modules"]  # the sources were found
    assert max(numbers["sizes"].values()) <= 500, sorted(numbers["sizes"].items(), key=lambda kv: -kv[1])[:3]
    assert len(numbers["long"]) <= 4, numbers["long"]
    assert numbers["constructor"][0] <= 40, numbers["constructor"]
