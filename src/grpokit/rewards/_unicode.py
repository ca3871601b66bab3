"""One Unicode reading of model output, before any reward reads a number, a token or a letter from it.

A policy can write the same visible text in many code points: a fullwidth
minus `－85`, an en dash, a no-break or thin space inside `1 085`, a zero-width
space inside `8\u200b5`, fullwidth digits `８５`. Each reward that compared
code points read those differently (`－85` as 85, `8\u200b5` as 8). `canonical`
maps every such variant onto its ASCII form, so whatever reads the text after
it sees what a person sees:

- format characters (Unicode category Cf: zero-width space/joiners, word
  joiner, BOM, soft hyphen, bidi marks) are removed;
- every dash and minus sign (category Pd, U+2212 and its relatives) is `-`;
- every space character (category Zs: no-break, thin, narrow no-break,
  figure, ideographic...) is an ASCII space; tabs and line breaks stay as
  they are (they are not spaces inside a number);
- superscript digits are a power (`10²` -> `10^{2}`), subscript digits an index
  (`x₂` -> `x_{2}`), vulgar fractions a fraction (`3½` -> `7/2`);
- then NFKC (fullwidth digits and letters, ligatures).

ASCII text is returned unchanged at the cost of one `str.isascii()`, so honest
English output pays nothing. Everything here is linear in the text.
"""
from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from fractions import Fraction

_MINUS_LIKE = "\u2212\u02d7\u2796\ufe63\uff0d\u207b\u208b"


@functools.cache
def _table() -> dict[int, str | None]:
    # Built on the first non-ASCII text, not at import. Planes 0, 1 and 14 hold every
    # format, dash and space character (plane 14: the invisible tag characters).
    table: dict[int, str | None] = {}
    for code in itertools.chain(range(128, 0x20000), range(0xE0000, 0xE1000)):
        cat = unicodedata.category(chr(code))
        if cat == "Cf":
            table[code] = None
        elif cat == "Pd":
            table[code] = "-"
        elif cat == "Zs":
            table[code] = " "
    for ch in _MINUS_LIKE:
        table[ord(ch)] = "-"
    return table


_SUPER = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_SUB = "₀₁₂₃₄₅₆₇₈₉"
_SUPER_RUN = re.compile("[" + _SUPER + "⁺⁻]+")
_SUB_RUN = re.compile("[" + _SUB + "₊₋]+")
_SCRIPT_DIGITS = str.maketrans(_SUPER + _SUB + "⁺⁻₊₋", "0123456789" * 2 + "+-+-")
_VULGAR = "¼½¾⅐⅑⅒⅓⅔⅕⅖⅗⅘⅙⅚⅛⅜⅝⅞"
# A mixed number: digits written straight before the fraction belong to it (`3½` is 3.5, not 31/2).
_VULGAR_RUN = re.compile(r"(\d*)([" + _VULGAR + "])")


def _fraction(match: re.Match) -> str:
    if len(match.group(1)) > 60:
        return match.group(1) + "?"  # no number that long is read; keep it one
    part = Fraction(unicodedata.numeric(match.group(2))).limit_denominator(10)
    whole = int(match.group(1)) if match.group(1) else 0
    value = whole + part
    return f"{value.numerator}/{value.denominator}"


def canonical(text: str) -> str:
    """`text` with every Unicode spelling of a digit, sign, space and dash in its ASCII form (see the module)."""
    if text.isascii():
        return text
    text = text.translate(_table())
    if any(c in text for c in _SUPER + "⁺⁻"):
        text = _SUPER_RUN.sub(lambda m: "^{" + m.group().translate(_SCRIPT_DIGITS) + "}", text)
    if any(c in text for c in _SUB + "₊₋"):
        text = _SUB_RUN.sub(lambda m: "_{" + m.group().translate(_SCRIPT_DIGITS) + "}", text)
    if any(c in text for c in _VULGAR):
        text = _VULGAR_RUN.sub(_fraction, text)
    text = unicodedata.normalize("NFKC", text)
    # NFKC writes U+2044 FRACTION SLASH in some compatibility forms and can bring back
    # code points the table maps (e.g. a compatibility minus): one more pass settles them.
    return text.replace("\u2044", "/").translate(_table()) if not text.isascii() else text
