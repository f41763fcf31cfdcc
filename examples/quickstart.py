# %% [markdown]
# # Quickstart: a thresholding bandit, an agent, and the episode's regret
#
# Set `BANDIT_GYM_SMOKE=1` for a tiny run (the test suite does).

# %%
import os

import gymnasium as gym

import bandit_gym  # noqa: F401  (registers the envs)
from bandit_gym.agents import Uniform
from bandit_gym.wrappers import RecordEpisodeRegret

SMOKE = os.environ.get("BANDIT_GYM_SMOKE") == "1"
COPIES = 200 if SMOKE else 5000

env = RecordEpisodeRegret(gym.make("ThresholdingBandit-Tao2019Setup1-v0", render_mode="ansi"))
agent = Uniform()
agent.reset(seed=0)
obs, info = env.reset(seed=0)
terminated = False
while not terminated:
    obs, reward, terminated, truncated, info = env.step(agent.act(obs))
print(env.render())
print("misclassified arms:", info["bandit"]["regret"], "| pulls:", info["bandit"]["pulls"])

# %% [markdown]
# The same agent on 5000 copies at once (`COPIES`) through the native vector env:

# %%
from bandit_gym.rollout import play_vector  # noqa: E402

venv = gym.make_vec("ThresholdingBandit-Tao2019Setup1-v0", num_envs=COPIES, vectorization_mode="vector_entry_point")
result = play_vector(venv, Uniform(), seed=0, budgets=[200, 500, 1000])
print("mean aggregate regret at T = 200, 500, 1000:", result["anytime_regret"].mean(axis=0))
