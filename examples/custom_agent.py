# %% [markdown]
# # Your own algorithm in the experiment engine: a variance-aware APT
#
# A new index rule for the thresholding bandit, run next to the papers' agents by the experiment engine, in
# parallel, with a table of means and paired t-tests. The rule: APT (Locatelli et al. 2016) pulls the arm of
# smallest `B_i = sqrt(T_i) (|theta_hat_i - theta| + epsilon)`; with Bernoulli arms an arm whose mean is near 0 or
# 1 has little variance and needs fewer pulls, so we divide by an estimate of its standard deviation:
#
#     B_i = sqrt(T_i) (|theta_hat_i - theta| + epsilon) / sqrt(theta_hat_i (1 - theta_hat_i) + 1 / (T_i + 1))
#
# (the `1 / (T_i + 1)` keeps an arm seen only a few times from looking certain).
#
# Specs name the class by its import path, `custom_agent:VarianceAPT` (this file, importable from `examples/`),
# so `bandit-gym run examples/custom_agent.toml` (run from `examples/`, or with it on `PYTHONPATH`) runs it in
# parallel workers as well. Set `BANDIT_GYM_SMOKE=1` for a tiny run (the test suite does).

# %%
from typing import ClassVar

import numpy as np

from bandit_gym.agents import Agent


class VarianceAPT(Agent):
    """Variance-aware APT: pull ``argmin_i sqrt(T_i) (|mu_i - theta| + eps) / sqrt(mu_i (1 - mu_i) + 1 / (T_i + 1))``.

    The answer is the empirical rule (the base class fills it in); ties at random (``self.argmin``)."""

    families: ClassVar[tuple[str, ...]] = ("thresholding",)
    anytime = True  # it never reads budget_left: one episode to the largest budget serves every budget

    def __init__(self, epsilon: float = 0.0, *, tie_break: str = "random") -> None:
        if not epsilon >= 0:
            raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
        self.epsilon = float(epsilon)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, object]:
        return {"epsilon": self.epsilon, **super().params()}

    def select(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        counts, means = obs["counts"].astype(np.float64), obs["means"].astype(np.float64)
        gap = np.abs(means - obs["threshold"]) + self.epsilon  # threshold has shape (N, 1): broadcast per copy
        spread = np.sqrt(means * (1.0 - means) + 1.0 / (counts + 1.0))
        return self.argmin(np.sqrt(counts) * gap / spread)  # unpulled arms (index 0) first, in random order


# %% [markdown]
# Everything below runs only when this file is the script (or notebook) being run, not when a worker imports it
# by its path `custom_agent:VarianceAPT`. The spec is the same data as `examples/custom_agent.toml`. Run `r` of
# every agent reads the same samples (common random numbers), so the paired t-tests over runs compare like with
# like.

# %%
if __name__ == "__main__":
    import os
    from pathlib import Path

    import pandas as pd

    from bandit_gym.agents import register
    from bandit_gym.experiments import ExperimentSpec, run_experiment

    SMOKE = os.environ.get("BANDIT_GYM_SMOKE") == "1"
    OUT = Path("example-output")
    register("VarianceAPT", VarianceAPT)  # a short name for specs built in this process
    spec = ExperimentSpec.from_dict({
        "env": "ThresholdingBandit-Tao2019Setup1-v0",
        "budgets": [100, 300] if SMOKE else [100, 200, 300, 500, 700, 1000],
        "runs": 20 if SMOKE else 2000,
        "chunk": 10 if SMOKE else 500,
        "seed": 1,
        "agents": [
            {"name": "VarianceAPT", "params": {"epsilon": 0.05}, "label": "VarianceAPT(.05)"},
            {"name": "APT", "params": {"epsilon": 0.05}, "label": "APT(.05)"},
            {"name": "LSA"},
            {"name": "Uniform"},
        ],
    })
    result = run_experiment(spec, out=OUT / "custom_agent", jobs=2, progress=False)  # two worker processes

# %% [markdown]
# The mean aggregate regret (arms misclassified out of 10) per agent and budget, then two-tailed paired t-tests
# of every agent against APT(.05) (`mean_difference` = agent - APT(.05): negative is better). The same folder
# reloads later with `ExperimentResult.load`, and `bandit-gym stats example-output/custom_agent --reference
# "APT(.05)"` prints both tables with Holm's correction (from another process, name the agent by its import path
# so that the folder's spec resolves there too).

# %%
if __name__ == "__main__":
    summary = result.summary()
    regret = summary[summary["metric"] == "aggregate_regret"]
    with pd.option_context("display.width", 120, "display.precision", 3):
        print(regret.pivot(index="agent", columns="budget", values="mean").loc[[a.display for a in spec.agents]])
        tests = result.paired_tests("APT(.05)")
        print(tests[["agent", "budget", "mean_difference", "t", "p_value"]].to_string(index=False))
