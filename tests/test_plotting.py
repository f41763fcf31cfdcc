"""`bandit-gym plot` and :func:`bandit_gym.plotting.plot_results` on every family's results: labels per metric,
confidence bands, one colour per agent across figures, nothing outside the figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure

from bandit_gym.cli import main
from bandit_gym.experiments import AgentSpec, ExperimentSpec, run_experiment
from bandit_gym.plotting import (
    AGENT_COLORS,
    BAND_T,
    BAND_WILSON,
    CUT_NOTE,
    agent_color,
    plot_log_regret,
    plot_results,
    results_figure,
    shade_bands,
    wilson_interval,
    wrap_text,
)

#: family -> (env id, agents, budgets): small experiments of every family, through the public API
FAMILIES = {
    "thresholding": ("ThresholdingBandit-Tao2019Setup1-v0", ("LSA", "APT", "Uniform"), (20, 40, 80)),
    "threshold": ("ThresholdBandit-v0", ("UCB", "DKWUCB"), (20, 40, 80)),
    "best_arm": ("BestArmIdentification-v0", ("SuccessiveRejects", "Uniform"), (20, 40, 80)),
    "top_k": ("TopKIdentification-v0", ("AdaptiveTopK", "Uniform"), (200, 400)),
    "correlated": ("CorrelatedBestArm-v0", ("BayesGap", "ThompsonSampling"), (5, 10)),
    "multi_armed": ("MultiArmedBandit-v0", ("UCB1", "KLUCB", "Thompson"), (20, 40, 80)),
}
#: family -> (default metric, words its y label must hold, y scale, x scale)
EXPECTED = {
    "thresholding": ("aggregate_regret", "aggregate regret / K", "log", "linear"),
    "threshold": ("regret", "cumulative pseudo-regret", "log", "log"),
    "best_arm": ("error", "P(error)", "linear", "log"),
    "top_k": ("error", "failure probability", "linear", "log"),
    "correlated": ("regret", "simple regret", "linear", "linear"),
    "multi_armed": ("regret", "cumulative pseudo-regret", "linear", "linear"),
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for family, (env, agents, budgets) in FAMILIES.items():
        spec = ExperimentSpec(env=env, agents=tuple(AgentSpec(a) for a in agents), budgets=budgets, runs=12, seed=0)
        folder = tmp_path_factory.mktemp(family)
        run_experiment(spec, out=folder, progress=False)
        out[family] = folder
    return out


def _drawn(fig: Figure) -> Any:
    fig.canvas.draw()  # runs the constrained layout
    return fig.canvas.get_renderer()


def _texts(fig: Figure) -> list[Any]:
    """The figure's titles, axis labels and legend entries."""
    texts = [fig._suptitle] if fig._suptitle is not None else []
    for ax in fig.axes:
        texts += [ax.title, ax.xaxis.label, ax.yaxis.label]
    for legend in fig.legends:
        texts += legend.get_texts()
    return [t for t in texts if t.get_visible() and t.get_text()]


def _assert_inside(fig: Figure) -> None:
    """Every title, label and legend, and each axes with its drawn tick labels, lies inside the figure."""
    renderer = _drawn(fig)
    width, height = fig.bbox.width, fig.bbox.height
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in _texts(fig)]
    boxes += [("legend", legend.get_window_extent(renderer)) for legend in fig.legends]
    boxes += [(f"axes {ax.get_title()!r}", ax.get_tightbbox(renderer)) for ax in fig.axes]
    assert len(boxes) >= 6
    for label, box in boxes:
        assert box.x0 >= -0.5 and box.y0 >= -0.5, (label, box)
        assert box.x1 <= width + 0.5 and box.y1 <= height + 0.5, (label, box, width, height)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_plot_results_labels_bands_and_layout_per_family(family: str, folders: dict[str, Path]) -> None:
    summary = pd.read_csv(folders[family] / "results.csv")
    metric, words, yscale, xscale = EXPECTED[family]
    fig = results_figure(summary)
    try:
        (ax,) = fig.axes
        assert words in ax.get_ylabel().replace("\n", " ")
        assert "ln(aggregate regret / K)" not in ax.get_ylabel()
        assert ax.get_yscale() == yscale and ax.get_xscale() == xscale
        if "log" in (yscale, xscale):
            assert "log" in (ax.get_ylabel() + ax.get_xlabel())  # a log scale says so
        agents = FAMILIES[family][1]
        bands = [c for c in ax.collections if type(c).__name__ in ("PolyCollection", "FillBetweenPolyCollection")]
        assert len(bands) == len(agents)  # one band per agent
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        assert legend[: len(agents)] == list(agents)
        assert legend[-1] == (BAND_WILSON if metric == "error" else BAND_T)
        _assert_inside(fig)
    finally:
        plt.close(fig)
    path = plot_results(summary, folders[family] / "figure.png")
    assert path.stat().st_size > 5000


@pytest.mark.parametrize("family", list(FAMILIES))
def test_cli_plot_on_every_family(family: str, folders: dict[str, Path], tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "figure.png"
    assert main(["plot", str(folders[family]), "--out", str(out)]) == 0  # the folder of `run`
    assert out.stat().st_size > 5000 and f"wrote {out}" in capsys.readouterr().out
    assert main(["plot", str(folders[family] / "results.csv"), "--metric", EXPECTED[family][0]]) == 0
    assert (folders[family] / f"results-{EXPECTED[family][0]}.png").stat().st_size > 5000


def test_cli_plot_errors_are_one_line(folders: dict[str, Path], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plot", str(folders["threshold"]), "--metric", "aggregate_regret"]) == 2
    err = capsys.readouterr().err
    assert "metric='aggregate_regret' is not in these results; choose one of regret" in err
    assert "Traceback" not in err
    assert main(["plot", str(tmp_path / "missing.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_threshold_results_in_the_tao2019_layout_is_a_clear_error(folders: dict[str, Path], tmp_path: Path) -> None:
    summary = pd.read_csv(folders["threshold"] / "results.csv")
    with pytest.raises(ValueError, match="no rows with metric='aggregate_regret'"):
        plot_log_regret(summary, tmp_path / "x.png")


def _summary(agents: list[str], experiment: str = "demo") -> pd.DataFrame:
    rows = []
    for i, agent in enumerate(agents):
        for budget in (100, 200, 400):
            mean = 3.0 / (1 + i) / budget * 100
            rows.append({"experiment": experiment, "env": "ThresholdingBandit-v0", "agent": agent, "budget": budget,
                         "metric": "aggregate_regret", "mean": mean, "se": 0.1 * mean, "ci_low": 0.8 * mean,
                         "ci_high": 1.2 * mean, "runs": 50, "num_arms": 6, "oracle": False})
    return pd.DataFrame(rows)


def _line_colors(fig: Figure) -> dict[str, tuple[float, ...]]:
    return {line.get_label(): to_rgba(line.get_color()) for ax in fig.axes for line in ax.get_lines()
            if not line.get_label().startswith("_")}


def test_an_agent_keeps_its_colour_across_figures() -> None:
    first = results_figure(_summary(["LSA", "APT", "MyRule", "UCBE"]))
    second = results_figure(_summary(["MyRule", "Uniform", "APT"]))  # other agents, other order
    try:
        a, b = _line_colors(first), _line_colors(second)
        assert a["APT"] == b["APT"] == to_rgba(AGENT_COLORS["APT"])
        assert a["MyRule"] == b["MyRule"] == to_rgba(agent_color("MyRule"))  # a name not built in: hashed
        assert len(set(a.values())) == 4  # distinct within a figure
    finally:
        plt.close(first)
        plt.close(second)
    assert agent_color("APT(0.05)") == agent_color("APT") and agent_color("MyRule(2)") == agent_color("MyRule")


def test_built_in_agents_have_distinct_colours_within_each_family() -> None:
    from tests.conftest import AGENTS

    families = {family for cls in AGENTS.values() for family in cls.families}
    for family in families:
        names = [name for name, cls in AGENTS.items() if family in cls.families and name in AGENT_COLORS]
        colours = [agent_color(name) for name in names]
        assert len(set(colours)) == len(colours), (family, dict(zip(names, colours, strict=True)))


def test_long_titles_and_names_stay_inside_the_figure() -> None:
    names = ["LSA", "APT(epsilon=0.05, tuned on a held-out instance)", "a custom rule with a very long label indeed"]
    summary = pd.concat([_summary(names, "first experiment with a rather long name, setup 1"),
                         _summary(names, "second")])
    fig = results_figure(summary, title="A very long figure title that would run past the edges of the figure if "
                                        "it were drawn on one line, as the old plot did " * 2)
    try:
        assert len(fig.axes) == 2 and "\n" in fig._suptitle.get_text()
        _assert_inside(fig)
    finally:
        plt.close(fig)


def test_log_axis_leaves_out_zero_means_and_says_so() -> None:
    summary = _summary(["LSA", "APT"])
    summary.loc[summary.index[0], ["mean", "ci_low", "ci_high"]] = 0.0
    fig = results_figure(summary)
    try:
        assert "1 points at 0 not shown" in fig.axes[0].get_title().replace("\n", " ")
    finally:
        plt.close(fig)


def test_wilson_interval() -> None:
    low, high = wilson_interval([0.0, 0.5, 1.0], [20, 20, 20])
    assert low[0] == pytest.approx(0.0, abs=1e-12) and high[0] == pytest.approx(0.1611, abs=1e-3)
    assert low[1] == pytest.approx(0.2993, abs=1e-3) and high[1] == pytest.approx(0.7007, abs=1e-3)
    assert high[2] == pytest.approx(1.0) and np.all(low <= high)


def test_bad_input_names_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="empty"):
        results_figure(_summary([]).iloc[:0])
    with pytest.raises(ValueError, match="metric='pulls' is not in these results"):
        results_figure(_summary(["LSA"]), metric="pulls")
    with pytest.raises(ValueError, match="lacks the columns"):
        results_figure(pd.DataFrame({"agent": ["LSA"], "mean": [1.0]}))


def _bands(ax: Any) -> list[Any]:
    return [c for c in ax.collections if type(c).__name__ in ("PolyCollection", "FillBetweenPolyCollection")]


def _carets(ax: Any) -> list[Any]:
    """The lines drawn as carets on the axis' lower edge (not the legend's sample, which has no data)."""
    return [line for line in ax.get_lines() if line.get_marker() == 7 and len(line.get_xdata())]


def test_a_band_at_or_below_zero_on_a_log_axis_is_cut_at_the_axis_and_marked() -> None:
    """Before: fill_between down to a lower end <= 0 on a log axis drew a wedge to the axis, unexplained. Now the
    band stops at the axis' lower limit, a caret in the band's colour marks each cut point, the legend says so,
    and the bands whose ends are positive are drawn as they are."""
    summary = _summary(["LSA", "APT"])
    apt = summary["agent"] == "APT"
    summary.loc[apt & (summary["budget"] == 200), "ci_low"] = -0.01  # a t-interval reaching below 0
    summary.loc[apt & (summary["budget"] == 400), ["ci_low"]] = 0.0
    fig = results_figure(summary)
    try:
        (ax,) = fig.axes
        bottom, top = ax.get_ylim()
        positive = pd.concat([summary["mean"], summary["ci_low"], summary["ci_high"]]) / 6
        assert 0 < bottom < positive[positive > 0].min() and top > positive.max()
        lsa, apt_band = _bands(ax)
        for band in (lsa, apt_band):
            ys = band.get_paths()[0].vertices[:, 1]
            assert ys.min() >= bottom * (1 - 1e-9)  # nothing drawn below the axis (the old band went to <= 0)
        lows = np.sort(apt_band.get_paths()[0].vertices[:, 1])
        assert lows[0] == pytest.approx(bottom) and lows[1] == pytest.approx(bottom)  # the two cut lower ends
        assert np.isclose(lsa.get_paths()[0].vertices[:, 1], 0.8 * 3.0 / 100 * 100 / 6).any()  # LSA's own ends
        (carets,) = _carets(ax)
        assert sorted(carets.get_xdata()) == [200, 400] and carets.get_color() == AGENT_COLORS["APT"]
        assert list(carets.get_ydata()) == [0, 0] and carets.get_transform() == ax.get_xaxis_transform()
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        assert legend == ["LSA", "APT", BAND_T, CUT_NOTE]
        _assert_inside(fig)
    finally:
        plt.close(fig)


def test_bands_with_positive_ends_or_on_a_linear_axis_are_not_cut() -> None:
    """No caret, no note and the same limits as matplotlib's autoscale when every lower end is positive; on a
    linear axis a lower end below 0 is drawn where it is."""
    fig = results_figure(_summary(["LSA", "APT"]))
    try:
        assert not _carets(fig.axes[0]) and CUT_NOTE not in [t.get_text() for t in fig.legends[0].get_texts()]
        assert fig.axes[0].get_autoscaley_on()
    finally:
        plt.close(fig)
    fig, ax = plt.subplots()
    try:
        ax.plot([1, 2, 3], [0.5, 1.0, 2.0])
        assert shade_bands(ax, [([1, 2, 3], [-0.5, 0.2, 1.0], [1.5, 1.8, 3.0], "tab:blue")]) == 0
        assert _bands(ax)[0].get_paths()[0].vertices[:, 1].min() == pytest.approx(-0.5)
        assert not _carets(ax)
        ax.set_yscale("log")
        assert shade_bands(ax, [([1, 2, 3], [-0.5, 0.2, 1.0], [1.5, 1.8, 3.0], "tab:blue")]) == 1
        assert shade_bands(ax, [([1, 2, 3], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], "tab:red")]) == 3  # wholly <= 0
        assert _bands(ax)[-1].get_paths()[0].vertices[:, 1].min() > 0
    finally:
        plt.close(fig)


def test_abernethy2016_bands_are_cut_at_the_axis_not_floored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The threshold-bandit figures shaded ``max(ci_low, 1e-3)``: a silent floor, a wedge to 1e-3. Now they cut at
    the axis and mark it, as results_figure does."""
    from bandit_gym.studies.abernethy2016 import reproduce

    drawn: list[Figure] = []
    finish = reproduce._finish

    def keep(fig: Figure, *args: Any, **kwargs: Any) -> Path:
        drawn.append(fig)
        return finish(fig, *args, **kwargs)

    monkeypatch.setattr(reproduce, "_finish", keep)
    rows = [{"metric": "regret", "levels": 2, "order": "iid", "agent": agent, "budget": budget,
             "mean": mean, "ci_low": mean - spread, "ci_high": mean + spread}
            for agent, spread in (("UCB", 1.0), ("DKWUCB", 30.0)) for budget, mean in ((100, 10.0), (1000, 40.0))]
    reproduce.plot_regret_against_horizon(pd.DataFrame(rows), tmp_path / "horizon.png", title="t")
    (ax,) = drawn[0].axes
    bottom = ax.get_ylim()[0]
    assert bottom > 1e-3 and bottom == pytest.approx(9.0 / (70 / 9.0) ** 0.05)
    assert min(band.get_paths()[0].vertices[:, 1].min() for band in _bands(ax)) == pytest.approx(bottom)
    (carets,) = _carets(ax)
    assert list(carets.get_xdata()) == [100]
    assert [t.get_text() for t in drawn[0].legends[0].get_texts()] == ["UCB", "DKWUCB", CUT_NOTE]


@pytest.mark.parametrize(("text", "width", "expected"), [
    ("CLUCB-PAC readings TwoGroup K=100 (K = 1000, 200 runs)", 48,
     "CLUCB-PAC readings TwoGroup K=100\n(K = 1000, 200 runs)"),
    ("thresholding setup 2 (K = 10, 200 runs)", 30, "thresholding setup 2\n(K = 10, 200 runs)"),
    ("setup 2 (K = 10, 200 runs)", 12, "setup 2\n(K = 10,\n200 runs)"),
    ("hoffman2014 Figure 3 analogue: diabetes data, ORACLE prior, T = 10, 840 runs", 30,
     "hoffman2014 Figure 3 analogue:\ndiabetes data, ORACLE prior,\nT = 10, 840 runs"),
    ("aggregate regret / K (log scale)", 24, "aggregate regret / K\n(log scale)"),
    ("APT(epsilon=0.05, tuned on a held-out instance)", 30, "APT(epsilon=0.05,\ntuned on a held-out instance)"),
    ("short", 48, "short"),
    ("", 10, ""),
    ("two\nlines  kept", 40, "two\nlines kept"),
])
def test_wrap_text_breaks_at_phrase_boundaries(text: str, width: int, expected: str) -> None:
    assert wrap_text(text, width) == expected


def test_wrap_text_never_breaks_a_unit_at_any_width() -> None:
    """textwrap broke "(K = 1000, 200 runs)" between 200 and runs, and "T = 10" around its "="; at every width
    each unit stays on one line, no word is lost, and a line is over the width only when it is one unit."""
    titles = {"CLUCB-PAC readings TwoGroup K=100 (K = 1000, 200 runs)": ("(K = 1000,", "200 runs)"),
              "hoffman2014 Figure 3 analogue: diabetes data, ORACLE prior, T = 10, 840 runs":
                  ("Figure 3 analogue:", "T = 10,", "840 runs"),  # a number keeps both its neighbours
              "aggregate regret / K (log scale); 5000 runs per point": ("regret / K", "5000 runs")}
    for text, units in titles.items():
        for width in range(1, len(text) + 2):
            lines = wrap_text(text, width).split("\n")
            assert " ".join(lines) == text, (width, lines)
            for unit in units:
                assert any(unit in line for line in lines), (width, unit, lines)
            longest = max(len(unit) for unit in units)
            assert all(len(line) <= max(width, longest) for line in lines), (width, lines)


def test_a_panel_title_wraps_before_its_parenthesis() -> None:
    """The defect as seen: a panel's title "<experiment> (K = 6, 50 runs)" broken between 50 and runs."""
    fig = results_figure(_summary(["LSA"], experiment="a first experiment with a longer name"))
    try:
        assert fig.axes[0].get_title() == "a first experiment with a longer name\n(K = 6, 50 runs)"
    finally:
        plt.close(fig)


def test_save_figure_records_the_smallest_visible_text_in_the_png(tmp_path: Path) -> None:
    """A 6-pt tick label at dpi 100 is 6 x 100 / 72 = 8.3 px high: the smallest text, over a 10-pt axis label and
    a 14-pt title; an invisible axes' 3-pt labels do not count; a figure with no text records nothing."""
    from PIL import Image

    from bandit_gym._canvas import SMALLEST_TEXT_KEY, smallest_text_px
    from bandit_gym.plotting import save_figure

    fig, (ax, hidden) = plt.subplots(1, 2, figsize=(6, 3), layout="constrained")
    ax.plot([0, 1], [0, 1])
    ax.set(xlabel="x", title="a title")
    ax.title.set_fontsize(14)
    ax.tick_params(labelsize=6)
    hidden.tick_params(labelsize=3)
    hidden.set_visible(False)
    assert smallest_text_px(fig, dpi=100) == pytest.approx(6 * 100 / 72)
    with Image.open(save_figure(fig, tmp_path / "small.png", dpi=100)) as image:
        assert image.info[SMALLEST_TEXT_KEY] == "8.3"
    ax.tick_params(labelsize=12)
    assert smallest_text_px(fig, dpi=100) == pytest.approx(10 * 100 / 72)  # now the axis label
    plt.close(fig)
    blank = Figure(figsize=(2, 2))
    blank.add_subplot().set_axis_off()
    assert smallest_text_px(blank) is None
    with Image.open(save_figure(blank, tmp_path / "blank.png")) as image:
        assert SMALLEST_TEXT_KEY not in image.info
