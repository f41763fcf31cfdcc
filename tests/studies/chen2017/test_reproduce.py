"""`bandit-gym reproduce chen2017`: its specs, the tuning of the experimental constant and, on tiny settings, its
artefacts."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from bandit_gym.cli import main
from bandit_gym.studies.chen2017 import reproduce as reproduce

DATASETS = ("TwoGroup", "Uniform", "Synthetic0.5", "Synthetic6")


def test_specs_cover_four_datasets_three_ks_and_the_budget_grid() -> None:
    specs = reproduce.chen2017_specs(experimental=("log-free", 0.5))
    assert len(specs) == 12 and {spec.runs for spec in specs} == {200}
    assert {spec.env for spec in specs} == {f"TopKIdentification-Chen2017{d}K{k}-v0" for d in DATASETS
                                            for k in (100, 250, 500)}
    assert all(spec.budgets == reproduce.CHEN2017_BUDGETS and not spec.common_random_numbers for spec in specs)
    assert {25_000, 40_000} <= set(reproduce.CHEN2017_BUDGETS)
    main_agents = ["AdaptiveTopK (as printed)", "AdaptiveTopK (log-free, x1/2)", "OptMAI", "CLUCB-PAC", "Uniform"]
    assert all([a.display for a in spec.agents] == main_agents for spec in specs)
    printed, experimental = specs[0].agents[:2]
    assert printed.params == {} and experimental.params == {"schedule": "log-free", "scale": 0.5}
    # without a constant the experimental agent is left out
    assert [a.name for a in reproduce.chen2017_specs()[1].agents] == ["AdaptiveTopK", "OptMAI", "CLUCBPAC", "Uniform"]


def test_clucb_readings_run_at_k_100_up_to_50000_on_the_runs_of_the_default() -> None:
    main_specs = {spec.name: spec for spec in reproduce.chen2017_specs()}
    variants = reproduce.clucb_variant_specs()
    assert [spec.name for spec in variants] == [f"CLUCB-PAC readings {d} K=100" for d in DATASETS]
    for spec in variants:
        twin = main_specs[spec.name.removeprefix("CLUCB-PAC readings ")]
        assert (spec.env, spec.seed, spec.runs, spec.chunk) == (twin.env, twin.seed, twin.runs, twin.chunk)
        assert spec.budgets == tuple(b for b in reproduce.CHEN2017_BUDGETS if b <= 50_000)
        assert [a.display for a in spec.agents] == ["CLUCB-PAC (R = 1)", "CLUCB-PAC (epsilon_sum = epsilon)"]
        assert [a.params for a in spec.agents] == [{"R": 1.0}, {"epsilon_sum": "epsilon"}]


def test_tuning_seeds_are_not_reported_and_the_sensitivity_shares_the_reported_runs() -> None:
    main_specs = reproduce.chen2017_specs()
    sensitivity, tuning = reproduce.sensitivity_specs(), reproduce.tuning_specs()
    assert [s.seed for s in sensitivity] == [s.seed for s in main_specs]
    assert [s.env for s in sensitivity] == [s.env for s in main_specs] == [s.env for s in tuning]
    assert not {s.seed for s in tuning} & {s.seed for s in main_specs}
    assert {s.runs for s in tuning} == {reproduce.TUNING_RUNS} and {s.runs for s in sensitivity} == {200}
    assert all(s.budgets == reproduce.TUNING_BUDGETS for s in tuning)
    assert all(s.budgets == reproduce.SENSITIVITY_BUDGETS for s in sensitivity)
    constants = [(a.params["schedule"], a.params["scale"]) for a in tuning[0].agents]
    assert constants == list(reproduce.CANDIDATES) and ("printed", 1.0) not in constants
    assert {1 / 16, 1 / 32, 1 / 64, 1 / 128} <= {scale for schedule, scale in constants if schedule == "printed"}
    assert [(a.params["schedule"], a.params["scale"]) for a in sensitivity[0].agents] == list(reproduce.SENSITIVITY)


def test_scale_labels() -> None:
    assert [reproduce.scale_text(x) for x in (1.0, 0.5, 1 / 64, 2.0, 0.3)] == ["x1", "x1/2", "x1/64", "x2", "x0.3"]
    assert reproduce.experimental_agent("log-free", 1 / 32).display == "AdaptiveTopK (log-free, x1/32)"


def test_choose_constant_takes_the_smallest_mean_failure_ties_to_the_earlier_candidate() -> None:
    rows = []
    # candidate 0 (printed 1/16): mean .5; candidate 2 (printed 1/64): mean .25; candidate 4 (log-free 1): .25
    for candidate, failures in ((0, (1.0, 0.0)), (2, (0.5, 0.0)), (4, (0.0, 0.5))):
        schedule, scale = reproduce.CANDIDATES[candidate]
        agent = reproduce.experimental_agent(schedule, scale)
        for dataset, value in zip(("TwoGroup", "Uniform"), failures, strict=True):
            rows.append({"dataset": dataset, "k": 100, "agent": agent.display, "budget": 20000, "metric": "error",
                         "mean": value, "ci_low": 0.0, "ci_high": 1.0, "runs": 4, "failures": round(4 * value),
                         "seed": 7102, "params": f'{{"scale": {scale}, "schedule": "{schedule}"}}'})
    summary = pd.DataFrame(rows)
    choice, table = reproduce.choose_constant(summary)
    assert choice == reproduce.CANDIDATES[2]
    assert table[table["chosen"]]["agent"].unique().tolist() == ["AdaptiveTopK (printed, x1/64)"]
    assert table.drop_duplicates("agent")["score"].tolist() == [0.5, 0.25, 0.25]
    assert table.drop_duplicates("agent")["rank"].tolist() == [3, 1, 2]
    assert len(table) == 6  # the whole table it was chosen from


def test_reproduce_quick_writes_every_artefact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reproduce, "QUICK", reproduce.Quick(datasets=("TwoGroup", "Uniform"), ks=(100,),
                                                            budgets=(2000, 4000)))
    assert main(["reproduce", "chen2017", "--quick", "--runs", "4", "--out", str(tmp_path), "--quiet"]) == 0
    for name in ("results.csv", "failure.md", "figure_TwoGroup.png", "figure_Uniform.png", "tuning.csv",
                 "sensitivity.csv", "sensitivity.png", "clucb_variants.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    tuning = pd.read_csv(tmp_path / "tuning.csv")
    chosen = tuning[tuning["chosen"]]
    assert chosen["agent"].nunique() == 1 and chosen["rank"].eq(1).all()
    assert chosen["score"].iloc[0] == tuning.groupby("agent")["mean"].mean().min()
    assert set(tuning["seed"]) == {reproduce.TUNING_SEED, reproduce.TUNING_SEED + 10}
    label = chosen["agent"].iloc[0]

    results = pd.read_csv(tmp_path / "results.csv")
    assert list(results.columns[:8]) == ["dataset", "k", "agent", "budget", "metric", "mean", "ci_low", "ci_high"]
    assert set(results["agent"]) == {"AdaptiveTopK (as printed)", label, "OptMAI", "CLUCB-PAC", "Uniform",
                                     "CLUCB-PAC (R = 1)", "CLUCB-PAC (epsilon_sum = epsilon)"}
    assert set(results["budget"]) == {2000, 4000} and set(results["k"]) == {100}
    errors = results[results["metric"] == "error"]
    assert (errors["failures"] == (errors["mean"] * errors["runs"]).round()).all()
    assert results.loc[results["metric"] != "error", "failures"].isna().all()
    variants = results["agent"].str.startswith("CLUCB-PAC (")
    assert set(results.loc[variants, "scope"]) == {"K = 100 only, budgets up to 50,000 (compute budget)"}
    assert set(results.loc[~variants, "scope"]) == {"every dataset and K"}
    # CLUCB-PAC's stop never fires within 4,000 pulls: epsilon_sum only moves the stop, so same runs, same answers
    by_agent = errors.set_index(["dataset", "budget", "agent"])["mean"].unstack("agent")
    assert (by_agent["CLUCB-PAC"] == by_agent["CLUCB-PAC (epsilon_sum = epsilon)"]).all()

    sensitivity = pd.read_csv(tmp_path / "sensitivity.csv")
    assert len(sensitivity) == 2 * 2 * len(reproduce.SENSITIVITY)
    assert set(sensitivity.loc[sensitivity["tuned"], "agent"]) == {label}
    # the same seeds as the figures: the tuned constant and the printed one read the same numbers there
    for name, reported in ((label, label), ("AdaptiveTopK (printed, x1)", "AdaptiveTopK (as printed)")):
        left = sensitivity[sensitivity["agent"] == name].set_index(["dataset", "budget"])["failures"]
        right = errors[errors["agent"] == reported].set_index(["dataset", "budget"])["failures"]
        assert left.sort_index().tolist() == right.sort_index().tolist(), name

    text = (tmp_path / "failure.md").read_text()
    assert "### TwoGroup, K = 100" in text and "## How the experimental constant was chosen" in text
    assert f"Chosen: **{label}**" in text


def test_an_added_clucb_row_stays_out_of_the_clucb_readings_figure(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reproduce, "QUICK", reproduce.Quick(datasets=("TwoGroup",), ks=(100,), budgets=(2000,)))
    drawn: dict[str, set[str]] = {}

    def record(frame: pd.DataFrame, path: Path, **kwargs: object) -> Path:
        drawn[path.name] = set(frame["agent"])
        path.write_bytes(b"figure")
        return path

    monkeypatch.setattr(reproduce, "plot_failure_against_budget", record)
    added = '{name = "CLUCBPAC", params = {R = 0.5}, label = "my CLUCB"}'
    assert main(["reproduce", "chen2017", "--quick", "--runs", "2", "--out", str(tmp_path), "--quiet",
                 "--agent", added]) == 0
    assert drawn["clucb_variants.png"] == {"CLUCB-PAC", "CLUCB-PAC (R = 1)", "CLUCB-PAC (epsilon_sum = epsilon)"}
    assert "my CLUCB" in drawn["figure_TwoGroup.png"]
