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


def test_peer_best_arm_plays_our_side_of_each_pair() -> None:
    # the peer's side needs best-arm's own environment (numpy < 2): not installed here; ours runs through the engine
    from benchmarks import peer_best_arm

    tau, errors, cpu = peer_best_arm.ours(peer_best_arm.PAIRS[2], runs=4, seed=1)  # EB-TCI
    assert tau.shape == errors.shape == (4,) and (tau >= len(peer_best_arm.MEANS)).all() and cpu > 0
    assert {pair.peer["algo"] for pair in peer_best_arm.PAIRS} == {"track_and_stop", "top_two", "lil_ucb", "fws"}
