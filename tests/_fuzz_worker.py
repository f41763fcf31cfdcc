"""Worker of tests/test_fuzz.py: Hypothesis searches over actions, reset options and agent observations, in a
subprocess (``python -m tests._fuzz_worker EXAMPLES``) so that a crash of compiled code fails the test with the
input that caused it (written to stderr before each call) instead of ending the test run.

Prints one JSON line: the examples tried per category, and the failures (an exception other than
ValueError/TypeError/RuntimeError, or an agent's action outside the action space)."""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import bandit_gym
from tests.conftest import AGENTS, make_agent, small_kwargs

ALLOWED = (ValueError, TypeError, RuntimeError)
ENV_IDS = sorted(bandit_gym.ENV_SPECS)
COUNTS = {"actions": 0, "reset options": 0, "agent observations": 0}
FAILURES: list[str] = []
_ENVS: dict[str, Any] = {}

DTYPES = st.sampled_from([np.int64, np.int32, np.uint64, np.uint8, np.float64, np.float32, np.bool_,
                          np.complex128, np.str_])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
                    st.text(max_size=3), st.complex_numbers(allow_nan=True))


def arrays(max_side: int) -> st.SearchStrategy[np.ndarray]:
    return DTYPES.flatmap(lambda dtype: hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, max_side=max_side)))


def _env(env_id: str) -> Any:
    if env_id not in _ENVS:
        _ENVS[env_id] = gym.make(env_id, **small_kwargs(env_id))
    return _ENVS[env_id]


def _announce(category: str, *what: Any) -> None:
    COUNTS[category] += 1
    print(json.dumps([category, *map(repr, what)])[:2000], file=sys.stderr, flush=True)


def _call(category: str, what: str, call: Any) -> Any:
    try:
        return call()
    except ALLOWED:
        return None
    except Exception as error:  # the failure this test looks for
        FAILURES.append(f"{category}: {what}: {type(error).__name__}: {error}"[:500])
        return None


def _valid_action(env: Any, action: Any) -> bool:
    try:
        return bool(env.action_space.contains(np.asarray(action).astype(env.action_space.dtype)))
    except (ValueError, TypeError, OverflowError):
        return False


@given(env_id=st.sampled_from(ENV_IDS), seed=st.integers(0, 2**31), steps=st.integers(0, 3),
       action=st.one_of(SCALARS, arrays(12), st.lists(st.integers(-3, 12), max_size=12)))
def fuzz_actions(env_id: str, seed: int, steps: int, action: Any) -> None:
    env = _env(env_id)
    env.reset(seed=seed)
    env.action_space.seed(seed)
    for _ in range(steps):
        if any(env.step(env.action_space.sample())[2:4]):
            break  # stepping on after the end is a ValueError: a case of its own
    _announce("actions", env_id, seed, steps, action)
    _call("actions", f"{env_id} step({action!r})", lambda: env.step(action))


@given(env_id=st.sampled_from(ENV_IDS), seed=st.one_of(st.none(), st.integers(0, 2**31)),
       options=st.one_of(SCALARS, st.dictionaries(st.sampled_from(["means", "distributions", "survival", "nope"]),
                                                  st.one_of(SCALARS, arrays(6), st.lists(SCALARS, max_size=4)),
                                                  max_size=2)))
def fuzz_reset_options(env_id: str, seed: int | None, options: Any) -> None:
    env = _env(env_id)
    _announce("reset options", env_id, seed, options)
    _call("reset options", f"{env_id} reset(seed={seed}, options={options!r})",
          lambda: env.reset(seed=seed, options=options))


def _pairs() -> list[tuple[str, str]]:
    families = {"thresholding": "ThresholdingBandit-Tao2019Setup1-v0", "threshold": "ThresholdBandit-v0",
                "best_arm": "BestArmIdentification-Audibert2010Problem1-v0",
                "top_k": "TopKIdentification-Chen2017UniformK100-v0", "multi_armed": "MultiArmedBandit-v0"}
    pairs = [(name, families[family]) for name, cls in AGENTS.items() for family in cls.families
             if name != "SB3Agent" and not (name in _BAYESIAN and family == "best_arm")]
    return pairs + [(name, "CorrelatedBestArm-TrafficSynthetic-v0") for name in _BAYESIAN]


_BAYESIAN = ("BayesGap", "ThompsonSampling", "BayesUCB", "GPUCB", "EI", "PI")


@given(pair=st.sampled_from(_pairs()), seed=st.integers(0, 2**31), mid=st.booleans(), key=st.integers(0, 20),
       how=st.sampled_from(["replace", "scalar", "delete", "extra", "value"]),
       replacement=st.one_of(arrays(12), SCALARS), value=st.one_of(st.floats(allow_nan=True), st.integers(-5, 2**40)))
def fuzz_observations(pair: tuple[str, str], seed: int, mid: bool, key: int, how: str, replacement: Any,
                      value: Any) -> None:
    name, env_id = pair
    # a fresh env: the shared one may have had a first reset that raised (fuzz_reset_options), after which
    # Gymnasium 1.4's passive checker fails its first step (its reset data was never stored)
    env = gym.make(env_id, **small_kwargs(env_id))
    obs, _ = env.reset(seed=seed)
    agent = make_agent(name, env_id)
    agent.reset(seed=seed)
    if mid:
        obs, *_ = env.step(agent.act(obs))
    obs = {k: v.copy() for k, v in obs.items()}
    target = sorted(obs)[key % len(obs)]
    if how == "replace":
        obs[target] = replacement
    elif how == "scalar":
        obs[target] = np.asarray(value)
    elif how == "delete":
        del obs[target]
    elif how == "extra":
        obs["delta" if key % 2 else "m"] = np.asarray([value])
    else:
        obs[target].flat[key % obs[target].size] = value if np.isfinite(value) and abs(value) < 1e30 else np.nan
    _announce("agent observations", name, env_id, seed, mid, how, target, replacement, value)
    action = _call("agent observations", f"{name} on {env_id}: {how} {target}", lambda: agent.act(obs))
    if action is not None and not _valid_action(env, action):
        FAILURES.append(f"agent observations: {name} on {env_id}: {how} {target}: action {action!r} outside "
                        f"{env.action_space}")


def main() -> None:
    examples = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    warnings.simplefilter("ignore")
    for search in (fuzz_actions, fuzz_reset_options, fuzz_observations):
        configured = settings(max_examples=examples, derandomize=True, deadline=None, database=None,
                              suppress_health_check=list(HealthCheck))(search)
        configured()
    print(json.dumps({"examples": COUNTS, "failures": FAILURES}))


if __name__ == "__main__":
    main()
