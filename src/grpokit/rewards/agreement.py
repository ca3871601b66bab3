"""Does a reward agree with human labels? Measured, judged weak or not, and explained.

Labels are "is this completion good?" per sample: true/false (or yes/no,
correct/incorrect, 1/0), or a number such as a 1-5 grade. With true/false
labels the measure is the AUC: how often a labelled-correct sample scores above
a labelled-wrong one (ties count half). It does not depend on where the score
is cut or on how many samples are correct, unlike accuracy. With graded labels
it is the Pearson correlation.

A correctness reward (registry family "correctness") is expected to agree with
labels that say which answers are right; when it does not, `debug_reward`
reports an error. Other rewards (format, length, style) judge something else,
so their weak agreement is only a warning.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

# A correctness reward below this AUC ranks a right answer above a wrong one
# less than 3 times in 4 (0.5 is chance). Correctness rewards on real labelled
# math answers score 0.89-0.99 (benchmarks/math_timeouts.py data, tests/rewards/test_debug.py).
WEAK_AUC = 0.75
WEAK_CORRELATION = 0.3  # graded labels: below this, scores follow the grades only loosely
MIN_LABELLED = 4  # fewer labelled rows than this say nothing about agreement
STRICT_FAMILIES = frozenset({"correctness"})

_CHECKS = (
    "Check: (1) the answer column holds each row's final answer, aligned with its completion (not the full "
    "solution, not another column); (2) the reward's extractor finds the answer in these completions (the "
    "format it expects: <answer> tags, \\boxed{}, a final number); (3) the reward is not too lenient (loose "
    "tolerance, partial credit, any number in the text counts) or too strict (exact string match on answers "
    "written another way)."
)


@dataclass
class Agreement:
    rows: int  # labelled rows with a finite score
    correlation: float | None
    accuracy: float | None  # true/false labels: share on the right side of the midpoint score
    auc: float | None  # true/false labels only
    weak: bool
    binary: bool


def numeric_labels(labels: list) -> list[float | None]:
    """Labels as numbers: true/yes/correct -> 1, false/no/incorrect -> 0, numbers as they are, else None."""
    words = {"true": 1.0, "false": 0.0, "yes": 1.0, "no": 0.0, "correct": 1.0, "incorrect": 0.0}
    out: list[float | None] = []
    for label in labels:
        value = None
        if isinstance(label, str):
            value = words.get(label.strip().lower())
            if value is None:
                try:
                    value = float(label)
                except ValueError:
                    pass
        elif isinstance(label, (bool, int, float)):
            value = float(label)
        out.append(value if value is not None and math.isfinite(value) else None)
    return out


def pearson(xs: list[float], ys: list[float]) -> float | None:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / math.sqrt(sxx * syy)


def auc(positive: list[float], negative: list[float]) -> float:
    """P(a positive outscores a negative), ties counted half; by ranks, so large sets stay fast."""
    ranked = sorted([(x, 1) for x in positive] + [(x, 0) for x in negative])
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        mean_rank = (i + 1 + j) / 2  # tied scores share the mean of their ranks
        rank_sum += mean_rank * sum(flag for _, flag in ranked[i:j])
        i = j
    p, n = len(positive), len(negative)
    return (rank_sum - p * (p + 1) / 2) / (p * n)


def _pairs(scores: list, labels: list) -> list[tuple[int, float, float]]:
    return [(i, s, l) for i, (s, l) in enumerate(zip(scores, labels))
            if s is not None and math.isfinite(s) and l is not None]


def measure(scores: list, labels: list[float | None]) -> Agreement | None:
    """Agreement of `scores` with numeric `labels`; None when too few labelled rows or one label value."""
    pairs = _pairs(scores, labels)
    ys = {l for _, _, l in pairs}
    if len(pairs) < MIN_LABELLED or len(ys) < 2:
        return None
    xs = [s for _, s, _ in pairs]
    r = pearson(xs, [l for _, _, l in pairs])
    if ys <= {0.0, 1.0}:
        cut = (max(xs) + min(xs)) / 2
        accuracy = sum((s > cut) == (l == 1.0) for _, s, l in pairs) / len(pairs) if max(xs) > min(xs) else None
        area = auc([s for _, s, l in pairs if l == 1.0], [s for _, s, l in pairs if l == 0.0])
        return Agreement(len(pairs), r, accuracy, area, area < WEAK_AUC, True)
    # A constant score (r undefined) follows no grade at all.
    return Agreement(len(pairs), r, None, None, r is None or r < WEAK_CORRELATION, False)


def judges_correctness(name: str) -> bool:
    """True for a registered reward of a family that must agree with correctness labels."""
    from grpokit.rewards import registry

    for candidate in (name, re.sub(r"_\d+$", "", name)):  # a repeated reward is named x_2 (RewardSet's names)
        try:
            return registry.family(candidate) in STRICT_FAMILIES
        except (KeyError, ValueError):  # not a registered name: a plain callable, or a repeat's suffix
            continue
    return False


def _rows_text(rows: list[int], limit: int = 8) -> str:
    shown = ", ".join(str(r) for r in rows[:limit])
    return f"rows {shown}" + (", ..." if len(rows) > limit else "")


def explain(agreement: Agreement, scores: list, labels: list[float | None], strict: bool) -> tuple[str, list[int]]:
    """(message, disagreeing rows) for a weak agreement: what was measured, what it means, what to check."""
    pairs = _pairs(scores, labels)
    xs = [s for _, s, _ in pairs]
    if agreement.binary:
        correct = [(i, s) for i, s, l in pairs if l == 1.0]
        wrong = [(i, s) for i, s, l in pairs if l == 0.0]
        head = (f"separates labelled-correct from labelled-wrong samples poorly: AUC {agreement.auc:.2f} on "
                f"{agreement.rows} rows ({len(correct)} correct, {len(wrong)} wrong), i.e. it scores a correct "
                f"sample above a wrong one {agreement.auc:.0%} of the time (0.5 is chance; below {WEAK_AUC} is weak).")
    else:
        r = "undefined" if agreement.correlation is None else f"{agreement.correlation:.2f}"
        head = (f"follows the graded labels poorly: correlation r={r} on {agreement.rows} rows "
                f"(below {WEAK_CORRELATION} is weak).")
    rows: list[int] = []
    missed: list[int] = []
    passed: list[int] = []
    if agreement.binary and max(xs) > min(xs):
        cut = (max(xs) + min(xs)) / 2
        missed = [i for i, s in correct if s <= cut]
        passed = [i for i, s in wrong if s > cut]
        rows = sorted(missed + passed)
    if max(xs) == min(xs):
        why = (f"It gives {xs[0]:g} to every labelled sample, good or bad: if that is its lowest score, it finds no "
               "answer in these completions or the answer column does not match them; if its highest, it accepts anything.")
    elif (agreement.auc is not None and agreement.auc < 0.4) or (agreement.correlation or 0.0) < -0.1:
        why = "Worse samples score higher: is its sign flipped, or are the labels inverted?"
    elif agreement.binary:
        parts = []
        if missed:
            parts.append(f"{len(missed)} of {len(correct)} labelled-correct samples score low ({_rows_text(missed)}): "
                         "too strict, or its extractor misses the answer")
        if passed:
            parts.append(f"{len(passed)} of {len(wrong)} labelled-wrong samples score high ({_rows_text(passed)}): "
                         "too lenient")
        why = "; ".join(parts) + "." if parts else "Its scores overlap between correct and wrong samples."
    else:
        why = "Its scores barely move with the grades."
    if strict:
        what = ("A correctness reward that disagrees with your labels trains the model toward the wrong answers "
                "or toward nothing.")
        return f"{head} {why} {what} {_CHECKS}", rows
    note = ("This is not a correctness reward: if `label` judges correctness and this reward judges something "
            "else (format, length, style), that is expected; if it should agree, check the columns it reads.")
    return f"{head} {why} {note}", rows
