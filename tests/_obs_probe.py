"""Worker of tests/agents/test_obs_checks.py: hands every agent damaged observations and prints one JSON line per
case. Run in a subprocess (``python -m tests._obs_probe``), so that a crash of compiled code fails the test (the
last case is on stderr). Beside the damaged values (``CASES``), each key of an env's observation is taken out in turn,
and every key at once (the case ``missing_every_key``, an empty dict), at an episode's start."""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

import gymnasium as gym
import numpy as np

import bandit_gym  # noqa: F401  (registers the envs)
from bandit_gym.families import CONTRACTS
from bandit_gym.families.threshold import LEVEL_KEYS
from tests.conftest import AGENTS, make_agent, small_kwargs

ENVS = {"thresholding": ["ThresholdingBandit-Tao2019Setup1-v0"], "threshold": ["ThresholdBandit-v0"],
        "best_arm": ["BestArmIdentification-Audibert2010Problem1-v0", "CorrelatedBestArm-TrafficSynthetic-v0"],
        "top_k": ["TopKIdentification-Chen2017UniformK100-v0"], "multi_armed": ["MultiArmedBandit-v0"]}
#: case name -> (key, value written into it); the counts and sums cases damage the last pulled arm's entry, the
#: level counts cases that arm's entry at its highest level
CASES = {"last_arm_huge": ("last_arm", 1e6), "last_arm_negative": ("last_arm", -5.0),
         "last_arm_nan": ("last_arm", np.nan), "last_arm_fraction": ("last_arm", 0.5),
         "budget_nan": ("budget_left", np.nan), "budget_huge": ("budget_left", 1e30),
         "budget_negative": ("budget_left", -1.0), "budget_inf": ("budget_left", np.inf),
         "counts_negative": ("counts", -3.0), "counts_nan": ("counts", np.nan), "sums_inf": ("sums", np.inf),
         "counts_strings": ("counts", "x"), "budget_complex": ("budget_left", 1j),
         "threshold_nan": ("threshold", np.nan), "threshold_inf": ("threshold", np.inf),
         "m_zero": ("m", 0.0), "m_huge": ("m", 1e9), "epsilon_negative": ("epsilon", -1.0),
         "delta_one": ("delta", 1.0), "delta_zero": ("delta", 0.0), "delta_two": ("delta", 2.0),
         "delta_nan": ("delta", np.nan),
         # the threshold bandit's per-level counts, at the highest level of the arm pulled last
         "level_exceed_nan": ("level_exceed", np.nan), "level_trials_negative": ("level_trials", -5.0),
         # valid extremes: accepted, and the action must lie in the action space
         "budget_max": ("budget_left", 2.0**53), "budget_zero": ("budget_left", 0.0),
         "counts_max": ("counts", 2.0**53)}


def damaged(obs: dict[str, np.ndarray], key: str, value: object) -> dict[str, np.ndarray] | None:
    if key not in obs:
        return None
    out = {name: array.copy() for name, array in obs.items()}
    if isinstance(value, str):
        out[key] = np.full(out[key].shape, value)
    elif isinstance(value, complex):
        out[key] = out[key].astype(np.complex128) + value
    elif key in ("counts", "sums"):
        out[key][max(int(out["last_arm"][0]), 0)] = value
    elif key in LEVEL_KEYS:  # (K * m,): arm i's level j at i * m + j - 1
        levels = out[key].size // out["counts"].size
        out[key][(max(int(out["last_arm"][0]), 0) + 1) * levels - 1] = value
    else:
        out[key][:] = value
    return out


def observations(name: str, family: str, mid: bool) -> tuple[gym.Env, dict[str, np.ndarray]] | None:
    for env_id in ENVS[family]:
        env = gym.make(env_id, **small_kwargs(env_id))
        obs, _ = env.reset(seed=0)
        agent = make_agent(name, env_id)
        agent.reset(seed=0)
        try:
            action = agent.act(obs)
        except ValueError:
            continue  # the agent does not play this env (e.g. a Bayesian agent on an uncorrelated instance)
        if mid:
            obs, *_ = env.step(action)
        return env, obs
    return None


def without_keys(obs: dict[str, np.ndarray]) -> dict[str, tuple[str, dict[str, np.ndarray]]]:
    """Case name -> (the key taken out, or "" for every key; the observation without it)."""
    cases = {f"missing_{key}": (key, {name: array for name, array in obs.items() if name != key}) for key in obs}
    return {**cases, "missing_every_key": ("", {})}


def outcome(row: dict, agent: Any, env: gym.Env, obs: dict[str, np.ndarray]) -> dict:
    """``row`` with what ``agent.act(obs)`` did: an action (and whether it lies in the action space) or an error."""
    try:
        action = np.asarray(agent.act(obs))
        row["outcome"] = "action"
        row["inside"] = bool(env.action_space.contains(action.astype(env.action_space.dtype)))
    except (ValueError, TypeError) as error:
        row["outcome"] = type(error).__name__
        row["message"] = str(error)
    except Exception as error:
        row["outcome"] = f"unexpected {type(error).__name__}: {error}"
    return row


def main() -> None:
    warnings.simplefilter("ignore")
    for name, cls in AGENTS.items():
        for family in cls.families:
            for mid in (False, True):
                found = observations(name, family, mid)
                if found is None:
                    continue
                env, obs = found
                env_id = env.spec.id  # type: ignore[union-attr]
                cases = {case: (key, damaged(obs, key, value)) for case, (key, value) in CASES.items()}
                cases.update({} if mid else without_keys(obs))
                for case, (key, bad) in cases.items():
                    if bad is None:
                        continue
                    print(json.dumps([name, family, case, mid]), file=sys.stderr, flush=True)
                    agent = make_agent(name, env_id)
                    agent.reset(seed=0)
                    if mid:
                        agent.act(observations(name, family, False)[1])  # type: ignore[index]
                    # the keys the agent reads (the level counts only if it reads them), and those handed to it
                    reads = [*CONTRACTS[family].agent_keys, *(LEVEL_KEYS if agent._reads_levels() else ())]
                    row = {"agent": name, "family": family, "case": case, "mid": mid, "key": key,
                           "reads_key": key in reads, "keys": sorted(bad)}
                    print(json.dumps(outcome(row, agent, env, bad)), flush=True)


if __name__ == "__main__":
    main()
