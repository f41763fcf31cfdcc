# %% [markdown]
# # Your own instance: fixed means, other arm laws, a pinned episode, a custom threshold bandit
#
# Every env takes its instance as constructor arguments, and rejects a bad one with a `ValueError` that says
# what is allowed. This example builds one instance of each kind and plays an agent on it.
#
# Set `BANDIT_GYM_SMOKE=1` for a tiny run (the test suite does).

# %%
import os

import gymnasium as gym
import numpy as np
from scipy import stats

import bandit_gym  # noqa: F401  (registers the envs)
from bandit_gym.agents import DKWUCB, LSA, Uniform
from bandit_gym.rollout import play_episode, play_vector
from bandit_gym.wrappers import RecordEpisodeRegret

SMOKE = os.environ.get("BANDIT_GYM_SMOKE") == "1"
COPIES = 10 if SMOKE else 500  # independent runs in the vector env

# %% [markdown]
# ## 1. A thresholding bandit with fixed means
#
# Six Bernoulli arms, threshold theta = 0.4 and an indifference zone epsilon = 0.1: arms whose mean lies
# within epsilon of theta (here 0.35 and 0.45) are not counted, whatever the agent answers. One episode of LSA
# with 300 pulls, shown by the text renderer (`render_mode="ansi"`):

# %%
env = gym.make("ThresholdingBandit-v0", means=[0.1, 0.25, 0.35, 0.45, 0.6, 0.9], threshold=0.4, epsilon=0.1,
               budget=300, render_mode="ansi")
result = play_episode(env, LSA(), seed=0)
print(env.render())
print("misclassified counted arms:", result["regret"])

# %% [markdown]
# ## 2. Best arm identification with other arm laws
#
# `BestArmIdentification-v0` has Bernoulli arms by default. `arm_distribution="gaussian"` gives Gaussian arms
# (standard deviation `sigma`), and `distributions=` takes any bounded frozen `scipy.stats` law per arm: the
# means are theirs. Uniform (round robin, then the arm with the best empirical mean) looks for the best arm with
# 200 pulls, on `COPIES` runs at once.

# %%
budget = 200
instances = {
    "Gaussian, sigma = 0.5": {"means": [0.5, 0.4, 0.3, 0.2], "arm_distribution": "gaussian", "sigma": 0.5},
    "beta / uniform / triangular": {"distributions": [stats.beta(6, 4), stats.beta(11, 9), stats.uniform(0.05, 0.9),
                                                      stats.triang(0.5, loc=0.1, scale=0.7)]},
}
for name, kwargs in instances.items():
    venv = gym.make_vec("BestArmIdentification-v0", num_envs=COPIES, vectorization_mode="vector_entry_point",
                        budget=budget, **kwargs)
    result = play_vector(venv, Uniform(), seed=0)
    means = venv.unwrapped.means[0]  # the true means (the same in every copy), never in the observation
    print(f"{name:28s} means {np.round(means, 3)}: P(wrong arm) = {result['error'].mean():.3f} after {budget} pulls")

# %% [markdown]
# ## 3. Pinning the instance of an episode
#
# `ThresholdingBandit-v0` draws ten means uniformly on [0, 1] at every reset. `reset(options={"means": ...})`
# pins one instance (of the same K) until the next reset without options, e.g. to replay a hard case. The same
# seed draws the same instance. (The helpers `play_episode` / `play_vector` reset without options, so here we
# write the loop ourselves.)

# %%
env = RecordEpisodeRegret(gym.make("ThresholdingBandit-v0"))  # writes info["bandit"] at the episode's end
agent = LSA()
hard = [0.45, 0.48, 0.49, 0.51, 0.52, 0.55, 0.1, 0.2, 0.8, 0.9]  # six arms close to theta = 0.5
for options in (None, {"means": hard}, None):
    agent.reset(seed=0)
    obs, _ = env.reset(seed=0, options=options)
    terminated = False
    while not terminated:
        obs, _, terminated, _, info = env.step(agent.act(obs))
    how = "pinned" if options else "drawn "
    print(f"{how} means {np.round(env.unwrapped.means, 2)}: LSA misclassified arms: {info['bandit']['regret']:.0f}")

# %% [markdown]
# ## 4. A custom threshold bandit
#
# For the threshold bandit (abernethy2016) an instance is one probability vector per arm over the values
# 0..m: here K = 3 arms and m = 4 levels. A "steady" arm almost always reaches 2, a "middle" one often
# reaches 3, a "risky" one is mostly 0 or 4. Each is the best for its own thresholds; the env checks the paper's
# assumption of a unique best arm per level (and warns when it fails).
# `thresholds="cyclic"` shows every level once in each block of m rounds, in a random order.

# %%
distributions = [
    [0.0, 0.05, 0.75, 0.2, 0.0],  # steady: F = P(X >= j) = 1, .95, .2, 0
    [0.1, 0.1, 0.1, 0.5, 0.2],    # middle: .9, .8, .7, .2
    [0.4, 0.1, 0.1, 0.0, 0.4],    # risky:  .6, .5, .4, .4
]
horizon = 100 if SMOKE else 2000
venv = gym.make_vec("ThresholdBandit-v0", num_envs=COPIES, vectorization_mode="vector_entry_point",
                    distributions=distributions, thresholds="cyclic", horizon=horizon)
print("survival F_i(j), levels j = 1..4:\n", venv.unwrapped.survival)
print("best arm per level:", venv.unwrapped.survival.argmax(axis=0))
regret = play_vector(venv, DKWUCB(), seed=0)["regret"]
F = venv.unwrapped.survival
blind = (F.max(axis=0) - F.mean(axis=0)).mean() * horizon  # an arm drawn at random each round
print(f"DKWUCB: mean cumulative pseudo-regret {regret.mean():.1f} ± {regret.std(ddof=1) / np.sqrt(COPIES):.1f} "
      f"over T = {horizon} rounds (a random arm each round loses {blind:.0f})")

# %% [markdown]
# ## 5. Bad input is refused, with a message that says what is allowed
#
# Nothing is clipped or silently fixed:

# %%
bad_inputs = [
    ("ThresholdingBandit-v0", {"means": [0.2, 1.3]}),
    ("ThresholdingBandit-v0", {"threshold": 1.5}),
    ("BestArmIdentification-v0", {"distributions": [stats.norm(0, 1), stats.beta(2, 2)]}),
    ("ThresholdBandit-v0", {"distributions": [[0.5, 0.6], [0.5, 0.5]]}),
    ("ThresholdBandit-v0", {"thresholds": "random"}),
]
for env_id, kwargs in bad_inputs:
    try:
        gym.make(env_id, **kwargs)
    except ValueError as error:
        print(f"{env_id}({', '.join(kwargs)}): ValueError: {error}")
try:
    gym.make("ThresholdingBandit-v0").reset(options={"means": [0.2, 0.8]})
except ValueError as error:
    print(f"reset(options=...): ValueError: {error}")
