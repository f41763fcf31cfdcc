"""Make the picture of ``docs/lab-regret.md`` in ``docs/lab/``, from fixed seeds.

The mean cumulative pseudo-regret of epsilon-greedy, UCB1, KL-UCB and Thompson sampling over ``COPIES`` runs of
the Bernoulli instance ``MEANS`` (one vector env per agent), with its 95% confidence band, against the
Lai-Robbins lower bound ``C ln t``; on the right, the regret added per unit of ``ln t`` over ``[t/2, t]``,
``(R_t - R_{t/2}) / ln 2``, against C. The same computation as the lab's
code, at the same seed. Run from anywhere::

    python scripts/make_lab_figures.py            # writes docs/lab/regret_vs_lai_robbins.png
    python scripts/make_lab_figures.py --out DIR  # somewhere else

Needs matplotlib (``pip install -e ".[plot]"``). Takes about ten seconds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gymnasium as gym
import numpy as np

import bandit_gym  # noqa: F401  (registers the envs)
from bandit_gym.agents import KLUCB, UCB1, Agent, EpsilonGreedy, Thompson
from bandit_gym.envs.multi_armed import lai_robbins_constant
from bandit_gym.plotting import save_figure

OUT = Path(__file__).resolve().parents[1] / "docs" / "lab"
#: the lab's instance, horizon, runs and seed
MEANS = (0.7, 0.5, 0.3)
HORIZON = 10_000
COPIES = 200
SEED = 0
AGENTS: dict[str, Agent] = {"epsilon-greedy": EpsilonGreedy(), "UCB1": UCB1(), "KL-UCB": KLUCB(),
                            "Thompson": Thompson()}
#: the right panel starts at this t
SLOPE_FROM = 100
COLORS = {"epsilon-greedy": "tab:purple", "UCB1": "tab:blue", "KL-UCB": "tab:orange", "Thompson": "tab:green"}


def regret_curve(agent: Agent, means: tuple[float, ...] = MEANS, horizon: int = HORIZON, copies: int = COPIES,
                 seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over the copies of the cumulative pseudo-regret after each round t = 1..T."""
    venv = gym.make_vec("MultiArmedBandit-v0", num_envs=copies, vectorization_mode="vector_entry_point",
                        means=list(means), budget=horizon)
    agent.reset(seed=seed)
    obs, _ = venv.reset(seed=seed)
    mean, se = np.empty(horizon), np.empty(horizon)
    for t in range(horizon):
        obs, _, _, _, info = venv.step(agent.act(obs))
        regret = info["pseudo_regret"]
        mean[t], se[t] = regret.mean(), regret.std(ddof=1) / np.sqrt(copies)
    return mean, se


def regret_figure(out: Path) -> Path:
    from matplotlib.figure import Figure

    constant = lai_robbins_constant(MEANS)
    t = np.arange(1, HORIZON + 1)
    fig = Figure(figsize=(7.8, 3.6), dpi=100, layout="constrained")  # 8-pt legend: 10.7 px at a 748-px column
    left, right = fig.subplots(1, 2)
    for label, agent in AGENTS.items():
        mean, se = regret_curve(agent)
        color = COLORS[label]
        left.plot(t, mean, color=color, label=label)
        left.fill_between(t, mean - 1.96 * se, mean + 1.96 * se, color=color, alpha=0.2, linewidth=0)
        half = t[SLOPE_FROM // 2:HORIZON // 2]  # the slope over [t, 2t]: (R_2t - R_t) / ln 2
        right.plot(2 * half, (mean[2 * half - 1] - mean[half - 1]) / np.log(2.0), color=color, label=label)
    left.plot(t, constant * np.log(t), "k--", label=f"Lai-Robbins: C ln t, C = {constant:.2f}")
    right.axhline(constant, color="black", linestyle="--", label=f"C = {constant:.2f}")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel("round t (log scale)")
        ax.grid(alpha=0.3)
    left.set_ylabel("mean cumulative pseudo-regret R_t")
    left.set_title("regret and the Lai-Robbins bound (shaded: 95% CI)", fontsize=10)
    right.set_ylabel("slope (R_t - R_t/2) / ln 2")
    right.set_title("regret per unit of ln t, against C", fontsize=10)
    left.legend(fontsize=8, loc="upper left")
    fig.suptitle(f"Bernoulli arms {MEANS}, {COPIES} runs", fontsize=11)
    path = out / "regret_vs_lai_robbins.png"
    return save_figure(fig, path, dpi=100)


def main(argv: list[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"folder of the picture (default {OUT})")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    paths = [regret_figure(args.out)]
    for path in paths:
        print(path)
    return paths


if __name__ == "__main__":
    main()
