"""docs/tutorial.md runs as written: its ```python blocks (those inside <details> solutions too) are executed in
order in one namespace, like the cells of a notebook, in a temporary working directory; it has at least five
exercises with solutions, and every picture it shows exists under docs/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_markdown_blocks import Capture, checked, expect

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "tutorial.md"
FIGURES = ROOT / "scripts" / "make_tutorial_figures.py"

#: a fenced block opened by ```python (nothing else on the line) and closed by ``` at the start of a line
PYTHON_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
#: markdown images ![alt](path) and HTML <img src="path">
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|<img[^>]*\ssrc=\"([^\"]+)\"")
DETAILS = re.compile(r"<details>\s*<summary>Solution</summary>(.*?)</details>", re.DOTALL)


def tutorial_text() -> str:
    return TUTORIAL.read_text(encoding="utf-8")


def python_blocks(text: str) -> list[str]:
    return PYTHON_BLOCK.findall(text)


def test_every_block_compiles() -> None:
    blocks = python_blocks(tutorial_text())
    assert len(blocks) >= 10
    for number, block in enumerate(blocks, 1):
        compile(block, f"{TUTORIAL.name}, python block {number}", "exec")


def test_exercises_have_solutions() -> None:
    text = tutorial_text()
    exercises = re.findall(r"^### Exercise\b", text, re.MULTILINE)
    solutions = DETAILS.findall(text)
    assert len(exercises) >= 5
    assert len(solutions) >= len(exercises)
    for solution in solutions:
        assert python_blocks(solution), "every <details> solution holds a ```python block"


def test_every_image_exists() -> None:
    images = [a or b for a, b in IMAGE.findall(tutorial_text())]
    assert len(images) >= 5
    for image in images:
        assert not image.startswith(("http://", "https://", "/")), f"{image}: use a path relative to docs/"
        assert (TUTORIAL.parent / image).is_file(), f"{image} is missing: run python {FIGURES.relative_to(ROOT)}"
    made = {path.name for path in (TUTORIAL.parent / "tutorial").iterdir()}
    assert made == {Path(image).name for image in images if image.startswith("tutorial/")}, "an unused picture"
    gifs = [TUTORIAL.parent / image for image in images if image.endswith(".gif")]
    assert gifs
    for gif in gifs:
        assert gif.stat().st_size < 1024**2, f"{gif} is {gif.stat().st_size} bytes; keep GIFs under 1 MB"


@pytest.mark.slow
def test_tutorial_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = [TUTORIAL, *sorted((TUTORIAL.parent / "tutorial").iterdir())]
    before = {path: path.stat().st_mtime_ns for path in mine}
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__tutorial__", "_capture": Capture, "_expect": expect}
    for number, block in enumerate(python_blocks(tutorial_text()), 1):  # (no time asserted: speed lives in benchmarks)
        exec(compile(checked(block), f"{TUTORIAL.name}, python block {number}", "exec"), namespace)
    after = {path: path.stat().st_mtime_ns for path in [TUTORIAL, *sorted((TUTORIAL.parent / "tutorial").iterdir())]}
    assert after == before, "the tutorial's code wrote into docs/ (only scripts/make_tutorial_figures.py does)"


@pytest.mark.slow
def test_figure_script_makes_every_picture(tmp_path: Path) -> None:
    import runpy

    script = runpy.run_path(str(FIGURES), run_name="make_tutorial_figures")
    paths = script["main"](["--out", str(tmp_path)])
    made = {path.name for path in paths}
    shown = {Path(a or b).name for a, b in IMAGE.findall(tutorial_text())}
    assert shown <= made, f"pictures the script does not make: {sorted(shown - made)}"
    for path in paths:
        assert path.stat().st_size > 1000
    assert (tmp_path / "lsa.gif").stat().st_size < 1024**2
