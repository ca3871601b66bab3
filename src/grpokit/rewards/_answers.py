"""Gold answers, normalising answers for comparison, and the multiple-choice letter.

Shared by the string-based correctness rewards (exact, fuzzy, contains,
multiple choice). Where a completion's answer is (its tag, `\\boxed{}`) is the
answer format's to say: grpokit.rewards.answer_format. Nothing here raises on
model output.
"""
from __future__ import annotations

import re
import string
import unicodedata

from grpokit.rewards.answer_format import DEFAULT, AnswerFormat

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


_PUNCT_CHARS = string.punctuation + "“”‘’«»…–—"
_PUNCT = re.compile("[" + re.escape(_PUNCT_CHARS) + "]")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def _drop_punctuation(match: re.Match) -> str:
    # Punctuation that changes a number's meaning stays: 3.5 is not 35,
    # 1/2 is not 12, -5 is not 5.
    ch, text, i = match.group(), match.string, match.start()
    before, after = text[i - 1 : i], text[i + 1 : i + 2]
    if ch in "./:" and before.isdigit() and after.isdigit():
        return ch
    if ch in "-+" and after.isdigit() and not before.isalnum():
        return ch
    return ""


def normalise(text: str, *, case_sensitive: bool = False, ignore_punctuation: bool = True,
              ignore_whitespace: bool = False) -> str:
    """Text for comparison.

    Always: Unicode NFKC, thousands separators dropped (`1,000` -> `1000`),
    whitespace runs collapsed, ends stripped. Then: case folded unless
    `case_sensitive`; punctuation removed when `ignore_punctuation` (except
    where it is part of a number: `3.5`, `1/2`, `-5`); all whitespace removed
    when `ignore_whitespace`.
    """
    text = unicodedata.normalize("NFKC", text)
    text = _THOUSANDS.sub("", text)
    if not case_sensitive:
        text = text.casefold()
    if ignore_punctuation:
        text = _PUNCT.sub(_drop_punctuation, text)
    text = "".join(text.split()) if ignore_whitespace else " ".join(text.split())
    return text


# ------------------------------------------------------------ multiple choice

def choice_pattern(letters: str) -> str:
    return "[" + re.escape(letters) + re.escape(letters.lower()) + "]"


def gold_letter(gold, letters: str) -> str | None:
    """The gold option letter: `C`, `(C)`, `C) text`, `c`, or a 0-based index."""
    if isinstance(gold, bool) or gold is None:
        return None
    if isinstance(gold, int):
        return letters[gold] if 0 <= gold < len(letters) else None
    text = str(gold).strip()
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
    text = text[-_MAX_TEXT:]
    cls = choice_pattern(letters)
    up = "[" + re.escape(letters) + "]"
    region = fmt.marked(text)
    if region is not None:
        found = _lone_letter(region, cls)
        if found:
            return found
    phrase = re.compile(
        r"(?:answer|option|choice)\b[^A-Za-z0-9\n]{0,12}(?:is|would\s+be|will\s+be|should\s+be|:)?"
        r"\s*(?:option|choice)?\s*[(\[*\s]*(" + up + r")(?![A-Za-z])",
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
