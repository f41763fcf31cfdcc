"""The documentation: the README is a landing page whose links resolve, the site's pages exist, the CLI page is
current. (The site itself is built with ``mkdocs build --strict`` in ``.ci/run``.)"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def test_the_readme_is_a_landing_page_under_200_lines_with_its_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 200
    assert "bandit-gym reproduce tao2019 --quick" in readme
    assert re.search(r"python -m pytest[^`]*tests", readme)


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
