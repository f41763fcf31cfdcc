"""A rejected call has no effect, and every constructor flag is checked like the others.

``reset`` checks ``options`` before it reseeds or changes anything: after a rejected reset, an env (single or
vector, every registered id) continues exactly as an untouched twin."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from tests.conftest import ENV_IDS, small_kwargs

BAD_OPTIONS: list[Any] = [5, "x", [("means", 1)], {"nope": 1}]


def _bad_values(env: Any) -> list[dict[str, Any]]:
    """Allowed option keys with values no env accepts."""
    return [{key: "bad"} for key in env.unwrapped.engine.reset_options]


def _play(env: Any, twin: Any, steps: int) -> None:
    """Step both envs with the same actions; their observations, rewards and generators must agree."""
    space = env.action_space
    space.seed(3)
    for _ in range(steps):
        action = space.sample()
        one, two = env.step(action), twin.step(action)
        for key in one[0]:
            np.testing.assert_array_equal(one[0][key], two[0][key], err_msg=key)
        np.testing.assert_array_equal(one[1], two[1])
        if np.ndim(one[2]) == 0 and (one[2] or one[3]):  # a single env's episode ended: both start another
            first, second = env.reset()[0], twin.reset()[0]
            for key in first:
                np.testing.assert_array_equal(first[key], second[key], err_msg=key)
    assert env.unwrapped.np_random.bit_generator.state == twin.unwrapped.np_random.bit_generator.state


def _check_rejected_resets_change_nothing(env: Any, twin: Any) -> int:
    env.reset(seed=1)
    twin.reset(seed=1)
    _play(env, twin, 3)
    rejected = 0
    for options in BAD_OPTIONS + _bad_values(env):
        for seed in (None, 5):
            with pytest.raises((ValueError, TypeError), match="options"):
                env.reset(seed=seed, options=options)
            rejected += 1
    _play(env, twin, 5)
    return rejected


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_rejected_reset_leaves_the_single_env_as_it_was(env_id: str) -> None:
    make = lambda: gym.make(env_id, **small_kwargs(env_id))  # noqa: E731
    assert _check_rejected_resets_change_nothing(make(), make()) >= 8


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_rejected_reset_leaves_the_vector_env_as_it_was(env_id: str) -> None:
    def make() -> Any:
        return gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", **small_kwargs(env_id))

    assert _check_rejected_resets_change_nothing(make(), make()) >= 8


def test_options_of_the_wrong_type_name_the_argument() -> None:
    env = gym.make("ThresholdingBandit-v0")
    with pytest.raises(TypeError, match=r"options=5: reset options must be a dict \(or None\); allowed keys"):
        env.reset(options=5)


@pytest.mark.parametrize(("env_id", "kwargs", "message"), [
    ("ThresholdingBandit-v0", {"arm_distribution": ""}, r"arm_distribution='' is not allowed"),
    ("BestArmIdentification-v0", {"arm_distribution": ""}, r"arm_distribution='' is not allowed"),
    ("ThresholdingBandit-v0", {"sample_cost": 1e306}, r"sample_cost=1e\+306 is too large"),
    ("TopKIdentification-v0", {"k": 5000}, r"k=5000 is too large; it must be <= 99"),
    ("BestArmIdentification-v0", {"m": 50}, r"m=50 is too large; it must be <= 19"),
])
def test_constructor_arguments_are_checked_by_their_name(env_id: str, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gym.make(env_id, **kwargs)


@pytest.mark.parametrize("flag", ["common_random_numbers", "copy"])
@pytest.mark.parametrize("value", ["yes", None, 1, 0.0])
def test_flags_take_only_booleans(flag: str, value: Any) -> None:
    with pytest.raises(TypeError, match=f"{flag} must be True or False"):
        gym.make_vec("ThresholdingBandit-v0", num_envs=2, vectorization_mode="vector_entry_point", **{flag: value})


def test_a_wrong_batch_of_actions_shows_the_expected_and_the_received_shape() -> None:
    envs = gym.make_vec("ThresholdingBandit-v0", num_envs=21, vectorization_mode="vector_entry_point")
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"a batch of shape \(N, K \+ 1\) = \(21, 11\).*got shape \(20, 11\)"):
        envs.step(np.zeros((20, 11), dtype=np.int64))
    arms = gym.make_vec("MultiArmedBandit-v0", num_envs=21, vectorization_mode="vector_entry_point")
    arms.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(21,\), got shape \(20,\)"):
        arms.step(np.zeros(20, dtype=np.int64))


def test_an_unsigned_action_is_reported_as_given() -> None:
    env = gym.make("ThresholdingBandit-v0").unwrapped
    env.reset(seed=0)
    action = np.zeros(11, dtype=np.uint64)
    action[0] = 2**64 - 1
    with pytest.raises(ValueError, match="action holds 18446744073709551615"):
        env.step(action)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("env_id", ["ThresholdingBandit-v0", "ThresholdingBandit-Tao2019Setup1-v0",
                                    "BestArmIdentification-Audibert2010Problem1-v0",
                                    "TopKIdentification-Chen2017UniformK100-v0"])
def test_presets_accept_distributions_where_the_base_env_does(env_id: str) -> None:
    from scipy import stats

    arms = [stats.beta(2, 3), stats.beta(5, 2), stats.uniform(0, 1)]
    extra = {"k": 1} if env_id.startswith("TopK") else {}
    for env in (gym.make(env_id, distributions=arms, **extra),
                gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", distributions=arms, **extra)):
        env.reset(seed=0)
        engine = env.unwrapped.engine
        assert engine.arm_distribution == "custom"
        np.testing.assert_allclose(np.sort(engine.means[0]), [0.4, 0.5, 5 / 7])
    with pytest.raises(ValueError, match="pass either means= or distributions="):
        gym.make(env_id, means=[0.2, 0.8], distributions=arms)  # both given by the user: still an error


@pytest.mark.filterwarnings("ignore:this threshold-bandit instance breaks")
def test_a_threshold_preset_accepts_survival() -> None:
    env = gym.make("ThresholdBandit-Delivery-v0", survival=[[1.0, 0.5], [1.0, 0.7]])
    assert env.unwrapped.engine.survival.shape == (2, 2)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_misspelt_argument_names_the_env_and_the_closest_allowed_one(env_id: str) -> None:
    registered = gym.spec(env_id).kwargs
    known = sorted(registered) or ["budget"]
    typo = known[0][:-1] + "x" + known[0][-1]  # one letter changed inside a real argument's name
    with pytest.raises(TypeError) as raised:
        gym.make(env_id, **{typo: 1})
    message = str(raised.value)
    assert f"unexpected keyword argument {typo!r} (did you mean {known[0]!r}?)" in message
    assert "Engine" not in message.split(" was raised")[0]  # the env's class, not the internal engine's
    with pytest.raises(TypeError, match=f"VectorEnv got an unexpected keyword argument {typo!r}"):
        gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", **{typo: 1})


def test_a_sampled_action_stops_one_step_in_k_plus_one_as_the_action_space_docs_say() -> None:
    from bandit_gym.wrappers import EmpiricalAnswer

    env = gym.make("ThresholdingBandit-Tao2019Setup1-v0")  # K = 10
    env.action_space.seed(0)
    stops = np.mean([env.action_space.sample()[0] == 10 for _ in range(22_000)])
    assert abs(stops - 1 / 11) < 0.006  # 3.5 standard errors
    assert EmpiricalAnswer(env).action_space == gym.spaces.Discrete(10)
