"""Correctness rewards: does the completion's answer match the gold answer?

All of them read the gold answers from a data-set column (`answer` unless
`column=` says otherwise), score 1.0 / 0.0 (or graded, for `fuzzy_match`),
and give None for a row whose gold answer is missing or unusable, so TRL skips
it instead of learning from a wrong label. A gold cell may be a list of
acceptable answers: any one of them counts.
"""
from __future__ import annotations

import functools
import math
import re
from typing import Any, Callable

from rapidfuzz import fuzz

from grpokit.completions import committed_json, loads_json, texts
from grpokit.rewards import _answers, _numbers
from grpokit.rewards._bound import BatchReward, Lazy
from grpokit.answer_format import DEFAULT, AnswerFormat
from grpokit.rewards.registry import RewardConfigError, register

FAMILY = "correctness"


# ------------------------------------------------------------------ plumbing

def _check_bool(reward: str, **flags: Any) -> None:
    for key, value in flags.items():
        if not isinstance(value, bool):
            raise RewardConfigError(f"{reward}: {key} must be true or false, got {value!r}")


def _check_column(reward: str, column: Any) -> None:
    if not isinstance(column, str) or not column:
        raise RewardConfigError(f"{reward}: column must be the name of the gold-answer column, got {column!r}")


def _format(reward: str, answer_format: Any) -> AnswerFormat:
    """The answer format a correctness reward reads (default `<answer>`); a bad one names the reward."""
    try:
        return AnswerFormat.of(answer_format)
    except (TypeError, ValueError) as exc:  # RewardConfigError is a ValueError
        raise RewardConfigError(f"{reward}: answer_format: {exc}") from None


def _golds(reward: str, column: str, completions: list, kwargs: dict, what: str = "gold answers") -> list:
    """The per-row column a reward compares with (`what` it holds, for errors), aligned with the completions
    (a single value is repeated)."""
    if column not in kwargs or kwargs[column] is None:
        present = sorted(k for k in kwargs if k not in ("prompts", "completion_ids", "trainer_state"))
        raise RewardConfigError(
            f"{reward} needs the {what} in a {column!r} column, but the batch has only {present}. "
            f"Add that column to the data set, or pass column='<the name of that column>'."
        )
    golds = kwargs[column]
    if isinstance(golds, (str, bytes, int, float)) or not hasattr(golds, "__len__"):
        return [golds] * len(completions)
    golds = list(golds)
    if len(golds) != len(completions):
        raise RewardConfigError(
            f"{reward}: the {column!r} column has {len(golds)} values for {len(completions)} completions; "
            f"pass one value ({what}) per completion"
        )
    return golds


class GoldReward(BatchReward):
    """A batch reward from a per-row scorer `fn(text, gold, **settings) -> float | None`.

    The gold cell comes from `column`; a scorer that raises, or returns None
    or a non-finite number, leaves that row unscored (None), since model
    output must never crash training.
    """

    def __init__(self, name: str, fn: Callable[..., float | None], column: str, **settings: Any):
        super().__init__(name, fn, **settings)
        self.column = column

    def __call__(self, completions, **kwargs) -> list[float | None]:
        golds = _golds(self.__name__, self.column, completions, kwargs)
        out: list[float | None] = []
        for text, gold in zip(texts(completions), golds):
            try:
                value = self.fn(text, gold, **self.settings)
            except Exception:  # noqa: BLE001 - model output must never crash training
                value = None
            out.append(None if value is None or not math.isfinite(value) else float(value))
        return out


# --------------------------------------------------------------- exact match

@register("exact_match", aliases=("exact",), family=FAMILY)
def exact_match(case_sensitive: bool = False, ignore_punctuation: bool = True, ignore_whitespace: bool = False,
                column: str = "answer", answer_format: Any = None):
    """1.0 when the completion's answer equals the gold answer after normalisation, else 0.0.

    The answer is, in this order: the content of the last `<answer>...</answer>`
    tag, else the last `\\boxed{...}` (also inside the tag), else the whole
    completion. Both sides are normalised: Unicode NFKC, thousands separators
    dropped (`1,000` = `1000`), whitespace runs collapsed, then

    - `case_sensitive` (default false): compare case as written;
    - `ignore_punctuation` (default true): drop punctuation, except where it is
      part of a number (`3.5` is not `35`, `-5` is not `5`);
    - `ignore_whitespace` (default false): drop all whitespace (`1 000` = `1000`).
    - `answer_format` (default `<reasoning>`/`<answer>`): which tag holds the
      answer, e.g. {answer_tag: final}; a run config sets it once, for every
      reward, as `data.answer_format`.

    Reads the `answer` column (or `column`); a GSM8K-style `... #### 42` gold
    counts as `42`; a list cell holds several acceptable answers. None for a
    row without a gold answer.
    """
    _check_bool("exact_match", case_sensitive=case_sensitive, ignore_punctuation=ignore_punctuation,
                ignore_whitespace=ignore_whitespace)
    _check_column("exact_match", column)
    return GoldReward("exact_match", _exact_score, column, fmt=_format("exact_match", answer_format),
                      case_sensitive=case_sensitive, ignore_punctuation=ignore_punctuation,
                      ignore_whitespace=ignore_whitespace)


def _exact_score(text: str, gold: Any, fmt: AnswerFormat = DEFAULT, **options: bool) -> float | None:
    golds = _answers.gold_options(gold)
    if golds is None:
        return None
    answer = _answers.normalise(fmt.committed(text), **options)
    if not answer:
        return 0.0
    return 1.0 if any(answer == _answers.normalise(g, **options) for g in golds) else 0.0


# --------------------------------------------------------------- fuzzy match

@register("fuzzy_match", aliases=("fuzzy",), family=FAMILY)
def fuzzy_match(threshold: float | None = None, case_sensitive: bool = False, column: str = "answer",
                answer_format: Any = None):
    """Graded 0..1 similarity (rapidfuzz `ratio`) between the completion's answer and the gold answer.

    The answer is found as for `exact_match` (`<answer>` tag, `\\boxed{}`, else
    the whole text) and both sides are normalised the same way (punctuation
    and case ignored unless `case_sensitive`). Useful for short free-text
    answers where a near miss ("Pariss") should still earn partial credit.

    Numbers are compared as numbers, not as characters: the answer scores 0.0
    unless it holds the same numbers as the gold answer, by value (`14 euros`
    for gold `14 euros` is graded as text; `140 euros`, `41 euros`,
    `15 euros` and `14 or 140 euros` score 0.0, however close the spelling).
    Units and wording around the numbers are graded as text; `1,000` is `1000`
    and `50%` is 50, as in `numeric_match`.

    - `threshold` (0..1, default none): similarities below it score 0.0, so only
      close answers are rewarded; at or above it the graded score is kept.
    - `answer_format`: which tag holds the answer, as for `exact_match`.

    Reads the `answer` column (or `column`); a list cell holds several acceptable
    answers (the best similarity counts). None for a row without a gold answer.
    """
    if threshold is not None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 <= threshold <= 1.0:
            raise RewardConfigError(f"fuzzy_match: threshold must be a number between 0 and 1, got {threshold!r}")
    _check_bool("fuzzy_match", case_sensitive=case_sensitive)
    _check_column("fuzzy_match", column)

    return GoldReward("fuzzy_match", _fuzzy_score, column, threshold=threshold, case_sensitive=case_sensitive,
                      fmt=_format("fuzzy_match", answer_format))


def _fuzzy_score(text: str, gold: Any, threshold: float | None, case_sensitive: bool,
                 fmt: AnswerFormat = DEFAULT) -> float | None:
    golds = _answers.gold_options(gold)
    if golds is None:
        return None
    committed = fmt.committed(text)[-10_000:]
    answer = _answers.normalise(committed, case_sensitive=case_sensitive)
    if not answer:
        return 0.0
    agree = _numbers_agree(committed, [_gold_values(str(g)) for g in golds])
    best = max((fuzz.ratio(answer, _answers.normalise(g, case_sensitive=case_sensitive))
                for g, ok in zip(golds, agree) if ok), default=0.0) / 100.0
    return 0.0 if threshold is not None and best < threshold else best


def _iter_number_values(text: str):
    text = _numbers.scanned(_numbers.normalise(text))
    for n in _numbers.iter_numbers(text):
        # The number reader takes "every -4" as a subtraction; the text comparison keeps that
        # minus (as it keeps "-5"), so the numbers must too, or "-4" would pass for "4".
        signed = n.value > 0 and n.start > 0 and text[n.start - 1] == "-" and not text[n.start - 2 : n.start - 1].isalnum()
        yield -n.value if signed else n.value


@functools.lru_cache(maxsize=4096)
def _gold_values(gold: str) -> tuple[float, ...]:
    return tuple(_iter_number_values(gold))  # a group shares its gold: read it once


def _numbers_agree(text: str, wanted: list[tuple[float, ...]]) -> list[bool]:
    """For each gold's numbers, whether `text` holds exactly those numbers by value: character
    similarity cannot tell a wrong number from a typo ("140 euros" is 0.94 like "14 euros"), so every
    number on each side must be on the other. The text's numbers are read lazily, and the reading
    stops at the first one no gold holds: a worked solution's first number usually settles it, and
    reading them all made fuzzy_match 3.7x slower."""
    alive = set(range(len(wanted)))
    found: list[float] = []
    for value in _iter_number_values(text):
        alive = {i for i in alive if _holds(wanted[i], value)}
        if not alive:
            return [False] * len(wanted)
        found.append(value)
    return [i in alive and all(_holds(found, w) for w in wanted[i]) for i in range(len(wanted))]


def _holds(values, x: float) -> bool:
    return any(math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12) for y in values)


# ------------------------------------------------------------- numeric match

@register("numeric_match", aliases=("numeric", "gsm8k_accuracy"), family=FAMILY)
def numeric_match(rel_tol: float = 1e-6, abs_tol: float = 1e-9, column: str = "answer", take: str = "final",
                  answer_format: Any = None):
    """1.0 when the completion's final number equals the gold number (within tolerance), else 0.0.

    The completion's number is taken from, in this order: the last
    `<answer>...</answer>` tag; the last `\\boxed{...}`; the text after the last
    answer phrase (`#### 42`, `The answer is 42`, `Final answer: 42`, an
    `A: 42` line); else the last number in the text. Numbers are read the way
    people write them: `1,000` = `1000` (also `10{,}000`), `$18.50` and
    `18 dollars` = `18.5`/`18`, `1/2` and `\\frac{1}{2}` = `0.5`, `1e3` = `1000`,
    `-3`. A percentage is read one way only, as the number written: `50%`
    matches a gold `50` or `50%`, never `0.5` (so one answer cannot match
    two golds: `5000%` is not also `50`). A tag or box that
    holds no number scores 0.0.

    - `rel_tol` (default 1e-6), `abs_tol` (default 1e-9): match when
      |a - b| <= max(rel_tol * max(|a|, |b|), abs_tol) (`math.isclose`).
    - `take` (default `final`): `first` reads the first number of the
      completion instead, for prompts that end where the answer goes
      (`... 47 + 38 =`): what the model writes after its answer is not read.
      `line` reads the result on the first non-blank line: the first number
      after its last `=`, `equals` or `is`, else its first number. For prompts
      that stop at `Answer:`, where a model may restate the sum before its
      result (`47 + 38 = 85`, `the sum of 47 and 38 is 85`) or lead with it
      (`85 (47 plus 38)`).
    - `answer_format`: which tag holds the answer, as for `exact_match`.

    Reads the `answer` column (or `column`): a number, `42`, `$1,000`, or a
    worked solution ending in GSM8K's `#### 42`. A row whose gold holds no
    number gets None (never 1.0).
    """
    _check_take("numeric_match", take)
    for key, value in (("rel_tol", rel_tol), ("abs_tol", abs_tol)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise RewardConfigError(f"numeric_match: {key} must be a finite number, got {value!r}")
        if value < 0:
            raise RewardConfigError(f"numeric_match: {key} must be >= 0 (a tolerance), got {value}; use e.g. {key}=0.01")
    _check_column("numeric_match", column)

    return GoldReward("numeric_match", _numeric_score, column, rel_tol=rel_tol, abs_tol=abs_tol, take=take,
                      fmt=_format("numeric_match", answer_format))


_TAKES = ("final", "first", "line")
# What introduces a result on one line: "47 + 38 = 85", "47 plus 38 equals 85", "the sum is 85".
_RESULT_MARK = re.compile(r"=|\bequals\b|\bis\b", re.IGNORECASE)


def _check_take(reward: str, take: Any) -> None:
    if take not in _TAKES:
        raise RewardConfigError(f"{reward}: take must be 'final' (the committed answer), 'first' (the first number) "
                                f"or 'line' (the last number of the first line), got {take!r}")


def _gold_numbers(gold: Any) -> list:
    values = gold if isinstance(gold, (list, tuple)) else [gold]
    return [n for n in (_numbers.gold_number(v) for v in values) if n is not None]


def _found_number(text: str, take: str, fmt: AnswerFormat = DEFAULT):
    if take == "first":
        return _numbers.first_number(_numbers.normalise(text[:2000]))
    if take == "line":
        line = next((line for line in text[:2000].splitlines() if line.strip()), "")
        result = _RESULT_MARK.split(line)[-1]
        found = _numbers.first_number(_numbers.normalise(result))
        return found if found is not None else _numbers.first_number(_numbers.normalise(line))
    return _numbers.answer_values(text, fmt=fmt)


def _best_credit(text: str, gold: Any, take: str, credit, fmt: AnswerFormat = DEFAULT, **settings: Any) -> float | None:
    """The best `credit(found, target, **settings)` over the acceptable golds; None when no gold has a number."""
    targets = _gold_numbers(gold)
    if not targets:
        return None
    found = _found_number(text, take, fmt)
    if found is None:
        return 0.0
    return max(credit(found, target, **settings) for target in targets)


def _exact_credit(found, target, rel_tol: float, abs_tol: float) -> float:
    return 1.0 if _numbers.close(found, target, rel_tol, abs_tol) else 0.0


def _numeric_score(text: str, gold: Any, rel_tol: float, abs_tol: float, take: str = "final",
                   fmt: AnswerFormat = DEFAULT) -> float | None:
    return _best_credit(text, gold, take, _exact_credit, fmt, rel_tol=rel_tol, abs_tol=abs_tol)


@register("numeric_closeness", aliases=("numeric_partial",), family=FAMILY)
def numeric_closeness(tolerance: float = 0.2, max_partial: float = 0.5, column: str = "answer", take: str = "final",
                      answer_format: Any = None):
    """Partial credit for a near-miss number: 1.0 when exact, less the further off, 0.0 past `tolerance`.

    A wrong answer earns `max_partial * (1 - error / tolerance)`, where error is
    |answer - gold| / max(|gold|, 1) (relative, so 86 for 85 is close and 850
    is not). A group whose samples are all wrong still differs in how wrong
    they are, so GRPO has something to learn from where an exact-match reward
    gives every sample 0; pair it with `numeric_match` so only the exact
    number earns full marks.

    - `tolerance` (default 0.2): the relative error at which credit reaches 0.
    - `max_partial` (default 0.5): the most a wrong answer can earn (< 1).
    - `take`: `final` (default), `first` or `line`, read as in `numeric_match`.
    - `answer_format`: which tag holds the answer, as for `exact_match`.

    The number is found as in `numeric_match`. Reads the `answer` column (or
    `column`); a row whose gold holds no number gets None; a completion with no
    number scores 0.0.
    """
    _check_take("numeric_closeness", take)
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not (0 < tolerance < math.inf):
        raise RewardConfigError(f"numeric_closeness: tolerance must be a positive number (a relative error, e.g. 0.2), got {tolerance!r}")
    if isinstance(max_partial, bool) or not isinstance(max_partial, (int, float)) or not 0 <= max_partial < 1:
        raise RewardConfigError(f"numeric_closeness: max_partial must be at least 0 and below 1 (exact answers get 1), got {max_partial!r}")
    _check_column("numeric_closeness", column)
    return GoldReward("numeric_closeness", _closeness_score, column, tolerance=tolerance, max_partial=max_partial, take=take,
                      fmt=_format("numeric_closeness", answer_format))


def _near_credit(found, target, tolerance: float, max_partial: float) -> float:
    if _numbers.close(found, target, 1e-9, 1e-9):
        return 1.0
    error = abs(found.value - target.value) / max(abs(target.value), 1.0)
    return max_partial * max(0.0, 1.0 - error / tolerance)


def _closeness_score(text: str, gold: Any, tolerance: float, max_partial: float, take: str,
                     fmt: AnswerFormat = DEFAULT) -> float | None:
    return _best_credit(text, gold, take, _near_credit, fmt, tolerance=tolerance, max_partial=max_partial)


# ----------------------------------------------------------- math equivalence

@register("math_equivalence", aliases=("math_verify", "accuracy", "correctness"), family=FAMILY)
def math_equivalence(timeout: float = 3.0, workers: int | None = None, column: str = "answer",
                     answer_format: Any = None):
    """1.0 when the completion's answer is mathematically equivalent to the gold answer (math-verify), else 0.0.

    Uses math-verify, so `\\frac{1}{2}` = `0.5` = `1/2`, `\\{1, 2\\}` = `\\{2, 1\\}`,
    intervals, `x = 5` = `5`, and LaTeX in `$...$`, `\\[...\\]` or `\\boxed{}`
    all work. A percentage is read as the number written (`50\\%` is 50, on
    both sides), so it matches a gold `50` or `50\\%` but never `0.5`.
    The completion's answer is the `<answer>` tag's content when there is
    one, else what math-verify finds in the whole completion (the last
    `\\boxed{}` first). Checks run in warm worker processes with a hard
    wall-clock limit (`grpokit.sandbox.mathcheck`), so a pathological answer
    (`9^{9^{9^9}}`, `100000!`) can neither hang nor crash training, and it
    works from any thread.

    - `timeout` (seconds, default 3): per answer; past it the row gets None.
    - `workers` (default: the shared pool, min(4, CPUs) processes): a pool of
      this many processes for this reward alone.
    - `answer_format`: which tag holds the answer, as for `exact_match`.

    Reads the `answer` column (or `column`): LaTeX or plain (`\\frac{1}{2}`,
    `(0, 1]`, `#### 42`). A gold in words ("18 dollars") is read as text, so
    its number counts; one with no math in it ("Answer is forty two.",
    "Paris") cannot be checked. None for a row whose gold is missing or does not
    parse, or whose answer timed out or was screened out as pathological;
    `reward.stats()` counts each kind.
    """
    from grpokit.sandbox.mathcheck import MathChecker, default_checker

    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0 or not math.isfinite(timeout):
        raise RewardConfigError(f"math_equivalence: timeout must be a positive number of seconds, got {timeout!r}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise RewardConfigError(f"math_equivalence: workers must be a whole number >= 1, got {workers!r}")
    _check_column("math_equivalence", column)
    fmt = _format("math_equivalence", answer_format)
    # The checker's processes stay in this process; a pickled copy of the
    # reward starts (or shares) its own where it lands.
    checker = Lazy(default_checker) if workers is None else Lazy(MathChecker, workers=workers, timeout=timeout)
    checker.get().warm()  # the workers import sympy while the trainer loads its model
    return MathEquivalence("math_equivalence", _math_batch, column=column, timeout=timeout, checker=checker, fmt=fmt)


class MathEquivalence(BatchReward):
    """math_equivalence's reward object: a batch reward that also reports its checker's counters."""

    def stats(self) -> dict:
        """The checker's counters: pairs, fast_path, checked, timeouts, gold_unparseable, ..."""
        return self.settings["checker"].get().stats()


def _math_batch(completions, kwargs: dict, column: str, timeout: float, checker: Lazy,
                fmt: AnswerFormat = DEFAULT) -> list[float | None]:
    golds = _golds("math_equivalence", column, completions, kwargs)
    pairs, owners = [], []
    out: list[float | None] = [None] * len(golds)
    for row, (text, gold) in enumerate(zip(texts(completions), golds)):
        options = _answers.gold_options(gold)
        if options is None:
            continue
        out[row] = 0.0
        prediction = _prediction(text, fmt)
        if prediction is None:
            continue
        prediction = _percent_as_written(_numbers.plain_text(prediction))
        for option in options:
            pairs.append((_percent_as_written(_numbers.plain_text(option)), prediction))
            owners.append(row)
    try:
        verdicts = checker.get().check_many(pairs, timeout=timeout) if pairs else []
    except Exception:  # noqa: BLE001 - e.g. no processes left to spawn: unscored, not a crashed run
        verdicts = [None] * len(pairs)
    undecided: set[int] = set()
    for row, verdict in zip(owners, verdicts):
        if verdict is True:
            out[row] = 1.0
        elif verdict is None:
            undecided.add(row)
    for row in undecided:
        if out[row] != 1.0:
            out[row] = None
    return out


# A percent sign after a number (`50%`, `50\\%`, `50 \\%`). math-verify reads `5000%` as
# both 5000 and 50, so one answer would match two golds; dropping the sign on both
# sides reads a percentage one way only, as the number written (as numeric_match does).
_PERCENT_SIGN = re.compile(r"(?<=\d)\s*\\?%")


def _percent_as_written(text: str) -> str:
    return _PERCENT_SIGN.sub("", text) if "%" in text else text


def _prediction(text: str, fmt: AnswerFormat = DEFAULT) -> str | None:
    # The answer tag (<answer> by default) is the model's explicit commitment: check only that.
    # Bare content goes to math-verify as LaTeX in $...$ (sets, intervals,
    # x^2+1, 2, 3 as a list), unless it reads as prose or carries a unit
    # ("18 dollars", "5 cm"), which the plain-text reader handles and the
    # LaTeX reader would turn into a product of letters.
    from grpokit.sandbox.mathcheck import delimited, reads_as_prose

    if not text.strip():
        return None
    tagged = fmt.tagged(text)
    if tagged is None:
        return text
    if not tagged:
        return None
    if delimited(tagged) or reads_as_prose(tagged):
        return tagged
    return f"${tagged}$"


# ------------------------------------------------------------ multiple choice

@register("multiple_choice", aliases=("mcq",), family=FAMILY)
def multiple_choice(letters: str = "ABCDE", column: str = "answer", answer_format: Any = None):
    """1.0 when the completion picks the gold option letter (A-E), else 0.0.

    The chosen letter is found in the `<answer>` tag or `\\boxed{}`, else in the
    last "the answer is (C)" / "Answer: C" / "option C" phrase, else a
    completion that is only the letter ("C", "(C)", "C)", "**C**", "C. Paris"),
    else the last bracketed or bold letter. A capital starting a sentence
    ("A good start...") is never read as a choice.

    - `letters` (default "ABCDE"): the option letters.
    - `answer_format`: which tag holds the answer, as for `exact_match`.

    Reads the `answer` column (or `column`): `C`, `(C)`, `C) text`, or a 0-based
    index. None for a row whose gold is not one of the letters.
    """
    if not isinstance(letters, str) or not letters or not all(c.isascii() and c.isalpha() for c in letters) \
            or len(set(letters.upper())) != len(letters):
        raise RewardConfigError(f"multiple_choice: letters must be distinct ASCII letters like 'ABCDE', got {letters!r}")
    letters = letters.upper()
    _check_column("multiple_choice", column)

    return GoldReward("multiple_choice", _choice_score, column, letters=letters,
                      fmt=_format("multiple_choice", answer_format))


def _choice_score(text: str, gold: Any, letters: str, fmt: AnswerFormat = DEFAULT) -> float | None:
    values = gold if isinstance(gold, (list, tuple)) else [gold]
    targets = {t for t in (_answers.gold_letter(v, letters) for v in values) if t}
    if not targets:
        return None
    return 1.0 if _answers.chosen_letter(text, letters, fmt) in targets else 0.0


# ------------------------------------------------------------ contains answer

@register("contains_answer", aliases=("contains",), family=FAMILY)
def contains_answer(case_sensitive: bool = False, column: str = "answer"):
    """1.0 when the gold answer appears anywhere in the completion (as a whole word or number), else 0.0.

    A lenient check for free-form answers: both sides are normalised as in
    `exact_match` (punctuation, thousands separators and, unless
    `case_sensitive`, case ignored) and the gold must appear with boundaries
    around it, so `4` is not found in `42` or `3.4`, nor `C` in `C++`. Easy to game by listing
    many answers: pair it with a format or length reward.

    Reads the `answer` column (or `column`); a list cell holds several acceptable
    answers. None for a row without a gold answer.
    """
    _check_bool("contains_answer", case_sensitive=case_sensitive)
    _check_column("contains_answer", column)

    return GoldReward("contains_answer", _contains_score, column, case_sensitive=case_sensitive)


def _contains_score(text: str, gold: Any, case_sensitive: bool) -> float | None:
    golds = _answers.gold_options(gold)
    if golds is None:
        return None
    haystack = _answers.normalise(text[-100_000:], case_sensitive=case_sensitive)
    for g in golds:
        needle = _answers.normalise(g, case_sensitive=case_sensitive)
        # Whole tokens only (both sides are normalised tokens joined by spaces): 4 is not in 42 or
        # 3.4, and C is not in C++.
        if needle and re.search(r"(?<!\S)" + re.escape(needle) + r"(?!\S)", haystack):
            return 1.0
    return 0.0


# --------------------------------------------------------- JSON object match

@register("json_object_match", aliases=("json_match",), family=FAMILY)
def json_object_match(column: str = "answer", answer_format: Any = None):
    """1.0 when the completion's JSON object equals the gold JSON object, else 0.0.

    The completion's object is read from the answer tag when there is one,
    else from the whole completion: a fenced ```json block, the completion
    itself, or the last object or array in the text (the committed answer:
    an object quoted earlier, in reasoning or among guesses, is not read). Objects compare as
    parsed values, so key order and spacing do not matter, but types do
    (`"31"` is not `31`, `true` is not `1`; `1` and `1.0` are one JSON number)
    and every key must be there.

    - `answer_format`: which tag holds the answer, as for `exact_match`.

    Reads the `answer` column (or `column`): a JSON object, as a dict or as
    JSON text. None for a row whose gold is missing or not a JSON object.
    """
    _check_column("json_object_match", column)
    return GoldReward("json_object_match", _json_object_score, column, fmt=_format("json_object_match", answer_format))


@register("json_field_match", aliases=("json_fields",), family=FAMILY)
def json_field_match(column: str = "answer", answer_format: Any = None):
    """Share of the gold JSON object's fields that the completion's object has with the same value.

    Partial credit where `json_object_match` is all or nothing. The object is
    read as for `json_object_match` (the answer tag, a fenced block, the whole
    text, else the last object in the text). Nested objects count field by
    field (`{"a": {"b": 1, "c": 2}}` has the fields a.b and a.c); a list or
    any other value is one field. A field counts when the answer has it with an
    equal value, types included (`"31"` is not `31`, `false` is not `0`).
    Score = matching fields / (gold fields + extra fields the answer adds), so
    1.0 only for the gold object, and inventing keys costs. An object of empty
    strings, zeros and `false` built from the key list earns only the fields
    whose gold value happens to be empty, zero or false. 0.0 when the answer
    holds no JSON object.

    - `answer_format`: which tag holds the answer, as for `exact_match`.

    Reads the `answer` column (or `column`): a JSON object, as a dict or as
    JSON text. None for a row whose gold is missing or not a JSON object.
    """
    _check_column("json_field_match", column)
    return GoldReward("json_field_match", _json_field_score, column, fmt=_format("json_field_match", answer_format))


def _fields(obj: dict) -> dict[tuple, Any]:
    """path -> value for every field of a JSON object, nested objects opened (an empty one is a value)."""
    out: dict[tuple, Any] = {}
    stack: list[tuple[tuple, dict]] = [((), obj)]
    while stack:  # no recursion: an answer nested 10,000 deep must score 0, not fail to None
        prefix, node = stack.pop()
        for key, value in node.items():
            path = (*prefix, key)
            if isinstance(value, dict) and value:
                stack.append((path, value))
            else:
                out[path] = value
    return out


def _json_field_score(text: str, gold: Any, fmt: AnswerFormat = DEFAULT) -> float | None:
    expected = gold_json_object(gold)
    if expected is None:
        return None
    tagged = fmt.tagged(text[-100_000:])
    answer = committed_json(tagged or text)
    if not isinstance(answer, dict):
        return 0.0
    want, got = _fields(expected), _fields(answer)
    if not want and not got:
        return 1.0  # gold {} answered {}
    hits = sum(1 for path, value in want.items() if path in got and same_json(got[path], value))
    return hits / len(want.keys() | got.keys())


def gold_json_object(value: Any) -> dict | None:
    """A gold answer as a JSON object (a dict, or JSON text of one); None otherwise."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str) or not value.lstrip().startswith("{"):
        return None
    try:
        parsed = loads_json(value)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _json_object_score(text: str, gold: Any, fmt: AnswerFormat = DEFAULT) -> float | None:
    expected = gold_json_object(gold)
    if expected is None:
        return None
    tagged = fmt.tagged(text[-100_000:])
    return float(same_json(committed_json(tagged or text), expected))


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values, types included. Python's `==` says `True == 1` and `1 == 1.0`;
    JSON has booleans apart from numbers (so `true` is not `1`), and one number type
    (so `1` is `1.0`)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b
