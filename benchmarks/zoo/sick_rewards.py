"""Rewards that make a run sick in one known way, for the health zoo's cases.

Imported through a case config's `imports:`; each is a plain TRL-style batch reward.
They are deliberately bad: none belongs in a real recipe.
"""
from __future__ import annotations

from grpokit.completions import texts
from grpokit.rewards import register


@register("zoo_constant")
def zoo_constant(completions, **kwargs):
    """1.0 for everything: every group scores alike, so GRPO has no signal to learn from."""
    return [1.0 for _ in completions]


@register("zoo_length_hack")
def zoo_length_hack(completions, **kwargs):
    """Pays characters written (capped at 1.0 for 200): a reward the model games by talking longer."""
    return [min(1.0, len(text) / 200.0) for text in texts(completions)]


@register("zoo_fixed_string")
def zoo_fixed_string(completions, **kwargs):
    """Pays one fixed answer, "1", whatever the question: the model learns to write it and nothing else.

    Graded (the shorter a completion that starts with 1, the more it pays), so the groups keep a spread
    until every completion is exactly "1": a flat "starts with 1" pays most samples alike at once and
    freezes the model with varied answers instead of collapsing it."""
    return [1.0 / len(text.strip()) if text.strip().startswith("1") else 0.0 for text in texts(completions)]


def _half(completions):
    # Every other row: TRL repeats each prompt num_generations times in a row, so half of every group.
    return [i % 2 == 1 for i in range(len(completions))]


@register("zoo_half_none")
def zoo_half_none(completions, **kwargs):
    """Scores only half the rows (None for the rest), as a reward that cannot parse half its gold answers."""
    return [None if skip else float(text.strip()[:1].isdigit())
            for skip, text in zip(_half(completions), texts(completions))]


@register("zoo_half_raises")
def zoo_half_raises(completions, **kwargs):
    """Raises on any batch holding a row it cannot handle (half the rows), as a plugin with a bug."""
    for skip in _half(completions):
        if skip:
            raise ValueError("zoo_half_raises: cannot score this row")
    return [1.0 for _ in completions]
