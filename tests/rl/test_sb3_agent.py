"""stable-baselines3 end to end: PPO trains on every registered id, learns the threshold bandit, and a trained
policy plays in the experiment engine as SB3Agent."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from scipy import stats
from stable_baselines3 import DQN, PPO

from bandit_gym.agents import Agent
from bandit_gym.experiments import AgentSpec, ExperimentSpec, run_experiment
from bandit_gym.rl import SB3Agent
from bandit_gym.rollout import play_vector
from bandit_gym.wrappers import EmpiricalAnswer, RecordAnytimeRegretVector
from tests.conftest import ENV_IDS, LARGE_K, small_kwargs

PPO_IDS = [env_id for env_id in ENV_IDS if not env_id.startswith(LARGE_K)]


@pytest.mark.slow
@pytest.mark.parametrize("env_id", PPO_IDS)
def test_ppo_smoke(env_id: str) -> None:
    """PPO on the plain env, full action: 512 steps (four rollouts and their updates), 256 where K >= 50 (each
    step's MultiDiscrete head is one torch Categorical per action entry, 2 K + 1 of them)."""
    env = gym.make(env_id, **small_kwargs(env_id))
    steps = 256 if env.unwrapped.engine.num_arms >= 50 else 512
    model = PPO("MultiInputPolicy", env, n_steps=steps // 4, batch_size=64, n_epochs=2, seed=0, device="cpu")
    model.learn(total_timesteps=steps)
    obs, _ = env.reset(seed=0)
    action, _ = model.predict(obs, deterministic=True)
    assert env.action_space.contains(action)


@pytest.mark.slow
def test_dqn_through_the_discrete_adapter() -> None:
    env = EmpiricalAnswer(gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=40))
    model = DQN("MultiInputPolicy", env, learning_starts=100, buffer_size=1000, seed=0, device="cpu")
    model.learn(total_timesteps=500)
    action, _ = model.predict(env.reset(seed=0)[0])
    assert 0 <= int(np.asarray(action)) < 10


# ------------------------------------------------------------------ SB3's VecEnv API over the native vector env
def test_same_step_autoreset_follows_gymnasium_convention() -> None:
    venv = gym.make_vec("ThresholdingBandit-v0", num_envs=3, vectorization_mode="vector_entry_point", budget=2,
                        autoreset_mode="SameStep")
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    venv.reset(seed=0)
    pull = np.zeros((3, 11), dtype=np.int64)
    for _ in range(2):
        obs, _, terminated, _, info = venv.step(pull)
        assert not terminated.any() and "final_obs" not in info
    obs, rewards, terminated, _, info = venv.step(pull)  # the answer step: ends and restarts every copy
    assert terminated.all() and (rewards <= 0).all() and info["_final_obs"].all()
    assert all(final["counts"][0] == 2 for final in info["final_obs"])
    assert (obs["last_arm"] == -1).all() and obs["counts"].sum() == 0  # already the next episode
    with pytest.raises(ValueError, match="autoreset_mode"):
        gym.make_vec("ThresholdBandit-v0", num_envs=2, vectorization_mode="vector_entry_point",
                     autoreset_mode="Disabled")
    with pytest.raises(ValueError, match="NEXT_STEP"):
        RecordAnytimeRegretVector(venv, [1, 2])


def test_sb3_vec_env_dones_terminal_observation_and_seeding() -> None:
    from bandit_gym.rl import make_vec_env

    venv = make_vec_env("ThresholdingBandit-Tao2019Setup1-v0", num_envs=4, discrete=True, budget=3)
    venv.seed(5)
    first = venv.reset()
    assert first["counts"].shape == (4, 10) and (first["last_arm"] == -1).all()
    for step in range(4):
        obs, rewards, dones, infos = venv.step(np.full(4, step % 10))
    assert dones.all() and all(info["terminal_observation"]["counts"].sum() == 3 for info in infos)
    assert all("episode" in info for info in infos)  # VecMonitor read the dones
    # RecordEpisodeRegretVector under the adapter: each ended copy's metrics, the return VecMonitor summed too
    assert all(info["bandit"]["pulls"] == 3 and info["bandit"]["return"] == pytest.approx(info["episode"]["r"])
               for info in infos)
    assert (obs["counts"] == 0).all() and (rewards <= 0).all()
    venv.seed(5)
    again = venv.reset()
    np.testing.assert_array_equal(again["budget_left"], first["budget_left"])
    with pytest.raises(ValueError, match="SameStep"):
        from bandit_gym.rl import SB3VecEnv

        SB3VecEnv(gym.make_vec("ThresholdBandit-v0", num_envs=2, vectorization_mode="vector_entry_point"))


# ------------------------------------------------------------------ learning happens; a policy is an agent
class RandomArms(Agent):
    """A uniformly random policy on the threshold bandit (the learning test's reference)."""

    families = ("threshold",)

    def select(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        n, k = obs["counts"].shape
        return self.rng.integers(k, size=n)


@pytest.mark.slow
def test_ppo_learns_the_threshold_bandit() -> None:
    """PPO with the threshold-bandit recipe, 16 copies x 8192 steps: its pseudo-regret over 1000 rounds is far
    below a uniformly random policy's (200 copies each, one-sided Welch test)."""
    from bandit_gym.rl import train

    trained = train("ThresholdBandit-v0", total_timesteps=8192, seed=0)
    venv = gym.make_vec("ThresholdBandit-v0", num_envs=200, vectorization_mode="vector_entry_point")
    ppo = play_vector(venv, SB3Agent(trained), seed=1)["regret"]
    random = play_vector(venv, RandomArms(), seed=1)["regret"]
    # the random policy's expectation, exactly: 1000 rounds x the mean gap over c ~ U{1..5} (README's instance)
    survival = venv.unwrapped.survival
    assert random.mean() == pytest.approx(1000 * np.mean(survival.max(0) - survival.mean(0)), rel=0.02)
    test = stats.ttest_ind(ppo, random, equal_var=False, alternative="less")
    assert test.pvalue < 1e-6 and ppo.mean() < 0.5 * random.mean()


def test_sb3_agent_runs_in_the_experiment_engine(tmp_path: Path) -> None:
    """A saved policy (a folder) in a spec next to DKWUCB, run in two worker processes: one row per budget (the
    policy, trained at T = 40, plays T = 20 too with any_budget=True)."""
    from bandit_gym.rl import train

    train("ThresholdBandit-v0", total_timesteps=256, seed=0, num_envs=2, env_kwargs={"horizon": 40}).save(
        tmp_path / "ppo")
    spec = ExperimentSpec(env="ThresholdBandit-v0", budgets=(20, 40), runs=16, chunk=8, seed=3,
                          agents=(AgentSpec("SB3Agent", {"policy": str(tmp_path / "ppo"), "any_budget": True}, "PPO"),
                                  AgentSpec("DKWUCB")))
    summary = run_experiment(spec, out=tmp_path / "out", jobs=2, progress=False).summary()
    rows = summary[summary.agent == "PPO"]
    assert sorted(rows.budget) == [20, 40] and np.isfinite(rows["mean"]).all() and (rows["runs"] == 16).all()
    assert set(summary.agent) == {"PPO", "DKWUCB"}


def test_sb3_agent_fills_the_empirical_answer_for_a_choose_only_policy() -> None:
    env = EmpiricalAnswer(gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=30))
    agent = SB3Agent(DQN("MultiInputPolicy", env, seed=0, device="cpu"))
    agent.reset(seed=0)
    obs, _ = env.reset(seed=0)
    for _ in range(30):
        action = agent.act(obs)
        assert 0 <= action[0] < 10 and (action[1:] == (obs["means"] >= 0.5)).all()
        obs, *_ = env.step(int(action[0]))
    with pytest.raises(ValueError, match="trained on observations"):
        agent.act(gym.make("ThresholdingBandit-Tao2019Setup2-v0").reset(seed=0)[0])
    with pytest.raises(ValueError, match=r"model\.zip"):
        SB3Agent("no/such/folder")


def test_training_is_reproducible_with_a_seed() -> None:
    import torch

    from bandit_gym.rl import recipe_for, train

    first, again, other = (train("ThresholdBandit-v0", total_timesteps=512, seed=seed, num_envs=4)
                           for seed in (3, 3, 4))
    weights = [policy.model.policy.state_dict() for policy in (first, again, other)]
    assert all(torch.equal(weights[0][key], weights[1][key]) for key in weights[0])
    assert not all(torch.equal(weights[0][key], weights[2][key]) for key in weights[0])
    np.testing.assert_array_equal(first.normalize.obs_rms["counts"].mean, again.normalize.obs_rms["counts"].mean)
    assert recipe_for("ThresholdingBandit-v0", "DQN").discrete and not recipe_for("ThresholdBandit-v0").discrete
    with pytest.raises(ValueError, match="unknown recipe fields"):
        recipe_for("ThresholdBandit-v0", n_envs=4)
    with pytest.raises(ValueError, match="algo"):
        recipe_for("ThresholdBandit-v0", "SAC")


def test_the_multi_armed_bandit_has_recipes_and_its_policy_plays_as_an_agent() -> None:
    # recipe_for raised a KeyError ('multi_armed', 'PPO') and SB3Agent refused the family
    from bandit_gym.rl import recipe_for, train

    assert not recipe_for("MultiArmedBandit-v0").discrete and recipe_for("MultiArmedBandit-v0", "DQN").num_envs == 1
    policy = train("MultiArmedBandit-v0", total_timesteps=256, seed=0, num_envs=4, env_kwargs={"budget": 50})
    agent = SB3Agent(policy.model, normalize=policy.normalize)
    env = gym.make("MultiArmedBandit-v0", budget=50)
    obs, _ = env.reset(seed=0)
    agent.reset(seed=0)
    for _ in range(5):
        action = agent.act(obs)
        assert env.action_space.contains(action)
        obs, *_ = env.step(action)
