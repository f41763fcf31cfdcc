# %% [markdown]
# # Best arm identification: one algorithm, fixed budget and fixed confidence (UGapE, gabillon2012)
#
# Audibert et al.'s problem 4: six Bernoulli arms, the best at 0.5, the next at 0.42.
#
# Set `BANDIT_GYM_SMOKE=1` for a tiny run (the test suite does).

# %%
import os

import gymnasium as gym

import bandit_gym  # noqa: F401  (registers the envs)
from bandit_gym.agents import UGapEc, Uniform
from bandit_gym.experiments import AgentSpec, build_agent
from bandit_gym.rollout import play_vector

ENV = "BestArmIdentification-Audibert2010Problem4-v0"  # budget n = H_1 = 601 pulls
SMOKE = os.environ.get("BANDIT_GYM_SMOKE") == "1"
RUNS = 20 if SMOKE else 500  # fixed budget
STOPPING_RUNS = 5 if SMOKE else 50  # fixed confidence

# %% [markdown]
# Fixed budget: the probability of returning a wrong arm after n pulls, over `RUNS` runs. UGapEb's oracle
# exploration comes from the true complexity (``build_agent`` fills it in; ``eta`` scales it).

# %%
for spec in (AgentSpec("Uniform"), AgentSpec("SuccessiveRejects"), AgentSpec("UGapEb", {"eta": 16.0})):
    venv = gym.make_vec(ENV, num_envs=RUNS, vectorization_mode="vector_entry_point")
    result = play_vector(venv, build_agent(spec, venv), seed=0)
    print(f"{spec.display:18s} error {result['error'].mean():.3f}")

# %% [markdown]
# Fixed confidence: UGapEc pulls until its set index B_J falls below epsilon, then stops; the budget is only a
# cap. Its error must stay below delta; the price is the number of pulls.

# %%
venv = gym.make_vec(ENV, num_envs=STOPPING_RUNS, vectorization_mode="vector_entry_point", setting="fixed_confidence",
                    budget=10**6, epsilon=0.1)
result = play_vector(venv, UGapEc(delta=0.1), seed=0)
print(f"UGapEc(delta=0.1, epsilon=0.1): error {result['error'].mean():.3f}, mean pulls {result['pulls'].mean():.0f}")

# %% [markdown]
# A single episode, step by step, for a look at the statistics (``render_mode="ansi"``):

# %%
env = gym.make(ENV, render_mode="ansi", budget=60)
agent = Uniform()
agent.reset(seed=1)
obs, _ = env.reset(seed=1)
terminated = False
while not terminated:
    obs, reward, terminated, truncated, info = env.step(agent.act(obs))
print(env.render())
