# %% [markdown]
# # Watching an agent: LSA on a thresholding bandit, as an animation and as a table
#
# For teaching: each frame of the animation is the env's `rgb_array` rendering (one bar per arm: the empirical
# mean with its 95% confidence interval, the number of pulls, and the threshold theta as a line), with the
# agent's current answer (orange bars: the arms it classifies above theta; blue: below) and the true means (green
# ticks; the title counts the answer's misclassified arms). LSA (tao2019) spends its pulls on the arms whose mean
# is hard to tell apart from theta; arms far from it get few.
#
# Set `BANDIT_GYM_SMOKE=1` for a tiny run (the test suite does).

# %%
import os
from pathlib import Path

import gymnasium as gym

import bandit_gym  # noqa: F401  (registers the envs)
from bandit_gym.agents import LSA
from bandit_gym.animation import record_gif
from bandit_gym.rollout import play_episode

SMOKE = os.environ.get("BANDIT_GYM_SMOKE") == "1"
BUDGET = 20 if SMOKE else 200  # pulls in the episode
EVERY = 10 if SMOKE else 20  # one frame every EVERY steps (each frame is a matplotlib drawing)
OUT = Path("example-output")
OUT.mkdir(exist_ok=True)

# %% [markdown]
# `record_gif` resets the agent and the env with the seed, plays one episode, keeps the frame after the reset,
# after every `EVERY`-th step and at the end, and writes them as an animated GIF (4 frames per second).
# `show_truth=False` hides the true means: the frames then show only what the agent sees (for a class that
# should guess the answer first).

# %%
env = gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=BUDGET, render_mode="rgb_array")
path = record_gif(env, LSA(), OUT / "lsa.gif", seed=0, every=EVERY)
print(f"animation of {BUDGET} pulls saved to {path} ({path.stat().st_size / 1024:.0f} kB)")
blind = record_gif(env, LSA(), OUT / "lsa-blind.gif", seed=0, every=EVERY, show_truth=False)
print(f"the same episode without the true means: {blind}")

# %% [markdown]
# The same episode (same seed, same samples) in a terminal: the `ansi` renderer prints a table of the arms at
# the end of the episode, with the pulls, empirical means, confidence half-widths and LSA's final answer.

# %%
env = gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=BUDGET, render_mode="ansi")
result = play_episode(env, LSA(), seed=0)
print(env.render())
print("true means:", env.unwrapped.means)
print(f"misclassified arms: {result['regret']:.0f} of {len(env.unwrapped.means)}")
