"""Figures from result tables (matplotlib, imported only here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

MARKERS = "osD^v<>ph*Xd"
COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:gray",
          "tab:olive", "tab:cyan", "gold", "navy")


def plot_log_regret(
    summary: Any, path: str | Path, metric: str = "aggregate_regret", title: str = "", highlight: str = "LSA"
) -> Path:
    """One panel per experiment: ``ln(mean regret / K)`` against the budget T for every agent, in the layout
    of tao2019 Figure 1 (the ``highlight`` agent drawn bold in black). Points whose mean is 0 (log of 0) are
    left out and counted in the panel's title."""
    rows = summary[summary["metric"] == metric]
    experiments = list(dict.fromkeys(rows["experiment"]))
    fig, axes = _figure(len(experiments), width=5.2, height=4.4)
    for ax, experiment in zip(axes, experiments, strict=True):
        panel = rows[rows["experiment"] == experiment]
        dropped = 0
        for i, (agent, curve) in enumerate(panel.groupby("agent", sort=False)):
            keep = curve["mean"] > 0
            dropped += int((~keep).sum())
            values = np.log(curve["mean"][keep] / curve["num_arms"][keep])
            oracle = " [oracle H]" if curve["oracle"].iloc[0] else ""
            style = {"color": "black", "linewidth": 2.4, "zorder": 5} if agent == highlight else \
                {"color": COLORS[i % len(COLORS)], "linewidth": 1.2}
            ax.plot(curve["budget"][keep], values, marker=MARKERS[i % len(MARKERS)], markersize=4,
                    label=f"{agent}{oracle}", **style)
        ax.set_title(experiment + (f"  ({dropped} points at regret 0 not shown)" if dropped else ""), fontsize=10)
        ax.set_xlabel("T (budget)")
        ax.set_ylabel("ln(aggregate regret / K)")
        ax.grid(alpha=0.3)
    return _finish(fig, axes, path, title)


def _figure(panels: int, width: float = 5.0, height: float = 4.2) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, panels, figsize=(width * panels, height), squeeze=False)
    return fig, axes[0]


def _finish(fig: Any, axes: Any, path: str | Path, title: str) -> Path:
    import matplotlib.pyplot as plt

    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(6, len(labels)), fontsize=8, frameon=False)
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _band(ax: Any, x: Any, curve: Any, label: str, i: int) -> None:
    color = COLORS[i % len(COLORS)]
    ax.plot(x, curve["mean"], marker=MARKERS[i % len(MARKERS)], markersize=4, color=color, label=label)
    ax.fill_between(x, np.maximum(curve["ci_low"], 1e-3), curve["ci_high"], color=color, alpha=0.2, linewidth=0)


def plot_regret_against_horizon(summary: Any, path: str | Path, title: str = "") -> Path:
    """One panel per number of levels m: mean cumulative pseudo-regret against the horizon T (log-log), a 95%
    confidence band per agent."""
    rows = summary[summary["metric"] == "regret"]
    levels = sorted(set(rows["levels"]))
    fig, axes = _figure(len(levels))
    for ax, m in zip(axes, levels, strict=True):
        panel = rows[rows["levels"] == m]
        for i, (agent, curve) in enumerate(panel.groupby("agent", sort=False)):
            _band(ax, curve["budget"], curve, agent, i)
        ax.set(xscale="log", yscale="log", xlabel="T (horizon)", ylabel="cumulative pseudo-regret", title=f"m = {m}")
        ax.grid(alpha=0.3, which="both")
    return _finish(fig, axes, path, title)


def plot_regret_against_levels(summary: Any, path: str | Path, title: str = "") -> Path:
    """Mean cumulative pseudo-regret at a fixed T against the number of levels m (log2 x-axis), one curve per
    threshold order and agent, with 95% confidence bands; one panel per order and one with all curves."""
    rows = summary[summary["metric"] == "regret"]
    orders = list(dict.fromkeys(rows["order"]))
    fig, axes = _figure(len(orders) + 1)
    curves = list(rows.groupby(["order", "agent"], sort=False))
    for i, ((order, agent), curve) in enumerate(curves):
        label = f"{agent}, {order} thresholds"
        _band(axes[orders.index(order)], curve["levels"], curve, label, i)
        _band(axes[-1], curve["levels"], curve, label, i)
    for ax, name in zip(axes, [*orders, "all"], strict=True):
        ax.set(xscale="log", xlabel="m (threshold levels)", ylabel="cumulative pseudo-regret", title=name)
        ax.set_xscale("log", base=2)
        ax.grid(alpha=0.3, which="both")
    axes[-1].set_yscale("log")
    return _finish(fig, axes[-1:], path, title)
