"""How much an accuracy measured on few prompts can be trusted: Wilson intervals and a noise check.

A held-out split of 3 prompts moves accuracy in steps of 0.33: "0.33 -> 0.67" is one prompt, and
says nothing about training. The interval is over prompts (the samples of one prompt are not
independent draws), the Wilson score interval because it stays sound near 0 and 1; the change is
called noise when a two-proportion test over the prompts cannot tell it from none (p >= 0.05).
"""
from __future__ import annotations

import math

Z95 = 1.959963984540054
SMALL = 30  # held-out prompts under which `grpokit eval` says how far to trust a change


def wilson(p: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion p measured on n trials."""
    if n <= 0:
        raise ValueError("an interval needs at least one trial")
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(max(0.0, p * (1 - p)) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def two_proportion_test(p1: float, n1: int, p2: float, n2: int) -> tuple[float, float]:
    """(z, two-sided p) of the pooled two-proportion z-test for H0: both proportions are equal."""
    pooled = (p1 * n1 + p2 * n2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:  # both proportions 0, or both 1: no difference to test
        return 0.0, 1.0
    z = (p2 - p1) / se
    return z, math.erfc(abs(z) / math.sqrt(2))


def change_p_value(before: float, after: float, n_before: int, n_after: int) -> float:
    """Two-sided p of the two-proportion z-test (pooled) for before -> after."""
    return two_proportion_test(before, n_before, after, n_after)[1]


def accuracy_note(before: dict | None, after: dict) -> dict | None:
    """{'intervals': {label: [lo, hi]}, 'p': p or None, 'within_noise': bool, 'text': lines to print};
    None where no accuracy was measured."""
    if after.get("accuracy") is None or not after.get("prompts"):
        return None
    results = {"before": before, "after": after}
    intervals = {label: list(wilson(r["accuracy"], int(r["prompts"]))) for label, r in results.items()
                 if r and r.get("accuracy") is not None and r.get("prompts")}
    n = int(after["prompts"])
    shown = ", ".join(f"{label} {r['accuracy']:.2f} [{intervals[label][0]:.2f}, {intervals[label][1]:.2f}]"
                      for label, r in results.items() if label in intervals)
    lines = [f"accuracy with its 95% interval over {n} prompts (Wilson): {shown}"]
    p = None
    noise = False
    if "before" in intervals:
        change = after["accuracy"] - before["accuracy"]
        p = change_p_value(before["accuracy"], after["accuracy"], int(before["prompts"]), n)
        noise = p >= 0.05
        if noise and n < SMALL:
            lines.append(f"warning: the change in accuracy ({change:+.2f}) is within noise on {n} held-out prompts "
                         f"(two-proportion test p={p:.2f}); hold out more prompts (data.eval_size, before training) "
                         f"or evaluate on a larger set (--eval-source) before reading anything into it")
    elif n < SMALL:
        lines.append(f"warning: {n} held-out prompts measure accuracy in steps of {1 / n:.2f}; hold out more "
                     "(data.eval_size) or pass --eval-source")
    return {"intervals": intervals, "p": p, "within_noise": noise, "text": "\n".join(lines)}
