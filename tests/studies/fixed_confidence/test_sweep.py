"""The fixed-confidence study's delta-sweep (``sweep.py``): its problems and bounds, its cells, its table and goals
by hand, a small sweep end to end, and its ledger rows (``fixed-confidence.8`` to ``.11``) on made-up tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bandit_gym.divergences import kl_bernoulli
from bandit_gym.experiments import stored_cells
from bandit_gym.lower_bounds import best_arm_allocation, confidence_kl, top_m_allocation
from bandit_gym.studies.fixed_confidence import claims, sweep
from bandit_gym.studies.fixed_confidence import reproduce as study


def problem(name: str) -> sweep.Problem:
    return next(p for p in sweep.PROBLEMS if p.name == name)


def test_each_problem_is_normalised_by_its_own_bound() -> None:
    assert [p.name for p in sweep.PROBLEMS] == ["best arm", "epsilon-best arm", "top-2", "thresholding"]
    assert problem("best arm").allocation().time == best_arm_allocation(study.LITERATURE[0].means).time
    assert problem("top-2").allocation().time == top_m_allocation((0.5, 0.45, 0.4, 0.35, 0.3), 2).time
    # thresholding by hand: T* = sum_i 1 / kl(mu_i, theta)
    by_hand = sum(1.0 / float(kl_bernoulli(m, 0.5)) for m in (0.4, 0.45, 0.55, 0.6))
    assert problem("thresholding").allocation().time == pytest.approx(by_hand, rel=1e-12)
    # epsilon-good answers can only make the problem easier than best-arm identification
    assert problem("epsilon-best arm").allocation().time < problem("best arm").allocation().time
    assert problem("top-2").instance == "(0.5, 0.45, 0.4, 0.35, 0.3), m = 2"
    assert sweep.SWEEP_DELTAS == (0.1, 0.01, 1e-3, 1e-4, 1e-6) and sweep.SWEEP_RUNS == 200
    assert study.QUICK.sweep_deltas == (0.1, 1e-3) and study.QUICK.sweep_runs <= 20  # --quick stays quick


def test_glr_rules_run_both_thresholds_and_own_rules_their_stop() -> None:
    cells = sweep.sweep_cells([problem("best arm")], (0.1, 0.01))
    stops = {(c.rule.label, c.threshold) for c in cells}
    assert ("TaS-D", "mixture") in stops and ("TaS-D", "heuristic") in stops and ("KL-LUCB", "own") in stops
    assert len(cells) == 2 * (4 * 2 + 1)  # two deltas, four GLR rules at two thresholds, KL-LUCB at its own
    assert len({c.key for c in cells}) == len(cells)
    # a rule that refuses the problem's m is left out; one that takes it is kept
    top = problem("top-2")
    assert not sweep.accepts(sweep.Rule("EB-TC-eps", "EBTCEpsilon"), top)  # best arm only, as its paper
    assert sweep.accepts(sweep.Rule("LUCB1", "LUCB", own=True), top)
    assert sweep.accepts(sweep.Rule("EB-TC-eps", "EBTCEpsilon"), problem("best arm"))


def fake_cell(name: str, label: str, threshold: str, delta: float) -> sweep.Cell:
    p = problem(name)
    return sweep.Cell(p, next(r for r in p.rules if r.label == label), threshold, delta)


def test_the_frame_by_hand() -> None:
    cell = fake_cell("thresholding", "Racing", "mixture", 0.01)
    pulls = np.array([1000, 2000, 3000, sweep.CAP])
    frame = sweep.sweep_frame([cell], [{"pulls": pulls, "error": np.array([0, 1, 0, 0]), "cpu": np.asarray(1.0)}])
    row = frame.iloc[0]
    star = problem("thresholding").allocation().time
    assert row["lower_bound"] == pytest.approx(star * confidence_kl(0.01))
    assert row["mean_tau"] == pytest.approx(pulls.mean()) and row["capped"] == 1 and row["errors"] == 1
    assert row["ratio"] == pytest.approx(pulls.mean() / row["lower_bound"])
    half = stats.t.ppf(0.975, 3) * pulls.std(ddof=1) / 2.0
    assert row["ratio_ci_high"] == pytest.approx((pulls.mean() + half) / row["lower_bound"])
    assert row["error_rate"] == 0.25 and row["proved"]
    assert row["error_upper"] == pytest.approx(stats.beta.ppf(0.975, 2, 3))  # Clopper-Pearson: Beta(x + 1, n - x)
    table = sweep.sweep_markdown(frame)
    assert "### thresholding: (0.4, 0.45, 0.55, 0.6), threshold = 0.5, Bernoulli, T* = 498.7" in table
    assert f"| Racing | mixture | {row['ratio']:.2f} (1/4 errors, 1 capped) |" in table


def goal_frame(ratios: dict[tuple[str, str, float], float], errors: int = 0) -> pd.DataFrame:
    rows = [{"problem": "best arm", "rule": rule, "threshold": threshold, "delta": delta, "ratio": ratio,
             "ratio_ci_low": ratio - 0.1, "ratio_ci_high": ratio + 0.1, "runs": 200,
             "errors": errors if threshold == "mixture" else 0}
            for (rule, threshold, delta), ratio in ratios.items()]
    frame = pd.DataFrame(rows)
    return frame.assign(error_rate=frame["errors"] / frame["runs"])


def test_the_goals_are_decided_on_the_rows() -> None:
    frame = goal_frame({("TaS-D", "mixture", 0.01): 3.2, ("TaS-D", "heuristic", 0.01): 1.45,
                        ("KL-LUCB", "own", 0.01): 9.0, ("TaS-D", "mixture", 1e-6): 1.49,
                        ("TaS-D", "heuristic", 1e-6): 1.1, ("KL-LUCB", "own", 1e-6): 4.0})
    verdicts = [r["verdict"] for r in sweep.goal_rows(frame)]
    assert verdicts == ["met", "not met", "met", "met"]  # 1.45 <= 1.5; 3.2 > 3; 1.49 <= 1.5; no error
    one = sweep.goal_rows(goal_frame({("TaS-D", "mixture", 1e-6): 1.2}, errors=1))
    assert one[0]["verdict"] == "not run" and one[3]["verdict"] == "not met"  # 1 error in 200 > 1e-6
    text = sweep.goals_markdown(frame)
    assert "within 3x of the bound: **not met** on best arm (0 of 1 met)." in text
    assert "- Every proved rule's error rate at most delta: **met** on every problem." in text


def test_a_small_sweep_writes_its_files_and_its_claims_parse(tmp_path: Path) -> None:
    few = (sweep.Problem("best arm", "BestArmIdentification-v0", (0.5, 0.3, 0.2), (), (sweep.EB_TCI,), "test"),
           sweep.Problem("thresholding", sweep.THRESHOLDING_ENV, (0.2, 0.8), (("threshold", 0.5),),
                         (sweep.Rule("Racing", "ThresholdingRacing"),), "test"))
    report = sweep.run_sweep(tmp_path, runs=6, deltas=(0.1, 0.01), problems=few)
    for name in ("sweep.csv", "sweep.md", "sweep.png"):
        assert (tmp_path / name).stat().st_size > 0
    frame = pd.read_csv(tmp_path / "sweep.csv")
    assert len(frame) == 2 * 2 * 2 and set(frame["runs"]) == {6} and (frame["capped"] == 0).all()
    assert (frame["ratio"] > 1.0).all()  # the bound holds
    np.testing.assert_allclose(frame["ratio"], frame["mean_tau"] / frame["lower_bound"])
    assert report.extras["cpu"] > 0.0
    again = sweep.run_sweep(tmp_path, runs=6, deltas=(0.1, 0.01), problems=few)  # read back from the kept cells
    pd.testing.assert_frame_equal(again.summary, report.summary)
    rows = claims.sweep_claims(frame)
    assert [r.id for r in rows] == [f"fixed-confidence.{n}" for n in (8, 9, 10, 11)]
    assert rows[1].verdict == "untested"  # 6 runs x delta < 5 everywhere, and no error
    # inside stored_cells() (bandit-gym reproduce): the kept cells are counted, a damaged one is played again and
    # reported, and force plays every cell again, with the same numbers
    kept = sorted((tmp_path / "sweep-cells").glob("*/*.npz"))
    assert len(kept) == 8
    kept[0].write_bytes(b"not a cell")
    with stored_cells() as stored:
        damaged = sweep.run_sweep(tmp_path, runs=6, deltas=(0.1, 0.01), problems=few)
    assert stored.reused == 7 and len(stored.damaged) == 1 and str(kept[0]) in stored.damaged[0]
    pd.testing.assert_frame_equal(damaged.summary, report.summary)
    before = {path: path.stat().st_mtime_ns for path in kept}
    with stored_cells(force=True) as stored:
        forced = sweep.run_sweep(tmp_path, runs=6, deltas=(0.1, 0.01), problems=few)
    assert stored.reused == 0 and all(path.stat().st_mtime_ns != before[path] for path in kept)
    pd.testing.assert_frame_equal(forced.summary.drop(columns=["cpu"], errors="ignore"),
                                  report.summary.drop(columns=["cpu"], errors="ignore"))


@pytest.mark.slow
def test_the_quick_sweep(tmp_path: Path) -> None:
    """``--quick``'s sweep: every problem and rule, 10 runs at delta in {0.1, 0.001}."""
    report = sweep.run_sweep(tmp_path, runs=study.QUICK.sweep_runs, deltas=study.QUICK.sweep_deltas)
    frame = report.summary
    assert list(dict.fromkeys(frame["problem"])) == [p.name for p in sweep.PROBLEMS]
    assert set(frame["delta"]) == {0.1, 1e-3} and (frame["capped"] == 0).all() and (frame["ratio"] > 1.0).all()
    assert "## Goals" in (tmp_path / "sweep.md").read_text()
    assert all(r.verdict in ("supported", "consistent", "untested", "inconclusive") for r in claims.sweep_claims(frame))


# ------------------------------------------------------------------------------------------ the ledger rows
def sweep_table(ratios: dict[str, list[float]], se: float = 0.02, errors: int = 0,
                deltas: tuple[float, ...] = (0.1, 0.01, 1e-3)) -> pd.DataFrame:
    """Rows of ``sweep.csv``: per problem, one proved rule with the given ratios and one heuristic rule."""
    rows = []
    for problem_name, series in ratios.items():
        for threshold, scale in (("mixture", 1.0), ("heuristic", 0.5)):
            for delta, ratio in zip(deltas, series, strict=True):
                bound = 1000.0 * confidence_kl(delta)
                rows.append({"problem": problem_name, "instance": "(0.5, 0.4)", "rule": "R", "threshold": threshold,
                             "proved": threshold == "mixture", "delta": delta, "runs": 200,
                             "mean_tau": 1000.0 * ratio * scale * bound / 1000.0,
                             "se_tau": se * bound, "lower_bound": bound, "ratio": ratio * scale,
                             "errors": errors if threshold == "heuristic" else 0,
                             "error_rate": (errors if threshold == "heuristic" else 0) / 200})
    return pd.DataFrame(rows)


def test_a_ratio_falling_at_every_step_is_supported() -> None:
    rows = claims.sweep_claims(sweep_table({"best arm": [6.0, 3.5, 3.0], "thresholding": [4.0, 2.5, 2.0]}))
    trend, proved, heuristic, bound = rows
    assert trend.verdict == "supported" and "R (mixture) on best arm: 6.00, 3.50, 3.00" in trend.observed
    assert proved.verdict == "supported"  # 0 errors in 200 runs at delta = 0.1: p = 0.9^200
    assert proved.p_value == pytest.approx(2 * 0.9**200, rel=1e-6)  # Holm over the two tested cells
    assert heuristic.verdict == "supported" and bound.verdict == "consistent"


def test_a_ratio_that_rises_is_not_supported_and_errors_above_delta_contradict() -> None:
    rows = claims.sweep_claims(sweep_table({"best arm": [6.0, 3.5, 4.5]}, errors=3))
    assert rows[0].verdict == "not supported"
    assert "delta 0.01 to 0.001" in rows[0].why
    heuristic = rows[2]  # 3 errors in 200 runs at delta = 0.001 (and 0.01: 1.5% > 1%), tested
    assert heuristic.verdict == "not supported" and "delta = 0.001" in heuristic.why
    # P(X >= 3) for X ~ Binomial(200, 0.001), times 3 by Holm over the three tested cells
    assert heuristic.p_value == pytest.approx(3 * stats.binom.sf(2, 200, 0.001), rel=1e-6)
