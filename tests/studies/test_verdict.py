"""The ledger's one decision procedure (``bandit_gym.studies._verdict.decide``) on constructed cases: each rule of
its docstring, the exact tests it is fed (McNemar, one-sided binomial), Holm's correction and the power
threshold. Every expected value is computed by hand or by scipy independently of the code under test."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from bandit_gym.studies._compare import binomial_bound, normal_bound, paired_binary
from bandit_gym.studies._stats import (
    ALPHA,
    below,
    binomial_runs_needed,
    exceeds,
    holm,
    mcnemar,
    power,
    runs_needed,
)
from bandit_gym.studies._verdict import (
    ALL,
    ALMOST_ALL,
    ALMOST_ALL_NONE_LOST,
    ANY,
    MOST,
    Comparison,
    Decision,
    Evidence,
    Group,
    Kind,
    Method,
    decide,
)

PAIRED = Method("a paired test", paired=True, runs_paired=True, design="constructed")
UNPAIRED = Method("an unpaired test", paired=False, runs_paired=False, design="constructed")
BOUND_TEST = Method("one-sided binomial tests", paired=False, runs_paired=False, design="constructed")


def _c(p: float, effect: float, sd: float = 1.0, runs: int = 100, target: float | None = None,
       label: str = "c", reach: str = "") -> Comparison:
    return Comparison(label, p, effect, sd, runs, "constructed", target, reach)


def _direction(*members: Comparison | Group, reading: object = ALL) -> Decision:
    return decide(Evidence(Kind.DIRECTION, PAIRED, Group("tests", members, reading)))  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------ the exact tests
def test_mcnemar_on_a_small_table_by_hand() -> None:
    # 1 run where only A errs, 9 where only B errs: two-sided exact p = 2 (C(10,0) + C(10,1)) / 2^10 = 22 / 1024
    assert mcnemar(1, 9) == pytest.approx(22 / 1024, rel=1e-12)
    assert mcnemar(1, 9) == pytest.approx(stats.binomtest(1, 10, 0.5).pvalue, rel=1e-12)
    assert mcnemar(9, 1) == mcnemar(1, 9)  # symmetric
    assert mcnemar(0, 0) == 1.0  # no discordant pair: no evidence
    with pytest.raises(ValueError, match="only_a"):
        mcnemar(-1, 3)


def test_paired_binary_counts_only_the_discordant_runs() -> None:
    # 20 runs: 6 both err, 4 neither, 1 only the better-claimed agent, 9 only the other
    better = np.array([1] * 6 + [0] * 4 + [1] * 1 + [0] * 9)
    worse = np.array([1] * 6 + [0] * 4 + [0] * 1 + [1] * 9)
    c = paired_binary("A vs B", "A", "B", better, worse)
    assert c.p == pytest.approx(22 / 1024, rel=1e-12)
    assert c.effect == pytest.approx((9 - 1) / 20)  # error rate of B minus A's: 15/20 - 7/20
    assert c.sd == pytest.approx(math.sqrt(10 / 20))  # the discordant share
    assert "1 runs where only A errs, 9 where only B errs" in c.statistic
    # the unpaired test on the same counts (7/20 against 15/20) is much weaker: pairing matters
    assert stats.fisher_exact([[7, 13], [15, 5]]).pvalue > c.p


def test_one_sided_binomial_bound_tests() -> None:
    assert below(0, 1000, 0.1) == pytest.approx(0.9**1000, rel=1e-9)  # 0 errors in 1000 runs at delta = 0.1
    assert below(0, 1000, 0.1) == pytest.approx(stats.binomtest(0, 1000, 0.1, alternative="less").pvalue)
    assert exceeds(0, 1000, 0.1) == 1.0
    assert exceeds(150, 1000, 0.1) == pytest.approx(stats.binomtest(150, 1000, 0.1, alternative="greater").pvalue)
    assert exceeds(150, 1000, 0.1) < 1e-6 and below(150, 1000, 0.1) > 0.99


def test_holm_by_hand() -> None:
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(holm([0.02, 0.02]), [0.04, 0.04])
    np.testing.assert_allclose(holm([0.9, 0.8]), [1.0, 1.0])


def test_power_and_runs_needed_agree() -> None:
    # one run's sd 1, effect 0.1 at one test: z = 1.96, power = Phi(0.1 sqrt(n) - 1.96) + Phi(-0.1 sqrt(n) - 1.96)
    n = 400
    expected = stats.norm.cdf(0.1 * 20 - 1.959964) + stats.norm.cdf(-0.1 * 20 - 1.959964)
    assert power(0.1, 1.0, n, 1) == pytest.approx(expected, rel=1e-5)
    needed = runs_needed(0.1, 1.0, 3)
    assert power(0.1, 1.0, needed, 3) == pytest.approx(0.8, abs=1e-3)  # the runs needed give 80% power
    assert runs_needed(0.1, 1.0, 1) == pytest.approx(((1.959964 + 0.841621) / 0.1) ** 2, rel=1e-5)


def test_the_runs_a_binomial_bound_needs_are_the_exact_test_s() -> None:
    """At 0 failures the exact one-sided test rejects once (1 - bound)^n <= ALPHA / family: 64 runs against 0.1
    over 42 cells (the normal approximation said about 135); at a positive rate, the found n rejects with at least
    80% power by the exact binomial law and n - 1 does not reach it (checked with scipy's binomtest)."""
    assert binomial_runs_needed(0.0, 0.1, 42) == 64 and 0.9**64 <= ALPHA / 42 < 0.9**63
    assert runs_needed(0.1, (0.1 * 0.9) ** 0.5, 42, sides=1) > 2 * 64
    n = int(binomial_runs_needed(0.02, 0.1, 5))

    def exact_power(runs: int) -> float:
        rejecting = [k for k in range(runs + 1) if below(k, runs, 0.1) <= ALPHA / 5]
        return float(stats.binom.cdf(max(rejecting), runs, 0.02)) if rejecting else 0.0
    assert exact_power(n) >= 0.8 > exact_power(n - 1)
    assert binomial_runs_needed(0.1, 0.1, 1) == float("inf") and binomial_runs_needed(0.2, 0.1, 1) == float("inf")
    # a counted bound's verdict names the exact count
    d = decide(Evidence(Kind.AT_MOST, BOUND_TEST, bounds=(binomial_bound("cell", 0, 20, 0.1),)))
    assert d.verdict == "inconclusive" and "would need about 29 runs (it has 20)" in d.why


# ------------------------------------------------------------------------------------------------ direction
def test_a_significant_difference_in_the_claimed_direction_is_supported() -> None:
    d = _direction(_c(1e-5, 0.3), _c(1e-4, 0.2))
    assert d.verdict == "supported"
    assert d.p_value == pytest.approx(1e-4)  # Holm: 2 x 1e-5 and 1 x 1e-4; the claim needs both: the larger
    assert "Holm" not in d.statistic and d.correction.startswith("Holm over the 2 tests")


def test_holm_decides_not_the_raw_p_value() -> None:
    assert _direction(_c(0.03, 0.2)).verdict == "supported"  # alone: 0.03 < 0.05
    # with a second test at 0.04 both become 0.06 after Holm: no longer significant
    d = _direction(_c(0.03, 0.2), _c(0.04, 0.2))
    assert d.verdict == "inconclusive" and d.p_value == pytest.approx(0.06)


def test_a_significant_contradiction_is_not_supported() -> None:
    d = _direction(_c(1e-8, -0.4, label="B better"), _c(1e-3, 0.2))
    assert d.verdict == "not supported"
    assert d.p_value == pytest.approx(2e-8) and "B better" in d.why


def test_a_non_significant_difference_with_low_power_is_inconclusive_and_says_what_would_decide_it() -> None:
    # the paper's effect 0.1 with sd 1 and 100 runs: power about 0.17
    c = _c(0.4, 0.05, sd=1.0, runs=100, target=0.1, label="A vs B")
    assert power(0.1, 1.0, 100, 1) < 0.8
    d = _direction(c)
    assert d.verdict == "inconclusive"
    assert f"about {runs_needed(0.1, 1.0, 1):.2g} runs" in d.why and "the paper's effect 0.1" in d.why


def test_a_non_significant_difference_with_high_power_is_not_supported() -> None:
    # the paper's effect 0.1 with sd 1 and 10,000 runs: power about 1; the observed 0.01 is not significant
    d = _direction(_c(0.3, 0.01, sd=1.0, runs=10_000, target=0.1, label="A vs B"))
    assert d.verdict == "not supported"
    assert "power 1.00" in d.why and "evidence against the claimed effect" in d.why


def test_the_power_threshold_is_0_8() -> None:
    target, sd = 0.1, 1.0
    n80 = runs_needed(target, sd, 1)  # 80% power
    above = _direction(_c(0.5, 0.0, sd, math.ceil(n80 * 1.1), target))
    under = _direction(_c(0.5, 0.0, sd, math.floor(n80 * 0.9), target))
    assert above.verdict == "not supported" and under.verdict == "inconclusive"


def test_without_the_papers_effect_a_non_significant_result_stays_inconclusive() -> None:
    # the observed difference stands in: a non-significant test has less than 1/2 power to detect it
    d = _direction(_c(0.2, 0.01, sd=1.0, runs=10_000))
    assert d.verdict == "inconclusive" and "the paper states no effect size" in d.why


def test_readings_of_quantified_claims() -> None:
    won, lost, open_ = _c(1e-9, 0.5), _c(1e-9, -0.5), _c(0.9, 0.01)
    assert _direction(*[won] * 9, open_, reading=ALMOST_ALL).verdict == "supported"  # 9 of 10 >= 90%
    assert _direction(*[won] * 8, open_, open_, reading=ALMOST_ALL).verdict == "inconclusive"  # 10 could be 90%
    assert _direction(*[won] * 8, lost, lost, reading=ALMOST_ALL).verdict == "not supported"  # at most 80%
    assert _direction(*[won] * 9, lost, reading=ALMOST_ALL).verdict == "supported"  # one loss is allowed ...
    assert _direction(*[won] * 9, lost, reading=ALMOST_ALL_NONE_LOST).verdict == "not supported"  # ... or not
    assert _direction(won, open_, open_, reading=MOST).verdict == "inconclusive"
    assert _direction(won, won, open_, reading=MOST).verdict == "supported"
    assert _direction(open_, won, reading=ANY).verdict == "supported"


def test_nested_groups_decide_bottom_up() -> None:
    panel_won = Group("budgets", (_c(1e-9, 0.5), _c(0.9, 0.0)), ANY)  # a significant win, no loss
    panel_mixed = Group("budgets", (_c(1e-9, 0.5), _c(1e-9, -0.5)), ANY)  # a win and a loss
    assert _direction(panel_won, panel_won).verdict == "supported"
    assert _direction(panel_won, panel_mixed).verdict == "not supported"


def test_a_regime_out_of_reach_is_untested_with_its_reason() -> None:
    d = _direction(_c(1e-9, -0.5, reach="the horizon is too short"))
    assert d.verdict == "untested" and d.p_value is None and "the horizon is too short" in d.why
    # an out-of-reach comparison does not count; the others decide
    assert _direction(_c(1e-9, -0.5, reach="too short"), _c(1e-3, 0.3)).verdict == "supported"
    e = decide(Evidence(Kind.OUT_OF_REACH, reason="the study does not run it"))
    assert e.verdict == "untested" and e.p_value is None and "does not run it" in e.why


# ------------------------------------------------------------------------------------------------ bounds
def _at_most(*bounds: object) -> Decision:
    return decide(Evidence(Kind.AT_MOST, BOUND_TEST, bounds=bounds))  # type: ignore[arg-type]


def test_a_bound_that_holds_with_room_is_supported() -> None:
    d = _at_most(binomial_bound("delta = 0.1", 0, 1000, 0.1))
    assert d.verdict == "supported"
    assert d.p_value == pytest.approx(0.9**1000, rel=1e-9)  # one test: Holm changes nothing
    assert "0 errors in 1000 runs" in d.statistic


def test_a_bound_significantly_violated_is_not_supported() -> None:
    assert _at_most(binomial_bound("a", 0, 1000, 0.1), binomial_bound("b", 150, 1000, 0.1)).verdict == \
        "not supported"


def test_a_bound_the_data_cannot_separate_from_is_inconclusive() -> None:
    d = _at_most(binomial_bound("a", 95, 1000, 0.1))
    assert d.verdict == "inconclusive" and "runs" in d.why


def test_a_vacuous_bound_is_untested() -> None:
    d = _at_most(binomial_bound("n = 100", 700, 1000, 3.4e3))  # a probability bound above 1 says nothing
    assert d.verdict == "untested" and d.p_value is None
    # a vacuous point is set aside; the informative one decides
    assert _at_most(binomial_bound("x", 700, 1000, 2.0), binomial_bound("y", 0, 1000, 0.1)).verdict == "supported"


def test_exceeding_a_lower_value_of_a_bound_does_not_contradict_it() -> None:
    exceeded = normal_bound("T", 5.0, 0.1, 100, 3.0, exact=False)
    assert _at_most(exceeded).verdict == "inconclusive"
    assert _at_most(normal_bound("T", 5.0, 0.1, 100, 3.0)).verdict == "not supported"


def test_a_lower_bound_every_algorithm_respects_is_only_consistent() -> None:
    above = normal_bound("A", 50.0, 1.0, 200, 14.0, trivial=0.0)
    d = decide(Evidence(Kind.LOWER_BOUND, UNPAIRED, bounds=(above,)))
    assert d.verdict == "consistent" and d.p_value == pytest.approx(stats.norm.cdf(36.0))
    below_it = normal_bound("B", 10.0, 1.0, 200, 14.0, trivial=0.0)
    assert decide(Evidence(Kind.LOWER_BOUND, UNPAIRED, bounds=(above, below_it))).verdict == "not supported"
    vacuous = normal_bound("C", 10.0, 1.0, 200, -1.0, trivial=0.0)
    assert decide(Evidence(Kind.LOWER_BOUND, UNPAIRED, bounds=(vacuous,))).verdict == "untested"


# ------------------------------------------------------------------------------------------------ other kinds
def test_no_difference_is_contradicted_by_a_significant_difference_and_never_confirmed() -> None:
    same = decide(Evidence(Kind.NO_DIFFERENCE, PAIRED, Group("budgets", (_c(0.5, 0.01), _c(0.2, -0.02)))))
    assert same.verdict == "consistent" and same.p_value == pytest.approx(0.4)
    differ = decide(Evidence(Kind.NO_DIFFERENCE, PAIRED, Group("budgets", (_c(0.5, 0.01), _c(1e-4, -0.3)))))
    assert differ.verdict == "not supported" and differ.p_value == pytest.approx(2e-4)


def test_a_rate_without_its_constant_is_consistent() -> None:
    d = decide(Evidence(Kind.ORDER, reason="the O(.) hides the constant"))
    assert d.verdict == "consistent" and d.p_value is None


def test_evidence_is_validated() -> None:
    with pytest.raises(ValueError, match="runs are paired"):
        Evidence(Kind.DIRECTION, Method("Fisher", paired=False, runs_paired=True, design="CRN"),
                 Group("pairs", (_c(0.1, 0.1),)))
    with pytest.raises(ValueError, match="method"):
        Evidence(Kind.DIRECTION, comparisons=Group("pairs", (_c(0.1, 0.1),)))
    with pytest.raises(ValueError, match="reason"):
        Evidence(Kind.OUT_OF_REACH)
    with pytest.raises(ValueError, match="bounds"):
        Evidence(Kind.AT_MOST, BOUND_TEST)
    with pytest.raises(ValueError, match=r"p=1\.5"):
        _c(1.5, 0.1)
    with pytest.raises(ValueError, match="members"):
        Group("pairs", ())
    with pytest.raises(ValueError, match="verdict"):
        Decision("partly", None, "", "", "", "", "")


def test_only_decide_makes_a_decision() -> None:
    """No paper module builds a Decision (so none sets a verdict): they describe their tests and call decide."""
    package = Path(__file__).resolve().parents[2] / "bandit_gym"
    paths = [package / "claims.py", *(package / "studies").rglob("*.py")]
    assert len(paths) > 12, paths  # the ledger, the shared parts and every paper's claims module
    for path in paths:
        if path.name != "_verdict.py":
            assert "Decision(" not in path.read_text(), path
    assert ALPHA == 0.05
