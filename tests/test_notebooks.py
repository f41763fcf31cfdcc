"""Teaching notebooks (``bandit-gym notebooks DOC.md``): the student notebook of a tutorial-style doc holds no
solution (code or prose), only a stub per exercise; the solutions notebook holds every ```python block of the
doc, in order, and runs end to end in a Jupyter kernel (nbclient, the ``python3`` kernel of ipykernel)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

from bandit_gym.cli import main  # noqa: E402
from bandit_gym.notebooks import (  # noqa: E402
    EXERCISE_TAG,
    PYTHON_BLOCK,
    SOLUTION,
    SOLUTION_START,
    SOLUTION_TAG,
    TEACHER,
    TEACHER_TAG,
    build_notebooks,
    read_tutorial,
    solutions_notebook,
    student_notebook,
)

ROOT = Path(__file__).resolve().parents[1]
#: the docs written with exercises and folded solutions (a missing one is skipped, not failed)
DOCS = [ROOT / "docs" / "tutorial.md", ROOT / "docs" / "lab-regret.md"]


def _doc(name: str) -> Path:
    path = ROOT / "docs" / name
    if not path.is_file():
        pytest.skip(f"docs/{name} does not exist")
    return path


def _tags(cell: nbformat.NotebookNode) -> list[str]:
    return list(cell.metadata.get("tags", []))


def _code(notebook: nbformat.NotebookNode) -> list[str]:
    return [cell.source.strip() for cell in notebook.cells if cell.cell_type == "code"]


def _text(notebook: nbformat.NotebookNode) -> str:
    return "\n".join(cell.source for cell in notebook.cells)


def _solution_only_lines(text: str) -> list[str]:
    """The lines of the doc's solutions (code and prose) long enough to be telling and found nowhere else."""
    outside = SOLUTION.sub("", text)
    lines = {line.strip() for body in SOLUTION.findall(text) for line in body.splitlines()}
    return sorted(line for line in lines if len(line) >= 25 and line not in outside)


@pytest.fixture(scope="module", params=[path.name for path in DOCS])
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    doc = _doc(request.param)
    student, solutions = build_notebooks(doc, tmp_path_factory.mktemp("notebooks"))
    return doc, student, solutions


def test_student_notebook_has_no_solution(built: tuple[Path, Path, Path]) -> None:
    doc, student_path, _ = built
    assert student_path.name == f"{doc.stem}.ipynb"
    text = doc.read_text(encoding="utf-8")
    solutions = SOLUTION.findall(text)
    assert solutions, f"{doc.name} has no <details><summary>Solution</summary> block"
    student = nbformat.read(student_path, as_version=4)
    nbformat.validate(student)
    assert not [cell for cell in student.cells if SOLUTION_TAG in _tags(cell)]
    assert not re.search(SOLUTION_START, _text(student), re.MULTILINE)
    leaked = [line for line in _solution_only_lines(text) if line in _text(student)]
    assert not leaked, f"solution lines in the student notebook: {leaked[:3]}"
    # the code cells are the doc's blocks outside the solutions, with one stub per solution that holds code
    stubs = [cell for cell in student.cells if EXERCISE_TAG in _tags(cell)]
    assert len(stubs) == len(solutions)
    given = [cell.source.strip() for cell in student.cells if cell.cell_type == "code" and cell not in stubs]
    assert given == [block.strip() for block in PYTHON_BLOCK.findall(TEACHER.sub("", SOLUTION.sub("", text)))]
    # each stub names the exercise whose heading precedes it
    heading = None
    for cell in student.cells:
        if cell.cell_type == "markdown" and (found := re.findall(r"^#{2,4} +(Exercise +[^\s:.]+)", cell.source,
                                                                 re.MULTILINE)):
            heading = found[-1]
        if EXERCISE_TAG in _tags(cell):
            assert heading is not None and cell.source.strip().startswith(f"# {heading}: your code here")


def test_teachers_part_is_only_in_the_solutions_notebook(built: tuple[Path, Path, Path]) -> None:
    """How to build and hand out the notebooks is for the teacher: the student notebook has none of it."""
    doc, student_path, solutions_path = built
    parts = TEACHER.findall(doc.read_text(encoding="utf-8"))
    assert parts, f"{doc.name} has no <!-- teacher --> part"
    lines = [line.strip() for part in parts for line in part.splitlines() if len(line.strip()) >= 25]
    assert any("bandit-gym notebooks" in line for line in lines)
    student = _text(nbformat.read(student_path, as_version=4))
    solutions = nbformat.read(solutions_path, as_version=4)
    assert not [line for line in lines if line in student]
    teacher = "\n".join(cell.source for cell in solutions.cells if TEACHER_TAG in _tags(cell))
    assert not [line for line in lines if line not in teacher]


def test_the_student_notebook_reads_whole(built: tuple[Path, Path, Path]) -> None:
    """The teachers' parts it leaves out are no numbered sections: its numbered headings follow 1, 2, 3, ...; and
    it does not tell the students that the solutions it lacks are folded in it."""
    _, student, _ = built
    text = "\n".join(cell.source for cell in nbformat.read(student, as_version=4).cells
                     if cell.cell_type == "markdown")
    numbers = [int(n) for n in re.findall(r"^## (\d+)\. ", text, flags=re.MULTILINE)]
    assert numbers == list(range(1, len(numbers) + 1)), numbers
    assert "a solution, folded" not in text


def test_plain_jupytext_would_show_the_solutions() -> None:
    """Why the notebooks are built: jupytext alone turns every folded solution into an ordinary code cell."""
    import jupytext

    doc = _doc("tutorial.md")
    text = doc.read_text(encoding="utf-8")
    plain = _code(jupytext.read(doc))
    assert all(block.strip() in plain for body in SOLUTION.findall(text) for block in PYTHON_BLOCK.findall(body))


def test_solutions_notebook_has_every_block(built: tuple[Path, Path, Path]) -> None:
    doc, _, solutions_path = built
    assert solutions_path.name == f"{doc.stem}-solutions.ipynb"
    text = doc.read_text(encoding="utf-8")
    solutions = nbformat.read(solutions_path, as_version=4)
    nbformat.validate(solutions)
    assert _code(solutions) == [block.strip() for block in PYTHON_BLOCK.findall(text)]
    tagged = [cell.source.strip() for cell in solutions.cells if cell.cell_type == "code"
              and SOLUTION_TAG in _tags(cell)]
    assert tagged == [block.strip() for body in SOLUTION.findall(text) for block in PYTHON_BLOCK.findall(body)]
    assert not [cell for cell in solutions.cells if EXERCISE_TAG in _tags(cell)]
    missing = [line for line in _solution_only_lines(text) if line not in _text(solutions)]
    assert not missing, f"solution lines missing from the solutions notebook: {missing[:3]}"
    assert solutions.metadata.kernelspec.name == "python3"


def test_pictures_are_embedded(built: tuple[Path, Path, Path]) -> None:
    doc, student_path, _ = built
    shown = re.findall(r"!\[[^\]]*\]\(([^)\s]+)", SOLUTION.sub("", doc.read_text(encoding="utf-8")))
    local = [path for path in shown if (doc.parent / path).is_file()]
    student = nbformat.read(student_path, as_version=4)
    attached = {name: data for cell in student.cells for name, data in cell.get("attachments", {}).items()}
    assert len(attached) == len(set(local))
    assert all(f"attachment:{name}" in _text(student) for name in attached)
    assert not [path for path in local if f"]({path}" in _text(student)]


LAB = """# A lab

```bash
pip install shown-not-run
```

```python
x = 1
```

### Exercise 1: double it

<details><summary>Solution</summary>

```python
doubled_by_the_solution = 2 * x
```

So the solution's answer is 2.

![a picture](figures/pic.png)

</details>

### Exercise 2: why?

<details>
<summary>Solution</summary>

Because the prose-only solution says so.

</details>

<!-- teacher -->
## For the teacher

Hand out lab.ipynb, keep the solutions.

```python
teacher_only = 3
```
<!-- /teacher -->

```python
print(x)
```
"""


def test_conventions_on_a_small_doc(tmp_path: Path) -> None:
    doc = tmp_path / "lab.md"
    doc.write_text(LAB, encoding="utf-8")
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "pic.png").write_bytes(b"\x89PNG not really")
    both = read_tutorial(doc)
    student, solutions = student_notebook(both), solutions_notebook(both)
    assert _code(student) == ["x = 1", "# Exercise 1: your code here", "print(x)"]  # the bash block is text:
    assert "```bash\npip install shown-not-run\n```" in [cell.source for cell in student.cells]
    assert "*Exercise 2: your answer here.*" in [cell.source for cell in student.cells
                                                  if EXERCISE_TAG in _tags(cell) and cell.cell_type == "markdown"]
    for hidden in ("doubled_by_the_solution", "the solution's answer", "prose-only", "attachment:", "Hand out",
                   "teacher_only", "For the teacher"):
        assert hidden not in _text(student)
    teacher = [cell for cell in solutions.cells if TEACHER_TAG in _tags(cell)]
    assert [cell.cell_type for cell in teacher] == ["markdown", "code"]
    assert "Hand out lab.ipynb" in teacher[0].source and teacher[1].source.strip() == "teacher_only = 3"
    assert _code(solutions) == ["x = 1", "doubled_by_the_solution = 2 * x", "teacher_only = 3", "print(x)"]
    assert "Because the prose-only solution says so." in _text(solutions)
    pictures = [cell.attachments for cell in solutions.cells if "attachments" in cell]
    assert pictures == [{"figures_pic.png": {"image/png": "iVBORyBub3QgcmVhbGx5"}}]
    assert "![a picture](attachment:figures_pic.png)" in _text(solutions)


def test_bad_docs_are_refused(tmp_path: Path) -> None:
    unclosed = tmp_path / "unclosed.md"
    unclosed.write_text("### Exercise 1: x\n\n<details><summary>Solution</summary>\n\n```python\n1\n```\n",
                        encoding="utf-8")
    with pytest.raises(ValueError, match=r"unclosed\.md: .*not closed by </details>"):
        build_notebooks(unclosed, tmp_path / "out")
    unclosed.write_text("<!-- teacher -->\n\nfor teachers\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"unclosed\.md: .*not closed by <!-- /teacher -->"):
        build_notebooks(unclosed, tmp_path / "out")
    with pytest.raises(ValueError, match="expected a markdown doc"):
        build_notebooks(ROOT / "pyproject.toml", tmp_path / "out")
    with pytest.raises(FileNotFoundError, match="markdown_path="):
        build_notebooks(tmp_path / "missing.md", tmp_path / "out")


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "lab.md"
    doc.write_text(LAB, encoding="utf-8")
    assert main(["notebooks", str(doc), "--out", str(tmp_path / "nb")]) == 0
    assert sorted(path.name for path in (tmp_path / "nb").iterdir()) == ["lab-solutions.ipynb", "lab.ipynb"]
    assert "wrote" in capsys.readouterr().out
    assert main(["notebooks", str(doc), str(tmp_path / "missing.md"), "--out", str(tmp_path / "nb")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bandit-gym notebooks: error: markdown_path=") and err.count("\n") == 1
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "lab.md").write_text(LAB, encoding="utf-8")
    assert main(["notebooks", str(doc), str(tmp_path / "other" / "lab.md"), "--out", str(tmp_path / "nb2")]) == 2
    assert "two docs named lab" in capsys.readouterr().err


def _execute(notebook: nbformat.NotebookNode, cwd: Path, allow_errors: bool) -> None:
    from nbclient import NotebookClient

    client = NotebookClient(notebook, kernel_name="python3", timeout=None, allow_errors=allow_errors,
                            resources={"metadata": {"path": str(cwd)}})
    client.execute()


FIGURE_CODE = re.compile(r"\bplt\.|\bsavefig\(|\bimshow\(")
"""A code cell that draws a figure (pyplot, or a figure it saves)."""


def _assert_figures_shown(code: list[nbformat.NotebookNode]) -> None:
    """Every cell that draws a figure shows it under the cell (an image/png output), and there is one."""
    drawing = [i for i, cell in enumerate(code) if FIGURE_CODE.search(cell.source)]
    assert drawing, "no cell draws a figure"
    for i in drawing:
        kinds = [output.output_type for output in code[i].outputs]
        assert any("image/png" in output.get("data", {}) for output in code[i].outputs), \
            f"code cell {i} draws a figure but shows none (outputs: {kinds})"


def _errors(cell: nbformat.NotebookNode) -> list[str]:
    return [output.ename for output in cell.get("outputs", []) if output.output_type == "error"]


@pytest.mark.slow
def test_solutions_notebook_runs(built: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """Every cell of the solutions notebook runs in a fresh kernel, in a temporary working directory."""
    _, _, solutions_path = built
    notebook = nbformat.read(solutions_path, as_version=4)
    _execute(notebook, tmp_path, allow_errors=False)  # nbclient raises CellExecutionError on a failing cell
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1))
    assert any(output.output_type == "stream" for cell in code if SOLUTION_TAG in _tags(cell)
               for output in cell.outputs)
    _assert_figures_shown(code)


@pytest.mark.slow
def test_student_notebook_runs_up_to_the_exercises(built: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """The student notebook runs up to its first exercise and its stubs run; a later cell may fail only for a
    name that a solution would have defined (NameError)."""
    _, student_path, _ = built
    notebook = nbformat.read(student_path, as_version=4)
    _execute(notebook, tmp_path, allow_errors=True)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    first = next(i for i, cell in enumerate(code) if EXERCISE_TAG in _tags(cell))
    assert first > 0
    for i, cell in enumerate(code):
        if i < first or EXERCISE_TAG in _tags(cell):
            assert not _errors(cell), f"code cell {i}: {_errors(cell)}"
        else:
            assert set(_errors(cell)) <= {"NameError"}, f"code cell {i}: {_errors(cell)}"
    _assert_figures_shown([cell for cell in code if not _errors(cell)])
