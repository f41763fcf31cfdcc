"""MkDocs hook: the API reference reads the package as it is installed.

``agents/`` and ``wrappers/`` sit at the repository's root and are installed as ``bandit_gym.agents`` and
``bandit_gym.wrappers``; mkdocstrings finds packages by their folders, so this hook lays out
``build/docs-api/bandit_gym`` as the wheel does (links to the checkout's files, nothing copied) before the
pages are rendered.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGE = ROOT / "build" / "docs-api" / "bandit_gym"


def stage() -> None:
    """Lay out ``build/docs-api/bandit_gym`` (links to the checkout's files)."""
    if STAGE.exists():
        shutil.rmtree(STAGE)
    STAGE.mkdir(parents=True)
    for entry in (ROOT / "bandit_gym").iterdir():
        if entry.name != "__pycache__":
            os.symlink(entry, STAGE / entry.name)
    for folder in ("agents", "wrappers"):
        os.symlink(ROOT / folder, STAGE / folder)


# When MkDocs loads this hook with the configuration, before any plugin reads its configuration: mkdocstrings
# drops search paths that do not exist when it is configured, so the layout must exist by then (a fresh
# checkout has no build/).
stage()
