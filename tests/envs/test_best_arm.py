"""BestArmIdentification-v0: set simple regret and error by hand, answers of the wrong size, the stop action,
fixed-confidence truncation, the Audibert et al. presets."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import bandit_gym  # noqa: F401
from bandit_gym import metrics
from bandit_gym.envs.best_arm import BestArmIdentificationEnv, top_m_answer
from bandit_gym.instances import AUDIBERT2010_PROBLEMS, best_arm_complexity
from bandit_gym.wrappers import RecordEpisodeRegret

MEANS = [0.9, 0.8, 0.7, 0.5, 0.4]


@pytest.mark.parametrize(("bits", "m", "regret"), [
    ([1, 0, 0, 0, 0], 1, 0.0), ([0, 1, 0, 0, 0], 1, 0.1), ([1, 1, 0, 0, 0], 2, 0.0),
    ([1, 0, 1, 0, 0], 2, 0.1), ([0, 0, 0, 1, 1], 2, 0.4),
    ([1, 0, 0, 0, 0], 2, 0.4),  # one arm for m = 2: the worst set, mu_(2) - min mu
])
def test_set_simple_regret_by_hand(bits: list[int], m: int, regret: float) -> None:
    assert metrics.set_simple_regret(bits, MEANS, m) == pytest.approx(regret)
    assert metrics.set_error(bits, MEANS, m, 0.0) == (regret > 1e-12)
    assert metrics.set_error(bits, MEANS, m, 0.1 + 1e-9) == (regret > 0.1 + 1e-9)


def test_answer_step_scores_the_set_and_flags_a_wrong_size() -> None:
    env = RecordEpisodeRegret(BestArmIdentificationEnv(means=MEANS, m=2, budget=3))
    env.reset(seed=0)
    for arm in range(3):
        *_, info = env.step(np.array([arm, 1, 1, 0, 0, 0]))
        assert not info["invalid_answer"]
    _, reward, terminated, truncated, info = env.step(np.array([0, 1, 0, 0, 0, 0]))  # answer step, one arm
    assert terminated and not truncated and info["invalid_answer"]
    assert reward == pytest.approx(-0.4) and info["bandit"]["regret"] == pytest.approx(0.4)
    assert info["bandit"]["invalid"] == 1.0 and info["bandit"]["pulls"] == 3


def test_fixed_confidence_stops_or_truncates_at_the_cap() -> None:
    env = BestArmIdentificationEnv(means=MEANS, setting="fixed_confidence", budget=2, loss="error")
    env.reset(seed=0)
    *_, terminated, truncated, _ = env.step(np.array([5, 1, 0, 0, 0, 0]))  # stop at once, right answer
    assert terminated and not truncated
    env.reset(seed=0)
    env.step(np.array([0, 0, 1, 0, 0, 0]))
    env.step(np.array([1, 0, 1, 0, 0, 0]))
    _, reward, terminated, truncated, _ = env.step(np.array([2, 0, 1, 0, 0, 0]))  # out of pulls: the cap
    assert truncated and not terminated and reward == -1.0  # still scored: arm 1 is not the best


def test_vector_env_autoresets_truncated_copies() -> None:
    venv = gym.make_vec("BestArmIdentification-v0", num_envs=3, vectorization_mode="vector_entry_point",
                        setting="fixed_confidence", budget=1)
    venv.reset(seed=0)
    action = np.zeros((3, 21), dtype=np.int64)
    action[:, 1] = 1
    _, _, terminated, truncated, _ = venv.step(action)
    obs, _, terminated, truncated, _ = venv.step(action)
    assert truncated.all() and not terminated.any()
    obs, *_ = venv.step(action)
    assert (obs["last_arm"] == -1).all()  # reset on the next step


def test_presets_and_top_m_answer() -> None:
    for problem, means in AUDIBERT2010_PROBLEMS.items():
        env = gym.make(f"BestArmIdentification-Audibert2010Problem{problem}-v0")
        assert env.unwrapped.budget == round(best_arm_complexity(means))
        assert max(means) == 0.5 and means[0] == 0.5
    assert AUDIBERT2010_PROBLEMS[3] == pytest.approx((0.5, 0.5 - 0.37**2, 0.5 - 0.37**3, 0.5 - 0.37**4))
    assert best_arm_complexity(AUDIBERT2010_PROBLEMS[1]) == pytest.approx(2000.0)
    obs = {"means": np.array([0.1, 0.7, 0.7, 0.2]), "m": np.array([2.0])}
    assert top_m_answer(obs).tolist() == [0, 1, 1, 0]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"m": 0}, "m"), ({"m": 20}, "m"), ({"setting": "anytime"}, "setting"), ({"loss": "aggregate"}, "loss"),
    ({"epsilon": -0.1}, "epsilon"),
])
def test_bad_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        gym.make("BestArmIdentification-v0", **kwargs)


def custom_arms() -> list:
    from scipy import stats

    return [stats.beta(6, 4), stats.beta(2, 5), stats.uniform(0, 0.8), stats.triang(0.5, 0, 1)]  # 0.6 .29 .4 .5


def test_custom_bounded_arms_pass_both_checkers_and_replay_bit_for_bit() -> None:
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make("BestArmIdentification-v0", distributions=custom_arms(), budget=50)
    engine = env.unwrapped.engine
    assert engine.arm_distribution == "custom"
    np.testing.assert_allclose(engine.fixed_means, [0.6, 2 / 7, 0.4, 0.5])
    assert env.observation_space["means"].high.max() == 1.0  # the union of the supports
    check_env(env.unwrapped, skip_render_check=True)
    sb3_check_env(env.unwrapped, warn=True)

    def trajectory(seed: int) -> list[float]:
        env.reset(seed=seed)
        return [float(env.step(np.array([t % 4, 1, 0, 0, 0]))[0]["last_value"][0]) for t in range(12)]

    samples = trajectory(3)
    assert samples == trajectory(3) and samples != trajectory(4)
    assert all(0.0 <= x <= 1.0 for x in samples) and len(set(samples)) == 12  # continuous samples


@pytest.mark.parametrize("common_random_numbers", [False, True])
def test_custom_arms_sample_their_distributions_by_pulls_and_by_allocation(common_random_numbers: bool) -> None:
    # 4000 copies x 5 pulls of each arm, once by single pulls and once by one allocation: each arm's sum of 5
    # samples has mean 5 mu and variance 5 sigma^2; both paths must match them (z < 4)
    arms, n, c = custom_arms(), 4000, 5
    mu, var = np.array([a.mean() for a in arms]), np.array([a.var() for a in arms])

    def venv() -> gym.vector.VectorEnv:
        env = gym.make_vec("BestArmIdentification-v0", num_envs=n, vectorization_mode="vector_entry_point",
                           distributions=arms, budget=4 * c, common_random_numbers=common_random_numbers)
        env.reset(seed=11)
        return env

    stepped = venv()
    action = np.zeros((n, 5), dtype=np.int64)
    action[:, 1] = 1
    for t in range(4 * c):
        action[:, 0] = t % 4
        stepped.step(action)
    allocated = venv()
    allocated.unwrapped.allocate(np.full((n, 4), c))
    for env in (stepped, allocated):
        sums = env.unwrapped.engine.sums
        assert np.all(env.unwrapped.engine.counts == c)
        z = (sums.mean(axis=0) - c * mu) / np.sqrt(c * var / n)
        assert np.all(np.abs(z) < 4), z
        assert np.all(np.abs(sums.var(axis=0) / (c * var) - 1) < 0.1)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"distributions": "normal"}, TypeError, r"distributions\[0\] must be a frozen scipy.stats distribution"),
    ({"means": [0.5, 0.4]}, ValueError, "either means= or distributions="),
    ({"arm_distribution": "gaussian"}, ValueError, "makes the arms custom"),
])
def test_custom_arms_bad_input(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        BestArmIdentificationEnv(**{"distributions": custom_arms(), **kwargs})


def test_custom_arms_must_be_bounded() -> None:
    from scipy import stats

    with pytest.raises(ValueError, match=r"distributions\[1\] has support \[-inf, inf\]; arms must be bounded"):
        BestArmIdentificationEnv(distributions=[stats.uniform(0, 1), stats.norm(0.5, 0.1)])
    with pytest.raises(ValueError, match="arm_distribution='custom' needs distributions"):
        BestArmIdentificationEnv(arm_distribution="custom")
