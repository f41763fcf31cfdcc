"""Worker of tests/agents/test_obs_checks.py: hands every agent damaged observations and prints one JSON line per
case. Run in a subprocess (``python -m tests._obs_probe``), so that a crash of compiled code fails the test (the
last case is on stderr)."""

from __future__ import annotations

import json
import sys
import warnings

import gymnasium as gym
import numpy as np

import bandit_gym  # noqa: F401  (registers the envs)
from tests.conftest import AGENTS, make_agent, small_kwargs

ENVS = {"thresholding": ["ThresholdingBandit-Tao2019Setup1-v0"], "threshold": ["ThresholdBandit-v0"],
        "best_arm": ["BestArmIdentification-Audibert2010Problem1-v0", "CorrelatedBestArm-TrafficSynthetic-v0"],
        "top_k": ["TopKIdentification-Chen2017UniformK100-v0"], "multi_armed": ["MultiArmedBandit-v0"]}
#: case name -> (key, value written into it); the counts and sums cases damage the last pulled arm's entry
CASES = {"last_arm_huge": ("last_arm", 1e6), "last_arm_negative": ("last_arm", -5.0),
         "last_arm_nan": ("last_arm", np.nan), "last_arm_fraction": ("last_arm", 0.5),
         "budget_nan": ("budget_left", np.nan), "budget_huge": ("budget_left", 1e30),
         "budget_negative": ("budget_left", -1.0), "budget_inf": ("budget_left", np.inf),
         "counts_negative": ("counts", -3.0), "counts_nan": ("counts", np.nan), "sums_inf": ("sums", np.inf),
         "counts_strings": ("counts", "x"), "budget_complex": ("budget_left", 1j),
         "threshold_nan": ("threshold", np.nan),
         "m_zero": ("m", 0.0), "m_huge": ("m", 1e9), "epsilon_negative": ("epsilon", -1.0),
         "delta_one": ("delta", 1.0),
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
                for case, (key, value) in CASES.items():
                    bad = damaged(obs, key, value)
                    if bad is None:
                        continue
                    print(json.dumps([name, family, case, mid]), file=sys.stderr, flush=True)
                    agent = make_agent(name, env_id)
                    agent.reset(seed=0)
                    if mid:
                        agent.act(observations(name, family, False)[1])  # type: ignore[index]
                    row = {"agent": name, "family": family, "case": case, "mid": mid}
                    try:
                        action = np.asarray(agent.act(bad))
                        row["outcome"] = "action"
                        row["inside"] = bool(env.action_space.contains(action.astype(env.action_space.dtype)))
                    except (ValueError, TypeError) as error:
                        row["outcome"] = type(error).__name__
                        row["message"] = str(error)
                    except Exception as error:
                        row["outcome"] = f"unexpected {type(error).__name__}: {error}"
                    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
