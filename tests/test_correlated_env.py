"""CorrelatedBestArm-v0 (hoffman2014): means from the GP prior, the generating model in reset info, T < K, bad input."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from bandit_gym.kernels import GaussianProcessMeans, squared_exponential, traffic_synthetic


def test_means_are_drawn_from_the_gp_prior_with_the_env_generator() -> None:
    venv = gym.make_vec("CorrelatedBestArm-v0", num_envs=20000, vectorization_mode="vector_entry_point", eta=2.0)
    venv.reset(seed=0)
    means = venv.unwrapped.engine.means
    prior = 4.0 * squared_exponential(np.linspace(0.0, 1.0, 50), 0.1)
    np.testing.assert_allclose(means.mean(axis=0), 0.0, atol=4 * 2.0 / np.sqrt(20000))
    np.testing.assert_allclose(np.cov(means, rowvar=False), prior, atol=0.12)  # SE of a covariance ~ 4 sqrt(2/N)
    single = gym.make("CorrelatedBestArm-v0")
    single.reset(seed=5)
    first = single.unwrapped.means.copy()
    single.reset(seed=5)
    np.testing.assert_array_equal(single.unwrapped.means, first)
    single.reset()
    assert not np.array_equal(single.unwrapped.means, first)  # a new instance per episode


def test_reset_info_holds_the_generating_model_and_budget_may_be_below_k() -> None:
    env = gym.make("CorrelatedBestArm-TrafficSynthetic-v0")
    obs, info = env.reset(seed=0)
    model = info["model"]
    np.testing.assert_array_equal(model["kernel"], traffic_synthetic())
    assert model["eta"] == 20.0 and model["sigma"] ** 2 == pytest.approx(0.05 * 400.0)
    assert np.mean(np.diag(model["kernel"])) == pytest.approx(1.0)
    assert env.unwrapped.num_arms == 357 and obs["budget_left"][0] == 400
    model["kernel"][0, 0] = 99.0  # a copy: the env's own kernel is untouched
    assert env.unwrapped.kernel[0, 0] != 99.0
    small = gym.make("CorrelatedBestArm-v0", budget=5)  # K = 50 > T = 5
    obs, _ = small.reset(seed=0)
    for t in range(6):
        action = np.zeros(51, dtype=np.int64)
        action[0], action[1] = t, 1
        obs, reward, terminated, _, info = small.step(action)
    assert terminated and obs["counts"].sum() == 5
    assert -reward == pytest.approx(small.unwrapped.means.max() - small.unwrapped.means[0])


def test_fixed_means_and_custom_kernels() -> None:
    kernel = np.array([[1.0, 0.9, 0.0], [0.9, 1.0, 0.0], [0.0, 0.0, 1.0]])
    env = gym.make("CorrelatedBestArm-v0", kernel=kernel, means=[0.1, 0.3, -0.2], budget=4, loss="error")
    env.reset(seed=0)
    np.testing.assert_array_equal(env.unwrapped.means, [0.1, 0.3, -0.2])
    located = gym.make("CorrelatedBestArm-v0", locations=np.random.default_rng(0).random((8, 2)), length_scale=0.5)
    assert located.unwrapped.kernel.shape == (8, 8)
    sampler = GaussianProcessMeans(kernel, eta=3.0)
    assert sampler(np.random.default_rng(1), 7).shape == (7, 3)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"kernel": [[1.0, 2.0], [2.0, 1.0]]}, ValueError, "positive semi-definite"),
    ({"kernel": np.ones((2, 3))}, ValueError, "square"),
    ({"kernel": "traffic"}, ValueError, "not a known kernel"),
    ({"kernel": np.eye(3), "locations": [0.0, 1.0, 2.0]}, ValueError, "not both"),
    ({"kernel": np.eye(3), "means": [0.0, 1.0]}, ValueError, "means has 2 arms but the kernel is 3 x 3"),
    ({"eta": 0.0}, ValueError, "eta=0.0"),
    ({"sigma": -1.0}, ValueError, "sigma=-1.0"),
    ({"length_scale": 0.0}, ValueError, "length_scale=0.0"),
    ({"locations": [[0.0]]}, ValueError, "K >= 2"),
    ({"budget": 0}, ValueError, "budget=0"),
    ({"loss": "rmse"}, ValueError, "loss='rmse'"),
])
def test_bad_arguments_name_themselves(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        gym.make("CorrelatedBestArm-v0", **kwargs)
