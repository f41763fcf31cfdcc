"""Agents check the observation they are handed before any compiled code runs: every agent of the registry, on
every family it plays, at an episode's start and in its middle, against damaged observations (out-of-range arm
indices, NaN or huge budgets, negative counts, strings, complex numbers, out-of-range constants). Each is
rejected with a ValueError or TypeError naming the key; the valid extremes give an action inside the action
space. The cases run in a subprocess (tests/_obs_probe.py), so that a crash of compiled code fails the test
instead of ending the test run. The probe compiles every agent's kernels in a fresh process (about 4 minutes on 2
busy cores), so its checks make one test, marked slow: as three tests, each xdist worker that got one of them ran
the probe again."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from tests.conftest import AGENTS, TESTS, module_command

ROOT = Path(__file__).resolve().parents[2]
#: valid observations at the edge of what is accepted
EXTREMES = {"budget_max", "budget_zero", "counts_max"}
#: damaged constants of the family (m, which the agents index with, is checked at every call)
CONSTANTS = {"threshold_nan", "epsilon_negative", "delta_one"}


@pytest.fixture(scope="module")
def probe_rows() -> list[dict]:
    done = subprocess.run(module_command("tests._obs_probe"), cwd=TESTS, capture_output=True, text=True)
    last = done.stderr.strip().splitlines()[-1:] or ["(none)"]
    assert done.returncode == 0, f"the probe died with code {done.returncode}; its last case: {last[0]}"
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.slow
def test_every_agent_rejects_damaged_observations_and_accepts_the_valid_extremes(probe_rows: list[dict]) -> None:
    every_agent_and_family_is_probed(probe_rows)
    damaged_observations_are_rejected_naming_the_key(probe_rows)
    valid_extremes_give_actions_inside_the_action_space(probe_rows)


def every_agent_and_family_is_probed(probe_rows: list[dict]) -> None:
    seen = {(row["agent"], row["family"]) for row in probe_rows}
    assert seen == {(name, family) for name, cls in AGENTS.items() for family in cls.families}
    counts = Counter(row["outcome"] for row in probe_rows)
    print(f"{len(probe_rows)} damaged or extreme observations: {dict(counts)}")


def damaged_observations_are_rejected_naming_the_key(probe_rows: list[dict]) -> None:
    from tests._obs_probe import CASES

    bad = [row for row in probe_rows if row["case"] not in EXTREMES]
    assert len(bad) > 800
    # The family's constants are checked whenever an episode begins (the only time an env changes them); one
    # changed in the middle of an episode (not an env's observation) may pass, and must still give a valid action.
    constants = [row for row in bad if row["mid"] and row["case"] in CONSTANTS and row["outcome"] == "action"]
    assert all(row["inside"] for row in constants), constants[:5]
    wrong = [row for row in bad if row["outcome"] not in ("ValueError", "TypeError") and row not in constants]
    assert not wrong, wrong[:5]
    unnamed = [row for row in bad if row not in constants and f"obs[{CASES[row['case']][0]!r}]" not in row["message"]]
    assert not unnamed, unnamed[:5]


def valid_extremes_give_actions_inside_the_action_space(probe_rows: list[dict]) -> None:
    rows = [row for row in probe_rows if row["case"] in EXTREMES]
    # mid-episode, a budget left above the episode's starting budget is not an observation of that episode
    # and a trained SB3 policy refuses a budget other than its training budget (its documented refusal)
    # (and EBTCIUnknownVariances, which keeps each arm's squared deviations from the pulls it sees when the
    # observation has none, refuses counts that did not come one pull at a time: its documented refusal)
    refused = [row for row in rows if row["outcome"] != "action" and not (
        row["agent"] == "SB3Agent" and "trained on budget" in row["message"]) and not (
        row["agent"] == "EBTCIUnknownVariances" and "missed some" in row["message"])]
    others = [row for row in refused if not (row["case"] == "budget_max" and row["mid"])]
    assert not others, others[:5]
    assert all(row["inside"] for row in rows if row["outcome"] == "action")
    assert sum(row["outcome"] == "action" for row in rows) > 150


def test_the_identity_cache_does_not_skip_the_value_checks() -> None:
    """A vector env hands the same arrays at every step; their dtypes and shapes are checked once, their values
    at every call."""
    envs = gym.make_vec("ThresholdingBandit-Tao2019Setup1-v0", num_envs=4, vectorization_mode="vector_entry_point")
    obs, _ = envs.reset(seed=0)
    agent = AGENTS["APT"]()
    agent.reset(seed=0)
    obs, *_ = envs.step(agent.act(obs))
    agent.act(obs)
    obs["last_arm"][2, 0] = 1e6  # written in place: the arrays are the ones validated before
    with pytest.raises(ValueError, match=r"obs\['last_arm'\] must be an arm index 0\.\.9.*copy 2"):
        agent.act(obs)


def test_a_batch_of_strings_is_a_type_error() -> None:
    agent = AGENTS["LSA"]()
    agent.reset(seed=0)
    obs, _ = gym.make("ThresholdingBandit-Tao2019Setup1-v0").reset(seed=0)
    obs = {**obs, "sums": np.array(["a"] * 10)}
    with pytest.raises(TypeError, match=r"obs\['sums'\] must hold real numbers"):
        agent.act(obs)
