"""Every example runs; the CLI lists every env and agent."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

import bandit_gym
from bandit_gym.cli import main
from tests.conftest import AGENTS

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))
#: examples that must leave this file in ``example-output/`` (every file there must be non-empty)
FIGURES = {"compare_agents.py": "compare_agents.png", "render_gif.py": "lsa.gif",
           "train_ppo.py": "ppo-threshold-bandit/model.zip"}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("BANDIT_GYM_SMOKE", "1")  # tiny runs
    monkeypatch.chdir(tmp_path)  # figures go to tmp_path / "example-output"
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()
    output = tmp_path / "example-output"
    written = sorted(output.iterdir()) if output.exists() else []
    assert all(file.stat().st_size > 0 for file in written), [(f.name, f.stat().st_size) for f in written]
    if path.name in FIGURES:
        assert (output / FIGURES[path.name]).stat().st_size > 0


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_is_jupytext_percent(path: Path) -> None:
    import jupytext  # the test extra has it

    notebook = jupytext.read(path, fmt="py:percent")
    kinds = [cell.cell_type for cell in notebook.cells]
    assert kinds and kinds[0] == "markdown", f"{path.name} must open with a markdown cell (a title), got {kinds[:1]}"
    assert "code" in kinds, f"{path.name} has no code cell"
    assert notebook.cells[0].source.lstrip().startswith("# "), f"{path.name}: the first cell should be a # title"


def test_cli_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(env_id in out for env_id in bandit_gym.ENV_SPECS)
    assert all(name in out for name in AGENTS)
    listed = out.split("Agents (bandit_gym.agents; the learned ones, which register through its entry point: "
                       "bandit_gym.rl):")[1].split("\n\n")[0].splitlines()[1:]
    agents = [line for line in listed if not line.startswith("   ")]
    assert len(agents) == len(AGENTS)
    from bandit_gym.rl import ArmwisePPO  # a learned agent: its regimes, one indented line each

    assert [line.strip() for line in listed if line.startswith("   ")] == ArmwisePPO.regime_lines()
    for line in agents:  # whole sentences in plain text, whatever the docstring's layout
        assert "``" not in line and line.endswith("."), line


def test_an_agent_summary_is_its_first_paragraph_in_plain_text_cut_at_a_sentence() -> None:
    from bandit_gym.cli import _SUMMARY_LENGTH as SUMMARY_LENGTH
    from bandit_gym.cli import _summary as summary

    assert summary("""Pull the arm of largest ``mu + b``,
    ties at random.

    More.""") == "Pull the arm of largest mu + b, ties at random."
    long = "First sentence, short. " + "x" * SUMMARY_LENGTH + " end."
    assert summary(long) == "First sentence, short."
    assert summary("y" * (SUMMARY_LENGTH + 5) + ". Then more.") == "y" * (SUMMARY_LENGTH + 5) + "."
    assert summary(None) == ""


@pytest.mark.slow
def test_cli_reproduce_abernethy2016_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "abernethy2016", "--quick", "--runs", "10", "--out", str(tmp_path), "--quiet"]) == 0
    for name in ("results.csv", "regret.md", "uncensored.png", "censored.png"):
        assert (tmp_path / name).stat().st_size > 0
    table = (tmp_path / "regret.md").read_text()
    assert "| DKWUCB |" in table and "| cyclic | KMUCB |" in table
    assert "finished in" in capsys.readouterr().out


def test_cli_run_ends_with_the_readable_table_and_where_the_results_are(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text('env = "ThresholdingBandit-Tao2019Setup1-v0"\nagents = ["LSA", "APT", "Uniform"]\n'
                    "budgets = [100, 200]\nruns = 20\n")
    assert main(["run", str(spec), "--quiet", "--jobs", "1", "--out", str(tmp_path / "out")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "ThresholdingBandit-Tao2019Setup1-v0: mean aggregate_regret over 20 runs"
    table = lines[1:lines.index(next(line for line in lines if line.startswith("->")))]
    assert len(table) == 2 + 3 and all(len(line) < 40 for line in table)  # header, index name, one row per agent
    assert [line.split()[0] for line in table[2:]] == ["LSA", "APT", "Uniform"]
    assert f"-> {tmp_path / 'out' / 'results.csv'}" in "\n".join(lines) and lines[-1] == "reused 0 stored cells"
