"""Gold answers, normalising answers for comparison, and the multiple-choice letter.

Shared by the string-based correctness rewards (exact, fuzzy, contains,
multiple choice). Where a completion's answer is (its tag, `\\boxed{}`) is the
answer format's to say: grpokit.answer_format. Nothing here raises on
model output.
"""
from __future__ import annotations

import functools
import re

from grpokit.rewards._unicode import canonical
from grpokit.answer_format import DEFAULT, AnswerFormat

_MAX_TEXT = 100_000
_WHITESPACE_RUN = re.compile(r"\s{2,}")


def gold_text(gold) -> str | None:
    """A gold answer as text (GSM8K `#### N` unwrapped); None when there is none."""
    if gold is None or isinstance(gold, bool):
        return None
    text = str(gold)
    if "####" in text:
        text = text.rsplit("####", 1)[1]
    text = text.strip()
    return text or None


def gold_options(gold) -> list[str] | None:
    """Every acceptable gold answer: a list/tuple column holds several; None when none is usable."""
    values = gold if isinstance(gold, (list, tuple)) else [gold]
    options = [t for t in (gold_text(v) for v in values) if t is not None]
    return options or None


# Both patterns open with the character they remove, not with a lookbehind, so that `re` can
# skip ahead to the next candidate: led by the lookbehind they tried every position (6-17x slower).
_THOUSANDS = re.compile(r",(?<=\d,)(?=\d{3}(?!\d))")
# Between two letters these are spelling, not meaning: U.S. = US, don't = dont, well-known = wellknown.
_IN_WORD = re.compile(r"[.'’`-](?<=[^\W\d_][.'’`-])(?=[^\W\d_])")
# Punctuation that only wraps a token or ends a sentence: quotes, brackets, emphasis, `$` of
# LaTeX and money, sentence marks, `%` (50% is 50, as numeric_match reads it). Nothing else is
# dropped: a symbol that belongs to a token (C++, C#, A+, 2^10, 1,5, 16-3) makes another answer.
_WRAP_LEAD = "\"'`“”‘’«»([{*_~$"
_WRAP_TRAIL = "”’»)]}$.,;:!?…%"
# Marks that close a token only when they opened it (emphasis, straight quotes): **Paris** and
# 'Paris' are Paris, but A* is not A and f' is not f. An answer wrapped whole in one loses it first.
_EMPHASIS = "*_~'\"`"
_EMPHASIS_SET = frozenset(_EMPHASIS)


# Leading wrappers; a sign or point stays when a number follows it (-5, +5, .5, -.5).
_LEAD = re.compile("(?:[" + re.escape(_WRAP_LEAD) + r"]|[-+.](?!\.?\d))*")
_LEAD_CHARS = frozenset(_WRAP_LEAD + "-+.")


def _bare(token: str) -> str:
    if token[0] not in _LEAD_CHARS:  # most tokens that are not alphanumeric only end in a mark: "5.", "clips,"
        return token.rstrip(_WRAP_TRAIL)
    # One anchored regex, not token[1:] in a loop, which copies the token each time
    # (quadratic on "-" * 100_000).
    lead = _LEAD.match(token).end()
    opened = lead and not _EMPHASIS_SET.isdisjoint(token[:lead])
    return token[lead:].rstrip(_WRAP_TRAIL + _EMPHASIS if opened else _WRAP_TRAIL)


def tokens(text: str, *, case_sensitive: bool = False, ignore_punctuation: bool = True) -> list[str]:
    """The answer's tokens (whitespace-separated), as `normalise` compares them."""
    text = canonical(text)
    if "," in text:
        text = _THOUSANDS.sub("", text)
    if not case_sensitive:
        text = text.casefold()
    if not ignore_punctuation:
        return text.split()
    text = _IN_WORD.sub("", text).strip()
    i, j = 0, len(text)
    while j - i > 1 and text[i] == text[j - 1] and text[i] in _EMPHASIS:  # indices: no copy per mark
        i, j = i + 1, j - 1
    text = text[i:j]
    # Most tokens are plain words or numbers and need no stripping.
    return [t for t in [t if t.isalnum() else _bare(t) for t in text.split()] if t]


def normalise(text: str, *, case_sensitive: bool = False, ignore_punctuation: bool = True,
              ignore_whitespace: bool = False) -> str:
    """Text for comparison: its tokens, joined by one space (or by nothing with `ignore_whitespace`).

    Always: the canonical Unicode form (`_unicode.canonical`: NFKC, every dash a
    `-`, every space kind a space, zero-width characters gone), thousands
    separators dropped (`1,000` -> `1000`), whitespace runs collapsed, ends
    stripped. Then: case folded unless `case_sensitive`. With
    `ignore_punctuation`, each token loses the punctuation that only wraps or
    ends it (quotes, brackets, `**`, `$`, a final `.`/`,`/`!`/`?`, `%`) and the
    `.`/`'`/`-` between two letters (U.S. = US); every other symbol stays, since
    it makes a different answer: `C++` is not `C`, `A+` not `A`, `2^10` not
    `210`, `1,5` not `15`, `3.5` not `35`, `-5` not `5`. With
    `ignore_whitespace` the tokens are joined with nothing (`1 000` = `1000`).
    """
    if len(text) <= _CACHED_CHARS:
        return _normalise_short(text, case_sensitive, ignore_punctuation, ignore_whitespace)
    return _normalise(text, case_sensitive, ignore_punctuation, ignore_whitespace)


def _normalise(text: str, case_sensitive: bool, ignore_punctuation: bool, ignore_whitespace: bool) -> str:
    parts = tokens(text, case_sensitive=case_sensitive, ignore_punctuation=ignore_punctuation)
    return ("" if ignore_whitespace else " ").join(parts)


# A gold answer is normalised once for every completion of its group (and every epoch): short
# texts are cached, long ones (completions) are not kept.
_CACHED_CHARS = 200
_normalise_short = functools.lru_cache(maxsize=8192)(_normalise)


# ------------------------------------------------------------ multiple choice

def choice_pattern(letters: str) -> str:
    return "[" + re.escape(letters) + re.escape(letters.lower()) + "]"


def gold_letter(gold, letters: str) -> str | None:
    """The gold option letter: `C`, `(C)`, `C) text`, `c`, or a 0-based index."""
    if isinstance(gold, bool) or gold is None:
        return None
    if isinstance(gold, int):
        return letters[gold] if 0 <= gold < len(letters) else None
    text = canonical(str(gold)).strip()
    if "####" in text:
        text = text.rsplit("####", 1)[1].strip()
    match = re.match(r"^[(\[*\s]*(" + choice_pattern(letters) + r")(?![A-Za-z])", text)
    return match.group(1).upper() if match else None


def chosen_letter(text: str, letters: str, fmt: AnswerFormat = DEFAULT) -> str | None:
    """The option letter a completion commits to, or None.

    Looked for in this order: the answer tag (`fmt`) / `\\boxed{}` content; the
    last "answer is (C)" / "Answer: C" / "option C" phrase; a completion that
    is only a letter ("C", "(C)", "C)", "**C**", "C. Paris"); the last
    bracketed or bolded letter "(C)" / "**C**". A bare capital in a sentence
    ("A good start") never counts.
    """
    text = canonical(text[-_MAX_TEXT:])
    cls = choice_pattern(letters)
    up = "[" + re.escape(letters) + "]"
    region = fmt.marked(text)
    if region is not None:
        found = _lone_letter(region, cls)
        if found:
            return found
    # Every gap is bounded ({0,12}): three unbounded \s* in a row made a run of
    # whitespace after "answer is" cubic (20,000 newlines: minutes).
    phrase = re.compile(
        r"(?:answer|option|choice)\b[^A-Za-z0-9\n]{0,12}(?:is|would\s{1,12}be|will\s{1,12}be|should\s{1,12}be|:)?"
        r"\s{0,12}(?:(?:option|choice)\s{0,12})?[(\[*\s]{0,12}(" + up + r")(?![A-Za-z])",
        re.IGNORECASE,
    )
    # The phrase has several quantifiers that all take whitespace in a row; on a long run of
    # spaces after "answer" they split it every possible way (500 spaces took 17 s). With
    # each run cut to one character (a newline if it held one) there is one way, and the
    # letter read is the same.
    squeezed = _WHITESPACE_RUN.sub(lambda m: "\n" if "\n" in m.group() else " ", text)
    matches = [m for m in phrase.finditer(squeezed) if m.group(1) in letters]
    if matches:
        return matches[-1].group(1).upper()
    # A completion that opens with a letter ("C) Paris because...") chose it,
    # unless it goes on to list the options ("A) 3 B) 4 C) 5 ..."): two or
    # more other option markers make it a list, one is a reference ("(A) is wrong").
    found = _lone_letter(text, cls)
    markers = {m.upper() for m in re.findall(r"(?:^|\s)[(\[]?(" + cls + r")[)\]]", text)}
    if found and len(markers - {found}) < 2:
        return found
    marked = re.findall(r"\((" + up + r")\)|\*\*(" + up + r")\*\*|\[(" + up + r")\]", text)
    if marked:
        return next(g for g in marked[-1] if g).upper()
    return None


def _lone_letter(text: str, cls: str) -> str | None:
    # A short answer that is just the letter, maybe dressed: "C", "(C)", "C)",
    # "**C**", "C.", "C: Paris", "C) Paris".
    stripped = text.strip().strip("*_`$ ")
    match = re.match(r"^[(\[]?\s*(" + cls + r")\s*(?:[)\].:]|$)(?:\s|$)?", stripped)
    if match and (len(stripped) == 1 or not stripped[1:2].isalpha()):
        return match.group(1).upper()
    return None
