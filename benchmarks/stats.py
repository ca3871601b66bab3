"""Proportions with intervals: Wilson 95% intervals and the two-proportion z-test, for accuracy claims."""
from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson(correct: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for correct/n (sound near 0 and 1, where the normal one is not)."""
    if n <= 0:
        raise ValueError("an interval needs at least one trial")
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def two_proportion_test(c1: int, n1: int, c2: int, n2: int) -> tuple[float, float]:
    """(z, two-sided p) for H0: both proportions are equal (pooled standard error)."""
    p1, p2 = c1 / n1, c2 / n2
    pooled = (c1 + c2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return 0.0, 1.0
    z = (p2 - p1) / se
    return z, math.erfc(abs(z) / math.sqrt(2))


def one_sided_p(z: float) -> float:
    """P(Z >= z): the chance of a gain this large or larger if training changed nothing."""
    return 0.5 * math.erfc(z / math.sqrt(2))
