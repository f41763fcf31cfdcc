"""The README's and the docs' Python blocks run as written, and what they say they print is what they print.

Each page's ```python blocks run in order in one namespace (a reader following the page), in a temporary working
directory. A block preceded by ``<!-- not run: why -->`` is left out (a fragment, or minutes of training); a page
with a test of its own (``tests/test_tutorial.py``, ``tests/test_lab.py``) is run there. A ``print(...)`` line
whose comment follows it is checked: the comment is the printed text, compared by doctest's output checker
(``...`` stands for any text, whitespace runs are equal)."""

from __future__ import annotations

import doctest
import io
import re
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the pages whose blocks run here (the tutorial and the regret lab have tests of their own); the slow ones compile
#: JAX's whole-episode play (``docs/jax.md``, about 20 s) or play a learned policy on 27 arms (``docs/rl.md``, 30 s)
PAGES = ("README.md", "docs/quickstart.md", "docs/index.md", "docs/environments.md", "docs/agents.md",
         "docs/contributing.md", pytest.param("docs/jax.md", marks=pytest.mark.slow), "docs/envs/thresholding.md",
         "docs/api/lower-bounds.md", pytest.param("docs/rl.md", marks=pytest.mark.slow), "docs/rl-reference.md",
         "docs/reproductions/fixed-confidence.md")
#: a fenced block opened by ```python and closed by ``` at the start of a line, with the last line before it that
#: is not blank
BLOCK = re.compile(r"(?:^([^\n]*\S[^\n]*)\n(?:[ \t]*\n)*)?^```python[ \t]*\n(.*?)^```[ \t]*$",
                   re.MULTILINE | re.DOTALL)
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->")
#: a one-line print with its printed text in the comment: indentation, the call, the text
PRINTED = re.compile(r"^(\s*)(print\(.*\))\s+#\s?(.*)$")
CHECKER = doctest.OutputChecker()
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def blocks(page: str) -> list[tuple[str, str | None]]:
    """``(source, why not run or None)`` of every ```python block of the page, in order."""
    found = []
    for before, source in BLOCK.findall((ROOT / page).read_text(encoding="utf-8")):
        skipped = NOT_RUN.search(before or "")
        found.append((source, skipped.group(1) if skipped else None))
    return found


def checked(source: str) -> str:
    """The block with each ``print(...)  # text`` line replaced by the print into a buffer and a check of the
    buffer against the text."""
    lines = []
    for line in source.splitlines():
        match = PRINTED.match(line)
        if match is None:
            lines.append(line)
            continue
        indent, call, want = match.groups()
        lines.append(f"{indent}with _capture() as _printed: {call}")
        lines.append(f"{indent}_expect(_printed.getvalue(), {want!r})")
    return "\n".join(lines) + "\n"


class Capture:
    def __enter__(self) -> io.StringIO:
        self.buffer = io.StringIO()
        self.redirect = redirect_stdout(self.buffer)
        self.redirect.__enter__()
        return self.buffer

    def __exit__(self, *exc: Any) -> None:
        self.redirect.__exit__(*exc)


def expect(got: str, want: str) -> None:
    assert CHECKER.check_output(want + "\n", got, FLAGS), f"printed {got.strip()!r}, the page says {want!r}"


def test_the_checked_prints_are_the_pages_printed_comments() -> None:
    """The transformation itself: a print's comment becomes a check that can fail."""
    namespace: dict[str, Any] = {"_capture": Capture, "_expect": expect}
    exec(checked("x = {'a': 1.0, 'b': [1, 2, 3]}\nprint(x)  # {'a': 1.0, 'b': [...]}\n"), namespace)
    with pytest.raises(AssertionError, match="the page says"):
        exec(checked("print(2 + 2)  # 5\n"), namespace)
    assert blocks("docs/quickstart.md") and all(why is None for _, why in blocks("docs/quickstart.md"))


@pytest.mark.parametrize("page", PAGES)
def test_the_page_s_python_blocks_run_and_print_what_they_say(page: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    found = blocks(page)
    assert found, f"{page} has no ```python block"
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "__main__", "_capture": Capture, "_expect": expect}
    for number, (source, why) in enumerate(found, 1):
        if why is None:
            exec(compile(checked(source), f"{page}, python block {number}", "exec"), namespace)
