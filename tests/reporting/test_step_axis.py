"""Report panels count steps in whole numbers."""
import matplotlib

matplotlib.use("Agg", force=True)

import matplotlib.pyplot as plt  # noqa: E402

from grpokit.reporting.report import Panel, _draw_panel  # noqa: E402


def test_a_short_run_has_whole_step_ticks():
    # A 3-step run's x axis read 1.00, 1.25, 1.50, ...: fractional steps that never happened.
    records = [{"step": s, "reward": 0.1 * s} for s in (1, 2, 3)]
    fig, ax = plt.subplots()
    _draw_panel(ax, Panel("reward", ["reward"], None), records, {})
    fig.canvas.draw()
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    plt.close(fig)
    assert ticks and all(float(t).is_integer() for t in ticks), ticks
