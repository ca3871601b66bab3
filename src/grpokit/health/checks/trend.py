"""How a metric moved: a least-squares slope, and the rise over a window against the run's first steps."""
from __future__ import annotations

import math
from dataclasses import dataclass

from grpokit.health.history import History


def _spread_of_steps(n: int) -> float:
    # sum((i - (n - 1) / 2) ** 2 for i in range(n)) in closed form: run at every log, and exact in floats
    # (a multiple of 1/4) as the sum is.
    return n * (n * n - 1) / 12


def slope(values: list[float]) -> float:
    # Least-squares slope per step; robust enough to noise for a trend test.
    n = len(values)
    mean_x = (n - 1) / 2
    mean_y = sum(values) / n
    num = sum((i - mean_x) * (v - mean_y) for i, v in enumerate(values))
    den = _spread_of_steps(n)
    return num / den if den else 0.0


@dataclass
class Progress:
    gain: float          # fitted rise across the window
    gain_se: float       # its standard error
    rise: float          # the window's mean (its steps after the baseline) minus the first steps' mean
    rise_noise: float    # twice the standard error of that difference
    mean: float
    baseline: float


def progress(h: History, key: str, window: int, baseline_steps: int) -> Progress | None:
    """How `key` moved over the last `window` logs and since the first `baseline_steps`; None before the
    window is full."""
    values = h.last(key, window)
    start = h.first.get(key, [])[:int(baseline_steps)]
    n = len(values)
    if n < window or not start:
        return None
    # Early in a run the window holds the baseline steps too: compare the steps after them only.
    later = values[max(0, len(start) - (h.count - n)):]
    if not later:
        return None
    fitted = slope(values)
    mean = sum(values) / n
    residual = math.sqrt(sum((v - (mean + fitted * (i - (n - 1) / 2))) ** 2 for i, v in enumerate(values)) / max(1, n - 2))
    gain_se = residual * (n - 1) / math.sqrt(_spread_of_steps(n))
    baseline = sum(start) / len(start)
    return Progress(gain=fitted * (n - 1), gain_se=gain_se, rise=sum(later) / len(later) - baseline,
                    rise_noise=2 * residual * math.sqrt(1 / len(start) + 1 / len(later)), mean=mean,
                    baseline=baseline)
