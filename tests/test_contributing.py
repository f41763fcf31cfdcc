"""The contributor's page (``docs/contributing.md``) names every file and hook an addition needs: its table of
what adding Sequential Halving touched is every file of the package, its docs and its tests that names the agent,
and every hook the registry-driven tests look up on an agent class is named on the page."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "contributing.md"
TEXT = (".py", ".md", ".toml", ".yml", ".yaml", ".ipynb")


def touched_table() -> set[str]:
    """The files in the page's table "What adding Sequential Halving touched"."""
    section = PAGE.read_text().split("### What adding Sequential Halving touched", 1)[1].split("\n#", 1)[0]
    return set(re.findall(r"^\| `([^`]+)` \|", section, flags=re.M))


def files_naming(word: str) -> set[str]:
    """The package's, docs' and tests' text files that name ``word``: not the changelog, the contributor's page
    itself, the committed results (``docs/<study>-<runs>runs/``) or the tests of the repository's layout."""
    found = set()
    for top in ("agents", "bandit_gym", "wrappers", "docs", "tests"):
        for path in (ROOT / top).rglob("*"):
            relative = path.relative_to(ROOT).as_posix()
            if (path.suffix not in TEXT or "__pycache__" in path.parts or re.match(r"docs/[^/]*runs/", relative)
                    or relative in {"docs/contributing.md", "tests/test_contributing.py", "tests/test_layout.py"}):
                continue
            if word in path.read_text(errors="replace"):
                found.add(relative)
    return found


def test_the_page_names_every_file_that_adding_sequential_halving_touched() -> None:
    table = touched_table()
    assert "agents/best_arm/sequential_halving.py" in table
    assert table == files_naming("SequentialHalving"), "docs/contributing.md's table and the repository disagree"


def test_the_page_names_every_hook_the_registry_tests_look_up() -> None:
    hooks = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        hooks |= set(re.findall(r'getattr\(cls, "(\w+)"', path.read_text()))
    assert "check_m" in hooks  # the one today: which agents return one arm only
    page = PAGE.read_text()
    assert not [hook for hook in hooks if f"`{hook}" not in page]
    assert "object.__new__(cls)" in page and ">>>" in page
