"""curves.png: no panel's title runs into another's (issue 35.10: the report's panel titles overlapped)."""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from grpokit.health.diagnose import load_run
from grpokit.reporting.report import curves_figure

FIXTURES = Path(__file__).resolve().parents[1] / "health" / "fixtures"


@pytest.mark.parametrize("case", sorted(p.name for p in FIXTURES.iterdir() if (p / "metrics.jsonl").is_file()))
def test_no_panel_title_overlaps_another_panel(case):
    # Every zoo run: their panels differ (judge, tools, memory, held-out), and so do their titles' lengths.
    fig = curves_figure(load_run(FIXTURES / case))
    try:
        renderer = fig.canvas.get_renderer()
        axes = [ax for ax in fig.axes if ax.get_visible() and ax.get_subplotspec() is not None]
        titles = {ax: ax._left_title.get_window_extent(renderer) for ax in axes}
        for ax, box in titles.items():
            for other in axes:
                if other is ax:
                    continue
                assert not box.overlaps(titles[other]), (case, ax._left_title.get_text(),
                                                         other._left_title.get_text())
                assert not box.overlaps(other.get_window_extent(renderer)), (case, ax._left_title.get_text())
    finally:
        plt.close(fig)
