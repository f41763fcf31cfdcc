"""The compiled rules (numba) against their plain implementation: the same Python source run by the interpreter.

Every compiled agent rule, step driver and whole-episode kernel is a Python function that numba compiles. With
``NUMBA_DISABLE_JIT=1`` numba compiles nothing and the interpreter runs that source as written, on numpy
arrays and records: the plain implementation. The compiled code must agree with it bit for bit, on every action
of a step-by-step play and on every number of a compiled rollout. A difference would show a place where numba's
arithmetic, integer widths, float32 reads, missing bounds checks or parallel loops make the compiled agent
another algorithm than its source.
"""

from __future__ import annotations

import inspect
import os
import subprocess
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.rollout import play_compiled
from tests.conftest import AGENTS, TESTS, family_of_id, make_agent, python_command

ROOT = Path(__file__).resolve().parents[2]

#: one env per family (a small budget; a compiled rollout needs common random numbers)
ENVS = {
    "thresholding": ("ThresholdingBandit-Tao2019Setup1-v0", {"budget": 40, "common_random_numbers": True}),
    "threshold": ("ThresholdBandit-v0", {"horizon": 40}),
    "best_arm": ("BestArmIdentification-Audibert2010Problem4-v0", {"budget": 60, "common_random_numbers": True}),
    "top_k": ("TopKIdentification-Chen2017TwoGroupK100-v0", {"budget": 150, "common_random_numbers": True}),
    "multi_armed": ("MultiArmedBandit-v0", {"budget": 40}),
    "correlated": ("CorrelatedBestArm-v0", {"budget": 30}),
}
#: the fixed-confidence rules also play whole fixed-confidence episodes (GK 2016's first instance, 400 pulls at most)
FIXED_CONFIDENCE = ("BestArmIdentification-v0", {"means": [0.5, 0.45, 0.43, 0.4], "setting": "fixed_confidence",
                                                 "budget": 400, "common_random_numbers": True})
#: the agents whose decisions are the package's own code (the learned policies are torch networks)
COMPILED = [name for name in AGENTS if name not in ("SB3Agent", "ArmwisePPO")]
COPIES = 3


def _stopped_by_a_component(name: str) -> bool:
    """Whether the agent, with its default parameters, is a fixed-confidence rule stopped by a stopping component
    (not by its own paper's rule)."""
    cls = AGENTS[name]
    if not (isinstance(cls, type) and issubclass(cls, BestArmAgent)):
        return False
    stopping = inspect.signature(cls).parameters.get("stopping")
    return stopping is not None and stopping.default != "own"


def _cases() -> list[tuple[str, str, dict]]:
    """(agent, env id, env arguments): each agent on its families' envs; the Bayesian ones on the correlated env."""
    cases = []
    for name in COMPILED:
        for family, (env_id, kwargs) in ENVS.items():
            if family == "correlated" and ".bayesian." not in AGENTS[name].__module__:
                continue
            if family_of_id(env_id) in AGENTS[name].families:
                cases.append((name, env_id, kwargs))
        if _stopped_by_a_component(name):
            cases.append((name, *FIXED_CONFIDENCE))
    return cases


def play_all(out: str) -> None:
    """Every compiled agent on its family's env: the actions of a step-by-step play of ``COPIES`` copies, and
    the numbers of its compiled rollout where it has one; saved to ``out`` (npz)."""
    results = {}
    for name, env_id, kwargs in _cases():
        envs = gym.make_vec(env_id, num_envs=COPIES, vectorization_mode="vector_entry_point", **kwargs)
        agent = make_agent(name, env_id)
        obs, _ = envs.reset(seed=3)
        agent.reset(seed=4)
        actions = []
        for _ in range(1000):  # every episode ends within its budget
            action = np.array(agent.act(obs), copy=True)
            actions.append(action)
            obs, _, terminated, truncated, _ = envs.step(action)
            if (terminated | truncated).all():
                break
        results[f"{name}@{env_id}/steps"] = np.stack(actions)
        rolled = play_compiled(envs, make_agent(name, env_id), seed=5)
        for key, values in (rolled or {}).items():
            results[f"{name}@{env_id}/rollout/{key}"] = values
        envs.close()
    np.savez(out, **results)


@pytest.mark.slow  # numba compiles every agent's kernels (most of its minute); the interpreted run takes seconds
def test_every_compiled_rule_equals_its_plain_python_source(tmp_path: Path) -> None:
    """Actions and rollouts of every compiled agent, compiled here and interpreted in a subprocess with
    ``NUMBA_DISABLE_JIT=1``: equal bit for bit."""
    compiled, plain = tmp_path / "compiled.npz", tmp_path / "plain.npz"
    play_all(str(compiled))
    # the warnings filter: the sample streams' uint64 hash wraps around by design; numpy warns where numba does not
    code = f"import warnings; warnings.simplefilter('ignore', RuntimeWarning); " \
           f"from tests.agents.test_kernels import play_all; play_all({str(plain)!r})"
    subprocess.run(python_command(code), check=True, cwd=TESTS, env={**os.environ, "NUMBA_DISABLE_JIT": "1"})
    got, want = np.load(plain), np.load(compiled)
    assert sorted(got.files) == sorted(want.files)
    played = {key.split("@")[0] for key in want.files}
    assert played == set(COMPILED), set(COMPILED) - played  # every agent played on some family
    rollouts = {key.split("@")[0] for key in want.files if "/rollout/" in key}
    assert {"LSA", "APT", "OptKG", "UGapEb", "SuccessiveRejects", "CLUCBPAC", "Uniform"} <= rollouts
    for key in want.files:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


@pytest.mark.parametrize("name", ["UGapEb", "LUCB", "SuccessiveRejects", "UCBEBestArm", "CLUCBPAC"])
def test_the_rules_state_is_a_typed_record(name: str) -> None:
    """A compiled best-arm rule's per-copy data are record arrays with the named fields its class declares (and, for
    a rule with a stopping component, the field that names the component's kind)."""
    env_id = "TopKIdentification-v0" if name == "CLUCBPAC" else "BestArmIdentification-Audibert2010Problem1-v0"
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")
    agent = make_agent(name, env_id)
    obs, _ = envs.reset(seed=0)
    agent.reset(seed=0)
    agent.act(obs)
    cls = AGENTS[name]
    stopping = () if agent.stopper is None else (agent.stopper.field,)
    for records, fields in ((agent.constants, (*cls.constant_fields, *stopping)), (agent.state, cls.state_fields),
                            (agent.arrays, cls.array_fields)):
        assert records.dtype.names == fields and records.shape[0] == 2
