"""Every registered id: make, make_vec, Gymnasium's and SB3's env checkers, determinism, pickling."""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env, data_equivalence
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import bandit_gym
from bandit_gym.agents import UCB, Uniform
from bandit_gym.rollout import play_vector
from tests.conftest import family_of_id, small_kwargs


def test_make_without_import_uses_module_prefix() -> None:
    code = (
        "import gymnasium as gym; env = gym.make('bandit_gym:ThresholdBandit-v0'); "
        "print(env.reset(seed=0)[0]['threshold'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().startswith("[")


def test_numba_loads_with_the_agents_not_at_import_or_make() -> None:
    """``import bandit_gym``, ``gym.make`` and ``reset`` load no numba; the agents do (their rules are module-level
    compiled functions, ``bandit_gym.jit``)."""
    code = (
        "import sys, gymnasium as gym, bandit_gym; "
        "env = gym.make('ThresholdingBandit-v0'); obs, _ = env.reset(seed=0); print('numba' in sys.modules); "
        "from bandit_gym.agents import LSA; print('numba' in sys.modules); env.step(LSA().act(obs))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True"]


def test_every_registered_env_class_is_exported_from_bandit_gym_envs() -> None:
    import bandit_gym.envs

    exported = {getattr(bandit_gym.envs, name) for name in bandit_gym.envs.__all__}
    for env_id in bandit_gym.ENV_SPECS:
        env = gym.make(env_id)
        assert type(env.unwrapped) in exported, env_id
        vector = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")
        assert type(vector.unwrapped) in exported, env_id
        env.close(), vector.close()


def test_registration_is_idempotent() -> None:
    before = {k for k in gym.registry if k in bandit_gym.ENV_SPECS}
    bandit_gym.register_envs()
    assert before == set(bandit_gym.ENV_SPECS)


def test_gymnasium_check_env_gives_no_warning(env_id: str) -> None:
    for render_mode in (None, "ansi", "rgb_array"):
        env = _make(env_id, render_mode=render_mode)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env.unwrapped)
        assert [str(w.message) for w in caught] == []


def test_sb3_check_env_gives_no_warning(env_id: str) -> None:
    env = _make(env_id)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sb3_check_env(env)
    assert [str(w.message) for w in caught] == []


def _make(env_id: str, **kwargs: object) -> gym.Env:
    """``gym.make``, outside the checks' warning count: Gymnasium warns that an id is out of date when a newer
    version of it is registered (``CorrelatedBestArm-TrafficSynthetic-v0``, kept as the well-specified setting),
    which is its convention, not a fault of the env."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return gym.make(env_id, **kwargs)


def test_make_vec_native(env_id: str) -> None:
    venv = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point")
    assert type(venv).__name__.endswith("VectorEnv") and venv.num_envs == 3
    obs, _ = venv.reset(seed=0)
    assert venv.observation_space.contains(obs)
    obs, rewards, term, _trunc, _ = venv.step(venv.action_space.sample())
    assert rewards.shape == (3,) and term.shape == (3,) and venv.observation_space.contains(obs)


def _rollout(env: gym.Env, seed: int, steps: int) -> list:
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    trace = [obs]
    for _ in range(steps):
        action = env.action_space.sample()
        if np.ndim(action):
            action[0] = min(action[0], env.unwrapped.engine.num_arms - 1)  # never stop early
        obs, reward, term, _trunc, info = env.step(action)
        trace.append((obs, reward, term, info))
        if term:
            obs, _ = env.reset()
            trace.append(obs)
    return trace


def _same(a: object, b: object) -> bool:
    return data_equivalence(a, b, exact=True)


def test_same_seed_same_trajectory(env_id: str) -> None:
    kwargs = small_kwargs(env_id)
    t1 = _rollout(gym.make(env_id, **kwargs), 3, 150)
    t2 = _rollout(gym.make(env_id, **kwargs), 3, 150)
    t3 = _rollout(gym.make(env_id, **kwargs), 4, 150)
    assert _same(t1, t2)
    assert not _same(t1, t3)


def test_pickled_env_continues_identically(env_id: str) -> None:
    env = gym.make(env_id, **small_kwargs(env_id))
    env.reset(seed=1)
    arm = np.zeros(env.action_space.shape, dtype=np.int64) if env.action_space.shape else 0
    for _ in range(5):
        env.step(arm)
    clone = pickle.loads(pickle.dumps(env))
    for _ in range(20):
        assert _same(env.step(arm), clone.step(arm))


def test_single_env_equals_one_copy_vector_env_bit_for_bit(env_id: str) -> None:
    kwargs = small_kwargs(env_id)
    env = gym.make(env_id, **kwargs)
    venv = gym.make_vec(env_id, num_envs=1, vectorization_mode="vector_entry_point", **kwargs)
    obs, _ = env.reset(seed=7)
    vobs, _ = venv.reset(seed=7)
    rng = np.random.default_rng(0)
    k = env.unwrapped.engine.num_arms
    for _ in range(40):
        arm = int(rng.integers(k))
        online = env.unwrapped.family in ("threshold", "multi_armed")  # Discrete(K) actions
        action = arm if online else np.r_[arm, np.zeros(k, dtype=np.int64)]
        obs, reward, *_ = env.step(action)
        vobs, vreward, *_ = venv.step(np.asarray([action]))
        assert reward == vreward[0]
        for key in obs:
            np.testing.assert_array_equal(obs[key], vobs[key][0])


def test_vector_env_same_seed_same_trajectory(env_id: str) -> None:
    agent = UCB if family_of_id(env_id) == "threshold" else Uniform  # UCB draws random tie-breaking orders

    def run(seed: int) -> dict:
        venv = gym.make_vec(env_id, num_envs=16, vectorization_mode="vector_entry_point", **small_kwargs(env_id))
        return play_vector(venv, agent(), seed=seed)

    def sums(seed: int) -> np.ndarray:
        venv = gym.make_vec(env_id, num_envs=16, vectorization_mode="vector_entry_point", **small_kwargs(env_id))
        venv.reset(seed=seed)
        for _ in range(3):
            obs, *_ = venv.step(np.zeros(venv.action_space.shape, dtype=np.int64))
        return obs["sums"].copy()

    first, again = run(5), run(5)
    assert all(np.array_equal(first[key], again[key]) for key in first)
    # another seed draws other samples (the episode's scores alone may coincide: the same arm recommended)
    assert not np.array_equal(sums(5), sums(6))
