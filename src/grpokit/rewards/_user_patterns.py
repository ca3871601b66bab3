"""Regular expressions written by a user or a data set, matched against completions in bounded time.

A pattern from a config (`regex_format`) or from a row's JSON schema (`pattern`,
`patternProperties`) may backtrack catastrophically: a common e-mail regex takes
Python's `re` seconds on 26 characters, and `re` holds the interpreter lock the whole
time, so nothing else in the process (the watchdog included) runs meanwhile. These
patterns run on the `regex` module instead, which takes a `timeout` (it counts CPU time
spent matching, so a loaded machine stretches it in wall time). Each completion gets one
budget for all of its matches (`budget()`); a match the budget cannot finish counts as
no match, so text that blows up a pattern is never paid as if it matched. The lock is
held for at most the budget; releasing it on every match (`concurrent=True`) would cost
more than it saves on matches this short.
"""
from __future__ import annotations

import threading
import time

import regex

# Seconds of pattern matching one completion may cost, all its matches together.
BUDGET_S = 0.03

_local = threading.local()


class PatternError(ValueError):
    """A pattern the matcher cannot compile; the message names it and why."""


def compile_pattern(pattern: str) -> "regex.Pattern":
    """`pattern` compiled for bounded matching (the `regex` module, `re`-compatible syntax)."""
    try:
        return regex.compile(pattern, flags=regex.VERSION0)
    except (regex.error, TypeError, ValueError, OverflowError, RecursionError) as exc:
        raise PatternError(f"{pattern!r} is not a valid regular expression ({exc})") from None


class budget:
    """`with budget():` the matches inside share `seconds` of matching time (one completion's budget)."""

    __slots__ = ("seconds", "previous")

    def __init__(self, seconds: float = BUDGET_S):
        self.seconds = seconds

    def __enter__(self) -> None:
        self.previous = getattr(_local, "deadline", None)
        _local.deadline = time.monotonic() + self.seconds

    def __exit__(self, *exc) -> None:
        _local.deadline = self.previous


def _remaining() -> float:
    deadline = getattr(_local, "deadline", None)
    return BUDGET_S if deadline is None else deadline - time.monotonic()


def search(pattern: "str | regex.Pattern", text: str) -> bool:
    """Does `pattern` match somewhere in `text` (jsonschema's `pattern` semantics)? False when the
    budget runs out first, or when the pattern does not compile."""
    return _run(pattern, text, "search")


def fullmatch(pattern: "str | regex.Pattern", text: str) -> bool:
    """Does `pattern` match the whole of `text`? False when the budget runs out first."""
    return _run(pattern, text, "fullmatch")


def _run(pattern, text: str, how: str) -> bool:
    left = _remaining()
    if left <= 0:
        return False
    try:
        compiled = pattern if isinstance(pattern, regex.Pattern) else compile_pattern(pattern)
        return getattr(compiled, how)(text, timeout=left) is not None
    except (TimeoutError, PatternError):
        return False
