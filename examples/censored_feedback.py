# %% [markdown]
# # Censored feedback: what you cannot see, and what it costs (abernethy2016)
#
# The threshold bandit: before each round the environment shows a threshold c_t in {1..m}; the agent pulls an
# arm, whose value X in {0..m} is drawn from the arm's unknown distribution, and wins the reward 1{X >= c_t}.
# Think of X as a parcel's slack and c_t as the slack the customer's deadline demands. The best arm depends on
# c_t: on `ThresholdBandit-v0` (K = 3 arms, m = 5 levels) a "safe" arm wins for low thresholds, a "risky" one
# for c_t = 5.
#
# - **Uncensored** feedback (`ThresholdBandit-v0`): the agent sees X.
# - **Censored** feedback (`ThresholdBanditCensored-v0`, or `feedback="censored"`): the agent sees X only when
#   X < c_t. When X >= c_t it learns only that it won: a parcel that arrived in time says nothing about how
#   early it was.
#
# Set `BANDIT_GYM_SMOKE=1` for a tiny run (the test suite does).

# %%
import os

import gymnasium as gym
import numpy as np
import pandas as pd

import bandit_gym  # noqa: F401  (registers the envs)
from bandit_gym.agents import DKWUCB, KMUCB, OPTIM, PerThresholdUCB
from bandit_gym.rollout import play_vector

SMOKE = os.environ.get("BANDIT_GYM_SMOKE") == "1"
COPIES = 8 if SMOKE else 300  # independent runs, played at once by the vector env
HORIZON = 60 if SMOKE else 1000  # rounds T per run

# %% [markdown]
# ## One round, both ways
#
# Both envs are reset with the same seed and pull the risky arm 2, so they draw the same X. The first threshold
# is c_1 = 5 and the risky arm returns X = 5 >= c_1: the uncensored env shows `last_value = 5`, the censored one
# shows `last_value = -1` and `last_censored = 1`. The reward (1) is the same.

# %%
for env_id in ("ThresholdBandit-v0", "ThresholdBanditCensored-v0"):
    env = gym.make(env_id)
    obs, _ = env.reset(seed=3)
    c = int(obs["threshold"][0])
    obs, reward, *_ = env.step(2)
    print(f"{env_id:27s} c_1 = {c}: last_value = {obs['last_value'][0]:+.0f}, "
          f"last_censored = {obs['last_censored'][0]:.0f}, reward = {reward:.0f}")

# %% [markdown]
# ## The level counts
#
# The observation carries, for every arm i and level j, two counts flattened to K * m entries
# (`[i * m + j - 1]`): `level_exceed` (pulls known to have X >= j) and `level_trials` (pulls whose outcome at
# level j is known). Their ratio estimates the survival function F_i(j) = P(X_i >= j), the win probability of
# arm i at threshold j.
#
# - Uncensored: every pull counts at every level, so `level_trials` is the arm's pull count N_i everywhere.
# - Censored: a pull made at threshold c tells us min(X, c), so it counts only at the levels j <= c. The counts
#   become D_i(j) = #{min(X, c) >= j} over N_i(j) = #{c >= j}: the modified Kaplan–Meier estimator. High
#   levels are seen only in rounds with high thresholds.
#
# Thirty rounds of round robin with the same seed in each env:

# %%
for env_id in ("ThresholdBandit-v0", "ThresholdBanditCensored-v0"):
    env = gym.make(env_id, render_mode="ansi")
    obs, _ = env.reset(seed=0)
    for t in range(30):
        obs, *_ = env.step(t % 3)
    k, m = 3, 5
    exceed, trials = obs["level_exceed"].reshape(k, m), obs["level_trials"].reshape(k, m)
    table = pd.DataFrame({f"j={j + 1}": [f"{exceed[i, j]:.0f}/{trials[i, j]:.0f}" for i in range(k)]
                          for j in range(m)}, index=[f"arm {i}" for i in range(k)])
    print(f"{env_id}: level_exceed / level_trials")
    print(table.to_string())
    print(env.render())  # the text renderer shows the estimate at the current threshold

print("true F_i(j) = P(X_i >= j):")
print(env.unwrapped.survival)  # the instance, for the teacher (never in the observation)

# %% [markdown]
# ## What censoring costs
#
# Now the agents, each on `COPIES` independent runs at once (`gym.make_vec(..., vectorization_mode=
# "vector_entry_point")` and `bandit_gym.rollout.play_vector`). The measure is the cumulative pseudo-regret
# sum_t [max_i F_i(c_t) - F_{I_t}(c_t)], from the env's `info`.
#
# - `DKWUCB` (uncensored, §4): UCB on the empirical survival function; any threshold order.
# - `OPTIM` (censored, §5.1): the same on the Kaplan–Meier counts; made for **decreasing** thresholds, where
#   every past observation informs the current level.
# - `KMUCB` (censored, §5.2): epochs of elimination, level by level; made for **cyclic** thresholds.
# - `PerThresholdUCB` (censored baseline): one UCB per level; the answer to **increasing** thresholds, the
#   adversarial order where censored feedback is worth no more than m separate bandits (Theorem 3).
#
# We play every agent under the three orders; an asterisk marks the order each censored agent is made for.

# %%
AGENTS = {"DKWUCB (uncensored)": (DKWUCB, "uncensored", None),
          "OPTIM": (OPTIM, "censored", "decreasing"),
          "KMUCB": (KMUCB, "censored", "cyclic"),
          "PerThresholdUCB": (PerThresholdUCB, "censored", "increasing")}
rows = {}
for order in ("decreasing", "cyclic", "increasing"):
    row = {}
    for label, (agent_class, feedback, made_for) in AGENTS.items():
        venv = gym.make_vec("ThresholdBandit-v0", num_envs=COPIES, vectorization_mode="vector_entry_point",
                            thresholds=order, feedback=feedback, horizon=HORIZON)
        regret = play_vector(venv, agent_class(), seed=0)["regret"]
        mark = "*" if order == made_for else " "
        row[label] = f"{regret.mean():6.1f} ± {regret.std(ddof=1) / np.sqrt(COPIES):.1f}{mark}"
    rows[order] = row

print(f"mean cumulative pseudo-regret ± standard error, T = {HORIZON}, {COPIES} runs per cell")
print(pd.DataFrame(rows).T.rename_axis("thresholds").to_string())

# %% [markdown]
# How to read it (T = 1000, 300 runs):
#
# - The first column is the price of the problem with full information; every other column sees less. The
#   difference is what censoring costs. Even uncensored, the order matters: with cyclic thresholds each arm is
#   the best at some level in every block of m rounds, so every arm gets sampled at no cost; with monotone
#   orders each long stage has a single best arm, and checking the others there costs regret.
# - Under decreasing thresholds OPTIM loses least to censoring: a high threshold reveals X fully below it, which
#   is all the lower levels that come next need. Under increasing thresholds the same OPTIM does worse than
#   PerThresholdUCB: censored information only flows downwards, and the levels come upwards.
# - PerThresholdUCB costs the same under every order: it learns each level alone and ignores the others.
# - KMUCB is still exploring at this horizon (its standard error is 0 because its exploration is a fixed round
#   robin): its confidence radius resolves a level only after thousands of epochs of K m rounds. The paper's
#   log m guarantee is about much longer horizons (see the README's abernethy2016 study).
