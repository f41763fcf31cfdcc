"""The figures several studies draw alike, with the panel helpers of ``bandit_gym.plotting``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bandit_gym.plotting import PAGE_WIDTH, _errorbars, _finish, _grid

__all__ = ["plot_failure_against_budget"]


def plot_failure_against_budget(summary: Any, path: str | Path, title: str = "", xlabel: str = "total budget Q",
                                ylabel: str = "failure probability", panel: str = "K = {}") -> Path:
    """One panel per value of the ``k`` column (titled ``panel.format(k)``): failure (or error) probability
    against the total budget (log axis), one curve per agent with its 95% interval, dodged sideways by a few
    percent (chen2017 Figures 1-4; hoffman2014 Figure 2 draws with it too)."""
    rows = summary[summary["metric"] == "error"].copy()
    rows["ci_low"], rows["ci_high"] = rows["ci_low"].clip(lower=0.0), rows["ci_high"].clip(upper=1.0)
    ks = list(dict.fromkeys(rows["k"]))
    fig, axes = _grid(len(ks), 2, width=PAGE_WIDTH / 2 if len(ks) > 1 else 6.5, height=3.3 if len(ks) > 1 else 4.6)
    for ax, k in zip(axes, ks, strict=True):
        agents = rows[rows["k"] == k].groupby("agent", sort=False)
        for i, (agent, curve) in enumerate(agents):  # dodged by a few percent and styled apart: curves coincide
            dodge = 1.0 + 0.04 * (i - (len(agents) - 1) / 2)
            _errorbars(ax, curve["budget"] * dodge, curve, agent, i, linestyle=("-", "--", "-.", ":")[i % 4],
                       markersize=6 - i % 4)
        ax.set(xscale="log", xlabel=xlabel, ylabel=ylabel, ylim=(-0.02, 1.02), title=panel.format(k))
        ax.grid(alpha=0.3, which="both")
    return _finish(fig, axes, path, title)
