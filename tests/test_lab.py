"""docs/lab-regret.md (the first lab: the stochastic K-armed bandit) runs as written: its ```python blocks (the
<details> solutions too) are executed in order in one namespace, like the cells of a notebook, in a temporary
working directory; its exercises have solutions, and its picture exists under docs/lab/ and is made by
scripts/make_lab_figures.py. The same conventions as docs/tutorial.md (tests/test_tutorial.py)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.test_markdown_blocks import Capture, checked, expect
from tests.test_tutorial import DETAILS, IMAGE, ROOT, python_blocks

LAB = ROOT / "docs" / "lab-regret.md"
FIGURES = ROOT / "scripts" / "make_lab_figures.py"


def lab_text() -> str:
    return LAB.read_text(encoding="utf-8")


def test_every_block_compiles() -> None:
    blocks = python_blocks(lab_text())
    assert len(blocks) >= 8
    for number, block in enumerate(blocks, 1):
        compile(block, f"{LAB.name}, python block {number}", "exec")


def test_exercises_have_solutions() -> None:
    text = lab_text()
    exercises = re.findall(r"^### Exercise\b", text, re.MULTILINE)
    solutions = DETAILS.findall(text)
    assert len(exercises) >= 3
    assert len(solutions) == len(exercises)
    for solution in solutions:
        assert python_blocks(solution), "every <details> solution holds a ```python block"


def test_every_image_exists_and_is_used() -> None:
    images = [a or b for a, b in IMAGE.findall(lab_text())]
    assert images
    for image in images:
        assert not image.startswith(("http://", "https://", "/")), f"{image}: use a path relative to docs/"
        assert (LAB.parent / image).is_file(), f"{image} is missing: run python {FIGURES.relative_to(ROOT)}"
    made = {path.name for path in (LAB.parent / "lab").iterdir()}
    assert made == {Path(image).name for image in images if image.startswith("lab/")}, "an unused picture"


@pytest.mark.slow
def test_lab_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """About 12 s: four agents on 200 runs of 10 000 rounds, and the three exercises."""
    mine = [LAB, *sorted((LAB.parent / "lab").iterdir())]
    before = {path: path.stat().st_mtime_ns for path in mine}
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__lab__", "_capture": Capture, "_expect": expect}
    for number, block in enumerate(python_blocks(lab_text()), 1):
        exec(compile(checked(block), f"{LAB.name}, python block {number}", "exec"), namespace)
    out = capsys.readouterr().out
    after = {path: path.stat().st_mtime_ns for path in [LAB, *sorted((LAB.parent / "lab").iterdir())]}
    assert after == before, "the lab's code wrote into docs/ (only scripts/make_lab_figures.py does)"
    assert (tmp_path / "regret_vs_lai_robbins.png").stat().st_size > 1000
    # the numbers the prose quotes
    assert "C = 3.474" in out and "MyUCB1 = UCB1 on 200 x 2000 rounds" in out
    assert "needs rewards in [0, 1]" in out
    curves, C = namespace["curves"], namespace["C"]
    assert isinstance(curves, dict) and isinstance(C, float)
    final = {label: float(mean[-1]) for label, (mean, _se) in curves.items()}
    assert final["Thompson"] < final["KL-UCB"] < final["epsilon-greedy"] < final["UCB1"]
    said = " ".join(lab_text().split())  # the prose with its line breaks as spaces
    T = len(curves["UCB1"][0])
    slope = {label: float((mean[T - 1] - mean[T // 2 - 1]) / np.log(2) / C) for label, (mean, _se) in curves.items()}
    quoted = [f"epsilon-greedy about {slope['epsilon-greedy'] * C:.0f} (\\({slope['epsilon-greedy']:.1f}\\, C\\))",
              f"UCB1 about {slope['UCB1'] * C:.0f} (\\({slope['UCB1']:.0f}\\, C\\))",
              f"KL-UCB about {slope['KL-UCB'] * C:.0f} (\\({slope['KL-UCB']:.1f}\\, C\\))",
              f"Thompson sampling about {slope['Thompson'] * C:.1f} (\\({slope['Thompson']:.1f}\\, C\\))",
              f"= {final['Thompson'] / np.log(T):.1f} and {final['KL-UCB'] / np.log(T):.1f} against"]
    # Exercise 2's table, as printed: label, regret at T = 1000, at T = 10 000
    table = {line[:20].strip(): [float(x) for x in line[20:].split()] for line in out.splitlines()
             if line.startswith(("epsilon = ", "decaying, d = "))}
    quoted += [f"\\(\\epsilon = 0.01\\): {table['epsilon = 0.01'][1]:.0f} at T = 10 000",
               f"tie at T = 1000 ({table['epsilon = 0.1'][0]:.1f} and {table['epsilon = 0.05'][0]:.1f})",
               f"at T = 10 000 ({table['epsilon = 0.05'][1]:.1f} and {table['epsilon = 0.01'][1]:.1f})",
               f"where 0.1 pays {table['epsilon = 0.1'][1]:.0f}",
               f"{table['decaying, d = 0.1'][0]:.0f} then {table['decaying, d = 0.1'][1]:.0f}",
               f"at T = 1000 ({table['decaying, d = 0.5'][0]:.0f})",
               f"at T = 10 000 ({table['decaying, d = 0.5'][1]:.0f})"]
    # Exercise 3, as printed: "label R_T = mean +- half-width"
    gaussian = {line[:20].strip(): line[20:].split("R_T =")[1].strip() for line in out.splitlines()
                if "(Gaussian)" in line[:20]}
    kl, thompson = gaussian["KL-UCB (Gaussian)"], gaussian["Thompson (Gaussian)"]
    assert "C ln 5000 = 8.0" in out
    pm = thompson.replace(" +- ", " \\pm ")
    quoted += [f"(\\(R_T = {kl.split(' +- ')[0]}\\) against 8.0)", f"Thompson sampling's mean, \\(R_T = {pm}\\), is"]
    for phrase in quoted:
        assert phrase in said, f"docs/lab-regret.md should say {phrase!r} (what its code gives)"


@pytest.mark.slow
def test_figure_script_makes_the_picture(tmp_path: Path) -> None:
    import runpy

    script = runpy.run_path(str(FIGURES), run_name="make_lab_figures")
    paths = script["main"](["--out", str(tmp_path)])
    shown = {Path(a or b).name for a, b in IMAGE.findall(lab_text())}
    assert shown <= {path.name for path in paths}, "pictures the script does not make"
    assert all(path.stat().st_size > 1000 for path in paths)
