"""Teaching notebooks from a tutorial-style markdown doc: a student notebook and a solutions notebook.

The doc follows the conventions of ``docs/tutorial.md``: code runs top to bottom in ```` ```python ```` blocks,
exercises are ``### Exercise N: ...`` headings, and each solution is folded in

.. code-block:: html

    <details><summary>Solution</summary>

    ```python
    ...
    ```

    prose

    </details>

Opened with jupytext as it is, such a doc unfolds every solution into ordinary cells (jupytext reads the
``<details>`` tags as markdown text and splits them across the cells around the code). ``build_notebooks``
first rewrites each solution in jupytext's own cell markup (```` ```python tags=["solution"] ```` for its code,
``<!-- #region tags=["solution"] -->`` for its prose) with an exercise stub tagged ``"exercise"`` before it, reads
the result with jupytext and writes two notebooks with nbformat:

- the **student** notebook, ``STEM.ipynb``: every cell but the solutions, which are absent (not collapsed), each
  replaced by its stub (``# Exercise N: your code here``), and but the teachers' parts;
- the **solutions** notebook, ``STEM-solutions.ipynb``: every cell, the solutions as ordinary cells tagged
  ``"solution"``, no stubs.

A teachers' part (how to build the notebooks, what to hand out) sits between the lines ``<!-- teacher -->`` and
``<!-- /teacher -->``: the docs site shows it as ordinary text (the markers are HTML comments), the solutions
notebook keeps it as cells tagged ``"teacher"``, the student notebook leaves it out.

Local pictures (``![alt](path)`` relative to the doc, in its folder or below it) are embedded as cell
attachments, so that a notebook is one self-contained file; a local image path outside the doc's folder (``..``
that leaves it, an absolute path, a link out of it) or to a file that is not a picture is refused, so that no
other file of the machine ends up in a notebook. Both notebooks use the ``python3`` kernel.
"""

from __future__ import annotations

import base64
import json
import mimetypes
import re
from collections.abc import Iterable
from pathlib import Path

try:
    import jupytext
    import nbformat
except ImportError as error:  # neither is a dependency of the package
    raise ImportError(f"bandit_gym.notebooks needs jupytext and nbformat ({error.name} is missing): "
                      "pip install 'pure-exploration-gym[teach]'") from error

__all__ = ["EXERCISE_TAG", "SOLUTION_TAG", "TEACHER_TAG", "build_all", "build_notebooks", "mark_solutions",
           "read_tutorial", "solutions_notebook", "student_notebook"]

SOLUTION_TAG = "solution"
"""The cell tag of a solution cell (dropped from the student notebook)."""
EXERCISE_TAG = "exercise"
"""The cell tag of an exercise cell (the student's to fill in)."""
TEACHER_TAG = "teacher"
"""The cell tag of a teachers' part (dropped from the student notebook)."""

SOLUTION_START = r"^[ \t]*<details>\s*<summary>\s*Solution\s*</summary>"
"""A folded solution: ``<details><summary>Solution</summary> ... </details>``, the tags at the start of a line (an
HTML block; a mention of the tags in running text is not a solution).
"""
SOLUTION = re.compile(SOLUTION_START + r"(.*?)^[ \t]*</details>", re.DOTALL | re.MULTILINE)
TEACHER_START = r"^[ \t]*<!--[ \t]*teacher[ \t]*-->[ \t]*$"
"""The line that opens a teachers' part, closed by the line ``<!-- /teacher -->`` (HTML comments: the docs site
shows the part as ordinary text)."""
TEACHER = re.compile(TEACHER_START + r"\n(.*?)^[ \t]*<!--[ \t]*/teacher[ \t]*-->[ \t]*$", re.DOTALL | re.MULTILINE)
PYTHON_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
"""A fenced block opened by ```python (nothing else on the line) and closed by ``` at the start of a line."""
FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)\n.*?^(?P=fence)[ \t]*$", re.DOTALL | re.MULTILINE)
"""Any fenced block (```python ones included), to keep the others out of the code cells."""
EXERCISE = re.compile(r"^#{2,4}[ \t]+(Exercise[ \t]+[^\s:.]+)", re.MULTILINE)
"""An exercise heading, ``### Exercise 2: ...``; group 1 is ``Exercise 2``."""
IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)((?:\s+\"[^\"]*\")?)\)")
"""A markdown image ``![alt](path)`` or ``![alt](path "title")``."""

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def _tags(*tags: str) -> str:
    return "tags=" + json.dumps(list(tags))


def _region(markdown: str, tag: str) -> str:
    return f"<!-- #region {_tags(tag)} -->\n{markdown.strip()}\n<!-- #endregion -->"


def _stub(exercise: str | None, has_code: bool) -> str:
    name = exercise or "Exercise"
    if has_code:
        return f"```python {_tags(EXERCISE_TAG)}\n# {name}: your code here\n```"
    return _region(f"*{name}: your answer here.*", EXERCISE_TAG)


def _display_only(markdown: str) -> str:
    """Fenced blocks other than ```` ```python ```` in markdown regions: jupytext would make a ```` ```bash ````
    block a ``%%bash`` code cell (and run its ``pip install`` with the notebook); in the doc it is only shown."""

    def region(block: re.Match[str]) -> str:
        if block.group("info").strip() == "python":
            return block.group(0)
        return f"<!-- #region -->\n{block.group(0)}\n<!-- #endregion -->"

    return FENCE.sub(region, markdown)


def _cells(body: str, tag: str) -> list[str]:
    """``body`` in jupytext's markup: its ```` ```python ```` blocks as code cells and the prose around them as
    markdown regions, every cell tagged ``tag``."""
    parts = []
    start = 0
    for block in PYTHON_BLOCK.finditer(body):
        if body[start:block.start()].strip():
            parts.append(_region(body[start:block.start()], tag))
        parts.append(f"```python {_tags(tag)}\n{block.group(1)}```")
        start = block.end()
    if body[start:].strip():
        parts.append(_region(body[start:], tag))
    return parts


def _solution(body: str) -> str:
    """A solution's body in jupytext's markup: its code cells and its prose regions tagged ``"solution"``."""
    return "\n\n".join([_region("**Solution**", SOLUTION_TAG), *_cells(body, SOLUTION_TAG)])


def mark_solutions(text: str) -> str:
    """The doc's markdown with every folded solution and every teachers' part rewritten in jupytext's cell markup.

    Each ``<details><summary>Solution</summary> ... </details>`` becomes: a stub tagged ``"exercise"`` (a code
    cell ``# Exercise N: your code here`` for the nearest ``### Exercise N`` heading above it, or a markdown cell
    if the solution holds no ```` ```python ```` block), a ``**Solution**`` markdown cell, then the solution's
    code and prose as cells, all tagged ``"solution"``. Each part between the lines ``<!-- teacher -->`` and
    ``<!-- /teacher -->`` (how to build and hand out the notebooks: shown on the docs site, not to students)
    becomes cells tagged ``"teacher"``. Elsewhere, fenced blocks other than ```` ```python ```` (shell commands,
    output) are put in markdown regions, so that they stay text; the rest is unchanged.
    """
    if len(SOLUTION.findall(text)) < len(re.findall(SOLUTION_START, text, re.MULTILINE)):
        raise ValueError("a <details><summary>Solution</summary> block is not closed by </details>")
    if len(TEACHER.findall(text)) < len(re.findall(TEACHER_START, text, re.MULTILINE)):
        raise ValueError("a <!-- teacher --> part is not closed by <!-- /teacher -->")
    blocks = sorted([*SOLUTION.finditer(text), *TEACHER.finditer(text)], key=lambda match: match.start())
    out, start = [], 0
    for block in blocks:
        if block.start() < start:
            raise ValueError("a solution and a <!-- teacher --> part overlap; close one before opening the other")
        body = block.group(1)
        out += [_display_only(text[start:block.start()].lstrip("\n").rstrip()), "\n\n"]
        if block.re is TEACHER:
            out += ["\n\n".join(_cells(body, TEACHER_TAG)), "\n\n"]
        else:
            headings = EXERCISE.findall(text, 0, block.start())
            out += [_stub(headings[-1] if headings else None, bool(PYTHON_BLOCK.search(body))), "\n\n",
                    _solution(body), "\n\n"]
        start = block.end()
    out.append(_display_only(text[start:].lstrip("\n")))
    return "".join(out)


def _embed_images(cell: nbformat.NotebookNode, folder: Path) -> None:
    """Replace the local pictures of a markdown cell by attachments (``attachment:NAME``)."""
    attachments = {}

    def attach(image: re.Match[str]) -> str:
        alt, path, title = image.groups()
        file = folder / path
        if path.startswith(("http://", "https://", "data:", "attachment:")) or not (
                path.startswith("/") or file.is_file()):
            return image.group(0)
        inside = not path.startswith("/") and file.resolve().is_relative_to(folder.resolve())
        mime = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        if not inside or not mime.startswith("image/"):
            why = "lies outside the doc's folder" if not inside else f"is not a picture ({mime})"
            raise ValueError(f"image ![{alt}]({path}) of a doc in {folder} {why}; only pictures in the doc's folder "
                             "or below it are embedded in the notebooks")
        name = path.replace("/", "_")
        attachments[name] = {mime: base64.b64encode(file.read_bytes()).decode("ascii")}
        return f"![{alt}](attachment:{name}{title})"

    cell.source = IMAGE.sub(attach, cell.source)
    if attachments:
        cell["attachments"] = attachments


def read_tutorial(markdown_path: str | Path, *, embed_images: bool = True) -> nbformat.NotebookNode:
    """The doc as one notebook: every cell, each exercise's stub (tagged ``"exercise"``) before its solution's
    cells (tagged ``"solution"``). ``student_notebook`` and ``solutions_notebook`` select from it."""
    path = Path(markdown_path)
    if path.suffix.lower() != ".md":
        raise ValueError(f"markdown_path={str(path)!r}: expected a markdown doc (.md)")
    try:
        marked = mark_solutions(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    notebook = jupytext.reads(marked, fmt="md")
    notebook.metadata = nbformat.from_dict({"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}})
    for cell in notebook.cells:
        cell.metadata.pop("lines_to_next_cell", None)  # jupytext's hint for writing the text back
        if cell.cell_type == "markdown" and embed_images:
            _embed_images(cell, path.parent)
    return notebook


def _without(notebook: nbformat.NotebookNode, tag: str) -> nbformat.NotebookNode:
    selected = nbformat.from_dict(notebook)  # a deep copy
    selected.cells = [cell for cell in selected.cells if tag not in cell.metadata.get("tags", ())]
    return selected


def student_notebook(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook without the cells tagged ``"solution"`` or ``"teacher"``: the exercises' stubs stay."""
    return _without(_without(notebook, SOLUTION_TAG), TEACHER_TAG)


def solutions_notebook(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook without the exercises' stubs (tagged ``"exercise"``): every solution as ordinary cells."""
    return _without(notebook, EXERCISE_TAG)


def build_notebooks(markdown_path: str | Path, out_dir: str | Path, *,
                    embed_images: bool = True) -> tuple[Path, Path]:
    """Write the student notebook ``out_dir/STEM.ipynb`` and the solutions notebook
    ``out_dir/STEM-solutions.ipynb`` of a tutorial-style markdown doc (STEM: the doc's name without ``.md``).

    The student notebook has no solution (code or prose): each ``<details><summary>Solution</summary>`` block
    is replaced by a stub cell tagged ``"exercise"``. The solutions notebook has every cell of the doc, the
    solutions' cells tagged ``"solution"``. Neither is executed here. Returns ``(student, solutions)``.
    """
    path = Path(markdown_path)
    if not path.is_file():
        raise FileNotFoundError(f"markdown_path={str(path)!r} is not a file")
    notebook = read_tutorial(path, embed_images=embed_images)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, selected in ((f"{path.stem}.ipynb", student_notebook(notebook)),
                           (f"{path.stem}-solutions.ipynb", solutions_notebook(notebook))):
        nbformat.validate(selected)
        nbformat.write(selected, out / name)
        written.append(out / name)
    return written[0], written[1]


def build_all(markdown_paths: Iterable[str | Path], out_dir: str | Path, *,
              embed_images: bool = True) -> list[tuple[Path, Path]]:
    """``build_notebooks`` for several docs into one folder; their names (without ``.md``) must differ."""
    paths = [Path(p) for p in markdown_paths]
    stems = [p.stem for p in paths]
    clashes = sorted({stem for stem in stems if stems.count(stem) > 1})
    if clashes:
        raise ValueError(f"markdown_paths: two docs named {', '.join(clashes)} would write the same notebooks")
    return [build_notebooks(p, out_dir, embed_images=embed_images) for p in paths]
