"""The fixed-confidence study (``bandit-gym reproduce fixed-confidence``): its instances, agents, tables and files."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bandit_gym.experiments import AgentSpec
from bandit_gym.lower_bounds import best_arm_allocation, confidence_kl
from bandit_gym.reproduce import PAPERS
from bandit_gym.studies.fixed_confidence import reproduce as study
from bandit_gym.studies.fixed_confidence import sweep


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
    monkeypatch.setattr(study, "QUICK", study.Quick(instances=("random Gaussian K=4",), deltas=(0.1,),
                                                    table1_runs=4, sweep_runs=4, sweep_deltas=(0.1,)))
    thresholding = sweep.PROBLEMS[-1]
    monkeypatch.setattr(sweep, "PROBLEMS", (dataclasses.replace(thresholding, rules=thresholding.rules[1:2]),))
    monkeypatch.setattr(study, "ALLOCATION_AGENTS", ("EB-TCI",))
    few = ("LUCB1", "EB-TCI", "TaS-D heuristic")
    monkeypatch.setattr(study, "AGENTS", tuple(a for a in study.AGENTS if a[0] in few))
    monkeypatch.setattr(study, "LITERATURE", (*study.LITERATURE, study.INSTANCES[5]))  # an allocation panel
    added = AgentSpec("EBTCI", {"delta": 0.1, "distribution": "gaussian", "sigma": 0.5}, "mine")
    report = PAPERS["fixed-confidence"](tmp_path, runs=4, quick=True, jobs=1, progress=False, agents=(added,))
    for name in ("results.csv", "study.md", "goal.md", "allocation.csv", "table1.csv", "table1.md", "ratio.png",
                 "errors.png", "allocation.png", "sweep.csv", "sweep.md", "sweep.png"):
        assert (tmp_path / name).stat().st_size > 0
    swept = report.extras["sweep"]  # the delta-sweep, at --quick's runs and deltas, without the added agent
    assert set(swept["rule"]) == {"Uniform"} and set(swept["runs"]) == {4} and set(swept["delta"]) == {0.1}
    assert {p.name for p in report.files} >= {"sweep.csv", "sweep.md", "sweep.png"}
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
    table1 = report.extras["table1"]  # GK 2016 Table 1: its own runs, not the added agent
    assert len(table1) == 4 and set(table1["runs"]) == {4} and set(table1["algorithm"]) == {"Track-and-Stop",
                                                                                           "KL-LUCB"}
    np.testing.assert_allclose(table1["z"], (table1["mean"] - table1["paper"]) / table1["se"])
    assert pd.read_csv(tmp_path / "table1.csv")["paper"].tolist() == [4052.0, 1406.0, 8437.0, 2716.0]
    assert "| KL-LUCB | KL bounds at ln((1 + ln t)/delta)" in (tmp_path / "table1.md").read_text()


# ------------------------------------------------------------------------------------------ GK 2016 Table 1
def test_table1_runs_gk2016s_algorithms_as_they_ran_them() -> None:
    specs = study.table1_specs()
    assert [s.name for s in specs] == ["GK2016 Table 1, GK2016 mu1", "GK2016 Table 1, GK2016 mu2"]
    assert [s.env_kwargs["means"] for s in specs] == [[0.5, 0.45, 0.43, 0.4], [0.3, 0.21, 0.2, 0.19, 0.18]]
    assert all(s.runs == study.TABLE1_RUNS == 3000 and s.budgets == (study.CAP,) for s in specs)
    agents = {a.display: (a.name, dict(a.params)) for a in specs[0].agents}
    assert agents == {"Track-and-Stop": ("TrackAndStop", {"tracking": "D", "threshold": "heuristic", "delta": 0.1}),
                      "KL-LUCB": ("KLLUCB", {"rate": "gk2016", "delta": 0.1})}
    assert study.QUICK.table1_runs <= 300  # --quick stays quick
    assert specs[0].seed != specs[1].seed and study.table1_specs(100)[0].chunk == 100


def test_table1_frame_and_markdown_by_hand() -> None:
    rows = []
    for label, numbers in (("Track-and-Stop", ((4100.0, 100.0), (1400.0, 30.0))),
                           ("KL-LUCB", ((8000.0, 200.0), (2800.0, 60.0)))):
        for instance, (mean, se) in zip(study.TABLE1_INSTANCES, numbers, strict=True):
            rows += [{"agent": label, "instance": instance, "metric": "pulls", "mean": mean, "se": se, "runs": 400},
                     {"agent": label, "instance": instance, "metric": "error", "mean": 0.0, "se": 0.0, "runs": 400}]
    table = study.table1_frame(pd.DataFrame(rows), paper_runs=1600)
    first = table.iloc[0]  # Track-and-Stop on mu1: (4100 - 4052) / 100; sd = 100 * 20 = 2000, the paper's se 50
    assert (first["algorithm"], first["instance"], first["paper"]) == ("Track-and-Stop", "GK2016 mu1", 4052.0)
    assert first["z"] == pytest.approx(0.48) and first["sd"] == pytest.approx(2000.0)
    assert first["z_both"] == pytest.approx(48.0 / np.sqrt(100.0**2 + 50.0**2))
    assert table.iloc[2]["z"] == pytest.approx((8000.0 - 8437.0) / 200.0)
    lines = study.table1_markdown(table).splitlines()
    assert lines[2].startswith("| algorithm | as run here | GK2016 mu1: paper | GK2016 mu1: package | GK2016 mu1: z |")
    assert lines[4].endswith("| 4052 | 4100 +- 100 | +0.48 | 1406 | 1400 +- 30 | -0.20 |")
    assert lines[5].endswith("| 8437 | 8000 +- 200 | -2.19 | 2716 | 2800 +- 60 | +1.40 |")
