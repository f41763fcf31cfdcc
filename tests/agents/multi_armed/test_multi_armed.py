"""The classic stochastic K-armed bandit: MultiArmedBandit-v0 and its agents (epsilon-greedy, UCB1, KL-UCB,
Thompson sampling), with UCB1's and KL-UCB's regret against the Lai-Robbins constant."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import bandit_gym  # noqa: F401  (registers the ids)
from bandit_gym.agents import KLUCB, UCB1, EpsilonGreedy, Thompson, Uniform
from bandit_gym.agents.multi_armed.kl_ucb import kl_ucb_bernoulli
from bandit_gym.divergences import kl_bernoulli
from bandit_gym.envs.multi_armed import lai_robbins_constant
from bandit_gym.instances import UniformMeans
from bandit_gym.rollout import play_episode, play_vector
from bandit_gym.wrappers import RecordEpisodeRegret
from tests.conftest import AGENTS

ID = "MultiArmedBandit-v0"
MEANS = [0.7, 0.5, 0.3]
MULTI_ARMED_AGENTS = (EpsilonGreedy, UCB1, KLUCB, Thompson)


def vector(num_envs: int, **kwargs: object) -> gym.vector.VectorEnv:
    return gym.make_vec(ID, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)


# ------------------------------------------------------------------------------------------------------ env
def test_a_pull_pays_the_sample_and_updates_only_that_arm() -> None:
    env = gym.make(ID, means=MEANS, budget=4)
    obs, info = env.reset(seed=0)
    assert set(obs) == {"budget_left", "last_arm", "last_reward", "counts", "sums", "means"} and info == {}
    assert obs["last_arm"][0] == -1 and obs["budget_left"][0] == 4 and not obs["counts"].any()
    total = 0.0
    for t, arm in enumerate([1, 1, 2, 0], 1):
        obs, reward, terminated, truncated, info = env.step(arm)
        assert reward in (0.0, 1.0) and obs["last_reward"][0] == reward and obs["last_arm"][0] == arm
        assert info["expected_reward"] == MEANS[arm] and info["best_expected_reward"] == 0.7
        total += 0.7 - MEANS[arm]
        assert info["pseudo_regret"] == pytest.approx(total)
        assert obs["budget_left"][0] == 4 - t and terminated == (t == 4) and not truncated
    np.testing.assert_array_equal(obs["counts"], [1, 2, 1])
    np.testing.assert_allclose(obs["means"], obs["sums"] / obs["counts"])
    with pytest.raises(ValueError, match="after the episode terminated"):
        env.step(0)


def test_recorded_regret_is_the_pseudo_regret_sum_of_gaps_times_pulls() -> None:
    env = RecordEpisodeRegret(gym.make(ID, means=MEANS, budget=50))
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    while True:
        obs, _, terminated, _, info = env.step(int(rng.integers(3)))
        if terminated:
            break
    gaps = 0.7 - np.array(MEANS)
    assert info["bandit"]["regret"] == pytest.approx(float(gaps @ obs["counts"]))
    assert info["bandit"]["regret"] == pytest.approx(info["pseudo_regret"])
    assert info["bandit"]["pulls"] == 50 and info["bandit"]["return"] == pytest.approx(obs["sums"].sum())


def test_vector_env_regret_matches_its_counts_and_copies_by_default() -> None:
    venv = vector(64, means=MEANS, budget=30)
    assert venv.copy
    result = play_vector(venv, UCB1(), seed=0)
    assert result["pulls"].tolist() == [30] * 64 and (result["regret"] >= 0).all()
    assert 0 < result["regret"].mean() < 0.2 * 30  # below a uniform choice's (0.2 per round)


def test_instances_fixed_drawn_per_episode_or_pinned() -> None:
    env = gym.make(ID, num_arms=5, budget=3)
    env.reset(seed=0)
    first = env.unwrapped.means.copy()
    env.reset()
    assert first.shape == (5,) and ((first >= 0) & (first <= 1)).all()
    assert not np.array_equal(first, env.unwrapped.means)  # drawn anew: U(0, 1) per episode
    with pytest.raises(ValueError, match="fixed instance"):
        env.unwrapped.lai_robbins_constant()
    env = gym.make(ID, means=UniformMeans(num_arms=4, low=0.2, high=0.4), budget=3)
    env.reset(seed=1)
    assert env.unwrapped.means.shape == (4,) and ((env.unwrapped.means >= 0.2) & (env.unwrapped.means <= 0.4)).all()
    env.reset(seed=1, options={"means": [0.1, 0.9, 0.5, 0.5]})
    np.testing.assert_array_equal(env.unwrapped.means, [0.1, 0.9, 0.5, 0.5])
    assert env.unwrapped.lai_robbins_constant() == pytest.approx(lai_robbins_constant([0.1, 0.9, 0.5, 0.5]))
    env.reset()  # an explicit reset without options: the sampler again
    assert not np.array_equal(env.unwrapped.means, [0.1, 0.9, 0.5, 0.5])
    venv = vector(2, num_arms=2, budget=1)
    venv.reset(seed=0, options={"means": [0.2, 0.6]})
    for _ in range(3):  # the pinned instance survives the autoresets
        venv.step(np.zeros(2, dtype=np.int64))
        np.testing.assert_array_equal(venv.unwrapped.means, [[0.2, 0.6]] * 2)


def test_gaussian_arms_have_the_means_and_sigma_asked_for() -> None:
    venv = vector(4000, means=[1.0, -2.0], budget=1, distribution="gaussian", sigma=3.0)
    venv.reset(seed=0)
    _, rewards, terminated, _, _ = venv.step(np.r_[np.zeros(2000, int), np.ones(2000, int)])
    assert terminated.all()
    for arm, mu in ((0, 1.0), (1, -2.0)):
        x = rewards[arm * 2000:(arm + 1) * 2000]
        assert abs(x.mean() - mu) < 4 * 3.0 / np.sqrt(2000) and abs(x.std() - 3.0) < 0.2


def test_common_random_numbers_give_each_arm_its_own_stream() -> None:
    def per_arm_sums(order: list[int]) -> np.ndarray:
        env = gym.make(ID, means=MEANS, budget=len(order), common_random_numbers=True)
        env.reset(seed=5)
        for arm in order:
            obs, *_ = env.step(arm)
        return obs["sums"]

    np.testing.assert_array_equal(per_arm_sums([0, 0, 1, 2, 1] * 4), per_arm_sums([2, 1, 1, 0, 0] * 4))


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"distribution": "poisson"}, "distribution='poisson' is not allowed"),
    ({"means": [0.5, 1.5]}, "entries above 1"),
    ({"means": [0.5]}, "K >= 2"),
    ({"means": [0.5, 0.2], "num_arms": 2}, "pass one of them only"),
    ({"budget": 0}, "budget=0 is too small"),
    ({"distribution": "gaussian", "sigma": 0.0}, "sigma=0.0 is outside"),
])
def test_bad_arguments_are_named(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        gym.make(ID, **kwargs)


def test_bad_actions_are_named() -> None:
    env = gym.make(ID, means=MEANS)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action=3 is not an arm; allowed arms are 0\.\.2"):
        env.step(3)
    with pytest.raises(TypeError, match="integer arm index"):
        env.step(1.0)


def test_lai_robbins_constant_by_hand() -> None:
    kl = [0.8 * np.log(0.8 / 0.9) + 0.2 * np.log(0.2 / 0.1), 0.7 * np.log(0.7 / 0.9) + 0.3 * np.log(0.3 / 0.1)]
    assert lai_robbins_constant([0.9, 0.8, 0.7]) == pytest.approx(0.1 / kl[0] + 0.2 / kl[1])
    # Gaussian arms: Delta / (Delta^2 / (2 sigma^2)) = 2 sigma^2 / Delta; the tied best arms add nothing
    assert lai_robbins_constant([1.0, 1.0, 0.5, 0.0], "gaussian", sigma=2.0) == pytest.approx(16.0 + 8.0)


def test_rendering_shows_the_table_and_a_chart() -> None:
    env = gym.make(ID, means=MEANS, budget=5, render_mode="ansi")
    env.reset(seed=0)
    env.step(2)
    text = env.render()
    assert "K=3, 1 of 5 pulls" in text and "pseudo-regret 0.400" in text
    frame = gym.make(ID, means=MEANS, budget=5, render_mode="rgb_array")
    frame.reset(seed=0)
    frame.step(1)
    image = frame.render()
    assert image.ndim == 3 and image.shape[2] == 3 and image.std() > 0


# ------------------------------------------------------------------------------------------------------ agents
def test_agents_are_registered_anytime_and_of_this_family_only() -> None:
    for cls in MULTI_ARMED_AGENTS:
        assert AGENTS[cls.__name__] is cls and cls.families == ("multi_armed",)
        assert cls.__dict__.get("anytime", cls.__mro__[1].__dict__.get("anytime")) is True
    assert "multi_armed" in Uniform.families
    env = gym.make("ThresholdingBandit-v0")
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match=r"UCB1 plays \('multi_armed',\) envs, not a 'thresholding' env"):
        UCB1().act(obs)


@pytest.mark.parametrize("agent", [EpsilonGreedy(), EpsilonGreedy(epsilon=0.1), UCB1(), KLUCB(), KLUCB(c=3.0),
                                   Thompson()], ids=repr)
def test_agents_play_single_and_vector_envs(agent: object) -> None:
    single = play_episode(gym.make(ID, means=MEANS, budget=200), agent, seed=0)
    assert single["pulls"] == 200 and 0 <= single["regret"] <= 0.4 * 200
    result = play_vector(vector(50, means=MEANS, budget=200), agent, seed=0)
    assert result["pulls"].tolist() == [200] * 50
    uniform = play_vector(vector(50, means=MEANS, budget=200), Uniform(), seed=0)
    assert result["regret"].mean() < 0.7 * uniform["regret"].mean()  # they learn (uniform: 0.2 per round)


@pytest.mark.parametrize("agent", [KLUCB(distribution="gaussian", sigma=2.0), Thompson("gaussian", sigma=2.0),
                                   UCB1()], ids=repr)
def test_agents_learn_gaussian_arms(agent: object) -> None:
    kwargs = {"means": [1.0, 0.0, -1.0], "distribution": "gaussian", "sigma": 2.0, "budget": 1000}
    result = play_vector(vector(40, **kwargs), agent, seed=1)
    uniform = play_vector(vector(40, **kwargs), Uniform(), seed=1)
    assert result["regret"].mean() < 0.5 * uniform["regret"].mean()


def test_bernoulli_agents_refuse_rewards_outside_the_unit_interval() -> None:
    venv = vector(4, means=[3.0, -3.0], distribution="gaussian", budget=10)
    for agent in (KLUCB(), Thompson()):
        with pytest.raises(ValueError, match="distribution='gaussian'"):
            play_vector(venv, agent, seed=0)


def obs_of(counts: list[float], sums: list[float], budget_left: float, last_arm: float) -> dict:
    return {"budget_left": np.array([budget_left], np.float32), "last_arm": np.array([last_arm], np.float32),
            "last_reward": np.zeros(1, np.float32), "counts": np.array(counts, np.float32),
            "sums": np.array(sums, np.float32),
            "means": (np.array(sums) / np.maximum(counts, 1)).astype(np.float32)}


def test_ucb1_and_kl_ucb_indices_by_hand() -> None:
    counts, sums = [10.0, 2.0, 30.0], [6.0, 1.0, 21.0]  # means .6, .5, .7; n = 42 pulls made
    now = obs_of(counts, sums, 8, 2)  # the first observation each agent sees: it reads every arm's statistics
    ucb = [m + np.sqrt(2 * np.log(42) / c) for m, c in zip((0.6, 0.5, 0.7), counts, strict=True)]
    assert UCB1().act(now) == int(np.argmax(ucb)) == 1
    assert KLUCB().act(now) == 1
    level = np.log(43) / np.array(counts)  # round t = 43
    index = kl_ucb_bernoulli(np.array([0.6, 0.5, 0.7]), level)
    np.testing.assert_allclose(kl_bernoulli([0.6, 0.5, 0.7], index), level, rtol=1e-9)
    assert ((index > [0.6, 0.5, 0.7]) & (index < 1)).all()
    closed_form = np.array([0.6, 0.5, 0.7]) + 0.05 * np.sqrt(2 * level)
    assert KLUCB(distribution="gaussian", sigma=0.05).act(now) == int(np.argmax(closed_form)) == 2  # sigma counts


def test_kl_ucb_index_at_the_edges() -> None:
    index = kl_ucb_bernoulli(np.array([0.0, 1.0, 0.999, 0.3]), np.array([0.5, 0.5, 1e-6, 50.0]))
    assert index[1] == 1.0 and index[3] == pytest.approx(1.0) and 0.999 < index[2] < 1.0
    assert kl_bernoulli(0.0, index[0]) == pytest.approx(0.5)


def test_epsilon_greedy_schedule_and_greedy_choice() -> None:
    agent = EpsilonGreedy(c=0.15, d=0.1)
    obs = obs_of([100.0, 100.0, 99.0], [60.0, 50.0, 70.0], 701, 2)  # 299 pulls made: round t = 300
    agent.act(obs)
    assert agent.exploration_rate(obs)[0] == pytest.approx(0.15 * 3 / (0.01 * 300))
    assert all(EpsilonGreedy(epsilon=0.0).act(obs) == 2 for _ in range(20))
    agent = EpsilonGreedy(epsilon=1.0)
    agent.reset(seed=0)
    picks = np.array([agent.act(obs) for _ in range(3000)])
    assert np.bincount(picks, minlength=3).min() > 900  # uniform exploration
    with pytest.raises(ValueError, match=r"epsilon=1\.5 is outside"):
        EpsilonGreedy(epsilon=1.5)


def test_thompson_draws_from_the_beta_posterior() -> None:
    agent = Thompson()
    agent.reset(seed=0)
    # arm 0: Beta(1 + 3, 1 + 7), arm 1: Beta(1 + 5, 1 + 5); P(theta_0 > theta_1) is about 0.19
    picks = np.array([agent.act(obs_of([10.0, 10.0], [3.0, 5.0], 80, 1)) for _ in range(4000)])
    rng = np.random.default_rng(1)
    exact = (rng.beta(4, 8, 10**6) > rng.beta(6, 6, 10**6)).mean()
    assert abs((picks == 0).mean() - exact) < 4 * np.sqrt(exact * (1 - exact) / 4000)


# ------------------------------------------------------------------------------------------------------ regret
CHECKPOINTS = (1250, 2500, 5000, 10000)
RUNS = 300


def regret_at_checkpoints(agent: object, seed: int) -> np.ndarray:
    """Cumulative pseudo-regret of RUNS copies at each checkpoint, ``(RUNS, len(CHECKPOINTS))``, one episode
    of ``CHECKPOINTS[-1]`` rounds (both agents are anytime: the regret at T is that of a horizon-T run)."""
    venv = vector(RUNS, means=MEANS, budget=CHECKPOINTS[-1], copy=False)
    agent.reset(seed=seed)
    obs, _ = venv.reset(seed=seed)
    out = np.zeros((RUNS, len(CHECKPOINTS)))
    for t in range(1, CHECKPOINTS[-1] + 1):
        obs, _, _, _, info = venv.step(agent.act(obs))
        if t in CHECKPOINTS:
            out[:, CHECKPOINTS.index(t)] = info["pseudo_regret"]
    return out


def mean_and_halfwidth(x: np.ndarray) -> tuple[float, float]:
    """Mean and 99.7% (3 SE) half-width."""
    return float(x.mean()), float(3 * x.std(ddof=1) / np.sqrt(x.size))


@pytest.mark.parametrize(("agent", "low", "high"), [(KLUCB(), 0.5, 1.5), (UCB1(), 1.5, 10.0)], ids=repr)
def test_regret_grows_like_log_t_near_the_lai_robbins_constant(agent: object, low: float, high: float) -> None:
    """On Bernoulli means (0.7, 0.5, 0.3), C = sum_i Delta_i / kl(mu_i, mu*) = 3.47: E[R_T] >= (C + o(1)) ln T.

    Log growth: every doubling of T adds the same regret (C' ln 2), so the last doubling's increment is no
    more than 1.5 times the first's (sqrt(T) growth would double it, linear growth quadruple it). Constant:
    R_T / ln T at T = 10^4 lies within [low C, high C], KL-UCB near C (asymptotically optimal), UCB1 above
    it (its ``2 ln T / Delta_i`` per arm) but of the same order. Measured (300 runs, seed 0): KL-UCB increments
    3.2 3.0 3.3, R/ln T = (0.82 +- 0.05) C; UCB1 increments 15.7 16.5 16.9, R/ln T = (3.13 +- 0.09) C (3 SE).
    Finite-T regret may sit below C ln T: the bound is asymptotic."""
    constant = lai_robbins_constant(MEANS)
    regret = regret_at_checkpoints(agent, seed=0)
    increments = np.diff(regret, axis=1)
    growth, margin = mean_and_halfwidth(increments[:, -1] - 1.5 * increments[:, 0])
    assert growth + margin < 0, f"doublings add {increments.mean(axis=0).round(2)}"
    assert increments.mean(axis=0).min() > 0  # still growing: not a bounded regret
    per_log, margin = mean_and_halfwidth(regret[:, -1] / np.log(CHECKPOINTS[-1]) / constant)
    assert low < per_log - margin and per_log + margin < high, f"R_T / ln T = {per_log:.2f} C +- {margin:.2f}"


def test_kl_ucb_beats_ucb1_on_the_same_runs() -> None:
    kl = play_vector(vector(200, means=[0.9, 0.8, 0.7], budget=2000, copy=False), KLUCB(), seed=2)["regret"]
    ucb = play_vector(vector(200, means=[0.9, 0.8, 0.7], budget=2000, copy=False), UCB1(), seed=2)["regret"]
    difference, margin = mean_and_halfwidth(ucb - kl)
    assert difference - margin > 0


def test_the_experiment_engine_runs_the_multi_armed_family(tmp_path: Path) -> None:
    """A spec on MultiArmedBandit-v0: one cell per budget (regret is recorded per horizon), the same seeds for
    every agent, KL-UCB's regret below Uniform's and growing with T; the folder reloads."""
    from bandit_gym.experiments import AgentSpec, ExperimentResult, ExperimentSpec, run_experiment

    spec = ExperimentSpec(env="MultiArmedBandit-v0", env_kwargs={"means": [0.7, 0.5, 0.3]},
                          agents=(AgentSpec("KLUCB"), AgentSpec("Uniform")), budgets=(100, 1000), runs=200, seed=0)
    table = run_experiment(spec, out=tmp_path, progress=False).summary().set_index(["agent", "budget"])["mean"]
    assert table["KLUCB", 100] < table["KLUCB", 1000] < 0.2 * table["Uniform", 1000]
    assert abs(table["Uniform", 1000] - 1000 * 0.2) < 10  # Uniform: T/3 pulls of each arm, mean gap 0.2
    assert ExperimentResult.load(tmp_path).summary().shape[0] == 4
