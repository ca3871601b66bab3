"""Plugin rewards with the bugs users write, for the held-out health cases (benchmarks/zoo/heldout.py).

Each is what a user's first draft of a reward plausibly looks like; none belongs in a real recipe.
"""
from __future__ import annotations

import re

from grpokit.completions import texts
from grpokit.rewards import register


@register("heldout_scores_prompt")
def heldout_scores_prompt(completions, prompts=None, **kwargs):
    """Scores the prompt instead of the completion (the arguments mixed up): every completion of a
    prompt gets the same score, so no group has a spread to learn from."""
    return [min(1.0, len(str(p)) / 200.0) for p in (prompts or [""] * len(completions))]


@register("heldout_first_int")
def heldout_first_int(completions, answer=None, **kwargs):
    """Reads the first integer with `re.search(...).group()`, unguarded: a completion without a digit
    raises AttributeError and takes the whole batch down."""
    golds = answer or [None] * len(completions)
    return [float(int(re.search(r"-?\d+", text).group()) == int(str(gold).strip()))
            for text, gold in zip(texts(completions), golds)]
