# %% [markdown]
# # Reinforcement learning in five minutes
#
# The code of `docs/rl.md`, top to bottom: train PPO on the threshold bandit with the package's recipe (a
# progress bar shows the steps and the recent episodes' regret where a terminal is attached), score it against
# the paper's agents and Uniform in one experiment spec, next to a shipped learned policy, and print the table.
#
# Set `BANDIT_GYM_SMOKE=1` for a tiny run (the test suite does).

# %%
import os
from pathlib import Path

import bandit_gym  # noqa: F401  (registers the envs)
from bandit_gym.experiments import ExperimentSpec, run_experiment
from bandit_gym.rl import train

SMOKE = os.environ.get("BANDIT_GYM_SMOKE") == "1"
STEPS = 512 if SMOKE else 50_000  # the recipe's own number of steps
HORIZON = 100 if SMOKE else 1000
RUNS = 16 if SMOKE else 200
OUT = Path("example-output")

# %% [markdown]
# ## 1. Train with the recipe, and watch it learn
#
# The policy is trained at the horizon it will play (the rounds left are part of what it reads).

# %%
policy = train("ThresholdBandit-v0", "PPO", total_timesteps=STEPS, seed=0, env_kwargs={"horizon": HORIZON})
folder = policy.save(OUT / "ppo")
print("saved to", folder)

# %% [markdown]
# ## 2. Score it against the papers' agents, in a spec
#
# One row per agent, the same runs for all of them; `ArmwisePPO` is a learned policy shipped with the package
# (problem `threshold`: trained on 4 arms and 6 levels, horizon 500).

# %%
spec = ExperimentSpec.from_dict({
    "env": "ThresholdBandit-v0", "budgets": [HORIZON], "runs": RUNS, "seed": 1,
    "agents": [{"name": "SB3Agent", "params": {"policy": str(folder)}, "label": "my PPO"},
               {"name": "ArmwisePPO", "params": {"problem": "threshold", "seed": 0}, "label": "shipped arm-wise PPO"},
               {"name": "DKWUCB"}, {"name": "UCB"}, {"name": "Uniform"}],
})
result = run_experiment(spec, out=OUT / "scores", progress=False)
table = result.summary()
print(table[table["metric"] == "regret"][["agent", "mean", "ci_low", "ci_high"]].to_string(index=False))
