"""Text and image rendering shared by the envs: a table of arms and a bar chart with intervals and a threshold."""

from __future__ import annotations

import numpy as np


def hoeffding_halfwidth(counts: np.ndarray, level: float = 0.95) -> np.ndarray:
    """Half-width of the two-sided Hoeffding interval for [0, 1] samples; infinite for unpulled arms."""
    with np.errstate(divide="ignore"):
        return np.sqrt(np.log(2.0 / (1.0 - level)) / (2.0 * counts))


def text_table(title: str, columns: dict[str, np.ndarray], footer: str) -> str:
    """Render equal-length columns as a fixed-width table."""
    names = list(columns)
    cells = [[_fmt(v) for v in columns[name]] for name in names]
    widths = [max(len(name), *(len(c) for c in col)) for name, col in zip(names, cells, strict=False)]
    lines = [title, "  ".join(name.rjust(w) for name, w in zip(names, widths, strict=False))]
    for r in range(len(cells[0])):
        lines.append("  ".join(col[r].rjust(w) for col, w in zip(cells, widths, strict=False)))
    lines.append(footer)
    return "\n".join(lines) + "\n"


def _fmt(value: object) -> str:
    if isinstance(value, (float, np.floating)):
        return "inf" if np.isinf(value) else f"{value:.3f}"
    return str(value)


#: above this many arms the chart draws points and a band instead of bars with error bars
MANY_ARMS = 60


def bar_chart(
    estimates: np.ndarray, halfwidths: np.ndarray, line: float | None, title: str, ylabel: str,
    ylim: tuple[float, float] | None = (0.0, 1.0), counts: np.ndarray | None = None,
) -> np.ndarray:
    """A matplotlib bar chart of per-arm estimates with error bars and a horizontal threshold line, as an
    ``(H, W, 3)`` uint8 array; with ``counts``, each arm's pull count under its index (up to ``MANY_ARMS``
    arms). matplotlib is imported here, only when an image is rendered."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.6), dpi=80)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    arms = np.arange(len(estimates))
    finite = np.where(np.isfinite(halfwidths), halfwidths, np.nan)
    if len(arms) <= MANY_ARMS:
        ax.bar(arms, estimates, color="tab:blue", alpha=0.7)
        ax.errorbar(arms, estimates, yerr=finite, fmt="none", ecolor="black", capsize=3)
        if counts is None:
            ax.set_xticks(arms)
        else:
            ax.set_xticks(arms, [f"{arm}\n{int(c)}" for arm, c in zip(arms, counts, strict=True)])
    else:  # hundreds of arms: one band instead of hundreds of bars, ticks left to matplotlib
        ax.fill_between(arms, estimates - np.nan_to_num(finite), estimates + np.nan_to_num(finite),
                        color="black", alpha=0.15, linewidth=0)
        ax.plot(arms, estimates, ".", color="tab:blue", markersize=2)
    if line is not None:
        ax.axhline(line, color="tab:red", linestyle="--", label="threshold")
        ax.legend(loc="upper left")
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_xlabel("arm" if counts is None or len(arms) > MANY_ARMS else "arm (pulls)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.tight_layout()
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()
