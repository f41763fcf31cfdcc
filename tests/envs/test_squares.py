"""Gaussian arms of different variances (``sigma`` per arm) and the observed squared deviations (``squares=True``):
Welford's update per pull and the exact merge of batched allocations agree with the samples."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from scipy import stats

from bandit_gym.agents import TrackAndStop
from bandit_gym.envs import BestArmIdentificationVectorEnv

MEANS, SIGMAS = [0.0, 0.5, 1.0], [1.0, 2.0, 0.5]


def gaussian(num_envs: int = 1, **kwargs):
    return BestArmIdentificationVectorEnv(num_envs=num_envs, means=MEANS, arm_distribution="gaussian",
                                          sigma=SIGMAS, squares=True, budget=1000, **kwargs)


def test_the_env_with_squares_passes_the_checker_and_observes_them():
    env = gym.make("BestArmIdentification-v0", means=MEANS, arm_distribution="gaussian", sigma=SIGMAS, squares=True)
    check_env(env.unwrapped)
    obs, _ = env.reset(seed=0)
    assert obs["squares"].shape == (3,) and not obs["squares"].any()
    assert "squares" not in gym.make("BestArmIdentification-v0").reset(seed=0)[0]


@pytest.mark.parametrize("kwargs", [
    {"arm_distribution": "gaussian", "sigma": SIGMAS},
    {"arm_distribution": "bernoulli", "means": [0.2, 0.5, 0.9]},
    {"distributions": [stats.beta(2, 5), stats.uniform(0, 1), stats.beta(5, 2)]},
])
def test_single_pulls_and_allocations_give_the_squares_of_the_same_samples(kwargs):
    """With common random numbers the s-th pull of an arm is the same sample either way: the squares agree."""
    counts = np.array([[7, 1, 12], [3, 9, 0]])
    kwargs = kwargs if "distributions" in kwargs else {"means": MEANS, **kwargs}
    single = BestArmIdentificationVectorEnv(num_envs=2, squares=True, common_random_numbers=True, budget=100,
                                            **kwargs)
    batched = BestArmIdentificationVectorEnv(num_envs=2, squares=True, common_random_numbers=True, budget=100,
                                             **kwargs)
    single.reset(seed=3)
    batched.reset(seed=3)
    for arm in range(3):
        for t in range(counts.max()):
            pulling = counts[:, arm] > t
            if pulling.any():  # a copy with nothing left to pull of this arm pulls arm 0 instead
                obs = single.step(np.array([[arm if p else 0, 1, 0, 0] for p in pulling]))[0]
    # the single env pulled arm 0 as a filler: pull the same extra arm-0 samples in the batched env
    filler = obs["counts"] - counts
    batched.allocate(counts)
    out = batched.allocate(filler.astype(np.int64))
    np.testing.assert_array_equal(out["counts"], obs["counts"])
    np.testing.assert_allclose(out["squares"], obs["squares"], rtol=1e-5, atol=1e-6)


def test_squares_are_the_samples_squared_deviations():
    env = gaussian()
    env.reset(seed=5)
    samples: list[list[float]] = [[], [], []]
    rng = np.random.default_rng(0)
    for _ in range(200):
        arm = int(rng.integers(3))
        obs = env.step(np.array([[arm, 1, 0, 0]]))[0]
        samples[arm].append(float(env.engine.pulls.sums64[0, arm]) - sum(samples[arm]))
    for arm in range(3):
        x = np.array(samples[arm])
        assert obs["squares"][0, arm] == pytest.approx(np.sum((x - x.mean()) ** 2), rel=1e-6)


@pytest.mark.slow
def test_allocated_squares_follow_the_scaled_chi_square_and_the_sums_the_normal():
    """c pulls at once: the squares are sigma_a^2 chi-square(c - 1) and the sum N(c mu_a, c sigma_a^2), as c
    single pulls give (Kolmogorov-Smirnov, 12 tests at level 1e-4)."""
    n, c = 20_000, 5
    batched, single = gaussian(n), gaussian(n)
    batched.reset(seed=0)
    single.reset(seed=1)
    out = batched.allocate(np.full((n, 3), c))
    for arm in range(3):
        for _ in range(c):
            obs = single.step(np.tile([arm, 1, 0, 0], (n, 1)))[0]
    for got in (out, obs):
        for arm, (mu, sigma) in enumerate(zip(MEANS, SIGMAS, strict=True)):
            assert stats.kstest(got["squares"][:, arm] / sigma**2, stats.chi2(c - 1).cdf).pvalue > 1e-4
            assert stats.kstest(got["sums"][:, arm], stats.norm(c * mu, sigma * np.sqrt(c)).cdf).pvalue > 1e-4


def test_per_arm_sigma_is_checked():
    with pytest.raises(ValueError, match="sigma has 2 standard deviations"):
        gym.make("BestArmIdentification-v0", means=MEANS, arm_distribution="gaussian", sigma=[1.0, 2.0])
    with pytest.raises(ValueError, match="standard deviations > 0"):
        gym.make("BestArmIdentification-v0", means=MEANS, arm_distribution="gaussian", sigma=[1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="arm_distribution='gaussian'"):
        gym.make("BestArmIdentification-v0", means=[0.1, 0.2, 0.3], sigma=[1.0, 1.0, 1.0])
    with pytest.raises(TypeError, match="sigma"):  # the GP model's noise is one standard deviation
        gym.make("CorrelatedBestArm-v0", sigma=[0.2] * 50)
    with pytest.raises(ValueError, match="assumes one known sigma"):
        TrackAndStop(distribution="gaussian").check_env(
            gym.make("BestArmIdentification-v0", means=MEANS, arm_distribution="gaussian", sigma=SIGMAS))
    with pytest.raises(TypeError, match="squares"):
        gym.make("BestArmIdentification-v0", squares="yes")
