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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summary[summary["metric"] == metric]
    experiments = list(dict.fromkeys(rows["experiment"]))
    fig, axes = plt.subplots(1, len(experiments), figsize=(5.2 * len(experiments), 4.4), squeeze=False)
    for ax, experiment in zip(axes[0], experiments, strict=True):
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
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(6, len(labels)), fontsize=8, frameon=False)
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
