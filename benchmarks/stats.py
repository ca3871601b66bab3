"""Proportions with intervals: Wilson 95% intervals and the two-proportion z-test, for accuracy claims.

Counts in, as the benchmarks keep them; the arithmetic is grpokit.evaluate.intervals', which
`grpokit eval` prints with.
"""
from __future__ import annotations

import math

from grpokit.evaluate import intervals
from grpokit.evaluate.intervals import Z95


def wilson(correct: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for correct/n (sound near 0 and 1, where the normal one is not)."""
    if n <= 0:
        raise ValueError("an interval needs at least one trial")
    return intervals.wilson(correct / n, n, z)


def two_proportion_test(c1: int, n1: int, c2: int, n2: int) -> tuple[float, float]:
    """(z, two-sided p) for H0: both proportions are equal (pooled standard error)."""
    return intervals.two_proportion_test(c1 / n1, n1, c2 / n2, n2)


def one_sided_p(z: float) -> float:
    """P(Z >= z): the chance of a gain this large or larger if training changed nothing."""
    return 0.5 * math.erfc(z / math.sqrt(2))
