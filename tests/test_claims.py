"""The claims ledger: it is rebuilt from the committed results and must equal the committed files; every row is
decided by the one decision procedure with the test its runs call for; its statistics and bounds on hand-computed
cases; its verdicts move when the data do. (The decision procedure itself: tests/studies/test_verdict.py.)"""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bandit_gym.claims import ARTEFACTS, COLUMNS, VERDICTS, Claim, Loss, build_ledger, check_ledger, format_p
from bandit_gym.cli import main
from bandit_gym.studies._stats import exceeds, holm, mcnemar, runs_needed
from bandit_gym.studies.abernethy2016 import claims as ab
from bandit_gym.studies.hoffman2014 import claims as hoffman
from bandit_gym.studies.tao2019 import claims as tao

DOCS = Path(__file__).resolve().parents[1] / "docs"


@functools.cache
def _ledger() -> tuple[list[Claim], list[Loss]]:
    """The ledger of the committed results, built once for the tests that only read it."""
    return build_ledger(DOCS)


def test_committed_ledger_is_what_the_committed_results_give() -> None:
    assert check_ledger(DOCS) == [], "run `bandit-gym claims` and commit docs/claims.md and docs/claims.csv"


def test_every_paper_has_claims_and_every_claim_a_verdict_and_a_test_or_a_reason() -> None:
    claims, _ = _ledger()
    assert {c.paper for c in claims} == set(ARTEFACTS)
    for c in claims:
        assert c.verdict in VERDICTS
        assert c.test and c.correction and c.observed and c.why and c.rule and c.statistic, c.id
        if c.p_value is None:  # no test decides: out of reach, or a claim the data cannot confirm by construction
            assert c.verdict in ("untested", "consistent") and c.correction == "none", c.id
        else:
            assert 0.0 <= c.p_value <= 1.0 and c.correction.startswith("Holm") and c.statistic != "-", c.id
    assert len({c.id for c in claims}) == len(claims)


def test_the_csv_has_the_documented_columns() -> None:
    import csv

    with (DOCS / "claims.csv").open() as f:
        rows = list(csv.reader(f))
    assert tuple(rows[0]) == COLUMNS
    assert {"statistic", "rule"} <= set(COLUMNS) and len(rows) == len(_ledger()[0]) + 1


def test_holm_by_hand() -> None:
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(holm([0.5, 0.001]), [0.5, 0.002])
    np.testing.assert_allclose(holm([0.9, 0.8]), [1.0, 1.0])  # capped at 1
    assert holm([]).size == 0


def test_binomial_exceedance_and_power() -> None:
    assert exceeds(0, 1000, 0.05) == 1.0
    assert exceeds(80, 1000, 0.05) < 1e-4  # 8% observed against a bound of 5%
    assert exceeds(3, 10, 1.2) == 1.0  # a bound above 1 cannot be exceeded
    # a difference of one standard deviation needs about (1.96 + 0.84)^2 = 7.8 paired runs at one test
    assert runs_needed(1.0, 1.0, 1) == pytest.approx(7.85, abs=0.05)
    assert runs_needed(0.0, 1.0, 1) == float("inf")
    assert format_p(1e-320) == "< 1e-300" and format_p(None) == "-" and format_p(0.0312) == "0.031"


def test_a_claim_takes_its_verdict_only_from_a_decision() -> None:
    with pytest.raises(TypeError, match="decide"):
        Claim("x.1", "x", "", "", "", "", "supported")  # type: ignore[arg-type]


def test_hoffman2014s_paired_runs_get_mcnemars_test_on_the_committed_per_run_errors() -> None:
    """Every traffic row is tested with McNemar's exact test; its discordant counts are those of the per-run
    errors in traffic_runs.csv, recounted here."""
    claims, _ = _ledger()
    runs = pd.read_csv(DOCS / ARTEFACTS["hoffman2014"] / "traffic_runs.csv")
    runs = runs[(runs["study"] == hoffman.HEADLINE) & (runs["budget"] == hoffman.BUDGET)]
    table = runs.pivot(index="run", columns="agent", values="error").astype(bool)
    for number in ("1", "2", "2b", "3"):
        row = next(c for c in claims if c.id == f"hoffman2014.{number}")
        assert row.test.startswith("McNemar's exact test") and "(paired:" in row.test, row.id
        label, rest = row.statistic.split(": McNemar: ")
        a, b = label.removesuffix(f" at T = {hoffman.BUDGET}").split(" vs ")
        only_a, only_b = int((table[a] & ~table[b]).sum()), int((table[b] & ~table[a]).sum())
        assert rest.startswith(f"{only_a} runs where only {a} errs, {only_b} where only {b} errs"), row.id
        assert row.p_value is not None and mcnemar(only_a, only_b) <= row.p_value + 1e-12  # Holm only raises it
    for number in ("4", "5", "6"):
        row = next(c for c in claims if c.id == f"hoffman2014.{number}")
        assert row.test.startswith("Wilcoxon signed-rank test") and "(paired:" in row.test, row.id


def test_the_rows_the_audit_named_are_decided_by_the_rules() -> None:
    claims = {c.id: c for c in _ledger()[0]}
    # a bound claim tested one-sided: 0 errors in 1000 runs at delta = 0.1 confirm it
    assert claims["gabillon2012.3"].test.startswith("one-sided exact binomial")
    errors = pd.read_csv(DOCS / ARTEFACTS["gabillon2012"] / "results.csv")
    ugapec = errors[(errors["metric"] == "error") & errors["agent"].str.startswith("UGapEc")]
    if (ugapec["mean"] == 0).all():
        assert claims["gabillon2012.3"].verdict == "supported"
    # T = 20,000 is too short for Theorem 5's regime at every m: untested; the log m half is its own row
    assert claims["abernethy2016.7a"].verdict == "untested" and "abernethy2016.7" not in claims
    assert claims["abernethy2016.7b"].test.startswith("one-sided")
    # the range comparison now has a test and a p-value
    assert claims["tao2019.7"].p_value is not None and claims["tao2019.7"].test.startswith("two-sided normal")


def test_abernethy_bounds_by_hand() -> None:
    f = ab.instance("a", 2)  # fixed gaps: low level best .8 (arm 0), high level best .6 (arm 1)
    np.testing.assert_allclose(f, [[0.8, 0.2], [0.6, 0.6], [0.5, 0.4], [0.4, 0.4]])
    np.testing.assert_allclose(ab.smallest_positive_gap(f), [0.4, 0.2, 0.2, 0.2])
    # Theorem 2: 8 sum_i log T / min_j Delta_i(j) = 8 (2.5 + 5 + 5 + 5) log T
    assert ab.ucb_type_bound(f, 1000, 8.0) == pytest.approx(140.0 * np.log(1000))
    assert ab.ucb_type_bound(ab.instance("a", 32), 1000, 8.0) == pytest.approx(140.0 * np.log(1000))  # no m
    # Theorem 5 on the two-arm staircase at m = 2: one suboptimal (arm, level) per level, gaps .5 and .4
    s = ab.instance("b", 2)
    d = ab.gaps(s)
    expected = sum(128 * d[i].max() * np.log(20000) * np.log(2) / d[d > 0].min() ** 2 for i in range(2)
                   if (d[i] > 0).any())
    assert ab.kmucb_bound(s, 20000) == pytest.approx(expected)


def test_tao2019_theorem1_bound_is_vacuous_at_the_papers_budgets_and_not_far_beyond() -> None:
    means = np.array([0.2, 0.25, 0.3, 0.35, 0.45, 0.55, 0.65, 0.7, 0.75, 0.8])
    small = tao.theorem1_bound(means, 0.5, 1000, 1.35)
    assert small["bound_at_least"] > 10  # more than K misclassified arms: says nothing
    large = tao.theorem1_bound(means, 0.5, 10**8, 1.35)
    assert large["bound_at_least"] < 1e-3 and large["Lambda"] > small["Lambda"]


def _tao_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "tao2019"
    shutil.copytree(DOCS / ARTEFACTS["tao2019"], folder, ignore=shutil.ignore_patterns("*.png"))
    return folder


def test_a_verdict_follows_the_data(tmp_path: Path) -> None:
    """Make APT(.05) significantly better than LSA at one budget of Setup 3: the claim that LSA consistently
    outperforms the others there turns 'not supported', and the loss is listed."""
    folder = _tao_folder(tmp_path)
    tests = pd.read_csv(folder / "ttests.csv")
    target = (tests["experiment"] == "Setup 3") & (tests["reference"] == "LSA") & (tests["agent"] == "APT(.05)") & \
        (tests["metric"] == "aggregate_regret") & (tests["budget"] == tests["budget"].max())
    assert target.sum() == 1
    tests.loc[target, ["mean_difference", "t", "p_value"]] = [-0.5, -40.0, 1e-200]
    tests.to_csv(folder / "ttests.csv", index=False)
    rows, losses = tao.claims(folder)
    setup3 = next(c for c in rows if c.claim.startswith("In Setup 3"))
    assert setup3.verdict == "not supported"
    assert any(x.other == "APT(.05)" and x.setting.startswith("Setup 3") and x.p_value == 1e-200 for x in losses)


def test_cli_check_finds_a_stale_ledger(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "docs"
    for folder in ARTEFACTS.values():
        shutil.copytree(DOCS / folder, docs / folder, ignore=shutil.ignore_patterns("*.png"))
    assert main(["claims", "--docs", str(docs)]) == 0
    assert main(["claims", "--docs", str(docs), "--check"]) == 0
    (docs / "claims.md").write_text((docs / "claims.md").read_text().replace("supported", "proven", 1))
    assert main(["claims", "--docs", str(docs), "--check"]) == 1
    assert "claims.md" in capsys.readouterr().err
    assert main(["claims", "--docs", str(tmp_path / "nothing")]) == 2
    assert "is missing" in capsys.readouterr().err


def test_the_reproduction_pages_quote_the_ledger_rows_as_they_are() -> None:
    """Each reproduction's page quotes its paper's rows of the ledger (no verdicts of its own)."""
    from bandit_gym.claims import summary_table

    claims, _ = _ledger()
    for paper in ARTEFACTS:
        page = (DOCS / "reproductions" / f"{paper}.md").read_text()
        table = "\n".join(summary_table(claims, paper, link="../claims.md"))
        assert table in page, (f"docs/reproductions/{paper}.md's table differs from the ledger: run `bandit-gym "
                               "claims --readme docs/reproductions/*.md`")


def test_refreshing_the_quotes_links_the_ledger_relative_to_each_page(tmp_path: Path) -> None:
    from bandit_gym.claims import write_ledger

    page = tmp_path / "docs" / "reproductions" / "tao2019.md"
    page.parent.mkdir(parents=True)
    page.write_text("<!-- claims:tao2019 -->\n<!-- /claims:tao2019 -->\n")
    written = write_ledger(DOCS, tmp_path / "docs", readme=[page])
    assert page in written and "](../claims.md#tao20191)" in page.read_text()


def test_update_readme_fills_empty_blocks_and_is_idempotent(tmp_path: Path) -> None:
    from bandit_gym.claims import update_readme

    claims, _ = _ledger()
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- claims:abernethy2016 -->\n<!-- /claims:abernethy2016 -->\nend\n")
    assert update_readme(readme, claims)
    text = readme.read_text()
    assert "| [abernethy2016.1](docs/claims.md#abernethy20161) |" in text and text.endswith("end\n")
    assert "\\|\\|" in text  # the claim's '||' stays escaped for Markdown tables
    assert not update_readme(readme, claims)
