"""Plots use a real Japanese font, and published figures are labelled as such."""
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import font_manager  # noqa: E402

from ctxlab import published  # noqa: E402
from ctxlab.plots import papers  # noqa: E402


def test_japanese_font_is_selected_and_found():
    family = plt.rcParams["font.family"]
    path = font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
    assert "ipaex" in path.lower() or "noto" in path.lower(), path


def test_japanese_labels_render_without_missing_glyphs():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ax = papers.lost_in_the_middle()
        ax.figure.canvas.draw()
        plt.close(ax.figure)
    missing = [w for w in caught if "missing from font" in str(w.message)]
    assert not missing, missing[0].message


def test_published_figures_are_labelled_with_their_source():
    ax = papers.lost_in_the_middle()
    title = ax.get_title()
    plt.close(ax.figure)
    assert "公表値" in title and "Liu et al." in title
    data = published.figures()
    for key in ("lost_in_the_middle", "ruler", "contextual_retrieval"):
        assert data[key]["citation"] and "not measured" in data[key]["note"]


def test_lost_in_the_middle_legend_hides_no_line():
    """The legend sits outside the axes, so no curve or reference line (closed book) is hidden."""
    ax = papers.lost_in_the_middle()
    fig = ax.figure
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    axes = ax.get_window_extent()
    plt.close(fig)
    assert legend.y1 <= axes.y0, (legend, axes)
