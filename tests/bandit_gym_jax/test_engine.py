"""The experiment engine with ``backend="jax"``: the same cells, files and tables as the numba backend, numbers
consistent with it on every family, a folder of its own, and clear refusals."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from bandit_gym.cli import main
from bandit_gym.experiments import AgentSpec, ExperimentSpec, run_experiment

from ._compare import Z_LIMIT

SPECS = {
    "thresholding": ExperimentSpec(
        env="ThresholdingBandit-Tao2019Setup1-v0", budgets=(100, 300), runs=2000, chunk=2000, seed=1,
        agents=(AgentSpec("LSA"), AgentSpec("APT", {"epsilon": 0.05}), AgentSpec("Uniform"),
                AgentSpec("UCBE", {"b": 0.0}, "UCBE(0)"))),
    "best_arm": ExperimentSpec(
        env="BestArmIdentification-Audibert2010Problem4-v0", budgets=(150, 300), runs=2000, chunk=2000, seed=2,
        agents=(AgentSpec("SuccessiveRejects"), AgentSpec("SAR"), AgentSpec("UCBEBestArm"), AgentSpec("Uniform"))),
    "top_k": ExperimentSpec(
        env="TopKIdentification-v0", env_kwargs={"means": [0.9, 0.8, 0.7, 0.5, 0.45, 0.3], "k": 2, "epsilon": 0.05},
        budgets=(60, 120), runs=2000, chunk=2000, seed=3,
        agents=(AgentSpec("Uniform"), AgentSpec("AdaptiveTopK", {"scale": 0.25}), AgentSpec("CLUCBPAC"))),
    "multi_armed": ExperimentSpec(
        env="MultiArmedBandit-v0", env_kwargs={"means": [0.9, 0.8, 0.7, 0.5, 0.3]}, budgets=(100, 400), runs=2000,
        chunk=2000, seed=4,
        agents=(AgentSpec("UCB1"), AgentSpec("KLUCB"), AgentSpec("Thompson"), AgentSpec("Uniform"))),
    "threshold": ExperimentSpec(
        env="ThresholdBandit-v0", env_kwargs={"feedback": "censored"}, budgets=(100, 300), runs=2000, chunk=2000,
        seed=5,
        agents=(AgentSpec("Uniform"),)),
}


@pytest.mark.slow
@pytest.mark.parametrize("family", list(SPECS))
def test_jax_tables_are_consistent_with_numba(family: str, tmp_path: Path) -> None:
    spec = SPECS[family]
    tables = {}
    for backend in ("numba", "jax"):
        result = run_experiment(spec, out=tmp_path / backend, backend=None if backend == "numba" else "jax",
                                progress=False)
        tables[backend] = result.summary().set_index(["agent", "budget", "metric"])
    numba, jax_ = tables["numba"], tables["jax"]
    assert list(jax_.index) == list(numba.index)  # the same rows: agents, budgets, metrics
    # a deterministic row (round robin's pseudo-regret) differs by JAX's float32 rounding alone: a scale of 1e-6
    scale = np.maximum(np.sqrt(jax_["se"] ** 2 + numba["se"] ** 2), 1e-6 * numba["mean"].abs()).replace(0.0, np.inf)
    z = (jax_["mean"] - numba["mean"]) / scale
    assert (z.abs() < Z_LIMIT).all(), z[z.abs() >= Z_LIMIT]
    assert json.loads((tmp_path / "jax" / "spec.json").read_text())["backend"] == "jax"
    assert "backend" not in json.loads((tmp_path / "numba" / "spec.json").read_text())


def test_a_jax_folder_is_its_own_and_resumes(tmp_path: Path) -> None:
    spec = dataclasses.replace(SPECS["thresholding"], runs=40, chunk=20, agents=(AgentSpec("LSA"),))
    assert spec.backend == "numba"
    first = run_experiment(spec, out=tmp_path / "run", backend="jax", progress=False)
    again = run_experiment(dataclasses.replace(spec, backend="jax"), out=tmp_path / "run", progress=False)
    assert again.reused == 2 and again.summary().equals(first.summary())
    with pytest.raises(ValueError, match="different spec"):  # the numba backend's numbers never join them
        run_experiment(spec, out=tmp_path / "run", progress=False)


def test_the_seeds_are_the_cells(tmp_path: Path) -> None:
    spec = dataclasses.replace(SPECS["thresholding"], runs=60, chunk=30, backend="jax")
    one = run_experiment(spec, out=tmp_path / "a", progress=False).summary()
    two = run_experiment(spec, out=None, progress=False).summary()
    assert one.equals(two)


def test_refusals_name_what_has_a_jax_twin() -> None:
    base = SPECS["thresholding"]
    with pytest.raises(ValueError, match="'UGapEb' has no JAX twin"):
        dataclasses.replace(SPECS["best_arm"], agents=(AgentSpec("SAR"), AgentSpec("UGapEb")), backend="jax")
    with pytest.raises(ValueError, match="'CorrelatedBestArm-v0' has no JAX twin"):
        ExperimentSpec(env="CorrelatedBestArm-v0", agents=(AgentSpec("Uniform"),), budgets=(50,), runs=10,
                       backend="jax")
    with pytest.raises(ValueError, match="backend"):
        dataclasses.replace(base, backend="cuda")


def test_the_command_line_runs_a_spec_with_jax(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text('env = "ThresholdingBandit-Tao2019Setup1-v0"\nbudgets = [50]\nruns = 20\nchunk = 20\n'
                    'agents = ["LSA"]\n')
    assert main(["run", str(spec), "--out", str(tmp_path / "out"), "--backend", "jax", "--quiet"]) == 0
    assert json.loads((tmp_path / "out" / "spec.json").read_text())["backend"] == "jax"
    assert (tmp_path / "out" / "results.csv").exists()
