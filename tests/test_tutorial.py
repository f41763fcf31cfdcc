"""docs/tutorial.md runs as written: its ```python blocks (those inside <details> solutions too) are executed in
order in one namespace, like the cells of a notebook, in a temporary working directory; it has at least five
exercises with solutions, and every picture it shows exists under docs/."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
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


def test_the_text_quotes_the_episodes_of_section_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The pulls, estimates and indices that section 2's prose quotes are those of the episodes the page's code
    plays (the episodes of the pictures): the blocks up to DKWUCB's run, about 10 s."""
    text = " ".join(tutorial_text().split())  # the prose with its line breaks as spaces
    blocks = python_blocks(tutorial_text())
    last = next(i for i, block in enumerate(blocks) if "DKWUCB()" in block and "level_exceed" in block)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__tutorial__", "_capture": Capture, "_expect": expect}
    for number, block in enumerate(blocks[:last + 1], 1):
        capsys.readouterr()
        exec(compile(checked(block), f"{TUTORIAL.name}, python block {number}", "exec"), namespace)
    dkwucb_line = capsys.readouterr().out.strip()

    def said(*phrases: str) -> None:
        for phrase in phrases:
            assert " ".join(phrase.split()) in text, f"docs/tutorial.md should say {phrase!r} (what its code gives)"

    final = namespace["final"]
    assert isinstance(final, dict)
    uniform, apt, lsa = (final[name] for name in ("Uniform", "APT", "LSA"))
    theta = float(uniform["threshold"][0])
    truth = np.array([0.2, 0.25, 0.3, 0.35, 0.45, 0.55, 0.65, 0.7, 0.75, 0.8])

    def estimate(obs: dict[str, np.ndarray], arm: int) -> str:
        return f"{obs['sums'][arm] / obs['counts'][arm]:.2f}"

    # 2.1 Uniform: its one misclassified arm and that arm's estimate
    wrong = np.flatnonzero((uniform["means"] >= theta) != (truth >= theta))
    assert len(wrong) == 1
    said(f"Arm {wrong[0]} (true mean {truth[wrong[0]]:g}) had a bad run, {estimate(uniform, wrong[0])} after 20 pulls")
    # 2.2 APT: the pulls of arms 4 and 5, and the arm it got wrong
    pulls = apt["counts"].astype(int)
    said(f"spent {pulls[4]} + {pulls[5]} = {pulls[4] + pulls[5]} of its 200 pulls",
         f"and {pulls[7]} on arm 7", f"({estimate(apt, 7)} after {pulls[7]} pulls)",
         f"({estimate(apt, 5)} after {pulls[5]} pulls; its true mean is 0.55)")
    assert np.array_equal(np.flatnonzero((apt["means"] >= theta) != (truth >= theta)), [5])
    # 2.3 LSA: its pulls, its one error, and the levelled indices
    pulls = lsa["counts"].astype(int)
    said(f"gave {pulls[4] + pulls[5] + pulls[6]} of its 200 pulls",
         f"({pulls[4]}, {pulls[5]} and {pulls[6]} pulls; arm 6, true mean 0.65, stood at {estimate(lsa, 6)} after "
         f"{pulls[6]})", f"only {pulls[0]} each to arms 0 and 1",
         f"(arm 5, at {estimate(lsa, 5)} after {pulls[5]} pulls)")
    assert pulls[0] == pulls[1] and lsa["sums"][0] == lsa["sums"][1] == 0
    xi = namespace["xi"]
    assert isinstance(xi, np.ndarray)
    said(f"between {xi.min():.2f} and {xi.max():.2f} while the pull counts range from {pulls.min()} to {pulls.max()}",
         f"\\cdot {pulls[0]} \\cdot 0.25 + \\tfrac{{1}}{{2}} \\ln {pulls[0]} = {xi[0]:.2f}",
         f"after {pulls[6]} pulls at \\(\\hat\\Delta = {abs(lsa['sums'][6] / pulls[6] - theta):.3f}\\) ({xi[6]:.2f})")
    # 2.4 UGapEb after 100 pulls: counts, B_J, the challenger and the arm pulled
    counts, B, U = (namespace[name] for name in ("counts", "B", "U"))
    assert isinstance(counts, np.ndarray) and isinstance(B, np.ndarray) and isinstance(U, np.ndarray)
    J, u, pull = (namespace[name] for name in ("J", "u", "pull"))
    said(f"(counts {', '.join(str(int(c)) for c in counts)}) arm {J} has the smallest index, \\(B_{J} = {B[J]:.3f}\\)",
         f"arm {u} (U = {U[u]:.3f})",
         f"UGapEb pulls \\(u_t\\) = arm {pull}" if pull == u else f"pulls \\(l_t = J\\) = arm {J}")
    # 2.5 DKWUCB: the printed line the text quotes
    said(f"It prints `{dkwucb_line}`")
