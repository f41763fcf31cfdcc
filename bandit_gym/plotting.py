"""Figures from result tables (matplotlib, imported only here).

``plot_results`` draws any ``results.csv`` of ``bandit-gym run`` / ``run_experiment(out=...)`` (what
``bandit-gym plot`` calls): axis labels and scales per family and metric, a shaded 95% confidence band per agent,
one colour per agent across figures (``agent_color``), nothing clipped (a band reaching 0 on a log axis is cut at
the axis and marked, ``shade_bands``; titles and labels wrap at phrase boundaries, ``wrap_text``).
``plot_log_regret`` draws tao2019 Figure 1's layout for any thresholding table; the other papers' figures live
beside their reproductions (``bandit_gym.studies.<paper>.reproduce``), which draw them with the panel helpers here.
Every figure is saved through ``save_figure``, which first checks that no title, label or legend lies outside the
canvas (``FigureOverflowWarning`` otherwise).
"""

from __future__ import annotations

import itertools
import re
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bandit_gym._canvas import (  # noqa: F401 - part of bandit_gym.plotting's API
    FigureOverflowWarning,
    outside_canvas,
    save_figure,
)
from bandit_gym.families import CONTRACTS, MetricAxes
from bandit_gym.families.best_arm import CORRELATED_AXES, CORRELATED_DEFAULT_METRIC

MARKERS = "osD^v<>ph*Xd"
COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:gray",
          "tab:olive", "tab:cyan", "gold", "navy")
LINESTYLES = ("-", "--", "-.", ":")

AGENT_COLORS = {
    # thresholding (tao2019)
    "LSA": "black", "APT": "tab:blue", "UCBE": "tab:orange", "OptKG": "tab:green", "Opt-KG": "tab:green",
    "Uniform": "tab:gray",
    # threshold bandit (abernethy2016)
    "UCB": "tab:blue", "DKWUCB": "tab:orange", "OPTIM": "tab:green", "KMUCB": "tab:red",
    "PerThresholdUCB": "tab:purple",
    # best arm (gabillon2012) and correlated best arm (hoffman2014)
    "UGapEb": "tab:blue", "UGap": "tab:blue", "UGapEc": "tab:cyan", "UCBEBestArm": "tab:orange", "UCB-E": "tab:orange",
    "SuccessiveRejects": "tab:green", "SR": "tab:green", "SAR": "tab:olive", "LUCB": "tab:red", "BayesGap": "black",
    "ThompsonSampling": "tab:brown", "Thompson": "tab:brown", "BayesUCB": "tab:pink", "GPUCB": "tab:purple",
    "GP-UCB": "tab:purple", "EI": "gold", "PI": "teal",
    # top-K (chen2017)
    "AdaptiveTopK": "tab:blue", "CLUCBPAC": "tab:orange", "CLUCB-PAC": "tab:orange", "OptMAI": "tab:green",
    # the stochastic K-armed bandit (a course's first lab)
    "UCB1": "tab:blue", "KLUCB": "tab:red", "KL-UCB": "tab:red", "EpsilonGreedy": "tab:purple",
    # reinforcement learning
    "SB3Agent": "darkslategray", "PPO": "darkslategray", "DQN": "darkgoldenrod",
}
"""The colour of each built-in agent (and of the labels the reproductions give them), distinct within each family;
LSA and BayesGap black as in their papers' figures.
"""
PAGE_WIDTH = 7.8
r"""The widest figure drawn, in inches, at any dpi: the documentation's article column (748 px on a 1280 px wide
screen) shows a figure at most 748 px wide, so its 8-point text (the legends) is \(8 / 72 \times 748 / 7.8 = 10.7\)
px high there. Panels beyond two per row go to further rows (``_grid``)."""
HASHED_COLORS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#17becf",
                 "#bcbd22", "#8c564b", "#9467bd", "#c51b7d", "#4d9221", "#2166ac", "#b2182b", "#35978f")
"""Colours of agents not in AGENT_COLORS, picked by a stable hash of the name."""


def agent_base(label: str) -> str:
    """The agent's name in a display label: ``"APT"`` for ``"APT(0.05)"`` or ``"APT (tuned)"``."""
    return re.split(r"[ (]", label.strip(), maxsplit=1)[0] or label


def agent_color(label: str) -> str:
    """The colour of an agent in every figure, a function of its display label alone: the built-in agents' own
    colours (``AGENT_COLORS``, by the name before any parameters, so ``APT(0.05)`` is APT's colour), any
    other name one of ``HASHED_COLORS`` by a CRC-32 of the name (stable across runs and machines). Variants of
    one agent in one figure share the colour and differ by line style."""
    base = agent_base(label)
    if base in AGENT_COLORS:
        return AGENT_COLORS[base]
    return HASHED_COLORS[zlib.crc32(base.encode("utf-8")) % len(HASHED_COLORS)]


def agent_styles(labels: Any) -> dict[str, dict[str, Any]]:
    """Line properties per agent label of one figure: ``agent_color``'s colour, a marker in order of
    appearance, and a line style that tells apart the labels sharing a colour (first solid, then dashed, ...)."""
    styles: dict[str, dict[str, Any]] = {}
    used: dict[str, int] = {}
    for i, label in enumerate(dict.fromkeys(labels)):
        color = agent_color(label)
        styles[label] = {"color": color, "marker": MARKERS[i % len(MARKERS)],
                         "linestyle": LINESTYLES[used.get(color, 0) % len(LINESTYLES)]}
        used[color] = used.get(color, 0) + 1
    return styles


METRIC_AXES: dict[tuple[str, str], MetricAxes] = {
    **{(str(family), metric): axes for family, contract in CONTRACTS.items() for metric, axes in contract.axes.items()},
    **{("correlated", metric): axes for metric, axes in CORRELATED_AXES.items()},
}
r"""(family, metric) -> axes, from the families' contracts (``bandit_gym.families``); the family ``"correlated"``
is best-arm identification with correlated arms (hoffman2014). Log scales only where the paper's figure has one:
tao2019 Figure 1 (\(\ln\) of regret / \(K\)), abernethy2016 (log-log), gabillon2012 (\(n / H_1\) on a \(\log_2\)
axis), chen2017 (log budget axis).
"""
DEFAULT_METRIC = {**{str(family): contract.default_metric for family, contract in CONTRACTS.items()},
                  "correlated": CORRELATED_DEFAULT_METRIC}
"""The metric drawn when none is asked for: the family's default (``Contract.default_metric``)."""
BAND_T = "shaded: 95% CI of the mean (mean +- t x SE)"
BAND_WILSON = "shaded: 95% Wilson interval (binomial)"
CUT_NOTE = "lower end <= 0: band cut at the axis"
"""The legend's note under a caret on a log axis' lower edge (``shade_bands``)."""
_CARET_DOWN = 7  # matplotlib's CARETDOWN marker: a caret pointing down, its tip at the point
Band = tuple[Any, Any, Any, str]
"""One shaded interval: its x, its low and high ends, its colour (``shade_bands``)."""


def results_family(summary: Any) -> str:
    """The family of a results table as ``METRIC_AXES`` names it, read without making an env: the registration of
    its env when it is one of the package's ids (whose engine may name a variant of its family's axes:
    ``"correlated"``), else the table's ``family`` column (``results.csv`` carries it), else ``"unknown"`` (plain
    axes)."""
    from bandit_gym.registration import ENV_SPECS

    envs = list(dict.fromkeys(summary["env"])) if "env" in summary else []
    if envs and envs[0] in ENV_SPECS:
        engine = ENV_SPECS[envs[0]].engine
        return engine.plot_axes or str(engine.family)
    families = list(dict.fromkeys(summary["family"])) if "family" in summary else []
    return str(families[0]) if families else "unknown"


def metric_axes(family: str, metric: str) -> MetricAxes:
    """The axes of ``metric`` in ``family`` (``METRIC_AXES``), or plain linear ones named after the metric."""
    return METRIC_AXES.get((family, metric), MetricAxes(metric.replace("_", " ")))


def wilson_interval(rate: Any, runs: Any, z: float = 1.959964) -> tuple[np.ndarray, np.ndarray]:
    r"""The Wilson score interval of a binomial proportion ``rate`` observed over ``runs`` trials (95% for the
    default \(z\)); it stays inside \([0, 1]\) and has a width at rates 0 and 1."""
    p, n = np.asarray(rate, dtype=float), np.asarray(runs, dtype=float)
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    return centre - half, centre + half


def plot_results(summary: Any, path: str | Path, metric: str | None = None, title: str = "",
                 family: str | None = None) -> Path:
    """Draw ``results_figure`` and save it as a PNG at ``path`` (folders created); returns the path."""
    return save_figure(results_figure(summary, metric=metric, title=title, family=family), path)


def results_figure(summary: Any, metric: str | None = None, title: str = "", family: str | None = None) -> Any:
    r"""One panel per experiment of a results table (``results.csv`` of ``run_experiment(out=...)``), two per row
    (``PAGE_WIDTH``): the mean of ``metric`` against the budget for every agent, with a shaded 95% band (a
    \(t\)-interval of the mean, or a Wilson interval for an error rate; the legend says which), axis labels and scales
    chosen per family and metric (``METRIC_AXES``), each agent in its own colour (``agent_color``). ``metric``
    defaults to the family's main one (``DEFAULT_METRIC``); ``family`` defaults to that of the table's env. The
    figure uses matplotlib's constrained layout and wraps long titles at phrase boundaries (``wrap_text``), so no
    label is cut off. On a log y axis a band whose lower end is at or below 0 is cut at the axis and marked
    (``shade_bands``). Returns the matplotlib ``Figure`` (pyplot's; close it with ``plt.close(fig)``)."""
    if len(summary) == 0:
        raise ValueError("summary is empty: no results to plot")
    missing = {"agent", "budget", "metric", "mean"} - set(summary.columns)
    if missing:
        raise ValueError(f"summary lacks the columns {sorted(missing)}; pass a results.csv of run_experiment")
    if family is None:
        family = results_family(summary)
    recorded = list(dict.fromkeys(summary["metric"]))
    metric = metric or DEFAULT_METRIC.get(family, recorded[0])
    if metric not in recorded:
        raise ValueError(f"metric={metric!r} is not in these results; choose one of {', '.join(recorded)}")
    spec = metric_axes(family, metric)
    rows = summary[summary["metric"] == metric]
    experiments = list(dict.fromkeys(rows["experiment"])) if "experiment" in rows else [""]
    fig, axes = _grid(len(experiments), 2, width=5.4 if len(experiments) == 1 else None, height=3.4)
    styles = agent_styles(rows["agent"])
    for ax, experiment in zip(axes, experiments, strict=True):
        panel = rows[rows["experiment"] == experiment] if "experiment" in rows else rows
        _scales(ax, spec)
        drawn = [_curve(ax, curve, agent, spec, styles[agent]) for agent, curve in panel.groupby("agent", sort=False)]
        shade_bands(ax, [band for _, band in drawn])
        _dress(ax, spec, experiment, panel, sum(hidden for hidden, _ in drawn))
    band = BAND_WILSON if spec.rate else BAND_T
    default = f"{spec.ylabel.split(':')[0].replace(' (log scale)', '')} against {spec.xlabel.split(' (')[0]}"
    _legend_and_title(fig, axes, title or default, band)
    return fig


def _curve(ax: Any, curve: Any, agent: str, spec: MetricAxes, style: dict[str, Any]) -> tuple[int, Band]:
    r"""Draw one agent's mean; return how many points a log axis cannot show (mean \(\le 0\)) and its band (x, low,
    high, colour) for ``shade_bands``."""
    curve = curve.sort_values("budget")
    x = curve["budget"].to_numpy(dtype=float)
    scale = curve["num_arms"].to_numpy(dtype=float) if spec.per_arm else 1.0
    mean = curve["mean"].to_numpy(dtype=float) / scale
    if spec.rate and "runs" in curve:
        low, high = wilson_interval(curve["mean"], curve["runs"])
    elif {"ci_low", "ci_high"} <= set(curve.columns):
        low, high = curve["ci_low"].to_numpy(dtype=float) / scale, curve["ci_high"].to_numpy(dtype=float) / scale
    else:
        low = high = mean
    hidden = 0
    if spec.yscale == "log":
        hidden = int((mean <= 0).sum())
        mean = np.where(mean > 0, mean, np.nan)
    ax.plot(x, mean, markersize=4, linewidth=1.4, label=agent, **style)
    return hidden, (x, low, high, style["color"])


def _scales(ax: Any, spec: MetricAxes) -> None:
    for axis, scale in (("x", spec.xscale), ("y", spec.yscale)):
        setter = ax.set_xscale if axis == "x" else ax.set_yscale
        if scale == "log2":
            setter("log", base=2)
        elif scale is not None:
            setter(scale)


def shade_bands(ax: Any, bands: Sequence[Band], alpha: float = 0.18) -> int:
    """Shade each band (x, low end, high end, colour) of one panel, once its y scale is set; return how many
    points have a band cut at the axis.

    On a linear y axis every band is drawn as it is. On a log y axis an interval whose lower end is at or below 0
    has no lower end to draw (``fill_between`` alone would draw a wedge from the neighbouring ends down past the
    axis): its band is cut at the axis' lower limit, and the part below the axis is not drawn. Nothing is hidden:
    at each such x a caret in the band's colour points down at the axis (the interval goes on below it), and the
    legend says so (``CUT_NOTE``, put after the agents by ``_legend_and_title``). An interval wholly at or below 0
    is drawn as a cut band of no height. The y limits are then fixed to the panel's positive values (means and
    ends) with matplotlib's 5% margins, so the cut ends do not stretch the axis."""
    arrays = [(np.asarray(x, dtype=float), np.asarray(low, dtype=float), np.asarray(high, dtype=float), color)
              for x, low, high, color in bands]
    log = ax.get_yscale() == "log"
    cuts = [(low <= 0) if log else np.zeros(low.shape, dtype=bool) for _, low, _, _ in arrays]
    floor = _log_limits(ax, arrays) if any(cut.any() for cut in cuts) else 0.0
    for (x, low, high, color), cut in zip(arrays, cuts, strict=True):
        ax.fill_between(x, np.where(cut, floor, low), np.where(cut & (high <= 0), floor, high), color=color,
                        alpha=alpha, linewidth=0)
        if cut.any():
            ax.plot(x[cut], np.zeros(int(cut.sum())), transform=ax.get_xaxis_transform(), linestyle="none",
                    marker=_CARET_DOWN, markersize=8, markeredgewidth=1.6, color=color, clip_on=False,
                    label="_cut")
    total = int(sum(cut.sum() for cut in cuts))
    if total:
        ax.plot([], [], linestyle="none", marker=_CARET_DOWN, markersize=8, markeredgewidth=1.6, color="dimgray",
                label=CUT_NOTE)
    return total


def _log_limits(ax: Any, arrays: Sequence[Band]) -> float:
    """Fix a log y axis' limits to the positive means (the axis' lines) and band ends with 5% margins (in log
    space, as matplotlib's autoscale); return the lower limit."""
    values = [np.asarray(line.get_ydata(), dtype=float) for line in ax.get_lines()]
    values += [end for _, low, high, _ in arrays for end in (low, high)]
    flat = np.concatenate([v.ravel() for v in values]) if values else np.array([])
    positive = flat[np.isfinite(flat) & (flat > 0)]
    if positive.size == 0:
        bottom, top = ax.get_ylim()
    else:
        low, high = float(positive.min()), float(positive.max())
        margin = (high / low) ** 0.05 if high > low else 2.0
        bottom, top = low / margin, high * margin
    ax.set_ylim(bottom, top)
    return float(bottom)


#: where a title may break: after a comma, semicolon or colon, before a bracket, after a dash between spaces
_PHRASE_END = (",", ";", ":")
_DASHES = frozenset({"-", "--", "\u2013", "\u2014"})
#: words a line never starts or ends at: "K = 10", "regret / K", "mean +- t x SE"
_OPERATORS = frozenset({"=", "==", "!=", "<", ">", "<=", ">=", "~", "/", "+", "-", "+-", "\u00b1", "x", "*", "->"})
_NUMBER = re.compile(r"[-+]?\.?\d")
_PHRASE, _NESTED, _WORD, _GLUED = 0, 1, 2, 3


def wrap_text(text: str, width: int) -> str:
    """``text`` in lines of at most ``width`` characters (joined by newlines), broken only at phrase boundaries:
    first between its top-level phrases (after a comma, semicolon or colon, before an opening bracket, after a
    dash between spaces), then, for a phrase still too long, at those boundaries inside brackets, and last
    between words, never inside a unit: a number and its neighbours (``200 runs``, ``Figure 1``) or an operator
    and its operands (``K = 10``, ``regret / K``). A unit longer than ``width`` stays whole on its own line. Lines
    are filled greedily; runs of spaces become one; explicit newlines are kept."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        words = paragraph.split()
        line = ""
        for piece in _pieces(words, _gaps(words), max(int(width), 1)) if words else [""]:
            if line and len(line) + 1 + len(piece) > width:
                lines.append(line)
                line = piece
            else:
                line = f"{line} {piece}" if line else piece
        lines.append(line)
    return "\n".join(lines)


def _gaps(words: list[str]) -> list[int]:
    """How freely each space between two words may break (``_PHRASE`` .. ``_GLUED``, lower is freer)."""
    gaps, depth = [], 0
    for left, right in itertools.pairwise(words):
        depth = max(depth + left.count("(") + left.count("[") - left.count(")") - left.count("]"), 0)
        if left.endswith(_PHRASE_END) or right.startswith(("(", "[")) or left in _DASHES:
            gaps.append(_NESTED if depth else _PHRASE)
        elif left in _OPERATORS or right in _OPERATORS or _NUMBER.match(left) or _NUMBER.match(right):
            gaps.append(_GLUED)
        else:
            gaps.append(_WORD)
    return gaps


def _pieces(words: list[str], gaps: list[int], width: int) -> list[str]:
    """The words cut at their freest gaps while a part is longer than ``width`` (recursively), as strings."""
    free = [gap for gap in gaps if gap < _GLUED]
    if len(" ".join(words)) <= width or not free:
        return [" ".join(words)]
    level, start, pieces = min(free), 0, []
    for i, gap in enumerate(gaps):
        if gap == level:
            pieces += _pieces(words[start:i + 1], gaps[start:i], width)
            start = i + 1
    return pieces + _pieces(words[start:], gaps[start:], width)


def _dress(ax: Any, spec: MetricAxes, experiment: str, panel: Any, hidden: int) -> None:
    if spec.rate:
        ax.set_ylim(-0.02, 1.02)
    budgets = np.unique(panel["budget"].to_numpy(dtype=float))
    shown = budgets[:: -(-len(budgets) // 8)]  # the budgets of the grid as x ticks, at most 8
    ax.set_xticks(shown, [f"{b:g}" for b in shown])
    ax.xaxis.set_minor_formatter(_null_formatter())
    if spec.yscale == "log":
        ax.yaxis.set_major_formatter(_plain_log_formatter(minor=False))
        ax.yaxis.set_minor_formatter(_plain_log_formatter(minor=True))
    ax.set_xlabel(spec.xlabel)
    ax.set_ylabel(wrap_text(spec.ylabel, 40))
    name = str(experiment)
    if "num_arms" in panel and len(panel):
        name += f" (K = {int(panel['num_arms'].iloc[0])}, {int(panel['runs'].iloc[0])} runs)" if "runs" in panel \
            else f" (K = {int(panel['num_arms'].iloc[0])})"
    if hidden:
        name += f"; {hidden} points at 0 not shown on the log scale"
    ax.set_title(wrap_text(name, 40), fontsize=10)
    ax.grid(alpha=0.3, which="both")


def _null_formatter() -> Any:
    from matplotlib.ticker import NullFormatter

    return NullFormatter()


def _plain_log_formatter(minor: bool) -> Any:
    """matplotlib's log-axis labelling (which ticks get a label), with plain numbers (``0.2``, ``30``) instead
    of ``2 x 10^-1``; no minor labels on an x axis (the budgets are the ticks there)."""
    from matplotlib.ticker import LogFormatter

    class Plain(LogFormatter):
        def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
            return f"{x:.3g}"

    return Plain(labelOnlyBase=False, minor_thresholds=(2, 0.5)) if minor else Plain()


def _legend_and_title(fig: Any, axes: Any, title: str, band: str | None = None, columns: int | None = None) -> None:
    """A legend under the panels (every agent once, then what the shading is when ``band`` names it, then
    ``CUT_NOTE`` when a band is cut) and a title wrapped at phrase boundaries (``wrap_text``), placed by
    constrained layout inside the figure. The legend has ``columns`` columns when given (as many rows as it
    needs), else as many as fit in the figure's width (at most 6); a label longer than the figure's width is
    wrapped."""
    from matplotlib.patches import Patch

    fig.set_layout_engine("constrained")
    seen: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if not label.startswith("_"):
                seen.setdefault(label, handle)
    if band is not None:
        seen[band] = Patch(facecolor="gray", alpha=0.25, linewidth=0)
    if CUT_NOTE in seen:  # after the agents and the band it explains
        seen[CUT_NOTE] = seen.pop(CUT_NOTE)
    width = fig.get_size_inches()[0]
    labels = [wrap_text(label, int(width * 9)) for label in seen]
    renderer = fig.canvas.get_renderer()
    tries = [max(columns, 1)] if columns else []
    tries += range(min(len(seen), max(columns or 0, 6)), 0, -1)
    for ncol in tries:  # the asked columns, else as many as fit in the figure's width
        legend = fig.legend(list(seen.values()), labels, loc="outside lower center", ncol=ncol, fontsize=8,
                            frameon=False)
        if ncol == 1 or legend.get_window_extent(renderer).width <= 0.98 * fig.bbox.width:
            break
        legend.remove()
    if title:
        fig.suptitle(wrap_text(title, max(int(width * 10), 30)))


def plot_log_regret(
    summary: Any, path: str | Path, metric: str = "aggregate_regret", title: str = "", highlight: str = "LSA"
) -> Path:
    r"""One panel per experiment (two per row): \(\ln(\text{mean regret} / K)\) against the budget \(T\) for every
    agent, as in tao2019 Figure 1 (the ``highlight`` agent drawn bold in black). Points whose mean is 0 (log of 0) are
    left out and counted in the panel's title."""
    rows = summary[summary["metric"] == metric]
    if len(rows) == 0:
        raise ValueError(f"no rows with metric={metric!r}; the table has {sorted(set(summary['metric']))}")
    experiments = list(dict.fromkeys(rows["experiment"]))
    fig, axes = _grid(len(experiments), 2, height=3.4)
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
        name = experiment + (f"  ({dropped} points at regret 0 not shown)" if dropped else "")
        ax.set_title(wrap_text(name, 40), fontsize=10)
        ax.set_xlabel("T (budget)")
        ax.set_ylabel("ln(aggregate regret / K)")
        ax.grid(alpha=0.3)
    return _finish(fig, axes, path, title)


def _finish(fig: Any, axes: Any, path: str | Path, title: str, columns: int | None = None) -> Path:
    """Put every panel's labelled lines in one legend under the panels (each label once; ``columns`` columns, else
    as many as fit), the wrapped ``title`` above them, lay the figure out (constrained layout: nothing outside the
    canvas) and save it as a PNG at ``path``; returns the path."""
    _legend_and_title(fig, axes, title, columns=columns)
    return save_figure(fig, path)


def _grid(panels: int, columns: int = 2, width: float | None = None, height: float = 3.3) -> tuple[Any, Any]:
    r"""``panels`` axes in rows of ``columns``, each ``width`` \(\times\) ``height`` inches (by default half of
    ``PAGE_WIDTH``, or 5 inches for a single column; the unused cells of the last row hidden), under constrained
    layout; a grid wider than ``PAGE_WIDTH`` is shrunk to it (width and height alike), so that its text stays
    readable where a page shows the figure at the column's width."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = min(columns, panels)
    rows = -(-panels // columns)
    width = width or (5.0 if columns == 1 else PAGE_WIDTH / 2)
    shrink = min(1.0, PAGE_WIDTH / (width * columns))
    fig, axes = plt.subplots(rows, columns, figsize=(width * shrink * columns, height * shrink * rows),
                             squeeze=False, layout="constrained")
    flat = axes.ravel()
    for ax in flat[panels:]:
        ax.set_visible(False)
    return fig, flat[:panels]


def _errorbars(ax: Any, x: Any, rows: Any, label: str, i: int, offset: float = 0.0, line: bool = True,
               linestyle: str = "-", markersize: float = 4) -> None:
    ax.errorbar(np.asarray(x, dtype=float) + offset, rows["mean"],
                yerr=[rows["mean"] - rows["ci_low"], rows["ci_high"] - rows["mean"]], marker=MARKERS[i % len(MARKERS)],
                markersize=markersize, capsize=2, color=COLORS[i % len(COLORS)], label=label, linewidth=1.2,
                linestyle=linestyle if line else "none")


