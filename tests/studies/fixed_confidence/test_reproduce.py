"""The fixed-confidence study (``bandit-gym reproduce fixed-confidence``): its instances, agents, tables and files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bandit_gym.experiments import AgentSpec
from bandit_gym.lower_bounds import best_arm_allocation, confidence_kl
from bandit_gym.reproduce import PAPERS
from bandit_gym.studies.fixed_confidence import reproduce as study


def test_random_instances_are_fixed_and_keep_their_gap() -> None:
    for distribution, k in (("bernoulli", 10), ("bernoulli", 50), ("gaussian", 4), ("gaussian", 20)):
        instance = study.random_instance(distribution, k)
        assert instance == study.random_instance(distribution, k)  # seeded by (seed, K, family)
        top = np.sort(instance.means)[::-1]
        assert len(instance.means) == k and top[0] - top[1] >= study.MIN_GAP[distribution]
        low, high = (0.0, 1.0) if distribution == "gaussian" else (0.1, 0.9)
        assert low <= min(instance.means) and max(instance.means) <= high
    assert study.random_instance("bernoulli", 10) != study.random_instance("bernoulli", 10, seed=1)
    assert [i.name for i in study.INSTANCES][:3] == ["GK2016 mu1", "GK2016 mu2", "Audibert2010 problem 4"]


def test_agents_get_the_instance_family() -> None:
    gaussian = study.random_instance("gaussian", 4)
    agents = {a.display: a for a in study.agents_for(gaussian, (0.1, 0.01))}
    assert agents["LUCB1(delta=0.01)"].params == {"b": 1.0, "delta": 0.01}  # b = 2 sigma, sigma = 1/2
    assert agents["EB-TCI heuristic(delta=0.1)"].params == {"threshold": "heuristic", "distribution": "gaussian",
                                                            "sigma": 0.5, "delta": 0.1}
    bernoulli = {a.display: a for a in study.agents_for(study.LITERATURE[0], (0.1,))}
    assert bernoulli["UGapEc(delta=0.1)"].params == {"delta": 0.1}
    assert bernoulli["TaS-C(delta=0.1)"].params == {"tracking": "C", "distribution": "bernoulli", "delta": 0.1}


def test_goal_picks_the_best_rule_by_its_ratio() -> None:
    rows = [("GK2016 mu1", rule, mean, mean / 1000.0) for rule, mean in
            (("LUCB1", 60000.0), ("EB-TCI", 5000.0), ("EB-TCI heuristic", 1900.0))]
    summary = pd.DataFrame([{"instance": i, "rule": r, "mean": m, "ratio": q, "metric": "pulls", "delta": 0.01}
                            for i, r, m, q in rows])
    line = study.goal_markdown(summary).splitlines()[-1]
    assert line == "| GK2016 mu1 | EB-TCI | 5.00 | 12.0 | EB-TCI heuristic | 1.90 | 31.6 |"


def test_the_study_writes_its_tables_and_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(study, "QUICK", study.Quick(instances=("random Gaussian K=4",), deltas=(0.1,)))
    monkeypatch.setattr(study, "ALLOCATION_AGENTS", ("EB-TCI",))
    few = ("LUCB1", "EB-TCI", "TaS-D heuristic")
    monkeypatch.setattr(study, "AGENTS", tuple(a for a in study.AGENTS if a[0] in few))
    monkeypatch.setattr(study, "LITERATURE", (*study.LITERATURE, study.INSTANCES[5]))  # an allocation panel
    added = AgentSpec("EBTCI", {"delta": 0.1, "distribution": "gaussian", "sigma": 0.5}, "mine")
    report = PAPERS["fixed-confidence"](tmp_path, runs=4, quick=True, jobs=1, progress=False, agents=(added,))
    for name in ("results.csv", "study.md", "goal.md", "allocation.csv", "ratio.png", "errors.png",
                 "allocation.png"):
        assert (tmp_path / name).stat().st_size > 0
    summary = report.summary
    instance = study.INSTANCES[5]
    star = best_arm_allocation(instance.means, "gaussian", 0.5).time
    pulls = summary[summary.metric == "pulls"]
    assert set(pulls["rule"]) == {"LUCB1", "EB-TCI", "TaS-D heuristic", "mine"}
    np.testing.assert_allclose(pulls["delta"], 0.1)  # "mine" too, from its params
    np.testing.assert_allclose(pulls["lower_bound"], star * confidence_kl(0.1))
    np.testing.assert_allclose(pulls["ratio"], pulls["mean"] / pulls["lower_bound"])
    errors = summary[summary.metric == "error"]
    assert (errors["ci_low"] <= errors["mean"]).all() and (errors["ci_high"] > 0).all()  # exact intervals
    table = (tmp_path / "study.md").read_text()
    assert "### random Gaussian K=4 (K = 4, Gaussian, sigma = 0.5" in table and "| 0.1 | 56 | mine |" in table
    allocation = report.extras["allocation"]
    assert set(allocation["agent"]) == {"EB-TCI"}
    np.testing.assert_allclose(allocation["share"].sum(), 1.0)
    np.testing.assert_allclose(allocation["w_star"], best_arm_allocation(instance.means, "gaussian", 0.5).weights)
