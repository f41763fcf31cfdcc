"""The functional JAX envs of the pure-exploration families against their numpy twins: the same spaces, the same
contract, episodes played by hand, Gymnasium's checks, the vector shell's autoreset, and equal statistics."""

from __future__ import annotations

import pickle
import re
import subprocess

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import bandit_gym
from bandit_gym import metrics
from bandit_gym.families import CONTRACTS, Family
from bandit_gym.families.best_arm import top_m_answer
from bandit_gym.families.thresholding import empirical_answer
from bandit_gym.instances import UniformMeans
from bandit_gym.jax.agents import Uniform
from bandit_gym.jax.agents._base import top_m_answer as jax_top_m_answer
from bandit_gym.jax.envs import (
    BestArmFunctional,
    BestArmIdentificationJaxEnv,
    ThresholdingBanditJaxEnv,
    ThresholdingFunctional,
    TopKFunctional,
    TopKIdentificationJaxEnv,
)
from bandit_gym.jax.rollout import play
from bandit_gym.registration import ENV_SPECS, JAX_ENV_IDS

from ..conftest import TESTS, python_command
from ._compare import Z_LIMIT, numpy_metric, z_statistic

FUNCTIONALS = {ThresholdingFunctional: "ThresholdingBandit-Tao2019Setup1-v0",
               BestArmFunctional: "BestArmIdentification-Audibert2010Problem3-v0",
               TopKFunctional: "TopKIdentification-v0"}


@pytest.mark.parametrize("jax_id", list(JAX_ENV_IDS))
def test_every_jax_id_has_the_numpy_twins_spaces(jax_id: str) -> None:
    size = {CONTRACTS[ENV_SPECS[JAX_ENV_IDS[jax_id]].family].horizon_argument: 50}
    twin = gym.make(JAX_ENV_IDS[jax_id], **size)
    env = gym.make(jax_id, **size)
    assert env.observation_space == twin.observation_space
    assert env.action_space == twin.action_space
    obs, _ = env.reset(seed=0)
    assert set(obs) == set(CONTRACTS[twin.unwrapped.family].observation_keys)
    assert env.observation_space.contains({key: np.asarray(value) for key, value in obs.items()})


@pytest.mark.parametrize("cls", [ThresholdingBanditJaxEnv, BestArmIdentificationJaxEnv, TopKIdentificationJaxEnv])
def test_gymnasium_env_checker(cls: type) -> None:
    check_env(cls(budget=40), skip_render_check=True)


def test_importing_the_package_imports_no_jax() -> None:
    code = "import gymnasium as gym, bandit_gym; gym.spec('jax/ThresholdingBandit-v0'); print('jax' in sys.modules)"
    out = subprocess.run(python_command(code), capture_output=True, text=True, check=True, cwd=TESTS)
    assert out.stdout.strip() == "False"


def test_a_hand_played_thresholding_episode() -> None:
    # Bernoulli arms of means 0 and 1 are deterministic: every number below is exact
    env = ThresholdingFunctional(means=[0.0, 1.0, 0.0, 1.0], threshold=0.5, budget=3)
    key = jax.random.key(0)
    state = env.initial(key)
    obs = env.observation(state)
    assert float(obs["budget_left"][0]) == 3 and float(obs["last_arm"][0]) == -1
    rewards = []
    for arm, answer in ((1, [0, 0, 0, 0]), (0, [0, 1, 0, 0]), (3, [0, 1, 0, 0]), (2, [1, 1, 0, 1])):
        action = jnp.array([arm, *answer])
        after = env.transition(state, action, key)
        rewards.append(float(env.reward(state, action, after)))
        state = after
    obs = env.observation(state)
    np.testing.assert_array_equal(obs["counts"], [1, 1, 0, 1])
    np.testing.assert_array_equal(obs["sums"], [0, 1, 0, 1])
    np.testing.assert_array_equal(obs["means"], [0, 1, 0, 1])
    assert float(obs["last_arm"][0]) == 3 and float(obs["last_value"][0]) == 1.0
    # the fourth step is the answer step: it pulls nothing (budget 3) and scores [1, 1, 0, 1]: arm 0 is wrong
    assert rewards == [0.0, 0.0, 0.0, -1.0]
    assert bool(env.terminal(state)) and float(state.loss) == 1.0
    assert env.episode_metrics(state)["pulls"] == 3


def test_stop_costs_and_the_error_loss() -> None:
    env = ThresholdingFunctional(means=[0.0, 1.0], threshold=0.5, budget=10, sample_cost=0.25, loss="simple")
    key = jax.random.key(1)
    state = env.initial(key)
    pull = jnp.array([0, 0, 1])
    after = env.transition(state, pull, key)
    assert float(env.reward(state, pull, after)) == -0.25
    stop = jnp.array([2, 1, 1])  # K = 2 stops; the answer misclassifies arm 0: error loss 1
    final = env.transition(after, stop, key)
    assert float(env.reward(after, stop, final)) == -1.0 and bool(final.done)
    assert env.episode_metrics(final)["pulls"] == 1


def test_fixed_confidence_stop_and_cap() -> None:
    env = BestArmFunctional(means=[0.0, 1.0, 0.0], budget=2, setting="fixed_confidence")
    key = jax.random.key(2)
    state = env.initial(key)
    stop = jnp.array([3, 0, 1, 0])
    stopped = env.transition(state, stop, key)
    assert bool(stopped.done) and not bool(stopped.capped) and float(stopped.loss) == 0.0
    for _ in range(3):  # two pulls, then the answer step on the budget: capped (truncated), not stopped
        state = env.transition(state, jnp.array([1, 1, 0, 0]), key)
    assert bool(state.done) and bool(state.capped)
    single = BestArmIdentificationJaxEnv(means=[0.0, 1.0, 0.0], budget=2, setting="fixed_confidence")
    single.reset(seed=0)
    results = [single.step([1, 0, 1, 0])[2:4] for _ in range(3)]
    assert results == [(False, False), (False, False), (True, True)]


def test_the_thresholding_family_stops_and_caps_in_fixed_confidence() -> None:
    """The numpy env's ``setting`` reaches the JAX family: a stop ends, the cap truncates (fixed confidence only)."""
    key = jax.random.key(3)
    for setting, capped in (("fixed_confidence", True), ("fixed_budget", False)):
        env = ThresholdingFunctional(means=[0.2, 0.8], threshold=0.5, budget=2, setting=setting)
        state = env.initial(key)
        stopped = env.transition(state, jnp.array([2, 0, 1]), key)
        assert bool(stopped.done) and not bool(stopped.capped)
        for _ in range(3):  # two pulls, then the answer step on the budget
            state = env.transition(state, jnp.array([0, 0, 1]), key)
        assert bool(state.done) and bool(state.capped) == capped


def test_set_answers_score_like_the_numpy_env() -> None:
    means = [0.9, 0.5, 0.6, 0.2]
    for answer in ([1, 0, 0, 0], [0, 0, 1, 0], [1, 1, 0, 0], [0, 0, 0, 0]):
        env = BestArmFunctional(means=means, budget=5, epsilon=0.05)
        twin = bandit_gym.envs.best_arm.BestArmEngine(1, means=means, budget=5, epsilon=0.05)
        got = env.answer_losses(jnp.array(answer), jnp.array(means, dtype=jnp.float32), env.default_params)
        want = twin.answer_metrics(np.array([answer]), np.array([means]))
        for key, value in want.items():
            assert float(got[key]) == pytest.approx(float(value[0]), abs=1e-6), (answer, key)
        top = TopKFunctional(means=means, k=2, budget=5, epsilon=0.05)
        twin_top = bandit_gym.envs.top_k.TopKEngine(1, means=means, k=2, budget=5, epsilon=0.05)
        got = top.answer_losses(jnp.array(answer), jnp.array(means, dtype=jnp.float32), top.default_params)
        want = twin_top.answer_metrics(np.array([answer]), np.array([means]))
        for key, value in want.items():
            assert float(got[key]) == pytest.approx(float(value[0]), abs=1e-6), (answer, key)


def test_the_losses_are_the_metrics_functions_under_jit() -> None:
    rng = np.random.default_rng(0)
    means = rng.random((200, 6)).astype(np.float32)
    answers = rng.integers(0, 2, (200, 6))
    checks = [
        (metrics.aggregate_regret, (0.5, 0.05)), (metrics.error_indicator, (0.5, 0.05)),
        (metrics.set_simple_regret, (2,)), (metrics.set_error, (2, 0.1)),
        (metrics.top_k_regret, (3,)), (metrics.top_k_error, (3, 0.05)),
    ]
    for fn, args in checks:
        want = fn(answers, means.astype(np.float64), *args)
        got = jax.jit(fn)(jnp.asarray(answers), jnp.asarray(means), *[jnp.asarray(a) for a in args])
        np.testing.assert_allclose(np.asarray(got), want, atol=1e-6, err_msg=fn.__name__)


def test_the_jax_empirical_answers_are_the_contracts() -> None:
    rng = np.random.default_rng(1)
    for _ in range(50):
        counts = rng.integers(0, 3, 7).astype(np.float32)
        sums = np.minimum(rng.integers(0, 3, 7), counts).astype(np.float32)
        obs = {"counts": counts, "sums": sums, "means": np.where(counts > 0, sums / np.maximum(counts, 1), 0),
               "threshold": np.array([0.5], np.float32), "m": np.array([3.0], np.float32)}
        jobs = {key: jnp.asarray(value, dtype=jnp.float32) for key, value in obs.items()}
        np.testing.assert_array_equal(Uniform().answer(None, {k: v for k, v in jobs.items() if k != "m"}, None),
                                      empirical_answer(obs))
        # ties by position: the identity order is the contract's rule without a generator (smaller index first)
        np.testing.assert_array_equal(jax_top_m_answer(jobs, jnp.arange(7)), top_m_answer(obs))


def test_the_vector_shell_autoresets_on_the_next_step() -> None:
    envs = gym.make_vec("jax/ThresholdingBandit-Tao2019Setup1-v0", num_envs=3, budget=2,
                        vectorization_mode="vector_entry_point")
    envs.reset(seed=0)
    action = jnp.zeros((3, 11), dtype=jnp.int32)
    ends = [np.asarray(envs.step(action)[2]).tolist() for _ in range(4)]
    assert ends == [[False] * 3, [False] * 3, [True] * 3, [False] * 3]
    obs, *_ = envs.step(action)
    np.testing.assert_array_equal(obs["counts"].sum(axis=1), [1, 1, 1])


@pytest.mark.parametrize("on_device", [False, True])
@pytest.mark.parametrize(("bad", "error", "message"), [
    ((1, 0, -1), ValueError, r"copy 1: action\[0\]=-1 is not an arm in 0..2 or 3 \(stop\)"),
    ((2, 0, 4), ValueError, r"copy 2: action\[0\]=4 is not an arm"),
    ((0, 3, 2), ValueError, r"copy 0: action\[1:\] is the answer and must hold bits 0 or 1, got the value 2"),
])
def test_the_vector_shell_refuses_an_action_out_of_the_space_and_keeps_its_state(on_device, bad, error, message):
    # the pure functions clip an arm (compiled code cannot raise); the shell checks as the numpy vector env does
    envs = gym.make_vec("jax/ThresholdingBandit-v0", num_envs=3, means=[0.2, 0.5, 0.8], threshold=0.5, budget=10)
    envs.reset(seed=0)
    actions = np.zeros((3, 4), dtype=np.int64)
    actions[bad[0], bad[1]] = bad[2]
    with pytest.raises(error, match=message):
        envs.step(jnp.asarray(actions) if on_device else actions)
    obs, *_ = envs.step(np.zeros((3, 4), dtype=np.int64))  # the refused batch changed nothing
    np.testing.assert_array_equal(obs["counts"], [[1, 0, 0]] * 3)
    np.testing.assert_array_equal(obs["budget_left"].ravel(), [9, 9, 9])


def test_the_shells_refuse_actions_of_another_shape_or_type() -> None:
    envs = gym.make_vec("jax/ThresholdingBandit-v0", num_envs=3, means=[0.2, 0.5, 0.8], threshold=0.5, budget=10)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions must have shape \(3, 4\)"):
        envs.step(np.zeros((3, 3), dtype=np.int64))
    with pytest.raises(TypeError, match="actions must hold integers, got dtype float"):
        envs.step(jnp.zeros((3, 4)))
    online = gym.make_vec("jax/MultiArmedBandit-v0", num_envs=2, means=[0.2, 0.5])
    online.reset(seed=0)
    with pytest.raises(ValueError, match=r"copy 1: action=2 is not an arm; allowed arms are 0\.\.1"):
        online.step(np.array([0, 2]))
    env = gym.make("jax/ThresholdingBandit-v0", means=[0.2, 0.5, 0.8], threshold=0.5, budget=10)
    env.reset(seed=0)
    with pytest.raises(TypeError, match="action must hold integers"):  # 0.7 was read as a pull of no arm
        env.step(np.array([0.7, 0, 0, 0]))
    obs, *_ = env.step(np.array([2, 0, 0, 0]))
    np.testing.assert_array_equal(obs["counts"], [0, 0, 1])


def test_refused_arguments_name_what_is_allowed() -> None:
    with pytest.raises(ValueError, match="common_random_numbers"):
        ThresholdingFunctional(common_random_numbers=True)
    with pytest.raises(ValueError, match="budget=0 is too small"):  # the numpy env's own check and message
        ThresholdingFunctional(budget=0)
    with pytest.raises(ValueError, match="reset options"):
        ThresholdingBanditJaxEnv().reset(options={"means": [0.1, 0.9]})
    assert ThresholdingFunctional(means=UniformMeans(5, 0.2, 0.8)).instance == "uniform"


@pytest.mark.parametrize(("num_envs", "error", "message"), [
    (1e30, TypeError, "num_envs must be an integer, got 1e+30 of type float"),
    (2.0, TypeError, "num_envs must be an integer, got 2.0 of type float"),
    (0, ValueError, "num_envs=0 is too small; it must be >= 1"),
    (10**30, ValueError, f"num_envs={10**30} copies of a problem with K=10 arms need about"),
])
def test_the_vector_shell_checks_num_envs_as_the_numpy_env(num_envs: object, error: type[Exception],
                                                           message: str) -> None:
    for prefix in ("", "jax/"):  # the numpy twin's error and message
        with pytest.raises(error, match=re.escape(message)):
            gym.make_vec(f"{prefix}ThresholdingBandit-Tao2019Setup1-v0", num_envs=num_envs,
                         vectorization_mode="vector_entry_point")


@pytest.mark.parametrize("options", [5, [], "means"])
def test_reset_options_that_are_not_a_dict_are_a_type_error(options: object) -> None:
    single = gym.make("jax/ThresholdingBandit-Tao2019Setup1-v0")
    vector = gym.make_vec("jax/ThresholdingBandit-Tao2019Setup1-v0", num_envs=2,
                          vectorization_mode="vector_entry_point")
    for env in (single, vector):
        with pytest.raises(TypeError, match=re.escape(f"options={options!r}: reset options must be a dict (or None); "
                                                      "allowed keys: none")):
            env.reset(options=options)  # type: ignore[arg-type]
        env.reset(options={})  # an empty dict (or None) is no option


def _first_state(env: gym.Env, seed: int) -> np.ndarray:
    env.reset(seed=seed)
    return np.concatenate([np.ravel(np.asarray(leaf, dtype=float)) for leaf in jax.tree.leaves(env.unwrapped.state)])


def test_every_whole_seed_is_taken_with_all_its_bits_as_the_numpy_env_takes_it() -> None:
    single = gym.make("jax/ThresholdingBandit-v0")  # a random instance per episode: the seed decides it
    vector = gym.make_vec("jax/ThresholdingBandit-v0", num_envs=2, vectorization_mode="vector_entry_point")
    for seed in (2**63, 2**64, 2**70):  # JAX's own PRNGKey overflows from 2**63
        single.reset(seed=seed)
        vector.reset(seed=seed)
        gym.make("ThresholdingBandit-v0").reset(seed=seed)  # the numpy twin takes it too
    first = _first_state(single, 0)
    assert np.array_equal(first, _first_state(single, 0))
    for seed in (2**32, 2**40, 2**64, 2**70):  # PRNGKey without 64-bit ints kept the low 32 bits: seed 0's episode
        assert not np.array_equal(first, _first_state(single, seed)), seed
    single.reset(seed=5)  # below 2**32 the key is PRNGKey's, and the streams are unchanged
    assert np.array_equal(np.asarray(single.unwrapped.rng), np.asarray(jax.random.split(jax.random.PRNGKey(5))[1]))
    for env in (single, vector):
        with pytest.raises(gym.error.Error, match="Seed must be greater or equal to zero, actual value: -1"):
            env.reset(seed=-1)


def test_play_takes_every_whole_seed_with_all_its_bits_as_reset_does() -> None:
    """``play``'s int seeds are the envs': any whole number from 0, its high bits read (2**32 is not seed 0)."""
    env = ThresholdingFunctional(budget=20)
    regret = {seed: np.asarray(play(env, Uniform(), seed, 64)["regret"]) for seed in (0, 2**32, 2**70)}
    assert not np.array_equal(regret[0], regret[2**32]) and not np.array_equal(regret[0], regret[2**70])
    assert np.array_equal(regret[0], np.asarray(play(env, Uniform(), jax.random.key(0), 64)["regret"]))
    with pytest.raises(ValueError, match=r"^key=-1 must be a seed \(a whole number from 0\) or a jax\.random key$"):
        play(env, Uniform(), -1, 4)


def test_the_env_pickles() -> None:
    env = gym.make("jax/BestArmIdentification-Audibert2010Problem3-v0", budget=30)
    copy = pickle.loads(pickle.dumps(env))
    assert copy.observation_space == env.observation_space


@pytest.mark.parametrize("cls", list(FUNCTIONALS))
def test_uniform_play_equals_the_numpy_env_in_distribution(cls: type) -> None:
    env_id = FUNCTIONALS[cls]
    budget = 300
    env = cls(**{**ENV_SPECS[env_id].kwargs, "budget": budget})
    metric = "regret"
    got = np.asarray(play(env, Uniform(), 0, 4000)[metric])
    want = numpy_metric(env_id, bandit_gym.agents.Uniform(), metric, 4000, seed=1, budget=budget)
    assert abs(z_statistic(got, want)) < Z_LIMIT, (got.mean(), want.mean())


def test_uniform_means_are_drawn_per_episode() -> None:
    env = ThresholdingFunctional(means=UniformMeans(4, 0.0, 1.0), budget=8)
    keys = jax.random.split(jax.random.key(3), 2000)
    drawn = np.asarray(jax.vmap(lambda k: env.initial(k).means)(keys))
    assert drawn.shape == (2000, 4) and abs(drawn.mean() - 0.5) < 0.02 and drawn.min() >= 0 and drawn.max() <= 1
    assert len(np.unique(drawn[:, 0])) == 2000


def test_top_k_shuffles_the_arms_per_episode() -> None:
    env = TopKFunctional(means=[0.9, 0.8, 0.1, 0.2, 0.3], k=2, budget=10)  # shuffle=True is the numpy default
    keys = jax.random.split(jax.random.key(4), 500)
    first = np.asarray(jax.vmap(lambda k: env.initial(k).means[0])(keys))
    assert set(np.round(first.astype(float), 3)) == {0.9, 0.8, 0.1, 0.2, 0.3}
    assert Family.TOP_K.pure_exploration
