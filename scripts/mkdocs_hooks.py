"""MkDocs hook: the API reference reads the package as it is installed, and every page shows the version.

``agents/`` and ``wrappers/`` sit at the repository's root and are installed as ``bandit_gym.agents`` and
``bandit_gym.wrappers``; mkdocstrings finds packages by their folders, so this hook lays out
``build/docs-api/bandit_gym`` as the wheel does (links to the checkout's files, nothing copied) before the
pages are rendered.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGE = ROOT / "build" / "docs-api" / "bandit_gym"


def _wanted() -> dict[str, Path]:
    entries = {entry.name: entry for entry in (ROOT / "bandit_gym").iterdir() if entry.name != "__pycache__"}
    return {**entries, **{folder: ROOT / folder for folder in ("agents", "wrappers")}}


def _staged() -> dict[str, Path] | None:
    if not STAGE.is_dir():
        return None
    links = list(STAGE.iterdir())
    return {link.name: Path(os.readlink(link)) for link in links} if all(p.is_symlink() for p in links) else None


def stage() -> None:
    """Lay out ``build/docs-api/bandit_gym`` (links to the checkout's files). A layout that is already right is
    left alone, and a new one replaces the old by a rename, so that two builds at once (the test suite's workers)
    never see it half made."""
    wanted = _wanted()
    if _staged() == wanted:
        return
    fresh = STAGE.with_name(f"bandit_gym.new-{os.getpid()}")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    for name, target in wanted.items():
        os.symlink(target, fresh / name)
    if STAGE.exists():
        old = STAGE.with_name(f"bandit_gym.old-{os.getpid()}")
        os.rename(STAGE, old)
        shutil.rmtree(old)
    try:
        os.rename(fresh, STAGE)
    except OSError:  # another build staged it in between: the same layout
        shutil.rmtree(fresh, ignore_errors=True)


# When MkDocs loads this hook with the configuration, before any plugin reads its configuration: mkdocstrings
# drops search paths that do not exist when it is configured, so the layout must exist by then (a fresh
# checkout has no build/).
stage()


def version() -> str:
    """The package's version, read from ``bandit_gym/_version.py`` (the build's source of it) without importing
    the package."""
    found = re.search(r'^__version__ = "([^"]+)"', (ROOT / "bandit_gym" / "_version.py").read_text(), re.MULTILINE)
    if found is None:
        raise RuntimeError("bandit_gym/_version.py has no __version__ line")
    return found.group(1)


def on_config(config: dict, **_: object) -> dict:
    """The site's name carries the version it documents (``bandit_gym 0.3.0``): the header of every page shows it;
    the changelog page's snippet (``CHANGELOG.md``) is found from the repository's root wherever the build runs."""
    config["site_name"] = f"bandit_gym {version()}"
    config["mdx_configs"].setdefault("pymdownx.snippets", {})["base_path"] = [str(ROOT)]
    return config


_DETAILS = re.compile(r"^([ \t]*)<details>", re.MULTILINE)


def on_page_markdown(markdown: str, **_: object) -> str:
    """Markdown and formulas inside the ``<details>`` blocks (the tutorial's and the lab's solutions) are rendered
    (``md_in_html``'s ``markdown="1"``), not shown as raw text; the pages keep a plain ``<details>``, which the
    notebooks are built from."""
    return _DETAILS.sub(r'\1<details markdown="1">', markdown)


_IMAGE = re.compile(r'(<a\b[^>]*>\s*)?(<img\b[^>]*?\bsrc="([^"]+)"[^>]*>)')


def on_page_content(html: str, **_: object) -> str:
    """Every figure of a page opens at full size: an ``<img>`` that is not already a link's content is wrapped in
    a link to its own file (the page shows it at the column's width)."""

    def wrap(match: re.Match[str]) -> str:
        inside, image, src = match.groups()
        if inside or src.startswith(("http://", "https://", "data:")):
            return match.group(0)
        return f'<a class="figure-link" href="{src}" title="the figure at full size">{image}</a>'

    return _IMAGE.sub(wrap, html)
