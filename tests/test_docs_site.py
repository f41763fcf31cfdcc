"""The documentation: the README is a landing page whose links resolve, the site's pages exist, the CLI page is
current. (The site itself is built with ``mkdocs build --strict`` in ``.ci/run``.)"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def test_the_readme_is_a_landing_page_under_200_lines_with_its_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 200
    commands = re.findall(r"```bash\n(.*?)\n```", readme, re.DOTALL)[:2]
    run, test = commands
    # one line each; the first installs the package (not an editable install) and reproduces tao2019; the second
    # makes an environment of its own and runs the suite from tests/, against the installed package
    assert "\n" not in run and "\n" not in test
    assert run.startswith("python3 -m venv .venv && ") and 'pip install ".[plot]"' in run and "-e" not in run.split()
    assert run.endswith("bandit-gym reproduce tao2019 --quick")
    assert test.startswith("python3 -m venv .venv-test && . .venv-test/bin/activate && ")
    assert 'pip install ".[test]"' in test and test.endswith("cd tests && python -m pytest -n 2")


def test_every_relative_link_of_the_readme_resolves() -> None:
    readme = (ROOT / "README.md").read_text()
    targets = [t for t in LINK.findall(readme) if not t.startswith(("http://", "https://", "#"))]
    assert targets
    missing = [t for t in targets if not (ROOT / t.split("#")[0]).exists()]
    assert not missing, f"README links to missing files: {missing}"


def nav_pages(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [page for value in node.values() for page in nav_pages(value)]
    if isinstance(node, list):
        return [page for item in node for page in nav_pages(item)]
    return []


def test_every_page_of_the_site_exists() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text().replace("!!python", "python"))
    pages = nav_pages(config["nav"])
    assert len(pages) > 30
    missing = [page for page in pages if not (ROOT / "docs" / page).exists()]
    assert not missing, missing


def test_the_cli_page_names_every_subcommand_and_option() -> None:
    import argparse

    from bandit_gym.cli import _parser

    page = (ROOT / "docs" / "cli.md").read_text()
    parser = _parser()
    sub = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    for name, command in sub.choices.items():
        assert f"## `bandit-gym {name}`" in page, f"docs/cli.md lacks {name}: run python scripts/make_cli_page.py"
        for action in command._actions:
            for option in action.option_strings:
                assert option in page, f"docs/cli.md lacks {name} {option}: run python scripts/make_cli_page.py"


def project_files(suffixes: set[str]) -> list[Path]:
    """The checkout's own files with these suffixes: not in a virtual environment (a folder with ``pyvenv.cfg``),
    a build, a cache or git's folder."""
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [name for name in subfolders
                         if name not in {".git", "build", "site", "__pycache__", "node_modules"}
                         and not name.endswith("_cache") and not (Path(folder, name) / "pyvenv.cfg").exists()]
        found += [Path(folder, name) for name in files if Path(name).suffix in suffixes]
    return found


def test_no_file_sends_the_reader_to_a_document_outside_the_project() -> None:
    # the algorithm reference is docs/algorithms/; nothing may cite a reconstruction the repository does not ship
    files = project_files({".py", ".md", ".toml", ".yml"})
    assert ROOT / "README.md" in files and ROOT / "bandit_gym" / "__init__.py" in files
    cited = [path for path in files if "ALGORITHMS" + ".md" in path.read_text(errors="ignore")]
    assert not cited, cited


def test_the_algorithm_reference_has_a_section_for_every_agent_of_its_families() -> None:
    from bandit_gym.agents import AGENTS

    pages = "\n".join(path.read_text() for path in (ROOT / "docs" / "algorithms").glob("*.md"))
    learned = ("SB3Agent", "ArmwisePPO")  # trained policies, not algorithms: docs/rl.md describes them
    missing = [name for name in AGENTS if name not in learned and f"\n## {name}\n" not in pages]
    assert not missing, f"docs/algorithms/ has no section for {missing}"


def test_the_api_reference_covers_every_public_module_agent_and_wrapper() -> None:
    import pkgutil

    import bandit_gym
    import bandit_gym.envs
    from bandit_gym.agents import AGENTS

    directives = "\n".join(path.read_text() for path in (ROOT / "docs").rglob("*.md") if "runs" not in path.parent.name)
    documented = set(re.findall(r"^::: ([\w.]+)", directives, flags=re.M))

    def covered(name: str) -> bool:
        return any(entry == name or entry.startswith(name + ".") for entry in documented)

    modules = [f"bandit_gym.{m.name}" for m in pkgutil.iter_modules(bandit_gym.__path__)
               if not m.name.startswith("_") and m.name not in ("cli", "envs")]  # the CLI has its own page
    modules += [f"bandit_gym.envs.{m.name}" for m in pkgutil.iter_modules(bandit_gym.envs.__path__)
                if not m.name.startswith("_")]
    missing = [name for name in modules if not covered(name)]
    missing += [name for name in AGENTS if f"bandit_gym.agents.{name}" not in documented]
    missing += [] if covered("bandit_gym.wrappers") else ["bandit_gym.wrappers"]
    assert not missing, f"not in the API reference: {missing}"


def anchors(page: Path) -> set[str]:
    """The heading anchors MkDocs gives a page (its toc extension's slugs, for the ASCII headings used here)."""
    out = set()
    for line in page.read_text().splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", title)).strip("-"))
    return out


def test_every_documentation_path_a_docstring_names_exists() -> None:
    named = set()
    for folder in ("bandit_gym", "agents", "wrappers"):
        for path in (ROOT / folder).rglob("*.py"):
            named |= set(re.findall(r"docs/[\w./-]+(?:#[\w-]+)?", path.read_text()))
    assert named
    for reference in sorted(named):
        file, _, anchor = reference.rstrip(".").partition("#")
        target = ROOT / file
        assert target.exists(), f"a docstring names {reference}, which does not exist"
        if anchor:
            assert anchor in anchors(target), f"a docstring names {reference}: no such heading"


def public_names() -> dict[str, list[str]]:
    """Every public module of the installed package (no part of its dotted name private) -> its public names:
    its ``__all__``, or else the classes and functions it defines whose names are not private."""
    import importlib
    import inspect
    import pkgutil
    import types

    import bandit_gym

    # agents/ and wrappers/ are documented by what their packages export (their modules are one class each):
    # the same modules whether the package is installed from the wheel or from the checkout (editable), where
    # walk_packages does not see them
    found = pkgutil.walk_packages(bandit_gym.__path__, "bandit_gym.")
    modules = ["bandit_gym", *sorted(info.name for info in found
                                     if not any(part.startswith("_") for part in info.name.split("."))
                                     and info.name.split(".")[1] not in ("agents", "wrappers")),
               "bandit_gym.agents", "bandit_gym.wrappers"]
    names = {}
    for name in modules:
        module = importlib.import_module(name)
        public = getattr(module, "__all__", None)
        if public is None:
            public = [key for key, value in vars(module).items() if not key.startswith("_")
                      and (inspect.isclass(value) or inspect.isfunction(value)) and value.__module__ == name]
        names[name] = [key for key in public if not isinstance(getattr(module, key), types.ModuleType)]
    return names


def test_the_built_api_reference_documents_every_public_module_class_function_and_constant(tmp_path: Path) -> None:
    # what the site renders, read from the inventory mkdocstrings writes: a name without a docstring, or a module
    # no page names, is missing from it
    import importlib
    import os
    import subprocess
    import sys

    import pytest

    pytest.importorskip("mkdocs", reason="the docs extra builds the site")
    mkdocstrings = pytest.importorskip("mkdocstrings")
    site = tmp_path / "site"
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(site)],
                           cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert build.returncode == 0, build.stderr[-3000:]
    with open(site / "objects.inv", "rb") as inventory:
        rendered = set(mkdocstrings.Inventory.parse_sphinx(inventory))
    missing = []
    modules = public_names()
    for module, names in modules.items():
        if module not in rendered:
            missing.append(module)
        for name in names:
            value = getattr(importlib.import_module(module), name)
            where = {f"{module}.{name}", f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}"}
            # a constant a package re-exports from one of its modules is documented there (bandit_gym.rl's)
            where |= {f"{home}.{name}" for home in modules if home.startswith(f"{module}.")}
            if not where & rendered:
                missing.append(f"{module}.{name}")
    assert len(rendered) > 900
    assert not missing, f"not in the built API reference (add a ::: entry or a docstring): {missing}"
    # the site says which version it documents, on every page, and carries the changelog
    import bandit_gym

    assert f"bandit_gym {bandit_gym.__version__}" in (site / "index.html").read_text()
    changelog = (site / "changelog" / "index.html").read_text()
    assert "Unreleased" in changelog and "Semantic Versioning" in changelog
    # AGENTS is documented by its docstring, not by the comprehension that builds it
    assert "globals().values()" not in (site / "api" / "agents" / "index.html").read_text()


def test_no_docstring_line_starts_with_a_markdown_quote_marker() -> None:
    # the site renders docstrings as Markdown: a wrapped line that begins with ">" (">= 2^-r)") becomes a block
    # quote in the middle of a formula; doctest prompts (">>>") are fine
    import ast

    found = []
    for folder in ("bandit_gym", "agents", "wrappers"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                body = getattr(node, "body", None)
                if not (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                        and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
                    continue
                for line in body[0].value.value.splitlines():
                    text = line.strip()
                    if text.startswith(">") and not text.startswith(">>>"):
                        found.append(f"{path.relative_to(ROOT)}: {text}")
    assert not found, found


def test_the_lower_bounds_page_shows_where_t_star_is_read() -> None:
    """``Allocation.time`` is T*(mu): the API page's example reads it by that name, and the field says what it is."""
    from bandit_gym.lower_bounds import best_arm_allocation

    page = (ROOT / "docs" / "api" / "lower-bounds.md").read_text()
    assert "found.time" in page and "T*(mu)" in page
    assert best_arm_allocation([0.5, 0.45, 0.43, 0.4]).time == pytest.approx(989.8, abs=0.1)  # the page's number


def test_a_page_that_runs_a_file_of_examples_says_the_file_is_in_a_clone() -> None:
    """The wheel does not carry ``examples/``: the README and the Quickstart, which tell the reader to run
    ``python examples/quickstart.py``, say in the same sentence that it is in a clone of the repository."""
    for page in (ROOT / "README.md", ROOT / "docs" / "quickstart.md"):
        text = " ".join(page.read_text().split())
        sentence = text[text.index("`python examples/quickstart.py`"):][:120]
        assert "in a clone of the repository" in sentence, (page.name, sentence)
