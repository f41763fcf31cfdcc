"""Formulas written as plain text in the documentation site: ``mu_k``, ``Delta_i^2``, ``max_{k in S}``,
``sqrt(...)`` in a page's prose, outside code and outside the formulas KaTeX typesets.

``plain_formulas(text)`` finds them in a text (the browser test gives it each page's prose as the reader sees it);
run as a script on a built site (``python tests/_plain_math.py SITE_FOLDER``), it counts them page by page."""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

GREEK = ("alpha|beta|gamma|delta|Delta|epsilon|eta|theta|Theta|kappa|lambda|Lambda|mu|nu|xi|pi|rho|sigma|Sigma|tau|"
         "phi|chi|psi|omega|zeta|Upsilon")
#: a subscript (``mu_k``, ``r_S``, ``mu_(m)``, ``x_{t}``), a power (``b^2``, ``10^4``, ``e^{x}``), or a named
#: operator written out (``sqrt``, ``sum_i``, ``max_k``, ``argmax``, ``log(``)
FORMULA = re.compile(
    rf"\b(?:[A-Za-z]|{GREEK})_(?:\{{|\(|[A-Za-z0-9*]\b)"
    r"|\b\w+\^(?:\{|\(|-?\d|[A-Za-z]\b)"
    r"|\b(?:sqrt|sum_|max_|min_|argmax|argmin|log\()"
)
#: elements whose text is not prose: code, typeset or marked formulas, the site's navigation
SKIPPED_TAGS = {"code", "pre", "script", "style", "nav", "header", "footer", "svg", "math", "annotation"}
SKIPPED_CLASSES = ("arithmatex", "katex", "md-sidebar", "headerlink")
#: the same, as a CSS selector, for the browser
SKIPPED_SELECTOR = ", ".join([*sorted(SKIPPED_TAGS), *(f".{name}" for name in SKIPPED_CLASSES)])


def plain_formulas(text: str) -> list[str]:
    """Each plain-text formula of ``text``, with 25 characters of context each side."""
    return [text[max(0, found.start() - 25):found.end() + 25].replace("\n", " ") for found in FORMULA.finditer(text)]


class _Prose(HTMLParser):
    """A page's text outside ``SKIPPED_TAGS`` and ``SKIPPED_CLASSES``."""

    VOID: ClassVar[set[str]] = {"br", "img", "hr", "meta", "link", "input", "wbr", "col", "source", "area", "base"}

    def __init__(self) -> None:
        super().__init__()
        self.open: list[tuple[str, bool]] = []
        self.chunks: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.VOID:
            return
        classes = dict(attrs).get("class") or ""
        self.open.append((tag, tag in SKIPPED_TAGS or any(name in classes for name in SKIPPED_CLASSES)))

    def handle_endtag(self, tag: str) -> None:
        while self.open and self.open.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        if not any(skipped for _, skipped in self.open):
            self.chunks.append(data)


def prose(html: str) -> str:
    """The text of an HTML page outside code, formulas and navigation."""
    parser = _Prose()
    parser.feed(html)
    return " ".join(parser.chunks)


def main(site: Path) -> None:
    rows = []
    for page in sorted(site.rglob("index.html")):
        found = plain_formulas(prose(page.read_text(encoding="utf-8", errors="replace")))
        if found:
            rows.append((len(found), str(page.parent.relative_to(site))))
    for count, name in sorted(rows, reverse=True):
        print(f"{count:5d}  {name}")
    print(f"{sum(count for count, _ in rows)} plain-text formulas on {len(rows)} pages")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
