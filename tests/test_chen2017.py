"""`bandit-gym reproduce chen2017`: its specs and, on tiny settings, its artefacts."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from bandit_gym.cli import main
from bandit_gym.reproduce import chen2017 as reproduce


def test_specs_cover_four_datasets_three_ks_and_the_budget_grid() -> None:
    specs = reproduce.chen2017_specs()
    assert len(specs) == 12 and {spec.runs for spec in specs} == {200}
    datasets = ("TwoGroup", "Uniform", "Synthetic0.5", "Synthetic6")
    assert {spec.env for spec in specs} == {f"TopKIdentification-Chen2017{d}K{k}-v0" for d in datasets
                                            for k in (100, 250, 500)}
    assert all(spec.budgets == reproduce.CHEN2017_BUDGETS and not spec.common_random_numbers for spec in specs)
    assert [a.name for a in specs[0].agents] == ["AdaptiveTopK", "OptMAI", "CLUCBPAC", "Uniform"]


def test_reproduce_quick_writes_every_artefact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reproduce, "QUICK", {"datasets": ("TwoGroup", "Uniform"), "ks": (100,),
                                             "budgets": (2000, 4000)})
    assert main(["reproduce", "chen2017", "--quick", "--runs", "4", "--out", str(tmp_path), "--quiet"]) == 0
    for name in ("results.csv", "failure.md", "figure_TwoGroup.png", "figure_Uniform.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    results = pd.read_csv(tmp_path / "results.csv")
    assert set(results["agent"]) == {"AdaptiveTopK", "OptMAI", "CLUCB-PAC", "Uniform"}
    assert set(results["budget"]) == {2000, 4000} and set(results["k"]) == {100}
    assert "### TwoGroup, K = 100" in (tmp_path / "failure.md").read_text()
