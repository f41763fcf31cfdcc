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


MANY_ARMS = 60
"""Above this many arms the chart draws points and a band instead of bars with error bars."""
#: colours of the chart: the arms in the agent's answer, the others, the true means, the threshold
ANSWER_COLOR, OTHER_COLOR, TRUTH_COLOR, LINE_COLOR = "tab:orange", "tab:blue", "tab:green", "tab:red"


def submitted_answer(engine: object, num_arms: int) -> np.ndarray | None:
    """The answer bits of the single env's last action (``action[1:]`` of a pure-exploration env) as a boolean
    mask, or None before the first step."""
    action = getattr(engine, "last_action", None)
    if action is None or np.ndim(action) != 1 or len(action) != num_arms + 1:
        return None
    return np.asarray(action[1:], dtype=bool)


def bar_chart(
    estimates: np.ndarray, halfwidths: np.ndarray, line: float | None, title: str, ylabel: str,
    ylim: tuple[float, float] | None = (0.0, 1.0), counts: np.ndarray | None = None, *,
    truth: np.ndarray | None = None, truth_label: str = "true mean", answer: np.ndarray | None = None,
    answer_label: str = "answer", other_label: str | None = None,
) -> np.ndarray:
    """A matplotlib bar chart of per-arm estimates with error bars and a horizontal threshold line, as an
    ``(H, W, 3)`` uint8 array; with ``counts``, each arm's pull count under its index (up to ``MANY_ARMS``
    arms). ``truth`` (one value per arm) is drawn as a green tick on each bar (``truth_label`` in the legend);
    ``answer`` (a boolean mask) colours the answer's bars orange (``answer_label``) and the others blue
    (``other_label``, if given). matplotlib is imported here, only when an image is rendered."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    from bandit_gym._canvas import _warn_outside_canvas

    fig = Figure(figsize=(6.4, 3.6), dpi=80)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    arms = np.arange(len(estimates))
    finite = np.where(np.isfinite(halfwidths), halfwidths, np.nan)
    chosen = np.zeros(len(arms), dtype=bool) if answer is None else np.asarray(answer, dtype=bool)
    colors = np.where(chosen, ANSWER_COLOR, OTHER_COLOR)
    if len(arms) <= MANY_ARMS:
        ax.bar(arms, estimates, color=colors, alpha=0.7)
        ax.errorbar(arms, estimates, yerr=finite, fmt="none", ecolor="black", capsize=3)
        if truth is not None:
            ax.hlines(truth, arms - 0.4, arms + 0.4, colors=TRUTH_COLOR, linewidth=3, zorder=4, label=truth_label)
        if counts is None:
            ax.set_xticks(arms)
        else:
            ax.set_xticks(arms, [f"{arm}\n{int(c)}" for arm, c in zip(arms, counts, strict=True)])
    else:  # hundreds of arms: one band instead of hundreds of bars, ticks left to matplotlib
        ax.fill_between(arms, estimates - np.nan_to_num(finite), estimates + np.nan_to_num(finite),
                        color="black", alpha=0.15, linewidth=0)
        ax.plot(arms, estimates, ".", color=OTHER_COLOR, markersize=2)
        if truth is not None:
            ax.plot(arms, truth, color=TRUTH_COLOR, linewidth=1.2, label=truth_label)
        ax.plot(arms[chosen], estimates[chosen], "o", color=ANSWER_COLOR, markersize=7, zorder=5)
    if line is not None:
        ax.axhline(line, color=LINE_COLOR, linestyle="--", label="threshold")
    handles, labels = ax.get_legend_handles_labels()
    if answer is not None:
        handles.append(Patch(color=ANSWER_COLOR, alpha=0.7))
        labels.append(answer_label)
        if other_label:
            handles.append(Patch(color=OTHER_COLOR, alpha=0.7))
            labels.append(other_label)
    if handles:  # above the axes, where it hides no bar
        ax.legend(handles, labels, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=len(handles), fontsize=9.5,
                  frameon=False, borderaxespad=0.2, handlelength=1.5, columnspacing=1.0)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_xlabel("arm" if counts is None or len(arms) > MANY_ARMS else "arm (pulls)")
    ax.set_ylabel(ylabel)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    _warn_outside_canvas(fig, "of render()")
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()
