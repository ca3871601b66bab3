"""Which column of a user's file plays which role (prompt, gold answer, tests, ...)."""
from __future__ import annotations

# Column names people use for each role, most common first.
COLUMN_GUESSES = {
    "prompt": ("prompt", "question", "problem", "input", "instruction", "query", "document", "article", "text"),
    "answer": ("answer", "solution", "output", "target", "label", "gold", "response"),
    "tests": ("tests", "test", "test_code", "test_list", "test_cases"),
    "reference": ("reference", "summary", "highlights", "target", "abstract"),
    "schema": ("schema", "json_schema"),
    "sources": ("sources", "documents", "context", "passages", "docs", "references"),
}


def guess_column(available: list[str], role: str) -> str | None:
    """The first of `available` (case-insensitive) that is a usual name for `role`, or None."""
    lowered = {c.lower(): c for c in available}
    for candidate in COLUMN_GUESSES[role]:
        if candidate in lowered:
            return lowered[candidate]
    return None
