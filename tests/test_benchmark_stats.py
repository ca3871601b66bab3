"""The statistics behind learning claims (benchmarks/stats.py), against values computed by hand."""
import math

import pytest

from benchmarks.stats import one_sided_p, two_proportion_test, wilson


@pytest.mark.parametrize(
    "correct, n, low, high",
    [
        (50, 100, 0.4038, 0.5962),  # the textbook middle case
        (0, 20, 0.0, 0.1611),  # zero successes: still a real upper bound (the normal interval gives 0 width)
        (20, 20, 0.8389, 1.0),  # all successes: mirror image
        (58, 200, 0.2315, 0.3564),  # the demo's base-rate scale
    ],
)
def test_wilson_interval(correct, n, low, high):
    got = wilson(correct, n)
    assert got == (pytest.approx(low, abs=5e-4), pytest.approx(high, abs=5e-4))


def test_two_proportion_test():
    # 30/100 vs 50/100: pooled p 0.4, se sqrt(0.24 * 0.02) = 0.0693, z = 2.887, two-sided p = 0.0039.
    z, p = two_proportion_test(30, 100, 50, 100)
    assert z == pytest.approx(2.887, abs=1e-3) and p == pytest.approx(0.00389, abs=1e-4)
    assert one_sided_p(z) == pytest.approx(p / 2)
    # No difference, or no variance at all: nothing to reject.
    assert two_proportion_test(40, 100, 40, 100) == (0.0, 1.0)
    assert two_proportion_test(0, 10, 0, 10) == (0.0, 1.0)
    assert math.isclose(two_proportion_test(50, 100, 30, 100)[0], -z)
