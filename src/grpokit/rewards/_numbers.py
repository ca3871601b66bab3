"""Numbers as people and models write them: `1,000`, `$18.50`, `50%`, `1/2`, `\\frac{1}{2}`, `-3`.

`numbers_in(text)` finds them with their values; `answer_values(text)` picks
the value a completion or a gold answer commits to. Nothing here raises on
model output.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from grpokit.completions import extract_boxed
from grpokit.rewards.answer_format import DEFAULT, AnswerFormat

# Scanning is linear, but only the end of a long completion can hold its answer.
_MAX_SCAN = 100_000
# Longer digit runs are not answers (and float() of them is slow or inf).
_MAX_DIGITS = 60

# LaTeX and typography that hide a plain number: `10{,}000`, `1\,000`, `\$5`,
# `50\%`, `\frac{1}{2}`, `\text{ cm}`, Unicode minus.
_LATEX_FRAC = re.compile(r"\\[dt]?frac\s*\{\s*([-+]?[\d.,]+)\s*\}\s*\{\s*([-+]?[\d.,]+)\s*\}")
_LATEX_FRAC_SHORT = re.compile(r"\\[dt]?frac\s*(\d)(\d)")
_REPLACEMENTS = (
    ("{,}", ","), ("\\,", ""), ("\\!", ""), ("\\ ", " "), ("\\$", "$"), ("\\%", "%"),
    ("−", "-"), ("–", "-"), ("\u2009", ""), ("\u202f", ""), ("\\left", ""), ("\\right", ""),
)

_NUMBER = re.compile(
    r"(?<![\w.])"                                   # not the tail of a word or of another number
    r"(?P<num>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)"
    r"(?:[eE](?P<exp>[-+]?\d{1,3})(?![\w]))?"       # 1e5, 2.5E-3
    r"(?:\s*/\s*(?P<den>\d+(?:\.\d+)?)(?![\d/]))?"  # 1/2 (but not dates like 1/2/2020)
    r"(?P<pct>\s*(?:%|percent\b|per\s*cent\b))?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Number:
    """One number found in text: its value, where it starts, and whether it was a percentage."""

    value: float
    start: int
    percent: bool = False

    def candidates(self) -> tuple[float, ...]:
        # One reading only: "50%" is 50, the number as written, so it matches a gold
        # written 50 or 50%. Accepting 0.5 as well would let one answer hedge over two
        # golds (5000% would match both 50 and 5000).
        return (self.value,)


def normalise(text: str) -> str:
    """Text with LaTeX number notation turned into plain notation."""
    for old, new in _REPLACEMENTS:
        if old in text:
            text = text.replace(old, new)
    if "frac" in text:
        text = _LATEX_FRAC.sub(r"\1/\2", text)
        text = _LATEX_FRAC_SHORT.sub(r"\1/\2", text)
    return text


def _value(match: re.Match) -> float | None:
    num = match.group("num").replace(",", "")
    if len(num) > _MAX_DIGITS:
        return None
    try:
        value = float(num)
        if match.group("exp"):
            value *= 10.0 ** int(match.group("exp"))
        if match.group("den"):
            den = float(match.group("den"))
            if den == 0:
                return None
            value /= den
    except (ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def _negative(text: str, start: int) -> bool:
    # A minus sign right before the digits, not a subtraction: "= -3", "(-3)",
    # "is -3", but not "16-3" or "x - 3" (an operator between two terms).
    i = start - 1
    if i >= 0 and text[i] == "$":
        i -= 1
    if i < 0 or text[i] != "-":
        return False
    before = text[max(0, i - 2) : i].rstrip()
    return not before or not (before[-1].isalnum() or before[-1] in ")]}")


def numbers_in(text: str) -> list[Number]:
    """Every number in `text` (already through `normalise`), in order."""
    found = []
    for match in _NUMBER.finditer(text[-_MAX_SCAN:]):
        value = _value(match)
        if value is None:
            continue
        if _negative(text[-_MAX_SCAN:], match.start()):
            value = -value
        found.append(Number(value, match.start(), bool(match.group("pct"))))
    return found


# Phrases that announce the final answer, the last one wins: "The answer is 18",
# "Final answer: $18", GSM8K's "#### 18", and the "A: 18" line of its model solutions.
_ANNOUNCE = re.compile(
    r"####|\bfinal\s+answer\b\**\s*(?:is|was|[:=])?"
    r"|\banswer\b\**\s*(?:is|was|would\s+be|will\s+be|should\s+be|[:=])"
    r"|^\s*A\s*:",
    re.IGNORECASE | re.MULTILINE,
)


def answer_values(text: str, *, prefer_first_in_region: bool = True, fmt: AnswerFormat = DEFAULT) -> Number | None:
    """The number a text commits to, looked for in this order:

    1. the last answer tag (`fmt`: `<answer>...</answer>` by default), 2. the last `\\boxed{...}`,
    3. after the last answer phrase (`#### 18`, `The answer is 18`, `A: 18`),
    4. the last number in the text.

    In 1-2 the region decides: a tag or box without a number gives None (the
    model committed to something that is not a number). In 1-3 the first
    number of the region is taken (`18 dollars per 2 days` -> 18).
    """
    if not text or not text.strip():
        return None
    text = text[-_MAX_SCAN:]
    for region in (fmt.tagged(text), _boxed(text)):
        if region is not None:
            inner = _boxed(region) if "\\boxed" in region or "\\fbox" in region else region
            numbers = numbers_in(normalise(inner or ""))
            if not numbers:
                return None
            return numbers[0] if prefer_first_in_region else numbers[-1]
    clean = normalise(text)
    announcements = list(_ANNOUNCE.finditer(clean))
    if announcements:
        tail = clean[announcements[-1].end() :]
        numbers = numbers_in(tail[:200])
        if numbers:
            return numbers[0]
    numbers = numbers_in(clean)
    return numbers[-1] if numbers else None


def _boxed(text: str) -> str | None:
    if "\\boxed" not in text and "\\fbox" not in text:
        return None
    return extract_boxed(text)


def gold_number(gold) -> Number | None:
    """The gold answer's number (an int/float column, `#### 18`, `18`, `$1,000`, a worked solution)."""
    if isinstance(gold, bool) or gold is None:
        return None
    if isinstance(gold, (int, float)):
        return Number(float(gold), 0) if math.isfinite(gold) else None
    return answer_values(str(gold))


def close(a: Number, b: Number, rel_tol: float, abs_tol: float) -> bool:
    """Do two numbers match within tolerance (a percentage read as written: 50% is 50)?"""
    return any(
        math.isclose(x, y, rel_tol=rel_tol, abs_tol=abs_tol) for x in a.candidates() for y in b.candidates()
    )
