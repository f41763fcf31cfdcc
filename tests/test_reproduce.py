"""``reproduce_<paper>(agents=...)`` and ``bandit-gym reproduce --agent``: added agents play the paper's main
experiments on the same runs as the paper's agents, whose rows stay what they are without them."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from bandit_gym.cli import main
from bandit_gym.experiments import AgentSpec
from bandit_gym.reproduce import PAPERS
from bandit_gym.studies.abernethy2016 import reproduce as abernethy2016
from bandit_gym.studies.chen2017 import reproduce as chen2017
from bandit_gym.studies.gabillon2012 import reproduce as gabillon2012
from bandit_gym.studies.hoffman2014 import reproduce as hoffman2014
from bandit_gym.studies.tao2019 import reproduce as tao2019

ADDED = AgentSpec("Uniform", {}, "Uniform (added)")
LABEL = ADDED.display


def _small_tao(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tao2019, "TAO2019_QUICK_GRIDS", {1: (200, 500), 2: (2000,), 3: (5000,)})


def _both(paper: str, tmp_path: Path, **kwargs: Any) -> tuple[Any, Any]:
    """The quick reproduction without and with ``ADDED`` (4 runs, one job), each in its own folder."""
    run: Callable[..., Any] = PAPERS[paper]
    common = {"runs": 4, "quick": True, "jobs": 1, "progress": False, **kwargs}
    return run(tmp_path / "paper", **common), run(tmp_path / "added", agents=(ADDED,), **common)


def _check(plain: Any, added: Any, experiments: set[str], twin: str | None = None) -> None:
    """``added`` has rows of ``LABEL`` in exactly ``experiments``, and otherwise the rows of ``plain``; with
    ``twin``, the paper's own Uniform, the added Uniform played the same runs: its numbers are the twin's."""
    summary = added.summary
    rows = summary["agent"] == LABEL
    assert set(summary.loc[rows, "experiment"]) == experiments
    assert LABEL not in set(plain.summary["agent"])
    pd.testing.assert_frame_equal(summary[~rows].reset_index(drop=True), plain.summary.reset_index(drop=True))
    if twin is not None:
        numbers = ["experiment", "budget", "metric", "mean", "ci_low", "ci_high"]
        twins = (summary["agent"] == twin) & summary["experiment"].isin(experiments)
        pd.testing.assert_frame_equal(summary.loc[rows, numbers].reset_index(drop=True),
                                      summary.loc[twins, numbers].reset_index(drop=True))


def test_tao2019(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _small_tao(monkeypatch)
    plain, added = _both("tao2019", tmp_path)
    _check(plain, added, {"Setup 1", "Setup 2", "Setup 3"}, twin="Uniform")
    assert f"| {LABEL} |" in (tmp_path / "added" / "ttests.md").read_text()


def test_abernethy2016(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(abernethy2016, "ABERNETHY_QUICK",
                        abernethy2016.Quick(levels_a=(2,), horizons=(500, 1000), levels_b=(2, 4), horizon=500))
    plain, added = _both("abernethy2016", tmp_path)
    _check(plain, added, set(plain.summary["experiment"]))  # parts (a) and (b)
    table = (tmp_path / "added" / "regret.md").read_text()
    assert f"| {LABEL} |" in table  # (a)
    assert all(f"| {order} | {LABEL} |" in table for order in ("increasing", "decreasing", "cyclic"))  # (b)


def test_gabillon2012(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gabillon2012, "QUICK", gabillon2012.Quick(
        problems=(4,), factors=(0.5, 1.0), generality=((4, 1, 0.05), (4, 2, 0.05)), instances=((4, 1, 0.1),),
        deltas=(0.1,), theorem1=(4,)))
    monkeypatch.setattr(gabillon2012, "FIXED_CONFIDENCE", dataclasses.replace(gabillon2012.FIXED_CONFIDENCE,
                                                                              cap=20000))
    plain, added = _both("gabillon2012", tmp_path)
    summary = plain.summary
    _check(plain, added, set(summary.loc[summary["part"].isin(["a", "b"]), "experiment"]), twin="Uniform")
    assert set(summary["part"]) == {"a", "b", "c", "d"}
    folder = tmp_path / "added"
    assert (folder / "fixed_budget.md").read_text().count(LABEL) == 3  # (a) at H_1, (a) sweep, (b)
    assert LABEL not in (folder / "fixed_confidence.md").read_text() + (folder / "theorem1.md").read_text()


def test_chen2017(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chen2017, "QUICK", chen2017.Quick(datasets=("TwoGroup",), ks=(100,), budgets=(2000, 4000)))
    plain, added = _both("chen2017", tmp_path)
    # not "CLUCB-PAC readings TwoGroup K=100". No twin: with 2 to 4 pulls per arm most of Uniform's answer is
    # ties, broken by its own seeded order, and the added Uniform's seed (from its label) is not the paper's
    _check(plain, added, {"TwoGroup K=100"})
    assert LABEL not in set(added.extras["sensitivity"]["agent"]) | set(added.extras["tuning"]["agent"])
    assert f"| {LABEL} |" in (tmp_path / "added" / "failure.md").read_text()


@pytest.mark.slow  # one to two minutes: every traffic env and Bayesian agent factors a 357 x 357 covariance
def test_hoffman2014(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hoffman2014, "QUICK", hoffman2014.Quick(
        budgets=(100, 400), runs=4, model_runs=2, tuning_runs=2, well_specified_runs=2,
        well_specified_budgets=(400,)))
    plain, added = _both("hoffman2014", tmp_path)
    _check(plain, added, {"v1 held-out profiles Bayesian", "v0 well-specified Bayesian"})  # not the blind ones
    rows = added.summary[added.summary["agent"] == LABEL]
    assert set(rows["budget"]) == {100, 400}  # T < K too, as the Bayesian agents
    pd.testing.assert_frame_equal(added.extras["instances"], plain.extras["instances"])  # BayesGap's replay
    assert f"| {LABEL} |" in (tmp_path / "added" / "traffic.md").read_text()
    assert LABEL not in set(added.extras["records"]["agent"])  # model selection: the paper's agents only


REPEATS = [("tao2019", "Uniform"), ("abernethy2016", "DKWUCB"), ("gabillon2012", "SR"), ("chen2017", "OptMAI"),
           ("hoffman2014", "BayesGap")]


@pytest.mark.parametrize(("paper", "label"), REPEATS, ids=[paper for paper, _ in REPEATS])
def test_a_repeated_label_is_refused_before_anything_runs(tmp_path: Path, paper: str, label: str) -> None:
    with pytest.raises(ValueError, match=f'--agent. label "{label}" is taken.*label = "Uniform \\(mine\\)"'):
        PAPERS[paper](tmp_path, runs=4, quick=True, jobs=1, progress=False, agents=(AgentSpec("Uniform", {}, label),))
    assert [path.name for path in tmp_path.iterdir()] == []  # refused before the first cell (or the tuning)


def test_two_added_agents_with_one_label_are_refused(tmp_path: Path) -> None:
    agents = (AgentSpec("Uniform", {}, "mine"), AgentSpec("LSA", {}, "mine"))
    with pytest.raises(ValueError, match=r'label "mine" is taken.*earlier --agent.*name = "LSA"'):
        PAPERS["tao2019"](tmp_path, runs=4, quick=True, jobs=1, progress=False, agents=agents)
    assert [path.name for path in tmp_path.iterdir()] == []


def test_cli_adds_an_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _small_tao(monkeypatch)
    argv = ["reproduce", "tao2019", "--quick", "--runs", "4", "--jobs", "1", "--out", str(tmp_path), "--quiet",
            "--agent", '{name = "Uniform", label = "U2"}']
    assert main(argv) == 0
    results = pd.read_csv(tmp_path / "results.csv")
    assert set(results.loc[results["agent"] == "U2", "experiment"]) == {"Setup 1", "Setup 2", "Setup 3"}


def test_cli_reports_the_reused_cells_and_recomputes_them_with_force(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    _small_tao(monkeypatch)
    argv = ["reproduce", "tao2019", "--quick", "--runs", "4", "--jobs", "1", "--out", str(tmp_path), "--quiet"]
    assert main(argv) == 0
    assert f"\nreused 0 stored cells from {tmp_path}\nfinished in " in capsys.readouterr().out
    results = (tmp_path / "results.csv").read_bytes()
    cells = sorted(tmp_path.glob("*/cells/*.npz"))
    assert len(cells) > 1
    assert main(argv) == 0
    assert f"\nreused {len(cells)} stored cells from {tmp_path}\n" in capsys.readouterr().out
    cells[0].write_bytes(b"not a cell")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(argv) == 0
    out = capsys.readouterr().out  # the damaged cell in one line, not a Python warning
    assert f"\nrecomputed a damaged cell: {cells[0].parent.parent}/cells/{cells[0].name} (unreadable" in out
    assert f"\nreused {len(cells) - 1} stored cells from {tmp_path}\n" in out
    assert not [w for w in caught if "damaged" in str(w.message)]
    assert main([*argv, "--force"]) == 0
    assert f"\nreused 0 stored cells from {tmp_path}; recomputed {len(cells)} cells: recomputed on request " \
           "(force)\n" in capsys.readouterr().out
    assert (tmp_path / "results.csv").read_bytes() == results  # the same numbers, recomputed


@pytest.mark.parametrize(("agent", "message"), [("Nope", "name='Nope' is unknown"),
                                                ('{name = "LSA"', "is not a TOML inline table")],
                         ids=["unknown name", "malformed table"])
def test_cli_agent_mistakes_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str,
                                         message: str) -> None:
    code: int | str | None
    try:
        code = main(["reproduce", "tao2019", "--quick", "--out", str(tmp_path / "out"), "--agent", agent])
    except SystemExit as exit_:  # argparse's own errors, made one line
        code = exit_.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("bandit-gym reproduce: error: argument --agent: ") and message in lines[0], err
    assert not (tmp_path / "out").exists()


def test_an_agent_that_plays_none_of_the_experiments_is_refused() -> None:
    from bandit_gym.studies._report import with_agents
    from bandit_gym.studies.abernethy2016.reproduce import abernethy2016_specs

    specs = abernethy2016_specs(runs=2, quick=True)
    with pytest.raises(ValueError, match="'LSA' plays thresholding envs; these experiments are threshold envs"):
        with_agents(specs, [AgentSpec("LSA")])
    with pytest.raises(ValueError, match="plays thresholding envs"):  # a learned policy of another family
        with_agents(specs, [AgentSpec("ArmwisePPO", {"problem": "thresholding"})])
    added = with_agents(specs, [AgentSpec("ArmwisePPO", {"problem": "threshold"}, "learned")])
    assert all(spec.agents[-1].display == "learned" for spec in added)
