# %% [markdown]
# # Comparing agents: LSA, APT and Uniform on tao2019's Setup 1
#
# The thresholding bandit: 10 Bernoulli arms, a threshold theta = 0.5, and a budget of T pulls; at the end the
# agent says which arms lie above theta. The **aggregate regret** is the number of arms it got wrong. We compare
# three agents of tao2019 (LSA, APT with precision epsilon = 0.05, and round-robin Uniform) at several budgets,
# as in the paper's Figure 1, with the experiment engine `bandit_gym.experiments`.
#
# Set `BANDIT_GYM_SMOKE=1` for a tiny run (the test suite does).

# %%
import os
from pathlib import Path

import pandas as pd

import bandit_gym  # noqa: F401  (registers the envs)
from bandit_gym.experiments import ExperimentSpec, run_experiment
from bandit_gym.plotting import plot_log_regret

SMOKE = os.environ.get("BANDIT_GYM_SMOKE") == "1"
RUNS = 20 if SMOKE else 400
OUT = Path("example-output")
OUT.mkdir(exist_ok=True)

# %% [markdown]
# An experiment is a **spec**: an env id, agents with their parameters, a grid of budgets, the number of runs
# and a seed. It is the same data as a TOML file for `bandit-gym run` (see `examples/tao2019_setup1.toml`).
# LSA, APT and Uniform are *anytime* agents (they never read T), so each run is played once up to the largest
# budget and its answer is scored at every budget of the grid.

# %%
spec = ExperimentSpec.from_dict({
    "env": "ThresholdingBandit-Tao2019Setup1-v0",
    "budgets": [100, 200, 400, 600, 800, 1000],
    "runs": RUNS,
    "seed": 1,
    "agents": [
        {"name": "LSA"},
        {"name": "APT", "params": {"epsilon": 0.05}, "label": "APT(.05)"},
        {"name": "Uniform"},
    ],
})
result = run_experiment(spec, progress=False)  # out=None: results stay in memory

# %% [markdown]
# The results come back as a **tidy table**: one row per agent x budget x metric, with the mean over the runs,
# its standard error and a 95% confidence interval. The metrics are the aggregate regret and the error (1 if any
# arm is misclassified); we print the regret rows, then the same means as an agents x budget grid.

# %%
summary = result.summary()
print("columns of the tidy table:", ", ".join(summary.columns))
regret = summary[summary["metric"] == "aggregate_regret"]
columns = ["agent", "budget", "metric", "mean", "se", "ci_low", "ci_high", "runs"]
with pd.option_context("display.width", 120, "display.precision", 3):
    print(regret[columns].to_string(index=False))  # the "error" rows look the same
    print("\nmean aggregate regret (arms misclassified out of 10), agents x budget:")
    print(regret.pivot(index="agent", columns="budget", values="mean").loc[[a.display for a in spec.agents]])

# %% [markdown]
# The paper plots ln(aggregate regret / K) against T: a straight line means the regret decays exponentially
# in the budget, and a steeper line is a better agent. `bandit_gym.plotting.plot_log_regret` draws this layout
# (LSA in bold black).

# %%
figure = plot_log_regret(summary, OUT / "compare_agents.png", title=f"tao2019 Setup 1, {RUNS} runs per point")
print("figure saved to", figure)

# %% [markdown]
# **Paired comparison.** By default the engine uses *common random numbers*: run r of every agent reads the
# same sample stream of each arm (the s-th pull of arm i returns the same value whichever agent pulls it).
# The agents' runs are therefore paired, and a paired t-test on the per-run differences (other agent minus
# LSA) cancels most of the luck that the runs share: it detects differences far smaller than two independent
# samples of the same size could. A positive mean difference means LSA misclassified fewer arms.

# %%
tests = result.paired_tests("LSA")
with pd.option_context("display.width", 120, "display.precision", 4):
    print(tests[["agent", "budget", "mean_difference", "t", "p_value", "significant", "runs"]].to_string(index=False))
