r"""The claims ledger: every claim of the five papers that the reproductions touch (and of the papers behind the
fixed-confidence study: Garivier and Kaufmann 2016, the Top Two papers, the stopping rules'), with our numbers, a
statistical test, its statistic, a p-value corrected for multiple comparisons, the decision rule and a verdict,
generated from the committed results (``bandit-gym claims``; ``docs/claims.md`` and ``docs/claims.csv``).

Every verdict is decided by one function, ``bandit_gym.studies._verdict.decide``, from a typed description of the
test (``Evidence``: the kind of claim, the test, the comparisons or bound settings with their p-values, effect
directions and power); a paper module describes its tests and never sets a verdict. Verdicts (``VERDICTS``):

- *supported*: the data test the claim and confirm it (a difference significant in the claimed direction
  wherever the claim needs it; a bound or "at most" claim significantly met by one-sided tests);
- *not supported*: the data test the claim and contradict it (a difference significant in the opposite
  direction, a bound significantly violated), or a difference is not significant although the test had a power
  of 0.8 or more to detect the effect it is sized for (evidence against the claimed effect; this needs the paper's
  effect size: with the observed difference standing in, a non-significant test never has that power);
- *inconclusive*: a difference is not significant and the power is low; the row says how many runs would
  decide it;
- *consistent*: what the data cannot confirm by construction, and do not contradict (a lower bound every
  algorithm respects, "no difference" or "no growth", a rate whose constant is not stated);
- *untested*: the experiment does not reach the claim's regime (a bound at or beyond the largest possible value
  at every setting run, a study not run), with the reason.

Tests: paired wherever the runs are paired (common random numbers, the same instance in run \(r\) of every agent):
McNemar's exact test for paired binary outcomes, paired t or Wilcoxon signed-rank tests for paired continuous
ones; Fisher's exact or Welch's test for independent runs; one-sided tests for bounds and "at most" claims
(exact binomial for probabilities, normal for means). Multiple comparisons: each row's p-value is
Holm-corrected over the family of tests that together decide that row's claim (e.g. the budgets and
algorithms of one setup); rows are separate claims and are not corrected against each other. Each row says
what its family is, its decisive statistic and its decision rule.

The ledger is built only from the CSV files a reproduction writes (``results.csv`` and the per-paper extras
named in each module), so anyone can rebuild it from the committed artefacts, and a test checks that the
committed ledger is what the committed results give.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from bandit_gym.studies._ledger import Claim, Loss, read_csv
from bandit_gym.studies._verdict import VERDICTS, Decision

__all__ = ["ARTEFACTS", "COLUMNS", "VERDICTS", "Claim", "Decision", "Loss", "build_ledger", "check_ledger",
           "format_p", "ledger_csv", "ledger_markdown", "papers", "read_csv", "summary_table", "update_readme",
           "write_ledger"]

ARTEFACTS = {"tao2019": "tao2019-5000runs", "gabillon2012": "gabillon2012-1000runs",
             "abernethy2016": "abernethy2016-200runs", "chen2017": "chen2017-200runs",
             "hoffman2014": "hoffman2014-840runs", "fixed-confidence": "fixed-confidence-50runs"}
"""Paper (or study: ``fixed-confidence``) -> the folder (under ``docs/``) of its committed full reproduction."""
COLUMNS = ("id", "paper", "source", "claim", "setting", "observed", "test", "statistic", "correction", "p_value",
           "rule", "verdict", "why")
"""The columns of ``claims.csv``, in order."""


def papers() -> dict[str, Callable[[Path], tuple[list[Claim], list[Loss]]]]:
    """paper -> the function that reads its artefact folder and returns its claims and its algorithm's losses."""
    from bandit_gym.studies.abernethy2016 import claims as abernethy2016
    from bandit_gym.studies.chen2017 import claims as chen2017
    from bandit_gym.studies.fixed_confidence import claims as fixed_confidence
    from bandit_gym.studies.gabillon2012 import claims as gabillon2012
    from bandit_gym.studies.hoffman2014 import claims as hoffman2014
    from bandit_gym.studies.tao2019 import claims as tao2019

    return {"tao2019": tao2019.claims, "gabillon2012": gabillon2012.claims, "abernethy2016": abernethy2016.claims,
            "chen2017": chen2017.claims, "hoffman2014": hoffman2014.claims,
            "fixed-confidence": fixed_confidence.claims}


def build_ledger(docs: str | Path) -> tuple[list[Claim], list[Loss]]:
    """Every paper's claims and losses, from the artefact folders under ``docs`` (``ARTEFACTS``)."""
    docs = Path(docs)
    claims: list[Claim] = []
    losses: list[Loss] = []
    for paper, build in papers().items():
        folder = docs / ARTEFACTS[paper]
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder} is missing: run `bandit-gym reproduce {paper} --out {folder}` first")
        try:
            rows, lost = build(folder)
        except (KeyError, IndexError, ValueError, TypeError, AttributeError) as error:  # a file of other columns
            what = f"missing column {error}" if isinstance(error, KeyError) else f"{type(error).__name__}: {error}"
            raise ValueError(f"{folder} does not hold the results of `bandit-gym reproduce {paper}` ({what}); "
                             f"run `bandit-gym reproduce {paper} --out {folder}` again") from error
        claims += rows
        losses += lost
    return claims, losses


def format_p(p: float | None) -> str:
    """A p-value as the ledger prints it: two significant digits, ``< 1e-300`` at the floor, ``-`` for none."""
    if p is None:
        return "-"
    if p < 1e-300:
        return "< 1e-300"
    return f"{p:.2g}"


def ledger_csv(claims: Iterable[Claim]) -> str:
    """``claims.csv``: one row per claim, the columns of ``COLUMNS`` (p-values as printed)."""
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for claim in claims:
        writer.writerow([format_p(claim.p_value) if c == "p_value" else getattr(claim, c) for c in COLUMNS])
    return buffer.getvalue()


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


_LEDGER_VERDICTS = (
    "Every verdict is decided by one procedure (`bandit_gym.studies._verdict.decide`) from the row's tests: "
    "**supported**: the data test the claim and confirm it (significant in the claimed direction wherever the "
    "claim needs it; a bound or \"at most\" claim met by significant one-sided tests); **not supported**: "
    "the data test the claim and contradict it (significant in the opposite direction, a bound significantly "
    r"violated), or a difference is not significant although the test had power \(\ge 0.8\) to detect the effect "
    "it is sized for (evidence against that effect); **inconclusive**: not significant with low power (the "
    "row gives the runs that would decide it); **consistent**: what the data cannot confirm by construction "
    "and do not contradict (a lower bound every algorithm respects, no difference, a rate without its "
    "constant); **untested**: the experiment does not reach the claim's regime (the reason is given).")
"""The ledger's fixed paragraph on the verdicts (``claims.md``, after the counts)."""
_LEDGER_TESTS = (
    r"Tests are paired wherever the runs are paired (common random numbers, the same instance in run \(r\) of "
    "every agent: McNemar's exact test, paired t or Wilcoxon tests), one-sided for bounds. Power and runs "
    "needed are normal approximations at Holm's strictest level, for the paper's effect where it states one "
    "and for the observed difference otherwise. p-values are Holm-corrected within each claim, over the "
    "family of tests that together decide it (the row names the family); claims are separate statements "
    "and are not corrected against each other. Each row shows its test, the decisive statistic and the "
    "decision rule.")
"""The ledger's fixed paragraph on the tests (``claims.md``, after the verdicts)."""


def _ledger_header(claims: list[Claim]) -> list[str]:
    """The head of ``claims.md``: the title, the verdict counts, then ``_LEDGER_VERDICTS`` and ``_LEDGER_TESTS``."""
    counts = {v: sum(c.verdict == v for c in claims) for v in VERDICTS}
    return [
        "# Claims ledger",
        "",
        "Generated by `bandit-gym claims` from the committed results of `bandit-gym reproduce PAPER` (the folders "
        "`docs/<paper>-<runs>runs/`); do not edit by hand. "
        + ", ".join(f"{n} {v}" for v, n in counts.items()) + f" ({len(claims)} claims).",
        "",
        _LEDGER_VERDICTS,
        "",
        _LEDGER_TESTS,
        "",
    ]


def _claim_lines(c: Claim) -> list[str]:
    """One claim in full: its heading, the claim quoted, then its fields."""
    return [f"### {c.id}", "",
            f"> {c.claim}", "",
            f"- **source**: {c.source}",
            f"- **setting**: {c.setting}",
            f"- **observed**: {c.observed}",
            f"- **test**: {c.test}",
            f"- **statistic**: {c.statistic}",
            f"- **correction**: {c.correction}",
            f"- **p (Holm)**: {format_p(c.p_value)}",
            f"- **decision rule**: {c.rule}",
            f"- **verdict**: **{c.verdict}**. {c.why}", ""]


def _loss_lines(paper: str, lost: list[Loss]) -> list[str]:
    """The table of every significant loss of the paper's algorithms (or a sentence saying there is none)."""
    if not lost:
        return [rf"No test found the paper's algorithm significantly worse than another (\(p < 0.05\) before "
                f"correction) in {paper}'s results.", ""]
    algorithms = ", ".join(dict.fromkeys(loss.algorithm for loss in lost))
    lines = [f"### Every significant loss of the paper's algorithms ({paper}: {algorithms})", "",
             r"Every test in which the paper's algorithm did significantly worse than another at \(p < 0.05\) "
             "before correction; `p (Holm)` is corrected over the family named in the last column.", "",
             "| algorithm | against | setting | metric | difference | p | p (Holm) | family |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {x.algorithm} | {x.other} | {x.setting} | {x.metric} | {x.difference} | "
              f"{format_p(x.p_value)} | {format_p(x.p_holm)} | {x.family} |" for x in lost]
    lines.append("")
    return lines


def _paper_lines(paper: str, rows: list[Claim], losses: list[Loss]) -> list[str]:
    """One paper's section of ``claims.md``: where its results are, its summary table, each claim in full and its
    algorithms' significant losses."""
    lines = [f"## {paper}", "", f"Results: `docs/{ARTEFACTS[paper]}/`, shown in [the reproduction's page]"
                                f"(reproductions/{paper}.md).", ""]
    lines += [*summary_table(rows, paper), ""]
    for c in rows:
        lines += _claim_lines(c)
    return lines + _loss_lines(paper, [loss for loss in losses if loss.paper == paper])


def ledger_markdown(claims: list[Claim], losses: list[Loss]) -> str:
    """``claims.md``: per paper, a table of its claims with their verdicts, then each claim in full, then every
    significant loss of the paper's algorithm."""
    lines = _ledger_header(claims)
    for paper in ARTEFACTS:
        rows = [c for c in claims if c.paper == paper]
        if rows:
            lines += _paper_lines(paper, rows, losses)
    return "\n".join(lines)


def summary_table(claims: Iterable[Claim], paper: str, link: str = "") -> list[str]:
    """The Markdown table of one paper's claims (id, claim, verdict, corrected p), ids linking to ``link#id``:
    the table ``claims.md`` opens each paper with (``link=""``) and the README quotes (``docs/claims.md``)."""
    lines = ["| id | claim | verdict | p (Holm) |", "|---|---|---|---|"]
    lines += [f"| [{c.id}]({link}#{c.id.replace('.', '').lower()}) | {_cell(c.claim)} | **{c.verdict}** | "
              f"{format_p(c.p_value)} |" for c in claims if c.paper == paper]
    return lines


def update_readme(readme: str | Path, claims: list[Claim], ledger: str | Path | None = None) -> bool:
    """Rewrite the blocks between ``<!-- claims:PAPER -->`` and ``<!-- /claims:PAPER -->`` in the Markdown file
    ``readme`` (the README, a reproduction's page) with the paper's ``summary_table``, linking to the
    ledger ``ledger`` by a path relative to the file (without ``ledger``: ``docs/claims.md``); returns whether
    the file changed."""
    import os
    import re

    path = Path(readme)
    link = "docs/claims.md" if ledger is None else os.path.relpath(Path(ledger), path.resolve().parent)
    text = path.read_text()
    new = text
    for paper in ARTEFACTS:
        table = "\n".join(summary_table(claims, paper, link=Path(link).as_posix()))
        start, end = f"<!-- claims:{paper} -->", f"<!-- /claims:{paper} -->"
        block = f"{start}\n{table}\n{end}".replace("\\", "\\\\")
        new = re.sub(re.escape(start) + ".*?" + re.escape(end), block, new, flags=re.S)
    if new != text:
        path.write_text(new)
    return new != text


def write_ledger(docs: str | Path, out: str | Path | None = None,
                 readme: str | Path | Sequence[str | Path] | None = None) -> list[Path]:
    """Build the ledger from ``docs`` and write ``claims.md`` and ``claims.csv`` to ``out`` (default ``docs``),
    and, with ``readme`` (one Markdown file or several), refresh the tables they quote (``update_readme``)."""
    claims, losses = build_ledger(docs)
    out = Path(out) if out is not None else Path(docs)
    out.mkdir(parents=True, exist_ok=True)
    (out / "claims.md").write_text(ledger_markdown(claims, losses))
    (out / "claims.csv").write_text(ledger_csv(claims))
    written = [out / "claims.md", out / "claims.csv"]
    pages = [] if readme is None else [readme] if isinstance(readme, (str, Path)) else list(readme)
    for page in pages:
        if update_readme(page, claims, ledger=(out / "claims.md").resolve()):
            written.append(Path(page))
    return written


def check_ledger(docs: str | Path) -> list[str]:
    """The files under ``docs`` that differ from what the committed results give (empty: the ledger is current)."""
    claims, losses = build_ledger(docs)
    expected = {"claims.md": ledger_markdown(claims, losses), "claims.csv": ledger_csv(claims)}
    return [name for name, text in expected.items()
            if not (Path(docs) / name).exists() or (Path(docs) / name).read_text() != text]


