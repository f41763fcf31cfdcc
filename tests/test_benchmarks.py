"""The performance suite runs (speed itself is printed by ``python -m benchmarks``, never asserted)."""

from __future__ import annotations

import pytest

from benchmarks.suite import main


@pytest.mark.slow
def test_suite_runs_quick(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quick", "--only", "W1", "W4"]) == 0
    out = capsys.readouterr().out
    assert "| W1 | LSA | make_vec + act |" in out and "| W4 | BayesGap |" in out
    assert "targets:" in out and "import bandit_gym < 0.35 s" in out
    assert "diagnosis: the env's compiled work alone" in out
    assert "| fastest peer (pulls/s) | ratio |" in out
