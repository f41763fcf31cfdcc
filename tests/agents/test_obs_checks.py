"""Agents check the observation they are handed before any compiled code runs: every agent of the registry, on
every family it plays, at an episode's start and in its middle, against damaged observations (out-of-range arm
indices, NaN or huge budgets, negative counts, strings, complex numbers, out-of-range constants, the threshold
bandit's level counts) and observations without some of their keys. Each is rejected with a ValueError or TypeError
naming the key; a missing key is reported as missing, naming the family the agent plays, unless what is left is
another family's observation; the valid extremes give an action inside the action space. The cases run in a
subprocess (tests/_obs_probe.py), so that a crash of compiled code fails the test instead of ending the test run.
The probe compiles every agent's kernels in a fresh process (about 4 minutes on 2 busy cores), so its checks make
one test, marked slow: as three tests, each xdist worker that got one of them ran the probe again."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from collections import Counter
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from bandit_gym.families import CONTRACTS, Family, family_of
from tests.conftest import AGENTS, TESTS, make_agent, module_command, small_kwargs

ROOT = Path(__file__).resolve().parents[2]
#: valid observations at the edge of what is accepted
EXTREMES = {"budget_max", "budget_zero", "counts_max"}
#: what was reported accepted, each refused now at the first act that sees it (mid-episode: after a valid start):
#: (agents, cases, at an episode's start too)
REPORTED = [
    (("DKWUCB", "OPTIM"), ("level_exceed_nan", "level_trials_negative"), True),
    (("APT", "LSA", "UCBE"), ("threshold_nan", "threshold_inf"), False),
    (("AdaptiveTopK", "CLUCBPAC", "OptMAI"), ("epsilon_negative", "delta_zero", "delta_two", "delta_nan"), False),
]


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
    the_reported_observations_are_refused(probe_rows)
    missing_keys_are_reported_as_missing(probe_rows)
    valid_extremes_give_actions_inside_the_action_space(probe_rows)


def every_agent_and_family_is_probed(probe_rows: list[dict]) -> None:
    seen = {(row["agent"], row["family"]) for row in probe_rows}
    assert seen == {(name, family) for name, cls in AGENTS.items() for family in cls.families}
    counts = Counter(row["outcome"] for row in probe_rows)
    print(f"{len(probe_rows)} damaged, extreme or incomplete observations: {dict(counts)}")


def damaged_observations_are_rejected_naming_the_key(probe_rows: list[dict]) -> None:
    from tests._obs_probe import CASES

    bad = [row for row in probe_rows if row["case"] in CASES and row["case"] not in EXTREMES]
    assert len(bad) > 800
    # A key the agent does not read (the threshold bandit's level counts, for the agents that estimate no arm's
    # distribution) may hold anything: the action must still lie in the action space. The family's constants are
    # refused in the middle of an episode as at its start.
    unread = [row for row in bad if not row["reads_key"] and row["outcome"] == "action"]
    assert all(row["inside"] for row in unread), unread[:5]
    wrong = [row for row in bad if row["outcome"] not in ("ValueError", "TypeError") and row not in unread]
    assert not wrong, wrong[:5]
    unnamed = [row for row in bad if row not in unread and f"obs[{CASES[row['case']][0]!r}]" not in row["message"]]
    assert not unnamed, unnamed[:5]


def the_reported_observations_are_refused(probe_rows: list[dict]) -> None:
    rows = {(row["agent"], row["case"], row["mid"]): row for row in probe_rows}
    for agents, cases, at_start_too in REPORTED:
        for name, case, mid in itertools.product(agents, cases, (True, False) if at_start_too else (True,)):
            row = rows[name, case, mid]
            assert row["outcome"] == "ValueError" and "must be" in row["message"] and "got" in row["message"], row


def missing_keys_are_reported_as_missing(probe_rows: list[dict]) -> None:
    """An observation without some of its keys is refused naming the keys it lacks of a family the agent plays (the
    key taken out, for an agent of one family), unless what is left is an observation of another family
    (``really_is``): then that family is named. What is left of an observation of a family the agent plays is
    played, or refused naming the key or that family (a policy trained on other keys, or on another family)."""
    rows = [row for row in probe_rows if row["case"].startswith("missing_")]
    assert len(rows) > 350 and {row["case"] for row in rows} >= {"missing_every_key", "missing_m", "missing_delta"}
    unexpected = []
    for row in rows:
        keys, message = set(row["keys"]), row.get("message", "")
        played = [str(family) for family in AGENTS[row["agent"]].families]
        family, other = family_of(keys), really_is(keys, played)
        if family in played and set(CONTRACTS[family].agent_keys) <= keys:
            ok = row["outcome"] == "action" or f"'{row['key']}'" in message or f"{family} env" in message
        elif other is not None:
            ok = f"not a {other!r} env" in message
        else:  # the keys lacking of the family named, one the agent plays; the key taken out, if it plays one
            named = re.match(r"obs lacks the keys (\[.*?\]) of a '(\w+)' env's observation", message)
            lacking = named and [key for key in CONTRACTS[Family(named[2])].agent_keys if key not in keys]
            ok = bool(named) and named[2] in played and named[1] == str(lacking) and (
                len(played) > 1 or not row["key"] or row["key"] in lacking)
        if not ok:
            unexpected.append(row)
    assert not unexpected, (len(unexpected), unexpected[:5])


def really_is(keys: set[str], played: list[str]) -> str | None:
    """The family whose observation ``keys`` is: the one ``family_of`` reads, if ``keys`` hold every key its agents
    read and no key that only the observations of the families in ``played`` hold; else None."""
    family = family_of(keys)
    theirs = set().union(*(CONTRACTS[Family(name)].observation_keys for name in played))
    if set(CONTRACTS[family].agent_keys) <= keys and not keys & (theirs - set(CONTRACTS[family].observation_keys)):
        return str(family)
    return None


def valid_extremes_give_actions_inside_the_action_space(probe_rows: list[dict]) -> None:
    rows = [row for row in probe_rows if row["case"] in EXTREMES]
    assert {row["case"] for row in rows} == EXTREMES
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


@pytest.mark.parametrize("family", list(CONTRACTS), ids=str)
def test_the_compiled_screen_lets_through_exactly_what_the_contract_allows(family: Family) -> None:
    """The compiled pass screens the family's constants and the level counts at every call, in float32 (the dtype of
    every array an agent reads): a value it lets through must be one the contract's check allows, or a bad value
    would pass in the middle of an episode; a valid one must pass, or the fast path would be lost."""
    from bandit_gym.agents import _checks

    contract = CONTRACTS[family]
    n, k, m = 2, 3, 4
    last = np.full((n, 1), 1.0, np.float32)  # within an episode: no copy begins one
    budget, start = np.full((n, 1), 5.0, np.float32), np.full(n, 9, np.int64)
    counts, sums = np.ones((n, k), np.float32), np.ones((n, k), np.float32)
    edges = [0.0, -0.0, 1.0, 0.5, -1.0, 2.0, 2.0**53, 2.0**54, 1e-45, 5e-324, 1 - 2.0**-24, 1 - 2.0**-53,
             3.4028235e38, -3.4028235e38, np.finfo(np.float64).max, np.nan, np.inf, -np.inf]
    for constant in (True, False):
        bounds, table = (contract.constants, contract.constant_table) if constant else (contract.level_bounds,
                                                                                      contract.level_table)
        for row, (key, allowed) in enumerate(bounds.items()):
            for value in edges:
                with np.errstate(over="ignore"):
                    values = np.full((n, 1 if constant else k * m), np.float32(value))
                others = [np.full_like(values, 0.5 if constant else 1.0) for _ in range(len(bounds) - 1)]
                blocks = (*others[:row], values, *others[row:])  # the others valid (0.5 for every constant)
                if constant:
                    screened = _checks.needs_a_closer_look(last, budget, counts, sums, start, True, blocks, table)
                else:
                    screened = _checks.levels_need_a_look(blocks, table, last, k, True)
                    assert _checks.levels_need_a_look(blocks, table, last, k, False) == screened  # every arm bad
                assert screened == (not allowed.holds(values).all()), (family, key, value)


def test_within_episodes_the_level_screen_reads_the_pulled_arms_levels_and_at_a_start_every_entry() -> None:
    """Between two steps an env changes only the levels of the arm each copy pulled: within episodes the screen
    reads those m entries per copy (the cost of a call does not grow with K * m), every entry otherwise."""
    from bandit_gym.agents import _checks

    contract = CONTRACTS[Family.THRESHOLD]
    n, k, m = 3, 4, 5
    last = np.array([[2.0], [0.0], [3.0]], np.float32)
    for copy, arm in itertools.product(range(n), range(k)):
        for level in range(m):
            blocks = tuple(np.ones((n, k * m), np.float32) for _ in contract.level_bounds)
            blocks[-1][copy, arm * m + level] = np.nan
            pulled = arm == int(last[copy, 0])
            assert _checks.levels_need_a_look(blocks, contract.level_table, last, k, False) == pulled
            assert _checks.levels_need_a_look(blocks, contract.level_table, last, k, True)
    view = np.ones((n, 2 * k * m), np.float32)[:, ::2]  # not contiguous: read in place, no copy made
    assert not _checks.levels_need_a_look((view, view), contract.level_table, last, k, False)


def test_a_bad_level_count_of_the_pulled_arm_is_refused_within_an_episode_of_many_levels() -> None:
    """Past ``LEVEL_SCAN_WIDTH`` level counts per copy the screen reads, within an episode, the pulled arm's m entries
    alone: a bad one is still refused at the first ``act`` that sees it, naming the arm's entry."""
    from bandit_gym.agents._observations import LEVEL_SCAN_WIDTH
    from tests._obs_probe import damaged

    k, m = 30, 20
    assert k * m > LEVEL_SCAN_WIDTH
    survival = np.linspace(1.0, 0.5, k)[:, None] * np.linspace(0.95, 0.05, m)  # a unique best arm at each level
    env = gym.make("ThresholdBandit-v0", survival=survival, horizon=50)
    agent = AGENTS["DKWUCB"]()
    obs, _ = env.reset(seed=0)
    agent.reset(seed=0)
    obs, *_ = env.step(agent.act(obs))
    arm = int(obs["last_arm"][0])
    entry = rf"obs\['level_trials'\]\[{(arm + 1) * m - 1}\] \(arm {arm}, level {m}\)"
    with pytest.raises(ValueError, match=rf"{entry} must be .*; got "):
        agent.act(damaged(obs, "level_trials", -5.0))
    assert np.asarray(agent.act(obs)).size


def reported_cases() -> list[tuple[str, str, bool]]:
    return [(name, case, mid) for agents, cases, at_start_too in REPORTED
            for name, case, mid in itertools.product(agents, cases, (False, True) if at_start_too else (True,))]


@pytest.mark.parametrize(("name", "case", "mid"), reported_cases())
def test_each_reported_observation_is_refused_at_the_first_act_that_sees_it(name: str, case: str, mid: bool) -> None:
    """What was reported accepted (the level counts; a constant of the family in the middle of an episode) is
    refused naming the key, the value and what is allowed, at the first ``act`` that sees it, by the contract."""
    from tests._obs_probe import CASES, ENVS, damaged

    key, value = CASES[case]
    family = str(AGENTS[name].families[0])
    env_id = ENVS[family][0]
    env = gym.make(env_id, **small_kwargs(env_id))
    obs, _ = env.reset(seed=0)
    agent = make_agent(name, env_id)
    agent.reset(seed=0)
    if mid:
        obs, *_ = env.step(agent.act(obs))
    bad = damaged(obs, key, value)
    allowed = {**CONTRACTS[Family(family)].constants, **CONTRACTS[Family(family)].level_bounds}[key].allowed
    with pytest.raises(ValueError, match=rf"obs\['{key}'\].* must be {re.escape(allowed)}; got np\.float32\("
                                         rf"{re.escape(repr(float(np.float32(value))))}\)$"):
        agent.act(bad)
    assert np.asarray(agent.act(obs)).size  # the valid observation is still played


def test_a_missing_key_is_reported_as_missing_naming_the_family_the_agent_plays() -> None:
    thresholding, _ = gym.make("ThresholdingBandit-v0").reset(seed=0)
    threshold, _ = gym.make("ThresholdBandit-v0", horizon=60).reset(seed=0)
    top_k, _ = gym.make("TopKIdentification-Chen2017UniformK100-v0", budget=60).reset(seed=0)
    with pytest.raises(ValueError, match=r"^obs lacks the keys \['budget_left', .*'last_value'\] of a 'thresholding' "
                                         r"env's observation; APT needs"):
        AGENTS["APT"]().act({})
    without = {key: value for key, value in thresholding.items() if key != "epsilon"}  # reads as the threshold bandit
    with pytest.raises(ValueError, match=r"^obs lacks the keys \['epsilon'\] of a 'thresholding' env's observation"):
        AGENTS["LSA"]().act(without)
    without = {key: value for key, value in threshold.items() if key != "threshold"}  # reads as a multi-armed bandit
    with pytest.raises(ValueError, match=r"^obs lacks the keys \['threshold'\] of a 'threshold' env's observation"):
        AGENTS["UCB"]().act(without)
    without = {key: value for key, value in top_k.items() if key != "m"}
    with pytest.raises(ValueError, match=r"^obs lacks the keys \['m'\] of a 'top_k' env's observation"):
        AGENTS["CLUCBPAC"]().act(without)
    # what is left is another family's observation: that family is named
    without = {key: value for key, value in top_k.items() if key != "delta"}  # a best-arm observation
    with pytest.raises(ValueError, match=r"^CLUCBPAC plays \('top_k',\) envs, not a 'best_arm' env: .* \(obs lacks "
                                         r"\['delta'\] of a 'top_k' env's\)$"):
        AGENTS["CLUCBPAC"]().act(without)
    with pytest.raises(ValueError, match=r"^UCB plays \('threshold',\) envs, not a 'thresholding' env"):
        AGENTS["UCB"]().act(thresholding)
