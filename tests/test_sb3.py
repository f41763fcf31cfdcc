"""stable-baselines3 end to end: PPO trains for a few thousand steps on every registered id."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3 import DQN, PPO

from bandit_gym.wrappers import EmpiricalAnswer
from tests.conftest import ENV_IDS, small_kwargs

#: PPO on every id but the large-K presets: chen2017's n = 1000 ones (the same env class as TopKIdentification-v0,
#: n = 100, trained here), the synthetic traffic preset (K = 357; CorrelatedBestArm-v0, K = 50, is trained) and
#: ModelSelection-v0 (K = 160, a best-arm env with table-sampled arms), where a few thousand PPO steps take one
#: to several minutes; SB3's checker runs on all of them.
LARGE_K = ("TopKIdentification-Chen2017", "CorrelatedBestArm-TrafficSynthetic", "ModelSelection")
PPO_IDS = [env_id for env_id in ENV_IDS if not env_id.startswith(LARGE_K)]


@pytest.mark.slow
@pytest.mark.parametrize("env_id", PPO_IDS)
def test_ppo_smoke(env_id: str) -> None:
    env = gym.make(env_id, **small_kwargs(env_id))
    model = PPO("MultiInputPolicy", env, n_steps=512, batch_size=128, n_epochs=2, seed=0, device="cpu")
    model.learn(total_timesteps=2048)
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
