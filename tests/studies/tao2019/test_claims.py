"""tao2019's robust claims (tao2019 §5), on paired runs with common random numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from bandit_gym.cli import main
from bandit_gym.experiments import AgentSpec, ExperimentSpec, run_experiment
from bandit_gym.studies.tao2019 import reproduce as reproduce

LSA = AgentSpec("LSA", {"alpha": 1.35}, "LSA")


@pytest.mark.slow
@pytest.mark.parametrize(("setup", "budget", "runs"), [(1, 1000, 5000), (2, 40000, 600), (3, 100000, 300)])
def test_lsa_beats_uniform_significantly_at_the_largest_budget(setup: int, budget: int, runs: int) -> None:
    spec = ExperimentSpec(env=f"ThresholdingBandit-Tao2019Setup{setup}-v0", budgets=(budget,), runs=runs,
                          chunk=runs, seed=100 + setup, agents=(LSA, AgentSpec("Uniform")))
    result = run_experiment(spec, progress=False)
    test = result.paired_tests("LSA").iloc[0]
    assert test["mean_difference"] > 0 and test["p_value"] < 1e-3, test.to_dict()


@pytest.mark.slow
def test_setup1_lsa_and_apt05_are_not_significantly_different() -> None:
    spec = ExperimentSpec(env="ThresholdingBandit-Tao2019Setup1-v0", budgets=(1000,), runs=5000, chunk=5000,
                          seed=11, agents=(LSA, AgentSpec("APT", {"epsilon": 0.05}, "APT(.05)")))
    test = run_experiment(spec, progress=False).paired_tests("LSA").iloc[0]
    assert test["p_value"] > 0.05, test.to_dict()


def test_reproduce_quick_writes_the_three_artefacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the command's own code path on shorter grids (the real --quick run is timed in the README)
    monkeypatch.setattr(reproduce, "TAO2019_QUICK_GRIDS", {1: (20, 40), 2: (40, 60), 3: (30, 50)})
    assert main(["reproduce", "tao2019", "--quick", "--runs", "12", "--out", str(tmp_path), "--quiet"]) == 0
    for name in ("results.csv", "ttests.csv", "ttests.md", "figure.png"):
        assert (tmp_path / name).stat().st_size > 0
    assert "| Uniform |" in (tmp_path / "ttests.md").read_text()
