"""Every example runs; the CLI lists every env and agent."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

import bandit_gym
from bandit_gym.agents import AGENTS
from bandit_gym.cli import main

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out


def test_cli_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(env_id in out for env_id in bandit_gym.ENV_SPECS)
    assert all(name in out for name in AGENTS)


@pytest.mark.slow
def test_cli_reproduce_abernethy2016_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "abernethy2016", "--quick", "--runs", "10", "--out", str(tmp_path), "--quiet"]) == 0
    for name in ("results.csv", "regret.md", "uncensored.png", "censored.png"):
        assert (tmp_path / name).stat().st_size > 0
    table = (tmp_path / "regret.md").read_text()
    assert "| DKWUCB |" in table and "| cyclic | KMUCB |" in table
    assert "finished in" in capsys.readouterr().out
