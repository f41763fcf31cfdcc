# %% [markdown]
# # The classic K-armed bandit: regret against the Lai-Robbins bound
#
# `MultiArmedBandit-v0` is the stochastic K-armed bandit: pull an arm, receive its Bernoulli (or Gaussian)
# sample. The cumulative pseudo-regret R_T = sum_t (mu* - mu_{I_t}) is in every step's `info`
# (`pseudo_regret`; the per-round `best_expected_reward - expected_reward` is what `RecordEpisodeRegret` sums).
# Lai and Robbins (1985): every uniformly good strategy has E[R_T] >= (C + o(1)) ln T with
# C = sum_i Delta_i / kl(mu_i, mu*). We run epsilon-greedy, UCB1, KL-UCB and Thompson sampling on many copies at
# once and compare their regret with C ln T. `docs/lab-regret.md` is the full lab, with exercises.
#
# Set `BANDIT_GYM_SMOKE=1` for a tiny run (the test suite does).

# %%
import os
from pathlib import Path

import gymnasium as gym
import numpy as np

import bandit_gym  # noqa: F401  (registers the envs)
from bandit_gym.agents import KLUCB, UCB1, EpsilonGreedy, Thompson, Uniform
from bandit_gym.envs.multi_armed import lai_robbins_constant
from bandit_gym.plotting import save_figure

SMOKE = os.environ.get("BANDIT_GYM_SMOKE") == "1"
MEANS = [0.7, 0.5, 0.3]
COPIES = 8 if SMOKE else 200  # independent runs, played at once by the vector env
HORIZON = 200 if SMOKE else 10_000
CHECKPOINTS = [t for t in (100, 200, 1000, 10_000) if t <= HORIZON]
C = lai_robbins_constant(MEANS)
print(f"Bernoulli means {MEANS}: Lai-Robbins constant C = {C:.3f}")

# %% [markdown]
# ## One episode, all copies at once
#
# The vector env advances every copy with one array step; the agents act on the whole batch. We keep the mean
# regret over the copies after every round.

# %%
AGENTS = {"Uniform": Uniform(), "epsilon-greedy": EpsilonGreedy(), "UCB1": UCB1(), "KL-UCB": KLUCB(),
          "Thompson": Thompson()}
curves = {}
for label, agent in AGENTS.items():
    venv = gym.make_vec("MultiArmedBandit-v0", num_envs=COPIES, vectorization_mode="vector_entry_point",
                        means=MEANS, budget=HORIZON)
    agent.reset(seed=0)
    obs, _ = venv.reset(seed=0)
    curve = np.empty(HORIZON)
    for t in range(HORIZON):
        obs, _, _, _, info = venv.step(agent.act(obs))
        curve[t] = info["pseudo_regret"].mean()
    curves[label] = curve

header = "".join(f"{f'T = {t}':>12s}" for t in CHECKPOINTS)
print(f"mean cumulative pseudo-regret over {COPIES} runs\n{'':16s}{header}")
for label, curve in curves.items():
    print(f"{label:16s}" + "".join(f"{curve[t - 1]:12.1f}" for t in CHECKPOINTS))
print(f"{'C ln T':16s}" + "".join(f"{C * np.log(t):12.1f}" for t in CHECKPOINTS))

# %% [markdown]
# Uniform's regret grows linearly (0.2 per round); the others grow like ln T. KL-UCB and Thompson sampling sit
# near C ln T (the bound is asymptotic: at finite T they may be below it), UCB1 several times above it.
#
# ## The picture
#
# The curves on a logarithmic time axis, where C ln t is a straight line (needs matplotlib).

# %%
try:
    from matplotlib.figure import Figure
except ImportError:  # pragma: no cover - the plot extra is optional
    Figure = None
if Figure is not None:
    out = Path("example-output")
    out.mkdir(exist_ok=True)
    t = np.arange(1, HORIZON + 1)
    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.subplots()
    for label, curve in curves.items():
        if label != "Uniform":  # linear: off the scale of the others
            ax.plot(t, curve, label=label)
    ax.plot(t, C * np.log(t), "k--", label=f"Lai-Robbins C ln t, C = {C:.2f}")
    ax.set(xscale="log", xlabel="round t", ylabel="mean cumulative pseudo-regret")
    ax.legend()
    save_figure(fig, out / "multi_armed_regret.png")  # checks that nothing is cut off, then saves
    print(f"wrote {out / 'multi_armed_regret.png'}")
