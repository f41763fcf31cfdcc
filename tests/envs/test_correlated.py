"""CorrelatedBestArm (hoffman2014): means from the GP prior, the model in reset info, T < K, bad input; the traffic
presets: v0 (means from the prior, well-specified) and v1 (synthetic speed data by the paper's recipe)."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest

from bandit_gym import covariances
from bandit_gym.covariances import (
    GaussianProcessMeans,
    TrafficProfiles,
    resolve_means,
    squared_exponential,
    traffic_noise_variance,
    traffic_run_order,
    traffic_speeds,
    traffic_speeds_kernel,
    traffic_synthetic,
)
from bandit_gym.registration import TRAFFIC_SPEEDS_NOISE_VARIANCE, TRAFFIC_SPEEDS_SIGMA

V0, V1 = "CorrelatedBestArm-TrafficSynthetic-v0", "CorrelatedBestArm-TrafficSynthetic-v1"


def make_v0(**kwargs: object) -> gym.Env:
    with pytest.warns(DeprecationWarning, match="out of date"):  # Gymnasium: a newer version (v1) exists
        return gym.make(V0, **kwargs)


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
    env = make_v0()  # v0: the means are draws from the prior, the model in info generates them
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
    ({"kernel": "traffic-synthetic", "means": "traffic-future"}, ValueError, "not a known means sampler"),
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


def test_v0_draws_its_means_from_the_agents_prior() -> None:
    env = make_v0()
    assert isinstance(env.unwrapped.engine._sampler, GaussianProcessMeans)
    _, info = env.reset(seed=3)
    expected = GaussianProcessMeans(traffic_synthetic(), 20.0)(np.random.default_rng(3), 1)[0]
    np.testing.assert_allclose(env.unwrapped.means, expected)  # the env's generator, the prior N(0, 20^2 G)
    np.testing.assert_array_equal(info["model"]["kernel"], traffic_synthetic())


def test_synthetic_speeds_are_mph_like_profiles_correlated_along_the_road_and_in_time() -> None:
    data = traffic_speeds()
    assert data.speeds.shape == (2520, 357) and data.historical.shape == (1680, 357)
    assert data.held_out.shape == (840, 357)
    np.testing.assert_array_equal(np.vstack([data.historical, data.held_out]), data.speeds)
    assert (np.diff(data.positions) >= 0).all() and data.positions[0] >= 0 and data.positions[-1] <= 40
    assert data.speeds.min() > 0 and data.speeds.max() < 85
    assert 60 <= np.median(data.free_flow) <= 65 and 60 <= np.median(data.speeds) <= 66  # free flow most of the time
    assert 0.02 < np.mean(data.speeds < 45) < 0.4  # congestion dips, not everywhere
    hist = data.historical
    neighbours = [np.corrcoef(hist[:, k], hist[:, k + 1])[0, 1] for k in range(356)]
    assert np.median(neighbours) > 0.5  # along the road
    day = data.speeds[:120]
    lag1 = [np.corrcoef(day[:-1, k], day[1:, k])[0, 1] for k in range(357) if day[:, k].std() > 3]
    assert np.median(lag1) > 0.5  # in time (sensors that vary within the day)
    assert data.when(1680) == (15, 6.0) and data.when(2519)[0] == 21
    covariances.traffic_speeds.cache_clear()  # deterministic: simulated again, the same numbers
    covariances.traffic_speeds_kernel.cache_clear()
    np.testing.assert_array_equal(traffic_speeds().speeds, data.speeds)


def test_v1_model_is_the_papers_recipe_on_the_historical_profiles() -> None:
    data = traffic_speeds()
    g = traffic_speeds_kernel()
    np.testing.assert_allclose(g, np.cov(data.historical, rowvar=False), rtol=1e-12, atol=1e-12)  # not rescaled
    assert 80 < np.mean(np.diag(g)) < 110  # the paper's: 4.78 / 0.05 = 95.6 mph^2
    assert traffic_noise_variance() == pytest.approx(0.05 * np.mean(np.diag(g)), rel=1e-12)
    assert traffic_noise_variance() == pytest.approx(TRAFFIC_SPEEDS_NOISE_VARIANCE, rel=1e-9)  # the registry's
    env = gym.make(V1)
    obs, info = env.reset(seed=0)
    model = info["model"]
    np.testing.assert_array_equal(model["kernel"], g)
    assert model["eta"] == 20.0 and model["sigma"] == TRAFFIC_SPEEDS_SIGMA
    assert model["sigma"] ** 2 == pytest.approx(0.05 * np.mean(np.diag(g)), rel=1e-9)
    assert env.unwrapped.num_arms == 357 and obs["budget_left"][0] == 400
    # the means are one held-out profile, drawn with the env's generator (seeded by reset)
    row = np.flatnonzero((data.held_out == env.unwrapped.means).all(axis=1))
    assert row.size == 1
    env.reset(seed=0)
    np.testing.assert_array_equal(env.unwrapped.means, data.held_out[row[0]])
    drawn = set()
    for seed in range(30):
        env.reset(seed=seed)
        drawn.add(int(np.flatnonzero((data.held_out == env.unwrapped.means).all(axis=1))[0]))
    assert len(drawn) > 20  # a new profile per episode


def test_v1_held_out_means_are_data_not_draws_from_the_agents_prior() -> None:
    held, g, eta = traffic_speeds().held_out, traffic_speeds_kernel(), 20.0
    # 840 draws of N(0, eta^2 G) would have a per-sensor variance near eta^2 G_kk (within about +-10%): the
    # profiles vary about eta^2 = 400 times less
    ratio = held.var(axis=0, ddof=1) / (eta**2 * np.diag(g))
    assert np.median(ratio) < 0.01 and ratio.max() < 0.1
    # the prior is centred at 0: the average over sensors of one draw is N(0, eta^2 1'G1 / K^2); the average of
    # 840 draws' averages would be within a few of its standard errors of 0, the profiles' is ~16 away
    sd = eta * np.sqrt(g.sum()) / g.shape[0] / np.sqrt(held.shape[0])
    assert held.mean() / sd > 10
    assert (held > 0).all()  # every reading positive, where the prior makes each sign equally likely


def test_traffic_profiles_sampler_uniform_and_one_each() -> None:
    held = traffic_speeds().held_out
    sampler = TrafficProfiles("held-out")
    first = sampler(np.random.default_rng(4), 5)
    np.testing.assert_array_equal(first, sampler(np.random.default_rng(4), 5))  # the rng it is given
    np.testing.assert_array_equal(first, held[np.random.default_rng(4).integers(0, 840, 5)])
    assert len(pickle.dumps(sampler)) < 300  # no data inside
    assert pickle.loads(pickle.dumps(sampler)) == sampler
    order = traffic_run_order("held-out")
    assert sorted(order) == list(range(840))
    blocks = [TrafficProfiles("held-out", first_run=s) for s in (0, 210, 420, 630)]
    dealt = np.concatenate([b.indices(np.random.default_rng(), 210) for b in blocks])
    assert sorted(dealt) == list(range(840))  # 840 runs in blocks: every held-out profile once
    np.testing.assert_array_equal(blocks[1](np.random.default_rng(), 3), held[order[210:213]])
    assert resolve_means("traffic-held-out@210") == blocks[1]
    assert resolve_means("traffic-historical") == TrafficProfiles("historical")
    assert TrafficProfiles("historical").profiles.shape == (1680, 357)
    with pytest.raises(ValueError, match="not a known means sampler"):
        resolve_means("traffic-held-out@x")
    with pytest.raises(ValueError, match="part='future'"):
        TrafficProfiles("future")
    venv = gym.make_vec(V1, num_envs=4, vectorization_mode="vector_entry_point", means="traffic-held-out@2")
    venv.reset(seed=0)
    np.testing.assert_array_equal(venv.unwrapped.engine.means, held[order[2:6]])
