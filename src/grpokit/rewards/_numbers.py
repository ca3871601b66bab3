"""Numbers as people and models write them: `1,000`, `$18.50`, `50%`, `1/2`, `\\frac{1}{2}`, `-3`, `2^10`.

The one number reader of the reward library: `numbers_in(text)` finds numbers
with their values; `answer_values(text)` picks the value a completion or a gold
answer commits to. Every reward that reads a number from a completion
(numeric_match, numeric_closeness, the length rewards through them, the probe)
reads it here, after `normalise`, which first puts the text through
`grpokit.rewards._unicode.canonical`: a fullwidth minus is a minus, a zero-width
space is nothing, every space kind is one space.

The rules, one each:
- grouping: digits in groups of three after a group of one to three, joined by
  commas (`1,085`) or by single spaces of any kind (`1 085`, `1\u00a0085`,
  `1\\,085` in LaTeX), are one number (1085). Any other comma or space between
  digits separates two numbers (`1,5` is 1 and 5; `12 3` is 12 and 3).
- powers: `2^10`, `2^{10}`, `2**10`, `10²` are 1024 / 100 (results over 60
  digits are refused); a number written as an exponent or index (`x^2`, `x_2`)
  is not read, nor is a base whose exponent is not a plain integer (`2^x`).
- a number over 60 digits is refused, never cut.

Nothing here raises on model output, and every regex is linear in the text (no
two adjacent quantifiers over the same characters, no `^\\s*` under MULTILINE).
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Iterator

from grpokit.completions import extract_boxed
from grpokit.rewards._unicode import canonical
from grpokit.answer_format import DEFAULT, AnswerFormat

# Only the end of a long completion can hold its answer: the last 20,000 characters are read,
# as math_equivalence's checker reads them (sandbox.mathcheck.MAX_PRED_CHARS). Scanning is
# linear, but each number found costs a match object: 100,000 characters of "-1-1-1..." hold
# 50,000 numbers (0.15-0.25 s); 20,000 hold 10,000 (under 0.05 s).
_MAX_SCAN = 20_000
# Longer digit runs are not answers (and float() of them is slow or inf).
_MAX_DIGITS = 60

# LaTeX that hides a plain number: `10{,}000`, `1\,000` (a thin space: the grouping
# rule above applies to it as to any space), `\$5`, `50\%`, `\frac{1}{2}`.
_LATEX_FRAC = re.compile(r"\\[dt]?frac\s*\{\s*([-+]?[\d.,]+)\s*\}\s*\{\s*([-+]?[\d.,]+)\s*\}")
_LATEX_FRAC_SHORT = re.compile(r"\\[dt]?frac\s*(\d)(\d)")
_REPLACEMENTS = (
    ("{,}", ","), ("\\,", " "), ("\\;", " "), ("\\:", " "), ("\\!", ""), ("\\ ", " "), ("\\$", "$"),
    ("\\%", "%"), ("\\left", ""), ("\\right", ""),
)

_NUMBER = re.compile(
    # Not the tail of a word or number, not an exponent or index (`x^2`, `x^{2}`, `x_{2}`, `x**2`;
    # `**85**` is bold, not a power).
    r"(?<![\w.^])(?<![\^_]\{)(?<!\^ )(?<![\w)]\*\*)"
    r"(?P<num>(?:\d{1,3}(?:(?:,\d{3}(?!\d))+|(?: \d{3}(?!\d))+)|\d+)(?:\.\d+)?|\.\d+)"
    r"(?:[eE](?P<exp>[-+]?\d{1,3})(?![\w]))?"       # 1e5, 2.5E-3
    r"(?:(?=[ \t]*[\^*])"  # only where a power sign follows: the common number pays one lookahead
    r"(?:[ \t]*(?:\^|\*\*)[ \t]*(?:\{[ \t]*(?P<pow>[-+]?\d{1,4})[ \t]*\}|(?P<pow2>[-+]?\d{1,4}))(?![\w{]|\.\d))?"
    r"(?P<caret>[ \t]*\^|\*\*[ \t]*[-+]?\d)?)?"          # a power that is not a plain integer: refused
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
    """Text in its canonical Unicode form (`_unicode.canonical`) with LaTeX number notation made plain."""
    text = canonical(text)
    for old, new in _REPLACEMENTS:
        if old in text:
            text = text.replace(old, new)
    if "frac" in text:
        text = _LATEX_FRAC.sub(r"\1/\2", text)
        text = _LATEX_FRAC_SHORT.sub(r"\1/\2", text)
    return text


# The grouping rule on its own, for text handed to another reader (math-verify): `1 085` -> `1085`.
_SPACE_GROUPS = re.compile(r"(?<![\w.,])\d{1,3}(?: \d{3}(?!\d))+")


def plain_text(text: str) -> str:
    """`text` in canonical Unicode with space-grouped digits joined (`1 085` -> `1085`), as this module reads them.

    For readers that do not go through `numbers_in` (math_equivalence's math-verify),
    so that they read the same number: math-verify reads `1 085` written with a
    no-break space as 85.
    """
    text = canonical(text)
    return _SPACE_GROUPS.sub(lambda m: m.group().replace(" ", ""), text) if " " in text else text


def _value(match: re.Match) -> float | None:
    num, exp, pow1, pow2, caret, den = match.group("num", "exp", "pow", "pow2", "caret", "den")
    if caret:
        return None
    num = num.replace(",", "").replace(" ", "")
    if len(num) > _MAX_DIGITS:
        return None
    try:
        value = float(num)
        if exp:
            value *= 10.0 ** int(exp)
        power = pow1 or pow2
        if power is not None:
            value = _power(value, int(power))
            if value is None:
                return None
        if den:
            divisor = float(den)
            if divisor == 0:
                return None
            value /= divisor
    except (ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def _power(base: float, exponent: int) -> float | None:
    if base == 0:
        return None if exponent < 0 else float(exponent == 0)
    if abs(exponent * math.log10(abs(base))) > _MAX_DIGITS:
        return None
    return base ** exponent


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


def iter_numbers(text: str) -> Iterator[Number]:
    """Every number in `text` (already through `normalise`), in order, found as they are asked for."""
    for match in _NUMBER.finditer(text):
        value = _value(match)
        if value is None:
            continue
        if _negative(text, match.start()):
            value = -value
        yield Number(value, match.start(), bool(match.group("pct")))


def scanned(text: str) -> str:
    """The part of `text` the readers look at: its last 20,000 characters."""
    return text[-_MAX_SCAN:]


def numbers_in(text: str) -> list[Number]:
    """Every number in the last 20,000 characters of `text` (already through `normalise`), in order."""
    return list(iter_numbers(scanned(text)))


def last_number(text: str) -> Number | None:
    """The last number in the last 20,000 characters of `text` (already through `normalise`).

    Only the matches are listed; values are worked out from the end until one reads,
    so a text of 10,000 numbers costs the scan, not 10,000 conversions.
    """
    text = text[-_MAX_SCAN:]
    for match in reversed(list(_NUMBER.finditer(text))):
        value = _value(match)
        if value is not None:
            return Number(-value if _negative(text, match.start()) else value, match.start(), bool(match.group("pct")))
    return None


def first_number(text: str) -> Number | None:
    """The first number in `text` (already through `normalise`); only the text up to it is read."""
    return next(iter_numbers(text[:_MAX_SCAN]), None)


# Phrases that announce the final answer, the last one wins: "The answer is 18",
# "Final answer: $18", GSM8K's "#### 18", and the "A: 18" line of its model solutions.
_ANNOUNCE = re.compile(
    r"####|\bfinal\s+answer\b\**\s*(?:is|was|[:=])?"
    r"|\banswer\b\**\s*(?:is|was|would\s+be|will\s+be|should\s+be|[:=])"
    r"|^[ \t]*A[ \t]*:",  # [ \t], not \s: under MULTILINE `^\s*` rescans a run of newlines from every line
    re.IGNORECASE | re.MULTILINE,
)


def answer_values(text: str, *, prefer_first_in_region: bool = True, fmt: AnswerFormat = DEFAULT) -> Number | None:
    """The number a text commits to, looked for in this order:

    1. the last answer tag (`fmt`: `<answer>...</answer>` by default), 2. the last `\\boxed{...}`,
    3. after the last answer phrase (`#### 18`, `The answer is 18`, `A: 18`),
    4. the last number in the text.

    Only the last 20,000 characters are read. In 1-2 the region decides: a tag or box without a number gives None (the
    model committed to something that is not a number). In 1-3 the first
    number of the region is taken (`18 dollars per 2 days` -> 18).
    """
    if not text or not text.strip():
        return None
    text = canonical(text[-_MAX_SCAN:])
    for region in (fmt.tagged(text), _boxed(text)):
        if region is not None:
            inner = normalise((_boxed(region) if "\\boxed" in region or "\\fbox" in region else region) or "")
            if prefer_first_in_region:
                return first_number(inner)
            return last_number(inner)
    clean = normalise(text)
    announcements = list(_ANNOUNCE.finditer(clean))
    if announcements:
        found = first_number(clean[announcements[-1].end() :][:200])
        if found is not None:
            return found
    return last_number(clean)


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
    gold = str(gold)
    return _short_gold_number(gold) if len(gold) <= _CACHED_GOLD_CHARS else answer_values(gold)


# Every completion of a group (and of every epoch) reads the same gold: a short one (`18`, `$1,000`)
# is read once. A Number is frozen, so the cached one can be shared.
_CACHED_GOLD_CHARS = 200
_short_gold_number = functools.lru_cache(maxsize=8192)(answer_values)


def close(a: Number, b: Number, rel_tol: float, abs_tol: float) -> bool:
    """Do two numbers match within tolerance (a percentage read as written: 50% is 50)?"""
    return any(
        math.isclose(x, y, rel_tol=rel_tol, abs_tol=abs_tol) for x in a.candidates() for y in b.candidates()
    )
