"""The experiment engine: specs, cells, resume after a kill, backends, failures, summaries, CLI."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bandit_gym.cli import main
from bandit_gym.experiments import (
    AgentSpec,
    Cell,
    ExperimentError,
    ExperimentResult,
    ExperimentSpec,
    build_agent,
    expand,
    load_specs,
    run_experiment,
    run_experiments,
)

SETUP1 = "ThresholdingBandit-Tao2019Setup1-v0"


def small_spec(**overrides: object) -> ExperimentSpec:
    fields = {
        "env": SETUP1, "budgets": (20, 50), "runs": 60, "chunk": 30, "seed": 7,
        "agents": (AgentSpec("LSA"), AgentSpec("Uniform"), AgentSpec("UCBE", {"b": 0.0})),
    }
    fields.update(overrides)
    return ExperimentSpec(**fields)  # type: ignore[arg-type]


def test_cells_anytime_once_per_chunk_horizon_aware_per_budget() -> None:
    cells = expand(small_spec())
    assert cells.count(Cell(0, None, 0)) == 1 and Cell(0, 20, 0) not in cells
    assert {c for c in cells if c.agent == 2} == {Cell(2, b, ch) for b in (20, 50) for ch in (0, 1)}
    assert len(cells) == 2 + 2 + 4


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"env": "Nope-v0"}, "is not a registered id"),
        ({"agents": (AgentSpec("LSAA"),)}, "agent name='LSAA' is unknown"),
        ({"agents": (AgentSpec("UCB"),)}, "plays \\('threshold',\\) envs"),
        ({"agents": (AgentSpec("LSA"), AgentSpec("LSA"))}, "labels must be distinct"),
        ({"budgets": (50, 20)}, "strictly increasing"),
        ({"budgets": ()}, "strictly increasing"),
        ({"runs": 1}, "runs=1 is too small"),
        ({"env_kwargs": {"budget": 5}}, "the budgets list sets it"),
    ],
)
def test_bad_specs(overrides: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        small_spec(**overrides)


def test_summary_and_paired_tests_match_the_runs() -> None:
    result = run_experiment(small_spec(), progress=False)
    summary = result.summary()
    lsa = result.runs[("LSA", "aggregate_regret")]
    assert lsa.shape == (60, 2)
    row = summary[(summary.agent == "LSA") & (summary.budget == 50) & (summary.metric == "aggregate_regret")].iloc[0]
    assert row["mean"] == pytest.approx(lsa[:, 1].mean())
    assert row["se"] == pytest.approx(lsa[:, 1].std(ddof=1) / np.sqrt(60))
    half = stats.t.ppf(0.975, 59) * row["se"]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((row["mean"] - half, row["mean"] + half))
    assert set(summary.columns) >= {"agent", "params", "budget", "metric", "mean", "se", "ci_low", "ci_high", "runs"}
    assert summary[summary.agent == "UCBE(0)"]["oracle"].all()
    tests = result.paired_tests("LSA")
    uniform = result.runs[("Uniform", "aggregate_regret")]
    expected = stats.ttest_rel(uniform[:, 1], lsa[:, 1])
    got = tests[(tests.agent == "Uniform") & (tests.budget == 50)].iloc[0]
    assert got["p_value"] == pytest.approx(expected.pvalue) and got["t"] == pytest.approx(expected.statistic)


def test_common_random_numbers_pair_agents_run_by_run() -> None:
    spec = small_spec(agents=(AgentSpec("Uniform", label="a"), AgentSpec("Uniform", label="b")))
    result = run_experiment(spec, progress=False)
    np.testing.assert_array_equal(result.runs[("a", "aggregate_regret")], result.runs[("b", "aggregate_regret")])


def test_results_do_not_depend_on_jobs_or_storage(tmp_path: Path) -> None:
    memory = run_experiment(small_spec(), progress=False)
    parallel = run_experiment(small_spec(), out=tmp_path, jobs=2, progress=False)
    for key, value in memory.runs.items():
        np.testing.assert_array_equal(value, parallel.runs[key])


def test_several_specs_in_one_pool_give_each_spec_its_own_results(tmp_path: Path) -> None:
    specs = [small_spec(), small_spec(seed=8, budgets=(30,), agents=(AgentSpec("APT", {"epsilon": 0.05}),))]
    pooled = run_experiments(specs, [tmp_path / "a", None], jobs=2, progress=False)
    for spec, result in zip(specs, pooled, strict=True):
        alone = run_experiment(spec, progress=False)
        assert result.runs.keys() == alone.runs.keys()
        for key, value in alone.runs.items():
            np.testing.assert_array_equal(result.runs[key], value)
    assert len(list((tmp_path / "a" / "cells").glob("*.npz"))) == len(expand(specs[0]))
    with pytest.raises(ValueError, match="one folder"):
        run_experiments(specs, [None], progress=False)


def test_resume_runs_only_missing_cells(tmp_path: Path) -> None:
    spec = small_spec()
    done: list[Cell] = []

    def stop_after_three(cell: Cell) -> None:
        done.append(cell)
        if len(done) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_experiment(spec, out=tmp_path, progress=False, on_cell=stop_after_three)
    assert len(list((tmp_path / "cells").glob("*.npz"))) == 3
    rest: list[Cell] = []
    resumed = run_experiment(spec, out=tmp_path, progress=False, on_cell=rest.append)
    assert len(rest) == len(expand(spec)) - 3 and not set(rest) & set(done)
    fresh = run_experiment(spec, progress=False)
    pd.testing.assert_frame_equal(resumed.summary(), fresh.summary())
    with pytest.raises(ValueError, match="different spec"):
        run_experiment(small_spec(seed=8), out=tmp_path, progress=False)


def test_a_finished_folder_has_its_table_loads_back_and_gets_its_stats(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = small_spec(env_kwargs={"threshold": 0.5})
    result = run_experiment(spec, out=tmp_path, progress=False)
    table = pd.read_csv(tmp_path / "results.csv")
    pd.testing.assert_frame_equal(table, result.summary(), check_dtype=False)
    loaded = ExperimentResult.load(tmp_path)
    assert loaded.spec == spec
    assert loaded.runs.keys() == result.runs.keys()
    assert all(np.array_equal(loaded.runs[key], result.runs[key]) for key in result.runs)
    pd.testing.assert_frame_equal(loaded.paired_tests("LSA"), result.paired_tests("LSA"))
    capsys.readouterr()
    assert main(["stats", str(tmp_path), "--reference", "LSA"]) == 0
    out = capsys.readouterr().out
    assert "p_holm" in out and "Uniform" in out and "UCBE(0)" in out
    assert main(["stats", str(tmp_path), "--reference", "APT"]) == 2
    assert "choose one of LSA, Uniform, UCBE(0)" in capsys.readouterr().err
    assert main(["stats", str(tmp_path), "--metric", "regret"]) == 2
    next((tmp_path / "cells").glob("*.npz")).unlink()
    with pytest.raises(ValueError, match="unfinished: 1 of"):
        ExperimentResult.load(tmp_path)
    assert main(["stats", str(tmp_path)]) == 2
    assert "unfinished" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"no spec\.json"):
        ExperimentResult.load(tmp_path / "cells")


def test_failed_cells_are_reported_and_the_others_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ExperimentSpec, "_check_oracles", lambda self, budget: None)  # the spec's own check, off
    spec = small_spec(env="ThresholdingBandit-v0")  # means drawn per episode: UCBE's oracle H is undefined
    with pytest.raises(ExperimentError, match=r"UCBE_0_[0-9a-f]{10}__T20__chunk0 of experiment ThresholdingBandit-v0"):
        run_experiment(spec, out=tmp_path, progress=False)
    kept = {p.stem for p in (tmp_path / "cells").glob("*.npz")}
    assert kept == {"LSA__anytime__chunk0", "LSA__anytime__chunk1", "Uniform__anytime__chunk0",
                    "Uniform__anytime__chunk1"}


@pytest.mark.slow
def test_dask_backend_gives_the_same_numbers() -> None:
    from dask.distributed import Client, LocalCluster

    local = run_experiment(small_spec(), progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster):
        remote = run_experiment(small_spec(), jobs=2, backend="dask", progress=False)
    for key, value in local.runs.items():
        np.testing.assert_array_equal(value, remote.runs[key])


SPEC_TOML = """
env = "ThresholdingBandit-Tao2019Setup1-v0"
budgets = [100, 400]
runs = 400
chunk = 100
seed = 3
agents = [{name = "LSA"}, {name = "APT", params = {epsilon = 0.05}, label = "APT(.05)"}, {name = "Uniform"}]
"""


def test_load_specs_toml_and_json(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text(SPEC_TOML)
    (spec,) = load_specs(tmp_path / "a.toml")
    assert spec.agents[1].display == "APT(.05)" and spec.budgets == (100, 400)
    (tmp_path / "b.json").write_text(json.dumps([spec.to_dict(), {**spec.to_dict(), "seed": 4}]))
    assert [s.seed for s in load_specs(tmp_path / "b.json")] == [3, 4]
    (tmp_path / "c.toml").write_text(SPEC_TOML + "colour = 1\n")
    with pytest.raises(ValueError, match="unknown spec keys \\['colour'\\]"):
        load_specs(tmp_path / "c.toml")


def test_killed_cli_run_resumes_with_the_same_table(tmp_path: Path) -> None:
    # long episodes, so that the other cells still run for a while after the first is stored, however fast a warm
    # machine with the rules cached plays them (with budgets of 400 all 12 could end before the kill)
    (tmp_path / "spec.toml").write_text(SPEC_TOML.replace("budgets = [100, 400]", "budgets = [100, 50000]"))
    command = [sys.executable, "-m", "bandit_gym.cli", "run", str(tmp_path / "spec.toml"), "--jobs", "1", "--quiet"]
    killed = subprocess.Popen([*command, "--out", str(tmp_path / "killed")], stdout=subprocess.DEVNULL)
    cells = tmp_path / "killed" / "cells"
    while killed.poll() is None and len(list(cells.glob("*.npz"))) < 1:  # however slow the machine
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    before = {p.name: p.stat().st_mtime_ns for p in cells.glob("*.npz")}
    assert 1 <= len(before) < 12  # killed midway: 3 agents x 4 chunks
    subprocess.run([*command, "--out", str(tmp_path / "killed")], check=True, stdout=subprocess.DEVNULL)
    after = {p.name: p.stat().st_mtime_ns for p in cells.glob("*.npz")}
    assert len(after) == 12 and all(after[name] == stamp for name, stamp in before.items())
    assert not list(cells.glob("*.tmp"))  # a file half-written when the run was killed is cleared
    subprocess.run([*command, "--out", str(tmp_path / "whole")], check=True, stdout=subprocess.DEVNULL)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "killed" / "results.csv"),
                                  pd.read_csv(tmp_path / "whole" / "results.csv"))


def test_cli_plot(tmp_path: Path) -> None:
    result = run_experiment(small_spec(), progress=False)
    result.summary().to_csv(tmp_path / "results.csv", index=False)
    assert main(["plot", str(tmp_path / "results.csv")]) == 0
    assert (tmp_path / "results.png").stat().st_size > 10_000


def test_threshold_bandit_experiment_runs_per_horizon() -> None:
    spec = ExperimentSpec(env="ThresholdBandit-v0", budgets=(30, 60), runs=40, chunk=40, seed=1,
                          agents=(AgentSpec("UCB"), AgentSpec("UCB", {"delta": 0.01}, "UCB(fixed)"),
                                  AgentSpec("Uniform")))
    assert all(cell.budget is not None for cell in expand(spec))
    summary = run_experiment(spec, progress=False).summary()
    assert set(summary.metric) == {"regret"} and len(summary) == 6
    uniform = summary[summary.agent == "Uniform"].set_index("budget")["mean"]
    assert uniform[60] > uniform[30] > 0  # pseudo-regret grows with the horizon


@pytest.mark.slow
def test_ray_backend_gives_the_same_numbers() -> None:
    import ray  # in the test extra: the Ray backend is tested as the Dask one is

    local = run_experiment(small_spec(), progress=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = run_experiment(small_spec(), jobs=2, backend="ray", progress=False)
    finally:
        ray.shutdown()
    for key, value in local.runs.items():
        np.testing.assert_array_equal(value, remote.runs[key])


def test_oracle_parameters_come_from_the_instance_even_before_a_reset() -> None:
    venv = gym.make_vec("ThresholdingBandit-Tao2019Setup1-v0", num_envs=2, vectorization_mode="vector_entry_point")
    agent = build_agent(AgentSpec("UCBE", {"b": 0.0}), venv)
    assert pytest.approx(993.11, abs=0.01) == agent.H  # tao2019 §5, Setup 1
    sampled = gym.make_vec("ThresholdingBandit-v0", num_envs=2, vectorization_mode="vector_entry_point",
                           means=lambda rng, n: rng.uniform(0.1, 0.9, size=(n, 4)))
    with pytest.raises(ValueError, match="fixed instance"):
        build_agent(AgentSpec("UCBE", {"b": 0.0}), sampled)
    # given oracle values, or an alternative to them, need no instance
    assert build_agent(AgentSpec("UCBE", {"b": 0.0, "H": 5.0}), sampled).H == 5.0
    best = gym.make_vec("CorrelatedBestArm-v0", num_envs=2, vectorization_mode="vector_entry_point")
    assert build_agent(AgentSpec("UGapEb", {"a": 2.0}), best).a == 2.0
    assert build_agent(AgentSpec("UCBEBestArm", {"H1": 3.0}), best).H1 == 3.0
    with pytest.raises(ValueError, match=r"oracle parameters \('H',\) of a fixed instance"):
        build_agent(AgentSpec("UGapEb", {"b": 2.0}), best)


def test_best_arm_experiments_record_error_regret_and_pulls() -> None:
    spec = ExperimentSpec(env="BestArmIdentification-Audibert2010Problem4-v0", budgets=(300, 600), runs=40,
                          agents=(AgentSpec("Uniform"), AgentSpec("SuccessiveRejects")), chunk=20)
    table = run_experiment(spec, progress=False).summary()
    assert set(table["metric"]) == {"error", "regret", "pulls"}
    pulls = table[table.metric == "pulls"]
    assert pulls["mean"].tolist() == [300.0, 600.0, 300.0, 600.0]
    confidence = ExperimentSpec(env="BestArmIdentification-Audibert2010Problem4-v0", budgets=(200000,), runs=20,
                                agents=(AgentSpec("UGapEc", {"delta": 0.1}),),
                                env_kwargs={"setting": "fixed_confidence"})
    stopped = run_experiment(confidence, progress=False).summary()
    sample_complexity = stopped[stopped.metric == "pulls"]["mean"].iloc[0]
    assert 1000 < sample_complexity < 200000  # stopped by its own rule, before the cap


def test_every_toml_spec_of_the_experiments_page_is_a_valid_spec(tmp_path: Path) -> None:
    """The TOML examples of docs/experiments.md load as specs and pass the checks a run makes before any cell
    (the env made with its env_kwargs, each agent with its params), the one with env_kwargs included."""
    import re

    from bandit_gym.experiments import load_specs

    page = (Path(__file__).resolve().parents[2] / "docs" / "experiments.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", page, re.DOTALL)
    assert len(blocks) >= 2 and any("env_kwargs" in block for block in blocks)
    for i, block in enumerate(blocks):
        path = tmp_path / f"spec{i}.toml"
        path.write_text(block)
        specs = load_specs(path)  # checked whole as it is built (ExperimentSpec.__post_init__)
        assert specs and all(len(spec.agents) >= 1 for spec in specs)
        if "env_kwargs" in block:
            assert specs[0].env_kwargs["threshold"] == 0.6 and len(specs[0].env_kwargs["means"]) == 6
