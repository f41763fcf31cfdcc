"""The check every figure of the package goes through before it is saved or rendered: nothing outside its canvas
(``save_figure``, ``outside_canvas``, ``FigureOverflowWarning``; ``bandit_gym.plotting`` exports them), and the
height of its smallest text, recorded in the saved PNG (``smallest_text_px``, ``SMALLEST_TEXT_KEY``) so that a page
showing the figure scaled down can tell whether its text is still readable. Kept below the envs, whose ``render()``
checks its frames too (``recording_text_sizes`` collects their smallest text). matplotlib is imported only when a
figure is saved."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SMALLEST_TEXT_KEY = "Smallest text px"
"""The PNG text chunk in which ``save_figure`` records the height in pixels of the figure's smallest visible text
(its font size in points x dpi / 72, as a decimal number): read it back with ``PIL.Image.open(path).info[KEY]``."""
_RECORDERS: list[list[float]] = []


class FigureOverflowWarning(UserWarning):
    """A figure has a title, label, tick label or legend outside its canvas: that part is cut off in the image.
    Every figure the package draws is checked before it is saved or rendered (``save_figure``); the test suite
    turns this warning into an error."""


def save_figure(fig: Any, path: str | Path, dpi: int = 110) -> Path:
    """Save a matplotlib figure as a PNG at ``path`` (folders created) and close it; returns the path. Before
    saving, the figure is laid out and checked: a title, label or legend outside the canvas gives a
    ``FigureOverflowWarning`` that names it (the PNG is written all the same). The height in pixels of its
    smallest visible text (``smallest_text_px``) is recorded in the PNG's text chunk ``SMALLEST_TEXT_KEY``
    (none when the figure has no text). Every figure of the package goes through here; a researcher's own
    figures can too."""
    import matplotlib.pyplot as plt

    path = Path(path)
    smallest = _warn_outside_canvas(fig, path.name, dpi)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, metadata={} if smallest is None else {SMALLEST_TEXT_KEY: f"{smallest:.1f}"})
    plt.close(fig)
    return path


def smallest_text_px(fig: Any, dpi: float | None = None) -> float | None:
    """The height in pixels of the smallest visible text of a matplotlib figure drawn at ``dpi`` (the figure's own
    by default): its font size in points x dpi / 72, over the titles, axis labels, the tick labels drawn, legend
    texts, annotations and other texts of every visible artist (an invisible axes' texts do not count); None
    when the figure shows no text."""
    fig.draw_without_rendering()
    sizes = [text.get_fontsize() for text in _shown_texts(fig)]
    return min(sizes) * (dpi or fig.dpi) / 72 if sizes else None


def _shown_texts(artist: Any) -> Iterator[Any]:
    """Every visible, non-empty ``Text`` under ``artist`` whose ancestors are all visible; of an axis' ticks only
    those drawn at its current limits, and none of an axes turned off."""
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.text import Text

    if not artist.get_visible():
        return
    if isinstance(artist, Text) and artist.get_text().strip():
        yield artist
    if isinstance(artist, Axis):
        children = [artist.label, artist.offsetText]
        children += [label for tick in artist._update_ticks()  # type: ignore[attr-defined]
                     for label in (tick.label1, tick.label2)]
    else:
        children = artist.get_children()
        if isinstance(artist, Axes) and not artist.axison:  # set_axis_off(): its axes draw no ticks nor labels
            children = [child for child in children if not isinstance(child, Axis)]
    for child in children:
        yield from _shown_texts(child)


@contextlib.contextmanager
def recording_text_sizes() -> Iterator[list[float]]:
    """A list that collects the smallest text height in pixels (``smallest_text_px``) of every figure checked while
    it is open: saved by ``save_figure`` or rendered by an env's ``render()``, whose frames are arrays with no
    room for it (a script saving frames as PNGs records it from here)."""
    sizes: list[float] = []
    _RECORDERS.append(sizes)
    try:
        yield sizes
    finally:
        _RECORDERS.remove(sizes)


def _warn_outside_canvas(fig: Any, name: str, dpi: float | None = None) -> float | None:
    """Warn (``FigureOverflowWarning``) when any part of ``fig`` lies outside its canvas (``outside_canvas``);
    ``name`` says which figure in the message. Returns its smallest text in pixels at ``dpi`` (the figure's own by
    default; ``smallest_text_px``), also given to every open ``recording_text_sizes``."""
    import warnings

    smallest = smallest_text_px(fig, dpi)
    if smallest is not None:
        for sizes in _RECORDERS:
            sizes.append(smallest)
    parts = outside_canvas(fig)
    if parts:
        warnings.warn(f"figure {name}: {len(parts)} part(s) outside the canvas, cut off: {'; '.join(parts)}",
                      FigureOverflowWarning, stacklevel=3)
    return smallest


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
