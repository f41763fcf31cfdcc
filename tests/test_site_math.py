"""Typeset math where a reader of the algorithms meets it: on the algorithm reference (its pages and the agents'
docstrings they show) and the claims ledger, every formula is set by the bundled KaTeX, without an error, and none is
left as plain text (``mu_k``, ``Delta_i^2``, ``max_{k in S}``, ``sqrt(...)`` in the prose), checked in a real
headless browser on the built site (the fixtures of ``test_site_browser.py``: skipped without Chromium, unless
``BANDIT_GYM_REQUIRE_BROWSER=1``)."""

from __future__ import annotations

from pathlib import Path

from ._plain_math import SKIPPED_SELECTOR, plain_formulas
from .test_site_browser import browser, served, site  # noqa: F401  (the built, served site and the browser)

#: what a page shows: its formulas set by KaTeX, KaTeX's errors (drawn in red), formulas left unset, and its prose
#: (the article without code, formulas and navigation)
READ = """(skipped) => {
  const article = document.querySelector("article");
  const prose = article.cloneNode(true);
  prose.querySelectorAll(skipped).forEach(element => element.remove());
  return {
    typeset: article.querySelectorAll(".katex").length,
    errors: Array.from(article.querySelectorAll(".katex-error")).map(e => (e.getAttribute("title") || e.textContent)),
    unset: Array.from(article.querySelectorAll(".arithmatex")).filter(e => !e.querySelector(".katex"))
                .map(e => e.textContent.slice(0, 80)),
    prose: prose.textContent,
  };
}"""


def test_the_detector_finds_formulas_written_as_plain_text_and_not_code_names() -> None:
    for formula in ("r_S = max_{k in S} r_k = mu_(m) - min_{k in S} mu_k", "sum_i exp(-lambda_i Delta_i^2 / 10)",
                    "beta_k = b sqrt(a / T_k)", "budgets of 10^4 pulls", "F_i(c_t)"):
        assert plain_formulas(formula), formula
    for prose in ("bandit_gym.metrics.set_simple_regret", "the fixed_confidence setting", "H1 and K = 10",
                  "budget_left", "a 95% interval"):
        assert not plain_formulas(prose), prose


def _pages(built: Path) -> list[str]:
    algorithms = sorted(f"algorithms/{path.parent.name}/" for path in (built / "algorithms").glob("*/index.html"))
    return ["algorithms/", *algorithms, "claims/"]


def test_the_algorithm_reference_and_the_claims_ledger_typeset_every_formula(
        site: Path, served: str, browser: object) -> None:  # noqa: F811  (the fixtures imported above)
    page = browser.new_page(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    page.set_default_timeout(0)  # no wall-clock limit: a busy machine is slow, not wrong
    problems: list[str] = []
    typeset = {}
    for name in _pages(site):
        page.goto(served + name, wait_until="networkidle")
        shown = page.evaluate(READ, SKIPPED_SELECTOR)
        typeset[name] = shown["typeset"]
        problems += [f"{name}: KaTeX error: {error[:120]}" for error in shown["errors"]]
        problems += [f"{name}: formula not typeset: {text!r}" for text in shown["unset"]]
        problems += [f"{name}: formula in plain text: ...{text}..." for text in plain_formulas(shown["prose"])]
    page.close()
    print(f"formulas typeset: {typeset}")
    assert len(typeset) >= 8, typeset  # the index, six families' pages, the ledger
    assert all(count >= 50 for name, count in typeset.items() if name != "algorithms/"), typeset
    assert not problems, problems[:20]
