"""The check every figure of the package goes through before it is saved or rendered: nothing outside its canvas
(``save_figure``, ``outside_canvas``, ``FigureOverflowWarning``; ``bandit_gym.plotting`` exports them). Kept below
the envs, whose ``render()`` checks its frames too. matplotlib is imported only when a figure is saved."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class FigureOverflowWarning(UserWarning):
    """A figure has a title, label, tick label or legend outside its canvas: that part is cut off in the image.
    Every figure the package draws is checked before it is saved or rendered (``save_figure``); the test suite
    turns this warning into an error."""


def save_figure(fig: Any, path: str | Path, dpi: int = 110) -> Path:
    """Save a matplotlib figure as a PNG at ``path`` (folders created) and close it; returns the path. Before
    saving, the figure is laid out and checked: a title, label or legend outside the canvas gives a
    ``FigureOverflowWarning`` that names it (the PNG is written all the same). Every figure of the package goes
    through here; a researcher's own figures can too."""
    import matplotlib.pyplot as plt

    path = Path(path)
    _warn_outside_canvas(fig, path.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def _warn_outside_canvas(fig: Any, name: str) -> None:
    """Warn (``FigureOverflowWarning``) when any part of ``fig`` lies outside its canvas (``outside_canvas``);
    ``name`` says which figure in the message."""
    import warnings

    parts = outside_canvas(fig)
    if parts:
        warnings.warn(f"figure {name}: {len(parts)} part(s) outside the canvas, cut off: {'; '.join(parts)}",
                      FigureOverflowWarning, stacklevel=3)


def outside_canvas(fig: Any) -> list[str]:
    """What of a matplotlib figure lies outside its canvas once laid out: the figure's title, texts and legends,
    and each visible axes with all it draws (title, axis and tick labels, legend, colour bar), each named with
    its box in pixels; an empty list when everything fits."""
    fig.draw_without_rendering()
    renderer = fig._get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    texts = [text for text in [fig._suptitle, fig._supxlabel, fig._supylabel, *fig.texts]
             if text is not None and text.get_visible() and text.get_text().strip()]
    boxes = [(repr(text.get_text()[:60]), text.get_window_extent(renderer)) for text in texts]
    boxes += [("the figure's legend", legend.get_window_extent(renderer)) for legend in fig.legends]
    boxes += [(f"the axes {ax.get_title()[:60] or ax.get_ylabel()[:60]!r} with its labels",
               ax.get_tightbbox(renderer)) for ax in fig.axes if ax.get_visible()]
    return [f"{label} at x {box.x0:.0f}..{box.x1:.0f}, y {box.y0:.0f}..{box.y1:.0f} (canvas {width:.0f} x "
            f"{height:.0f})" for label, box in boxes
            if box.x0 < -0.5 or box.y0 < -0.5 or box.x1 > width + 0.5 or box.y1 > height + 0.5]
