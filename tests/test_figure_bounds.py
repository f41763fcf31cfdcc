"""Figures that fit: every figure function of the package, and the scripts that draw the docs' figures, redrawn
from the committed full-scale results, with nothing (title, label, tick label, legend) outside the canvas.

The quick-scale figures are checked where the tests draw them: ``pyproject.toml`` turns
:class:`bandit_gym.plotting.FigureOverflowWarning` into an error, and every figure is saved through
:func:`bandit_gym.plotting.save_figure` (an env's ``rgb_array`` frames through the same check), so every test that
draws a figure (the reproductions' short runs, ``bandit-gym plot``, the renders) is also a bounds test."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import runpy
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import bandit_gym.studies
from bandit_gym import plotting
from bandit_gym.plotting import FigureOverflowWarning, outside_canvas, save_figure
from bandit_gym.studies.abernethy2016 import reproduce as abernethy2016
from bandit_gym.studies.chen2017 import reproduce as chen2017
from bandit_gym.studies.fixed_confidence import reproduce as fixed_confidence
from bandit_gym.studies.fixed_confidence import sweep as fixed_confidence_sweep
from bandit_gym.studies.gabillon2012 import reproduce as gabillon2012
from bandit_gym.studies.hoffman2014 import reproduce as hoffman2014
from bandit_gym.studies.tao2019.reproduce import TAO2019_AGENTS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LONG = "a title long enough to need two lines on any of these figures, as a user's own title may be " * 2


def _csv(folder: str, name: str = "results.csv") -> pd.DataFrame:
    return pd.read_csv(DOCS / folder / name)


def _tao(path: Path) -> Path:
    summary = _csv("tao2019-5000runs")
    paper = {agent.display for agent in TAO2019_AGENTS}
    return plotting.plot_log_regret(summary[summary["agent"].isin(paper)], path, title=f"tao2019 Figure 1 {LONG}")


def _tao_alpha(path: Path) -> Path:
    lsa = _csv("tao2019-5000runs").query("name == 'LSA'")
    return plotting.plot_log_regret(lsa.assign(agent=lsa["agent"].replace({"LSA": "LSA(alpha=1.35)"})), path,
                                    highlight="LSA(alpha=1.35)", title="tao2019: LSA's alpha (5000 runs per point)")


def _results(path: Path) -> Path:
    return plotting.plot_results(_csv("tao2019-5000runs"), path, title=LONG)


def _results_figure(path: Path) -> Path:
    return plotting.save_figure(plotting.results_figure(_csv("chen2017-200runs").assign(family="top_k")), path)


def _abernethy_horizon(path: Path) -> Path:
    summary = _csv("abernethy2016-200runs")
    return abernethy2016.plot_regret_against_horizon(summary[summary.feedback == "uncensored"], path,
                                                     title="abernethy2016 (a): uncensored, i.i.d. thresholds, 200 runs")


def _abernethy_levels(path: Path) -> Path:
    summary = _csv("abernethy2016-200runs")
    return abernethy2016.plot_regret_against_levels(summary[summary.feedback == "censored"], path,
                                                    title="abernethy2016 (b): censored feedback, 200 runs")


def _chen_budget(path: Path) -> Path:
    summary = _csv("chen2017-200runs")
    return chen2017.plot_failure_against_budget(summary[summary["dataset"] == "TwoGroup"], path,
                                                title="chen2017: TwoGroup, n = 1000, 200 runs per point")


def _chen_scale(path: Path) -> Path:
    table = _csv("chen2017-200runs", "sensitivity.csv")
    tuned = table[table["tuned"]].iloc[0]
    return chen2017.plot_failure_against_scale(table, path, chosen=(tuned["schedule"], float(tuned["scale"])),
                                               title=f"chen2017: AdaptiveTopK's sensitivity, {LONG}")


def _gabillon_budget(path: Path) -> Path:
    summary = _csv("gabillon2012-1000runs")
    return gabillon2012.plot_error_against_budget(summary[summary.part == "a"], path,
                                                  title="gabillon2012 (a): probability of error, m = 1, 1000 runs")


def _gabillon_generality(path: Path) -> Path:
    summary = _csv("gabillon2012-1000runs")
    return gabillon2012.plot_generality(summary[summary.part == "b"], path, title=LONG)


def _gabillon_confidence(path: Path) -> Path:
    summary = _csv("gabillon2012-1000runs")
    return gabillon2012.plot_fixed_confidence(summary[summary.part == "c"], path,
                                              title="gabillon2012 (c): fixed confidence, 1000 runs")


def _fc_ratio(path: Path) -> Path:
    return fixed_confidence.plot_ratio(_csv("fixed-confidence-50runs"), path, title=LONG)


def _fc_errors(path: Path) -> Path:
    return fixed_confidence.plot_errors(_csv("fixed-confidence-50runs"), path, title=LONG)


def _fc_allocation(path: Path) -> Path:
    return fixed_confidence.plot_allocation(_csv("fixed-confidence-50runs", "allocation.csv"), path, title=LONG)


def _fc_sweep(path: Path) -> Path:
    return fixed_confidence_sweep.plot_sweep(_csv("fixed-confidence-50runs", "sweep.csv"), path,
                                             title=f"fixed confidence: the delta-sweep, {LONG}")


def _hoffman_boxplot(path: Path) -> Path:
    records = _csv("hoffman2014-840runs", "model_selection_runs.csv")
    return hoffman2014.plot_rmse_boxplot(records[records["budget"] == 10], path, title=LONG)


def _hoffman_allocations(path: Path) -> Path:
    records = _csv("hoffman2014-840runs", "model_selection_runs.csv")
    allocations = _csv("hoffman2014-840runs", "model_selection_allocations.csv")
    return hoffman2014.plot_allocations(records, allocations, 40, hoffman2014.ALLOCATION_AGENTS, path, title=LONG)


#: every figure function of the package -> a drawing of it on committed full-scale results
FIGURES: dict[str, Callable[[Path], Path]] = {
    "bandit_gym.plotting.plot_log_regret": _tao,
    "bandit_gym.plotting.plot_log_regret (alpha)": _tao_alpha,
    "bandit_gym.plotting.plot_results": _results,
    "bandit_gym.plotting.results_figure": _results_figure,
    "bandit_gym.studies.abernethy2016.reproduce.plot_regret_against_horizon": _abernethy_horizon,
    "bandit_gym.studies.abernethy2016.reproduce.plot_regret_against_levels": _abernethy_levels,
    "bandit_gym.studies._figures.plot_failure_against_budget": _chen_budget,
    "bandit_gym.studies.chen2017.reproduce.plot_failure_against_scale": _chen_scale,
    "bandit_gym.studies.gabillon2012.reproduce.plot_error_against_budget": _gabillon_budget,
    "bandit_gym.studies.gabillon2012.reproduce.plot_generality": _gabillon_generality,
    "bandit_gym.studies.gabillon2012.reproduce.plot_fixed_confidence": _gabillon_confidence,
    "bandit_gym.studies.fixed_confidence.reproduce.plot_ratio": _fc_ratio,
    "bandit_gym.studies.fixed_confidence.reproduce.plot_errors": _fc_errors,
    "bandit_gym.studies.fixed_confidence.reproduce.plot_allocation": _fc_allocation,
    "bandit_gym.studies.fixed_confidence.sweep.plot_sweep": _fc_sweep,
    "bandit_gym.studies.hoffman2014.reproduce.plot_rmse_boxplot": _hoffman_boxplot,
    "bandit_gym.studies.hoffman2014.reproduce.plot_allocations": _hoffman_allocations,
}


def _figure_functions() -> set[str]:
    """The package's public functions that draw a figure: named ``plot_*`` or ``*_figure`` in
    ``bandit_gym.plotting`` and in every module of the studies (a reproduction, the fixed-confidence sweep, the
    shared ``_figures``; not ``save_figure``, which saves them)."""
    modules = [plotting] + [importlib.import_module(info.name) for info in
                            pkgutil.walk_packages(bandit_gym.studies.__path__, "bandit_gym.studies.")]
    return {f"{module.__name__}.{name}" for module in modules for name, value in vars(module).items()
            if inspect.isfunction(value) and value.__module__ == module.__name__ and not name.startswith("_")
            and (name.startswith("plot_") or name.endswith("_figure")) and name != "save_figure"}


def test_every_figure_function_is_drawn_here() -> None:
    drawn = {name.split(" ")[0] for name in FIGURES}
    assert _figure_functions() == drawn


@pytest.mark.parametrize("name", list(FIGURES))
def test_figure_fits_its_canvas(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[list[str]] = []

    def check(fig: object, *args: object, **kwargs: object) -> Path:
        checked.append(outside_canvas(fig))
        return save_figure(fig, *args, **kwargs)  # type: ignore[arg-type]

    for module in (plotting, abernethy2016, chen2017, fixed_confidence, gabillon2012, hoffman2014):
        if hasattr(module, "save_figure"):
            monkeypatch.setattr(module, "save_figure", check)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FigureOverflowWarning)
        path = FIGURES[name](tmp_path / "figure.png")
    assert path.stat().st_size > 10_000
    assert checked == [[]], checked


def test_a_figure_with_a_cut_legend_is_caught(tmp_path: Path) -> None:
    """The check itself: the old layout (a legend wider than the figure under tight_layout) is reported, the PNG
    is still written."""
    fig, ax = plt.subplots(figsize=(4, 3))
    for i in range(6):
        ax.plot([0, 1], [i, i], label=f"an agent with a long label, number {i}")
    fig.legend(loc="lower center", ncol=6)
    fig.tight_layout()
    parts = outside_canvas(fig)
    assert any("legend" in part for part in parts), parts
    with pytest.warns(FigureOverflowWarning, match="outside the canvas"):
        path = save_figure(fig, tmp_path / "cut.png")
    assert path.exists()
    fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
    ax.set_ylabel("y")
    assert outside_canvas(fig) == []
    plt.close(fig)


def test_env_frames_fit_their_canvas() -> None:
    """The rgb_array frame's bar chart with the longest legend (the threshold line, true means, answer and the
    other arms) and many arms, checked through the same warning."""
    from bandit_gym.envs._render import bar_chart

    with warnings.catch_warnings():
        warnings.simplefilter("error", FigureOverflowWarning)
        for arms in (3, 12, 300):
            frame = bar_chart(np.linspace(0, 1, arms), np.full(arms, 0.1), 0.5, LONG[:70], "empirical mean",
                              counts=np.arange(arms), truth=np.linspace(0, 1, arms), answer=np.arange(arms) % 2 == 0,
                              answer_label="classified above theta", other_label="below")
            assert frame.ndim == 3


def test_the_docs_figure_scripts_fit(tmp_path: Path) -> None:
    """The scripts that draw the docs' own figures (the RL pages' and the lab's are drawn in test_lab) save
    through save_figure and fit."""
    docs = tmp_path / "rl-armwise"
    shutil.copytree(DOCS / "rl-armwise", docs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FigureOverflowWarning)
        armwise = runpy.run_path(str(ROOT / "scripts" / "rl_armwise_figure.py"), run_name="rl_armwise_figure")
        assert armwise["main"](["--docs", str(docs), "--out", str(tmp_path / "heldout.png")]) == 0
        recipes = runpy.run_path(str(ROOT / "scripts" / "rl_recipes.py"), run_name="rl_recipes")
        recipes["plot_results"](_csv("rl-recipes"), tmp_path / "recipes.png")
    assert (tmp_path / "heldout.png").stat().st_size > 10_000 and (tmp_path / "recipes.png").stat().st_size > 10_000
