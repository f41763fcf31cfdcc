"""The fixed-confidence study's ledger row on GK 2016 Table 1 (``fixed-confidence.7``), decided on made-up tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from bandit_gym.studies.fixed_confidence import claims


def table(means: tuple[float, ...], se: float = 100.0, runs: int = 3000) -> pd.DataFrame:
    papers = (("Track-and-Stop", "GK2016 mu1", 4052.0), ("Track-and-Stop", "GK2016 mu2", 1406.0),
              ("KL-LUCB", "GK2016 mu1", 8437.0), ("KL-LUCB", "GK2016 mu2", 2716.0))
    rows = []
    for (algorithm, instance, paper), mean in zip(papers, means, strict=True):
        sd = se * math.sqrt(runs)
        both = math.sqrt(se**2 + sd**2 / 3000)
        rows.append({"algorithm": algorithm, "instance": instance, "how": f"{algorithm}, as GK ran it",
                     "delta": 0.1, "paper": paper, "paper_runs": 3000, "mean": mean, "se": se, "sd": sd,
                     "runs": runs, "error": 0.0, "z": (mean - paper) / se, "z_both": (mean - paper) / both})
    return pd.DataFrame(rows)


def test_the_paper_s_numbers_within_their_errors_are_consistent() -> None:
    row = claims._table1(table((4100.0, 1380.0, 8150.0, 2750.0)))
    assert row.id == "fixed-confidence.7" and row.source == "Garivier and Kaufmann 2016, §6, Table 1"
    assert row.verdict == "consistent"
    assert "Track-and-Stop 4052 and 1406; KL-LUCB 8437 and 2716" in row.claim
    assert "3000 runs per cell (the paper: 3000)" in row.setting
    # the smallest p: KL-LUCB on mu1, z = -287 / (100 sqrt 2) = -2.03 (p = 0.042), times 4 by Holm over the cells
    assert row.p_value == pytest.approx(4 * 2 * (1 - 0.5 * (1 + math.erf(287 / 200))), rel=1e-6)
    assert "KL-LUCB on GK2016 mu1" in row.statistic


def test_a_number_far_from_the_paper_s_is_not_supported() -> None:
    row = claims._table1(table((4052.0, 1406.0, 9437.0, 2716.0)))  # KL-LUCB on mu1 7.1 standard errors above
    assert row.verdict == "not supported"
    assert row.p_value is not None and row.p_value < 1e-6
    assert "+10.00" in row.observed and "+7.07 with the paper's sampling error" in row.observed
