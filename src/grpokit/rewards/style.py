"""Style rewards: how an answer is written, not whether it is right.

reasoning_quality, citation, repetition_penalty, language_consistency,
group_diversity and reference_overlap. Each is a factory (call it, or
`get(name, **params)`) returning a batch reward whose `__name__` is the
registered name. None of them raises on model output: every scan is bounded so
a 1 MB completion costs milliseconds, not minutes.
"""
from __future__ import annotations

import functools
import itertools
import json
import math
import re
import unicodedata
from collections import Counter
from typing import Any, Iterable

from grpokit.completions import prompt_text, texts
from grpokit.rewards import _answers
from grpokit.rewards._bound import BatchReward, TextReward
from grpokit.rewards._unicode import canonical
from grpokit.answer_format import AnswerFormat
from grpokit.rewards.registry import RewardConfigError, register

# Bounds on what any style reward reads of one completion. Style is visible in
# the first pages of text; reading further only costs time on runaway outputs.
_MAX_CHARS = 100_000
_MAX_TOKENS = 20_000
_WORD = re.compile(r"\w+")


def _tokens(text: str) -> list[str]:
    out = []
    for match in _WORD.finditer(text[:_MAX_CHARS].lower()):
        out.append(match.group())
        if len(out) >= _MAX_TOKENS:
            break
    return out


def _ngrams(tokens: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def _column(kwargs: dict, name: str, size: int) -> list:
    """Column `name` aligned with the completions, or all None when absent."""
    values = kwargs.get(name)
    if values is None:
        return [None] * size
    values = list(values)
    if len(values) != size:
        # A misaligned column is a data-pipeline bug, not model output: be loud.
        raise ValueError(f"column {name!r} has {len(values)} rows for {size} completions; align it")
    return values


def _check_positive_int(name: str, value: Any, reward: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RewardConfigError(f"{reward}: {name} must be a positive integer, got {value!r}")
    return value


def _after_think(text: str) -> str:
    # Reasoning models put their scratch work in <think>...</think>; the answer
    # a reference is compared with is what follows it.
    end = text.rfind("</think>")
    return text[end + len("</think>") :] if end >= 0 else text


# ---------------------------------------------------------------- reasoning

_STEP_MARKER = re.compile(
    r"^\s*(?:(?:step|stage)\s*\d+\s*[:.)-]?|\d{1,3}\s*[.):]|[-*\u2022]|\(?[a-h]\))\s+",
    re.IGNORECASE,
)
_EQUATION = re.compile(r"[\w)\]}]\s*=\s*[-\w(\[{$\\]")
_CONNECTIVES = re.compile(
    r"\b(therefore|thus|hence|because|since|so|consequently|as a result|it follows|"
    r"which means|this means|implies|first|second|next|then|finally)\b|\u2234",
    re.IGNORECASE,
)


@register("reasoning_quality", aliases=("reasoning_steps",), family="style")
def reasoning_quality(target_steps: int = 3, target_connectives: int = 3, step_weight: float = 0.5):
    """Rewards visible step-by-step reasoning: distinct steps and logical connectives.

    Score in [0, 1]: `step_weight` x min(steps, target_steps) / target_steps plus
    (1 - step_weight) x min(connectives, target_connectives) / target_connectives.
    A step is a distinct line that starts with a marker ("Step 2:", "3.", "-",
    "(b)") or holds an equation ("x = 4"); a connective is a distinct kind of
    therefore / because / so / thus / hence / since / first / next / finally ...
    Both counts are capped and only distinct lines and distinct connective words
    count, so repeating "therefore" or one line a hundred times earns nothing.

    Parameters: target_steps (3), target_connectives (3), step_weight (0.5).
    Columns read: none.
    """
    _check_positive_int("target_steps", target_steps, "reasoning_quality")
    _check_positive_int("target_connectives", target_connectives, "reasoning_quality")
    if not isinstance(step_weight, (int, float)) or not 0.0 <= step_weight <= 1.0:
        raise RewardConfigError(f"reasoning_quality: step_weight must be in [0, 1], got {step_weight!r}")

    return TextReward("reasoning_quality", _reasoning_score, target_steps=target_steps,
                      target_connectives=target_connectives, step_weight=float(step_weight))


def _reasoning_score(text: str, target_steps: int, target_connectives: int, step_weight: float) -> float:
    text = text[:_MAX_CHARS]
    steps = set()
    for line in text.splitlines():
        marker = _STEP_MARKER.match(line)
        body = line[marker.end() :] if marker else line
        if not marker and not _EQUATION.search(line):
            continue
        key = " ".join(_tokens(body))
        # "1." alone or "- ok" is not a step; an equation always is.
        if len(key.split()) >= 2 or (key and _EQUATION.search(body)):
            steps.add(key)
    kinds = {m.group().lower() for m in _CONNECTIVES.finditer(text)}
    step_part = min(len(steps), target_steps) / target_steps
    conn_part = min(len(kinds), target_connectives) / target_connectives
    return step_weight * step_part + (1.0 - step_weight) * conn_part


# ----------------------------------------------------------------- citation

_BRACKET = re.compile(r"\[\^?(\d{1,4}(?:\s*[,\u2013\u2014-]\s*\^?\d{1,4}){0,20})\]")
_PAREN = re.compile(r"\(([^()\n]{4,300})\)")
_NAME = r"[^\W\d_][\w'\u2019.\-]*"
_YEAR = r"(1[5-9]\d\d|20\d\d)[a-z]?"
_AUTHOR_YEAR = re.compile(rf"^\s*({_NAME}(?:\s+et\s+al\.?|\s+(?:and|&)\s+{_NAME})?),?\s+{_YEAR}\s*$")
# Narrative citations, "Smith et al. (2019)": find the cheap "(2019)" anchor
# first, then read the name from a short window before it. Searching for names
# first is quadratic on text like "a.a.a.a..." (every dot starts a word).
_YEAR_PAREN = re.compile(rf"\({_YEAR}\)")
_NAME_BEFORE = re.compile(rf"({_NAME}(?:\s+et\s+al\.?)?)\s+$")
_WINDOW = 60
_ATTRIBUTION = re.compile(
    r"\b(?:according to|as reported by|as stated (?:in|by)|cited in|sources?\s*:)\s+"
    r"(?:the\s+)?([^\n.;,:()\[\]]{2,80})",
    re.IGNORECASE,
)
_QUOTE = re.compile(r"[\"\u201c]([^\"\u201c\u201d\n]{12,500})[\"\u201d]")  # body excludes openers: linear scan
_STYLES = ("bracket", "author_year", "attribution", "quote")
_MAX_CITATIONS = 500  # no honest answer cites more; bounds the work on spam
_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.lower()).strip()


def _bracket_ids(body: str) -> list[str]:
    ids: list[str] = []
    for part in re.split(r"\s*,\s*", body.replace("^", "")):
        bounds = re.split(r"\s*[\u2013\u2014-]\s*", part)
        if len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit():
            low, high = int(bounds[0]), int(bounds[1])
            # "[1-3]" means 1, 2, 3; a silly range like [1-9999] counts its ends only.
            span = range(low, high + 1) if 0 <= high - low <= 50 else (low, high)
            ids.extend(str(i) for i in span)
        elif part.isdigit():
            ids.append(str(int(part)))
    return ids


def _find_citations(text: str, styles: frozenset[str]) -> list[tuple[str, str]]:
    """(kind, key) of every citation in the text, in order, duplicates kept."""
    text = text[:_MAX_CHARS]
    found: list[tuple[str, str]] = []
    if "bracket" in styles:
        for match in _BRACKET.finditer(text):
            if len(found) >= _MAX_CITATIONS:
                break
            found.extend(("bracket", i) for i in _bracket_ids(match.group(1)))
    if "author_year" in styles:
        for match in _PAREN.finditer(text):
            if len(found) >= _MAX_CITATIONS:
                break
            for part in match.group(1).split(";"):
                hit = _AUTHOR_YEAR.match(part)
                if hit and hit.group(1)[0].isupper():
                    found.append(("author_year", f"{hit.group(1).split()[0].lower()} {hit.group(2)}"))
        for anchor in _YEAR_PAREN.finditer(text):
            if len(found) >= 2 * _MAX_CITATIONS:
                break
            window = text[max(0, anchor.start() - _WINDOW) : anchor.start()]
            # The name must start at a word boundary inside the window.
            hit = _NAME_BEFORE.search(window)
            if hit and hit.group(1)[0].isupper() and (hit.start() == 0 or not window[hit.start() - 1].isalnum()):
                found.append(("author_year", f"{hit.group(1).split()[0].lower()} {anchor.group(1)}"))
    if "attribution" in styles:
        for hit in _ATTRIBUTION.finditer(text):
            if len(found) >= 3 * _MAX_CITATIONS:
                break
            found.append(("attribution", _norm(hit.group(1))))
    if "quote" in styles:
        for hit in _QUOTE.finditer(text):
            if len(found) >= 4 * _MAX_CITATIONS:
                break
            quote = _norm(hit.group(1))
            if len(quote.split()) >= 4:
                found.append(("quote", quote))
    return found


class _Sources:
    """One row's `sources`, indexed for the checks a citation needs."""

    _NAME_KEYS = ("id", "title", "author", "authors", "name", "source", "publisher")
    _META_KEYS = (*_NAME_KEYS, "url", "year", "date")

    def __init__(self, raw: Any):
        raw = _listed(raw)
        if isinstance(raw, dict) and not set(raw) & {"text", "content", "title", "id"}:
            # {"1": "text...", "smith2020": {...}}: the keys are the ids.
            items = [(str(k), v) for k, v in raw.items()]
        elif isinstance(raw, (list, tuple)):
            items = [(None, v) for v in raw]
        else:
            items = [(None, raw)]
        self.ids: dict[str, int] = {}  # id -> position in the list
        self.names: list[set[str]] = []  # per source: short names an attribution may use
        self.metas: list[str] = []
        self.bodies: list[str] = []
        budget = _MAX_CHARS * 4  # bound the work one row's documents can cost
        for key, value in items[:1000]:
            if isinstance(value, dict):
                doc_id = key if key is not None else value.get("id")
                names = [str(value[k]) for k in self._NAME_KEYS if value.get(k) not in (None, "")]
                meta = " ".join(str(value.get(k, "")) for k in self._META_KEYS)
                body = " ".join(str(v) for v in value.values())
            else:
                doc_id, names = key, []
                body = "" if value is None else str(value)
                meta = body[:300]  # a plain-string source names itself in its opening
            if doc_id not in (None, ""):
                self.ids.setdefault(_norm(str(doc_id)), len(self.metas))
                names.append(str(doc_id))
                meta = f"{doc_id} {meta}"
            self.names.append({n for n in map(_norm, names) if len(n) > 1})
            body = body[: max(budget, 0)]
            budget -= len(body)
            self.metas.append(_norm(meta))
            self.bodies.append(_norm(body))

    def cited(self, kind: str, key: str) -> set[int]:
        """The positions of the sources a citation refers to (empty: it refers to none of them)."""
        if kind == "bracket":
            # Sources with ids are cited by id; a plain list is cited by position.
            if self.ids:
                return {self.ids[key]} if key in self.ids else set()
            return {int(key) - 1} if key.isdigit() and 1 <= int(key) <= len(self.metas) else set()
        if kind == "author_year":
            surname, year = key.rsplit(" ", 1)
            return {i for i, meta in enumerate(self.metas) if surname in meta and year[:4] in meta}
        if kind == "attribution":
            padded = f" {key} "
            return {i for i, meta in enumerate(self.metas)
                    if key in meta or any(f" {n} " in padded for n in self.names[i])}
        return {i for i, body in enumerate(self.bodies) if key in body}  # a quote: verbatim, case/space-insensitive

    def resolves(self, kind: str, key: str) -> bool:
        return bool(self.cited(kind, key))

    def holding(self, answers: list[str]) -> set[int]:
        """The positions of the sources whose text holds one of the answers: every word and number of it."""
        wanted = [set(_WORD.findall(_norm(a))) for a in answers]
        wanted = [w for w in wanted if w]
        held = set()
        for i, body in enumerate(self.bodies):
            words = set(_WORD.findall(body))
            if any(w <= words for w in wanted):
                held.add(i)
        return held

    def named(self, cell: Any) -> set[int]:
        """The positions of the sources a cell of ids or positions names (`2`, `1|3`, `[1, 3]`, `["smith2020"]`)."""
        cell = _listed(cell)
        if isinstance(cell, (list, tuple)):
            keys = [str(k) for k in cell]
        elif isinstance(cell, (int, str)) and not isinstance(cell, bool):
            keys = re.split(r"[|,;\s]+", str(cell))
        else:
            keys = []
        found: set[int] = set()
        for key in keys[:1000]:
            key = _norm(key).strip("[]")
            if key:
                found |= self.cited("bracket", key)
        return found


def _listed(raw: Any) -> Any:
    """A JSON list kept as text (a CSV cell, a samples file) is the list it spells, not one long source."""
    if isinstance(raw, str) and raw.lstrip().startswith("["):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return raw
        return parsed if isinstance(parsed, list) else raw
    return raw


def _has_sources(raw: Any) -> bool:
    return raw is not None and not (isinstance(raw, (list, tuple, dict, str)) and len(raw) == 0)


@register("citation", aliases=("citations",), family="style")
def citation(target: int = 1, check_sources: bool = True, styles: Iterable[str] = _STYLES, after_answer: bool = False,
             answer_format: Any = None, answer_sources: str | None = None, answer_column: str | None = None):
    """Rewards answers that cite their sources, and (with `sources`) cite real ones, or the ones with the answer.

    Finds bracket citations ([1], [2, 3], [1-3], [^4]), author-year citations
    ((Smith, 2020), (Lee et al. 2019; Kim & Park, 2021), Smith (2020)) and
    attributions ("according to the WHO", "Source: Reuters"). Score in [0, 1]:
    coverage = min(distinct citations, target) / target. When the row has a
    `sources` column value and check_sources is true, coverage is multiplied by
    the share of citations that resolve: [k] must be a source id or 1..len(sources),
    an author-year must name a source's author and year, an attribution must
    name a source, and a quoted passage (4+ words in quotes) must appear
    verbatim in a source. Fabricated citations therefore cost reward.

    Citing the source that holds the answer: with `answer_sources` or
    `answer_column` set, a citation is right only when it refers to a source
    that holds the row's answer. The score is then coverage x precision:
    coverage = min(answer-holding sources cited, need) / need, with need =
    min(target, number of answer-holding sources); precision = right
    citations / distinct citations. So citing a real document without the
    answer ([1] when [2] has it) pays 0, and a range or list wider than needed
    pays its share: [1-3] or [1, 2, 3] for [2] pays 1/3. A row where no source
    is known to hold the answer scores None (it cannot be checked).

    `sources` per row: a list of strings or dicts (id, title, author, year,
    text, ...), or a dict id -> text/dict.
    Parameters: target (1), check_sources (True), styles (all of "bracket",
    "author_year", "attribution", "quote"; quotes count only when checked
    against sources), after_answer (False: citations anywhere count; True: only
    those on the line after the last closing answer tag, `<answer>60 euros</answer> [2]`
    (or on the next line when that one is empty), so a prompt whose documents
    are numbered [1], [2] pays nothing when copied back), answer_format (the
    run's, for that tag), answer_sources (a column naming, per row, the sources
    that hold the answer: positions or ids, `2`, `1|3`, `[1, 3]`), answer_column
    (a column with the gold answer: a source holds it when the source has every
    word and number of the answer; used for rows whose answer_sources cell is
    empty or absent). Columns read: sources (optional), and the two named.
    """
    _check_positive_int("target", target, "citation")
    styles = {styles} if isinstance(styles, str) else set(styles)
    unknown = styles - set(_STYLES)
    if unknown or not styles:
        raise RewardConfigError(f"citation: styles must be a non-empty subset of {list(_STYLES)}, got {sorted(unknown) or 'nothing'}")

    if not isinstance(after_answer, bool):
        raise RewardConfigError(f"citation: after_answer must be true or false, got {after_answer!r}")
    for pname, value in (("answer_sources", answer_sources), ("answer_column", answer_column)):
        if value is not None and (not isinstance(value, str) or not value):
            raise RewardConfigError(f"citation: {pname} must be the name of a data column, e.g. 'answer', or left out, "
                                    f"got {value!r}")
    if (answer_sources or answer_column) and not check_sources:
        raise RewardConfigError("citation: answer_sources/answer_column check citations against the sources; "
                                "they need check_sources: true")
    closing = f"</{AnswerFormat.of(answer_format).answer_tag}>" if after_answer else None
    return BatchReward("citation", _citation_batch, target=target, check_sources=bool(check_sources),
                       styles=frozenset(styles), closing=closing, answer_sources=answer_sources,
                       answer_column=answer_column)


def _citation_batch(completions, kwargs: dict, target: int, check_sources: bool, styles: frozenset,
                    closing: str | None = None, answer_sources: str | None = None,
                    answer_column: str | None = None) -> list[float | None]:
    items = texts(completions)
    if closing is not None:
        items = [_after_answer(t, closing) for t in items]
    sources = _column(kwargs, "sources", len(items))
    if not (answer_sources or answer_column):
        return [_citation_score(t, s, target, check_sources, styles) for t, s in zip(items, sources)]
    for name in (answer_sources, answer_column):
        if name and kwargs.get(name) is None:
            present = sorted(k for k in kwargs if k not in ("prompts", "completion_ids", "trainer_state"))
            raise RewardConfigError(f"citation reads the sources that hold the answer from a {name!r} column, but the "
                                    f"batch has only {present}; add that column to the data set (data.columns) "
                                    "or change answer_sources/answer_column")
    named = _column(kwargs, answer_sources, len(items)) if answer_sources else [None] * len(items)
    golds = _column(kwargs, answer_column, len(items)) if answer_column else [None] * len(items)
    return [_holder_score(t, s, n, g, target, styles) for t, s, n, g in zip(items, sources, named, golds)]


def _after_answer(text: str, closing: str) -> str:
    """The citation line after the last answer block: the rest of its line, or the next line when that is empty.

    Not everything after it: a completion that copies the prompt back would bring the
    documents' own `[1]`, `[2]` labels along, on lines of their own.
    """
    if closing not in text:
        return ""
    line, _, rest = text[text.rfind(closing) + len(closing):].partition("\n")
    return line if line.strip() else rest.partition("\n")[0]


def _citation_score(text: str, raw_sources: Any, target: int, check_sources: bool, styles: frozenset) -> float:
    checked = check_sources and _has_sources(raw_sources)
    found = _find_citations(text, styles if checked else styles - {"quote"})
    distinct = list(dict.fromkeys(found))
    if not distinct:
        return 0.0
    coverage = min(len(distinct), target) / target
    if not checked:
        return coverage
    sources = _Sources(raw_sources)
    valid = sum(1 for kind, key in distinct if sources.resolves(kind, key))
    return coverage * valid / len(distinct)


def _holder_score(text: str, raw_sources: Any, named: Any, gold: Any, target: int, styles: frozenset) -> float | None:
    """coverage x precision against the sources that hold the answer; None when none is known to."""
    if not _has_sources(raw_sources):
        return None
    sources = _Sources(raw_sources)
    holders = sources.named(named) if _has_sources(named) else set()
    if not holders:
        answers = _answers.gold_options(gold)
        holders = sources.holding(answers) if answers else set()
    if not holders:
        return None
    distinct = list(dict.fromkeys(_find_citations(text, styles)))
    if not distinct:
        return 0.0
    covered: set[int] = set()
    right = 0
    for kind, key in distinct:
        hit = sources.cited(kind, key) & holders
        if hit:
            right += 1
            covered |= hit
    need = min(target, len(holders))
    return min(len(covered), need) / need * right / len(distinct)


# --------------------------------------------------------------- repetition


@register("repetition_penalty", aliases=("ngram_repetition",), family="style")
def repetition_penalty(n: int = 3, max_penalty: float = 1.0):
    """Penalises repeated n-grams (looping text); score in [-max_penalty, 0].

    Score = -max_penalty x (comebacks / n-grams) over the lower-cased words,
    where a comeback is each time an n-gram is seen again, so text with no
    repeated word n-gram scores 0 and a completion stuck in a loop approaches
    -max_penalty. Counters do not make a loop new: every number (`1`, `250`,
    `3rd`) is read as one counter word and every digit inside a word as `0`
    (`step7`, `try12`), and an n-gram that holds a counter costs only for each
    comeback after its 4th showing: `hmm 1 hmm 2 hmm 3 ...` is the loop it reads
    as, while a numbered list of distinct steps (its words differ) or a worked
    solution that repeats a sentence shape a few times with other numbers is
    not. N-grams of numbers alone (`1 2 3`, the parts of `2.5`) are read
    another way: the text's runs of digits in order, as written, where an
    n-gram costs for each comeback after its 4th showing, so `7 7 7 7 ...` is
    a loop (its share of the text's n-grams, as a loop of words would be),
    while counting (`1 2 3 ...`) or a list of distinct numbers does not cost,
    and numbers never dilute a loop of words (its share of the worded
    n-grams stands). Number words (`one`, `second`) are words: a loop
    that counts in them repeats its few words. The text is read in its
    canonical Unicode form, so zero-width characters, odd spaces or fullwidth
    letters do not make a repeat look new. Completions shorter than n words
    score 0. Only the first 20,000 words are read.

    Parameters: n (3), max_penalty (1.0; its size is used, so -1.0 as written
    in open-r1 configs also works; must be at most 1).
    Columns read: none.
    """
    _check_positive_int("n", n, "repetition_penalty")
    if isinstance(max_penalty, bool) or not isinstance(max_penalty, (int, float)) or not 0 < abs(max_penalty) <= 1:
        raise RewardConfigError(
            f"repetition_penalty: max_penalty must be in (0, 1] (the score is negative), got {max_penalty!r}"
        )
    return TextReward("repetition_penalty", _repetition_score, n=n, size=abs(float(max_penalty)))


# Reading a counter: every digit becomes `0` in one translation of the text, so `7`, `250` and
# `step12` are `0`, `000` and `step00`; one dict then maps each all-zero word (with an ordinal
# ending) to the counter word `0`. For ASCII text, which nearly every completion is, the same
# translation lower-cases and turns every non-word byte into a space, so a split reads the
# words: no regex and no Python code per word. This reward reads every completion of every
# step; masking word by word in Python made it 0.69x as fast as the reward without counters.
_COUNTER = "0"
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")  # ASCII `\w`
_ASCII_WORDS = bytes(
    (ord("0") if chr(b).isdigit() else ord(chr(b).lower())) if b in _WORD_BYTES else ord(" ") for b in range(256))
_ASCII_NUMBERS = bytes(b if 48 <= b <= 57 else ord(" ") for b in range(256))  # ASCII digits
_DIGITS_AS_ZERO = str.maketrans("123456789", "0" * 9)
# A number longer than 40 digits stays its run of zeros: still the same word each turn of a loop.
_AS_COUNTER = {"0" * size + ending: _COUNTER for size in range(1, 41) for ending in ("", "st", "nd", "rd", "th")}
_NUMBER = re.compile(r"\d+")

# How often an n-gram holding a counter may be seen before it costs: GSM8K's worked solutions
# repeat a sentence shape up to 4 times with other numbers ("The second scroll is 4080 + 2040 =
# 6120 years old. The third scroll is ..."), and their numbers in a calculation note
# ("16 - 3 = <<16-3=13>>13"); a loop does so hundreds of times.
_FREE_SHOWINGS = 4


def _words_and_numbers(text: str) -> tuple[list[str], list]:
    """The words with every number as the counter word `0`, and the text's numbers as written."""
    text = canonical(text[:_MAX_CHARS])
    if text.isascii():
        raw = text.encode()
        words = raw.translate(_ASCII_WORDS).decode().split()
        numbers = raw.translate(_ASCII_NUMBERS).split()
    else:
        words = _WORD.findall(text.lower().translate(_DIGITS_AS_ZERO))
        numbers = _NUMBER.findall(text)
    words = words[:_MAX_TOKENS]
    return list(map(_AS_COUNTER.get, words, words)), numbers


def _gram_counts(items: list, n: int) -> Counter:
    return Counter(zip(*(items[i:] for i in range(n))))


def _comebacks_after(grams: Counter, free: int) -> int:
    return sum(seen - free for seen in grams.values() if seen > free)


def _repetition_score(text: str, n: int, size: float) -> float:
    words, numbers = _words_and_numbers(text)
    grams = _gram_counts(words, n)
    # N-grams of counters alone are read from the numbers as written (below), not as `0 0 0`.
    bare = grams.pop((_COUNTER,) * n, 0)
    worded = max(len(words) - n + 1, 0) - bare
    comebacks = 0
    # Only n-grams seen more than once can cost; in real text they are a few of the many.
    for gram in itertools.compress(grams, map((1).__lt__, grams.values())):
        seen = grams[gram]
        comebacks += seen - 1 if _COUNTER not in gram else max(seen - _FREE_SHOWINGS, 0)
    repeated = comebacks / worded if worded > 0 else 0.0
    if len(numbers) >= n + _FREE_SHOWINGS:  # fewer cannot show one n-gram past its free showings
        looped = _comebacks_after(_gram_counts(numbers, n), _FREE_SHOWINGS)
        # Over the whole text, so `7 7 7 ...` after an answer costs its share, as a loop of words
        # would; the words' own share stands apart, so numbers written beside a loop never dilute it.
        if looped:
            repeated = max(repeated, (comebacks + looped) / (worded + max(bare, looped)))
    return 0.0 - size * repeated  # 0.0, never -0.0


# ------------------------------------------------------- language (script)

# Han and kana are one family: Japanese mixes them, and telling Chinese from
# Japanese by script alone is unreliable. Korean may use Han too.
_COMPATIBLE = {"Han": {"Han"}, "Hangul": {"Hangul", "Han"}}
_MAX_LETTERS = 20_000
# Spans that are code or math, not prose, in the order they are removed. A
# regex like `\\(.*?\\)` is quadratic on text full of unclosed `\\(`; this
# scanner finds each opener's closer once and gives up on a kind that has none.
_SPANS = (("```", "```", True), ("$$", "$$", True), ("\\[", "\\]", True), ("\\(", "\\)", True),
          ("`", "`", False), ("$", "$", False))  # (open, close, may span lines)
_LOOSE_MARKUP = re.compile(r"https?://\S+|\\[A-Za-z]+")


def _strip_spans(text: str, opener: str, closer: str, multiline: bool) -> str:
    pieces, pos = [], 0
    while True:
        start = text.find(opener, pos)
        if start < 0:
            break
        end = text.find(closer, start + len(opener))
        if end < 0:
            if opener == "```":
                end = len(text)  # an unterminated fence runs to the end (a cut-off completion)
            else:
                break  # no closer anywhere after: no later opener of this kind can close either
        elif not multiline and "\n" in text[start:end]:
            pieces.append(text[pos : start + len(opener)])
            pos = start + len(opener)
            continue
        pieces.append(text[pos:start])
        pieces.append(" ")
        pos = end + len(closer)
    pieces.append(text[pos:])
    return "".join(pieces)


def _strip_markup(text: str) -> str:
    for opener, closer, multiline in _SPANS:
        text = _strip_spans(text, opener, closer, multiline)
    return _LOOSE_MARKUP.sub(" ", text)


@functools.lru_cache(maxsize=8192)
def _script_of(ch: str) -> str | None:
    if ch < "\u0250":
        return "Latin"  # ASCII, Latin-1 and Latin Extended: the common case, no lookup
    words = unicodedata.name(ch, "").split()
    if not words:
        return None
    if words[0] in ("FULLWIDTH", "HALFWIDTH") and len(words) > 1:
        words = words[1:]
    head = words[0]
    if head in ("MATHEMATICAL", "MODIFIER", "COMBINING", "SUPERSCRIPT", "SUBSCRIPT"):
        return None  # symbols dressed as letters say nothing about the language
    if head in ("CJK", "HIRAGANA", "KATAKANA", "IDEOGRAPHIC"):
        return "Han"
    return head.title()


# Scripts written without spaces between words: each character counts as a
# unit, as a Han character carries about as much as a Latin word. Elsewhere a
# unit is a word (a run of letters), so "Python" in a Chinese question is one
# unit, not six, and cannot outvote four Han characters.
_PER_CHARACTER = {"Han", "Thai", "Lao", "Khmer", "Myanmar", "Tibetan"}


def _script_counts(text: str, ignore_markup: bool) -> Counter:
    text = text[: _MAX_CHARS]
    if ignore_markup:
        text = _strip_markup(text)
    counts: Counter = Counter()
    seen = 0
    previous = None
    for ch in text:
        script = _script_of(ch) if ch.isalpha() else None
        if script and (script != previous or script in _PER_CHARACTER):
            counts[script] += 1
            seen += 1
            if seen >= _MAX_LETTERS:
                break
        previous = script
    return counts


def _question_text(prompt: Any) -> str:
    # The question's language is the user's last turn: a system prompt in
    # English above a question in Japanese must not make English "the" language.
    if isinstance(prompt, (list, tuple)):
        users = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
        if users:
            return prompt_text(users[-1:])
    return prompt_text(prompt)


@register("language_consistency", aliases=("script_consistency",), family="style")
def language_consistency(binary: bool = False, ignore_markup: bool = True):
    """Rewards answers written in the same script as the question (no language drift).

    Compares Unicode scripts (Latin, Cyrillic, Greek, Arabic, Han, Hangul,
    Devanagari, ...): the prompt's dominant script (its last user turn for
    chat prompts) against the completion's. Text is counted in words, and in
    characters for scripts written without spaces (Han, Thai, ...), so an
    English term in a Chinese question does not outvote it. Score in [0, 1]:
    the share of the completion's words in that script (Han and Japanese kana
    count as one script; Korean may use Han). With binary=True: 1.0 when the
    completion's dominant script matches, else 0.0. Code blocks, inline code,
    LaTeX math and URLs are ignored when ignore_markup is true, so a Chinese
    answer with a Python block is not penalised. It tells scripts apart, not
    languages that share one (English vs French both score 1.0).

    Returns None when there is no prompt, or when the prompt or completion
    has no letters (e.g. the answer is just "42").
    Parameters: binary (False), ignore_markup (True). Columns read: prompts.
    """
    return BatchReward("language_consistency", _language_batch, binary=bool(binary), ignore_markup=bool(ignore_markup))


def _language_batch(completions, kwargs: dict, binary: bool, ignore_markup: bool) -> list[float | None]:
    items = texts(completions)
    prompts = _column(kwargs, "prompts", len(items))
    return [_language_score(t, p, binary, ignore_markup) for t, p in zip(items, prompts)]


def _language_score(text: str, prompt: Any, binary: bool, ignore_markup: bool) -> float | None:
    if prompt is None:
        return None
    wanted = _script_counts(_question_text(prompt), ignore_markup)
    got = _script_counts(text, ignore_markup)
    if not wanted or not got:
        return None
    dominant = wanted.most_common(1)[0][0]
    accepted = _COMPATIBLE.get(dominant, {dominant})
    if binary:
        return 1.0 if got.most_common(1)[0][0] in accepted else 0.0
    return sum(c for s, c in got.items() if s in accepted) / sum(got.values())


# ---------------------------------------------------------- group diversity

_FUZZ_CHARS = 4_000  # rapidfuzz's ratio is quadratic-ish: bound the text it compares


def _gram_set(text: str, n: int) -> frozenset:
    tokens = _tokens(text)
    if len(tokens) < n:
        # Too short for n-grams: the whole (possibly empty) answer is one unit,
        # so "yes" vs "yes" still counts as a repeat.
        return frozenset([tuple(tokens)]) if tokens else frozenset()
    return frozenset(_ngrams(tokens, n))


def _jaccard(a: frozenset, b: frozenset) -> float:
    if not a and not b:
        return 1.0  # two empty answers repeat each other
    return len(a & b) / len(a | b)


@register("group_diversity", aliases=("diversity",), family="style")
def group_diversity(method: str = "ngram", n: int = 2, aggregate: str = "mean"):
    """Rewards a completion for differing from the other completions of its prompt.

    GRPO learns from differences within a group; when every sample of a
    prompt says the same thing, reward_std falls to 0 and learning stops.
    Completions are grouped by identical prompt text (TRL passes `prompts`
    aligned with the completions; with no prompts the whole batch is one
    group). Score in [0, 1] = 1 - similarity to the rest of the group, where
    similarity is the Jaccard overlap of word n-grams (method="ngram") or
    rapidfuzz's normalised edit similarity on the first 4,000 characters
    (method="fuzz"), averaged over the others (aggregate="mean") or the
    closest one (aggregate="max"). An empty or whitespace-only completion
    scores 0 (saying nothing is not a way to be different); a prompt with a
    single completion gets None. With several training processes a prompt's
    group can be split across them; each process compares the completions it
    holds.

    Parameters: method ("ngram"), n (2), aggregate ("mean").
    Columns read: prompts.
    """
    if method not in ("ngram", "fuzz"):
        raise RewardConfigError(f"group_diversity: method must be 'ngram' or 'fuzz', got {method!r}")
    if aggregate not in ("mean", "max"):
        raise RewardConfigError(f"group_diversity: aggregate must be 'mean' or 'max', got {aggregate!r}")
    _check_positive_int("n", n, "group_diversity")
    return BatchReward("group_diversity", _diversity_batch, method=method, n=n, aggregate=aggregate)


def _similarities(items: list[str], method: str, n: int) -> list[list[float]]:
    if method == "fuzz":
        from rapidfuzz import fuzz, process

        clipped = [t[:_FUZZ_CHARS] for t in items]
        matrix = process.cdist(clipped, clipped, scorer=fuzz.ratio)
        # rapidfuzz scores two empty strings 0; for us they are identical.
        return [
            [1.0 if not a and not b else float(matrix[i][j]) / 100.0 for j, b in enumerate(clipped)]
            for i, a in enumerate(clipped)
        ]
    sets = [_gram_set(t, n) for t in items]
    return [[_jaccard(a, b) for b in sets] for a in sets]


def _diversity_batch(completions, kwargs: dict, method: str, n: int, aggregate: str) -> list[float | None]:
    items = texts(completions)
    prompts = kwargs.get("prompts")
    keys = [""] * len(items) if prompts is None else [prompt_text(p) for p in _column(kwargs, "prompts", len(items))]
    groups: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    scores: list[float | None] = [None] * len(items)
    for rows in groups.values():
        if len(rows) < 2:
            continue
        sim = _similarities([items[i] for i in rows], method, n)
        for a, row in enumerate(rows):
            if not items[row].strip():
                scores[row] = 0.0
                continue
            others = [sim[a][b] for b in range(len(rows)) if b != a]
            closeness = max(others) if aggregate == "max" else sum(others) / len(others)
            scores[row] = min(1.0, max(0.0, 1.0 - closeness))
    return scores


# -------------------------------------------------------- reference overlap


def _f1(candidate: list, reference: list) -> float:
    if not candidate or not reference:
        return 0.0
    overlap = sum((Counter(candidate) & Counter(reference)).values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(candidate), overlap / len(reference)
    return 2 * precision * recall / (precision + recall)


@register("reference_overlap", aliases=("rouge_like",), family="style")
def reference_overlap(max_n: int = 2, strip_think: bool = True):
    """Rewards word overlap with a reference text (ROUGE-like n-gram F1), e.g. for summaries.

    Score in [0, 1] = the mean over n = 1..max_n of the F1 of the completion's
    and the reference's word n-grams (lower-cased, counts clipped as in
    ROUGE-N). Orders the reference is too short for are skipped. With
    strip_think, only the text after the last </think> is compared.
    Returns None where the row has no reference.

    Parameters: max_n (2), strip_think (True). Columns read: reference.
    """
    _check_positive_int("max_n", max_n, "reference_overlap")
    if max_n > 4:
        raise RewardConfigError(f"reference_overlap: max_n above 4 rewards copying phrases, not content; use 1-4, got {max_n}")

    return BatchReward("reference_overlap", _overlap_batch, max_n=max_n, strip_think=bool(strip_think))


def _overlap_batch(completions, kwargs: dict, max_n: int, strip_think: bool) -> list[float | None]:
    items = texts(completions)
    refs = _column(kwargs, "reference", len(items))
    return [_overlap_score(t, r, max_n, strip_think) for t, r in zip(items, refs)]


def _overlap_score(text: str, reference: Any, max_n: int, strip_think: bool) -> float | None:
    if reference is None or (isinstance(reference, float) and math.isnan(reference)):
        return None
    ref_tokens = _tokens(prompt_text(reference))
    if not ref_tokens:
        return None
    tokens = _tokens(_after_think(text) if strip_think else text)
    orders = [k for k in range(1, max_n + 1) if len(ref_tokens) >= k]
    return sum(_f1(_ngrams(tokens, k), _ngrams(ref_tokens, k)) for k in orders) / len(orders)
