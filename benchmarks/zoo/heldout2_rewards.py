"""Plugin rewards with the bugs users write, for the second held-out health set (benchmarks/zoo/heldout2.py).

Each is what a user's first draft of a reward plausibly looks like; none belongs in a real recipe.
"""
from __future__ import annotations

import time

from grpokit.completions import texts
from grpokit.rewards import register


@register("heldout2_wrong_column")
def heldout2_wrong_column(completions, **kwargs):
    """Reads the gold answer from a `solution` column the data does not have (its column is `answer`) and,
    written defensively, returns None where the gold is missing: so on every row."""
    golds = kwargs.get("solution") or [None] * len(completions)
    out = []
    for text, gold in zip(texts(completions), golds):
        out.append(None if gold is None else float(str(gold).strip() in text))
    return out


@register("heldout2_slow_lookup")
def heldout2_slow_lookup(completions, **kwargs):
    """Checks each batch against a slow service (a 3 s round trip, here a sleep) before scoring it:
    the batch takes longer than the reward's timeout every time."""
    time.sleep(3.0)
    return [float(any(ch.isdigit() for ch in text)) for text in texts(completions)]
