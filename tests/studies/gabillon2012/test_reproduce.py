"""`bandit-gym reproduce gabillon2012`: its experiment specs and, on tiny settings, its artefacts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from bandit_gym.cli import main
from bandit_gym.instances import AUDIBERT2010_PROBLEMS, best_arm_complexity
from bandit_gym.studies.gabillon2012 import reproduce as reproduce


def test_specs_cover_the_four_parts() -> None:
    specs = reproduce.gabillon2012_specs(runs=1000)
    parts = {name[0] for name in (spec.name for spec in specs)}
    assert parts == {"a", "b", "c", "d"} and all(spec.runs == 1000 for spec in specs)
    a = [spec for spec in specs if spec.name.startswith("a")]
    assert len(a) == 7
    for p, spec in enumerate(a, start=1):  # n = H_1 among the budgets of each problem
        assert round(best_arm_complexity(AUDIBERT2010_PROBLEMS[p])) in spec.budgets and len(spec.budgets) == 4
    labels = [agent.display for agent in a[0].agents]
    assert labels == ["Uniform", "SR", "UCB-E(a=(n-K)/H1)", "UGapEb(a=(n-K)/4H)", "UGapEb(a=16(n-K)/4H)",
                      "UGapEb(a=(n-K)/4H, last J)"]
    c = [spec for spec in specs if spec.name.startswith("c")]
    assert all(spec.env_kwargs["setting"] == "fixed_confidence" for spec in c)
    assert {agent.params["delta"] for spec in c for agent in spec.agents} == {0.1, 0.05, 0.01}


def test_theorem1_budget_is_where_the_bound_first_drops_to_the_level() -> None:
    # problem 4: K = 6, H_eps = 4 sum_i 1/Delta_i^2 (the best arm's Delta is its gap to the second, 0.08) = 2405.6
    n = reproduce.theorem1_budget(4)
    h = 4 * sum(1 / d**2 for d in (0.08, 0.08, 0.1, 0.1, 0.15, 0.15))
    assert n == 81000 and n % 1000 == 0
    assert reproduce.theorem1_bound(n, 6, h) <= 0.05 < reproduce.theorem1_bound(n - 1000, 6, h)
    assert reproduce.theorem1_bound(601, 6, h) > 1000  # at n = H_1 the bound says nothing


def test_generality_skips_non_unique_and_trivial_cases() -> None:
    cases = reproduce.generality_instances()
    assert (1, 1, 0.0) in cases and (1, 1, 0.05) in cases and (7, 2, 0.05) in cases
    assert (1, 2, 0.0) not in cases  # problem 1: mu_(2) = mu_(3) = 0.4
    assert (1, 2, 0.05) not in cases  # problem 1: every arm is within 0.05 of mu_(2) = 0.4, every answer right
    assert (4, 2, 0.0) in cases and (4, 3, 0.0) not in cases  # problem 4: 0.42 > 0.4 = 0.4
    assert reproduce._budget(1, 1, 0.0) == round(best_arm_complexity(AUDIBERT2010_PROBLEMS[1]))  # H_0 / 4 = H_1
    agents = [agent.name for agent in reproduce.fixed_budget_agents(2)]
    assert "SAR" in agents and "SuccessiveRejects" not in agents and "UCBEBestArm" not in agents


def test_reproduce_quick_writes_every_artefact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reproduce, "QUICK", reproduce.Quick(problems=(4,), factors=(0.5, 1.0),
                                                            generality=((4, 2, 0.05),), instances=((4, 1, 0.1),),
                                                            deltas=(0.1, 0.01), theorem1=(4,)))
    monkeypatch.setattr(reproduce, "FIXED_CONFIDENCE", dataclasses.replace(reproduce.FIXED_CONFIDENCE, cap=20000))
    assert main(["reproduce", "gabillon2012", "--quick", "--runs", "20", "--out", str(tmp_path), "--quiet"]) == 0
    for name in ("results.csv", "fixed_budget.md", "fixed_confidence.md", "theorem1.md", "fixed_budget.png",
                 "generality.png", "fixed_confidence.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    results = pd.read_csv(tmp_path / "results.csv")
    assert set(results["part"]) == {"a", "b", "c", "d"}
    errors = results[results.metric == "error"]
    assert (errors["ci_low"] <= errors["mean"]).all() and (errors["mean"] <= errors["ci_high"]).all()
    assert (errors["ci_high"] > 0).all()  # exact intervals: 0 errors in 20 runs still bound the rate above 0
    pulls = results[(results.part == "c") & (results.metric == "pulls")]
    assert (pulls["mean"] > 6).all() and (pulls["mean"] < 20000).all()  # the agents stopped before the cap
    text = (tmp_path / "fixed_budget.md").read_text()
    assert "| 4 | 6 | 601 |" in text and "UGapEb(a=16(n-K)/4H)" in text and "SAR" in text
