"""Rows whose gold answer is empty or unparsable (None after `reduce_answer`).

Rewards return None for them (nothing to compare against), so TRL skips them
and they train nothing. A few are harmless; many mean a wrong answer_column or
a broken export. `load_data` refuses them under `data.require_answers: true`;
`grpokit doctor` and the start of training report how many there are.
"""
from __future__ import annotations

from typing import Sequence

SHOWN_ROWS = 5


def missing_rows(answers: Sequence) -> list[int]:
    """0-based positions of rows without a usable gold answer."""
    return [i for i, a in enumerate(answers) if a is None]


def refusal(source: str, column: str, rows: list[int], total: int) -> str:
    """The error for data.require_answers: which rows (1-based, after the header) and what to change."""
    shown = ", ".join(str(r + 1) for r in rows[:SHOWN_ROWS]) + (", ..." if len(rows) > SHOWN_ROWS else "")
    return (f"{source}: {len(rows)} of {total} rows have an empty or unparsable gold answer in column `{column}` "
            f"(data rows {shown}, counted from 1 after any header); fill them in or drop those rows, "
            "or set data.require_answers: false to train with them unscored")


def summary(*datasets) -> str | None:
    """'N of M rows ...' over the loaded (train, eval) sets, or None when every row has a gold answer."""
    sets = [d for d in datasets if d is not None and "answer" in d.column_names]
    if not sets:
        return None
    missing = sum(len(missing_rows(d["answer"])) for d in sets)
    total = sum(len(d) for d in sets)
    if not missing:
        return None
    return (f"{missing} of {total} rows have an empty or unparsable gold answer; rewards cannot score them, "
            "so they train nothing (set data.require_answers: true to stop on them, or fix data.answer_column)")
