"""restated_expression: a stepping stone from a question asked in words to the sum it asks for.

A small model that can finish `47 + 38 =` may still not answer "Find the total of
47 and 38." on its own: nothing it writes there is ever right, so GRPO has nothing to
learn from. Paying it for first writing the expression (`47 + 38 =`), which it does now
and then by copying the question's numbers, gives the signal that carries its skill on
one prompt shape over to others. Measured in benchmarks/learning.py (the `restate` arm).
"""
from __future__ import annotations

import re

from grpokit.completions import texts
from grpokit.rewards.correctness import _check_column, _golds
from grpokit.rewards.registry import RewardConfigError, register
from grpokit.rewards._bound import BatchReward
from grpokit.rewards._unicode import canonical

_SPACES = re.compile(r"\s+")


@register("restated_expression", aliases=("restates_expression",), family="format")
def restated_expression(column: str = "expression", then: str = "=", either_order: bool = True):
    """1.0 when the completion's first line writes the row's expression followed by `then`, else 0.0.

    For prompts that ask for a computation in words: the model is paid for
    stating what it computes (`Find the total of 47 and 38.` -> `47 + 38 = 85`)
    before its answer, the shape on which a small model already adds well.
    Spacing is ignored (`47+38=` counts), and the line is read in its canonical
    Unicode form (fullwidth digits, any minus sign); with `either_order` (default true) the
    two sides of a single `+` or `*` may be swapped (`38 + 47 =`). The
    expression must come first on the line, so copying it after an answer
    earns nothing. Pair it with a correctness reward at a higher weight: on its
    own it pays a wrong result as well as a right one.

    Parameters:
      column: the column that holds the expression (default `expression`,
        which `synthetic:addition` and `synthetic:arithmetic` provide).
      then: the text that must follow the expression (default `=`; empty:
        the expression alone is enough).
      either_order: accept `b + a` for `a + b` (default true).

    Columns: `expression` (or `column`). None for a row whose cell is empty.
    """
    _check_column("restated_expression", column)
    if not isinstance(then, str):
        raise RewardConfigError(f"restated_expression: then must be text such as '=', got {then!r}")
    if not isinstance(either_order, bool):
        raise RewardConfigError(f"restated_expression: either_order must be true or false, got {either_order!r}")
    return BatchReward("restated_expression", _score, column=column, then=_compact(then), either_order=either_order)


def _compact(text: str) -> str:
    return _SPACES.sub("", text)


def _forms(expression: str, either_order: bool) -> list[str]:
    """The expression as written, and swapped around a lone commutative operator."""
    compact = _compact(expression)
    forms = [compact]
    for op in "+*":
        parts = compact.split(op)
        if either_order and len(parts) == 2 and all(parts) and not any(c in compact for c in "()-/"):
            forms.append(op.join(reversed(parts)))
    return forms


def _score(completions, kwargs: dict, column: str, then: str, either_order: bool) -> list[float | None]:
    expressions = _golds("restated_expression", column, completions, kwargs, what="expressions")
    out: list[float | None] = []
    for text, expression in zip(texts(completions), expressions):
        if expression is None or not str(expression).strip():
            out.append(None)
            continue
        first_line = _compact(canonical(text.lstrip().split("\n", 1)[0][:10_000]))
        starts = (form + then for form in _forms(str(expression), either_order))
        out.append(1.0 if any(first_line.startswith(prefix) for prefix in starts) else 0.0)
    return out
