"""Length rewards: shape how long completions are.

Every reward here measures a completion in one `unit`:
  "words"  - whitespace-separated words (no tokenizer needed),
  "chars"  - characters,
  "tokens" - tokens: TRL's `completion_ids` column when the trainer passes it
             (the exact tokens generated), else the `tokenizer` parameter.
`tokenizer` accepts a Hugging Face tokenizer, a callable text -> token list
(or count), or a tokenizer name/path (loaded lazily with transformers). A
"tokens" reward with neither a tokenizer nor `completion_ids` returns None.
A penalty (max_length_penalty, soft_overlong_punishment, cosine_scaled) pays a
completion it cannot measure, among row-mates it did, its floor instead
(grpokit.rewards.unscorable): None counts as 0, above every penalty.
"""
from __future__ import annotations

import math
from typing import Any

from grpokit.completions import texts
from grpokit.rewards._bound import BatchReward
from grpokit.rewards.registry import RewardConfigError, get, register
from grpokit.rewards.unscorable import settled

_UNITS = ("words", "chars", "tokens")


# Characters per token of a BPE tokenizer on English text and LaTeX, roughly: the
# estimate cosine_scaled falls back on when neither token ids nor a tokenizer are given.
CHARS_PER_TOKEN = 4


class _Counter:
    """Measures completions in one unit; built (and checked) at construction."""

    def __init__(self, unit: str | None, tokenizer: Any, default_unit: str, estimate_tokens: bool = False):
        # estimate_tokens: with the default unit and nothing to count tokens with, estimate
        # them from the text (CHARS_PER_TOKEN) instead of leaving the row unscored.
        self.estimate_tokens = estimate_tokens and unit is None and tokenizer is None
        if unit is None:
            unit = "tokens" if tokenizer is not None else default_unit
        if unit not in _UNITS:
            raise RewardConfigError(f"unit must be one of {list(_UNITS)}, got {unit!r}")
        if tokenizer is not None and unit != "tokens":
            raise RewardConfigError(f"a tokenizer only applies to unit='tokens'; drop it or set unit='tokens' (unit is {unit!r})")
        self.unit = unit
        if isinstance(tokenizer, str):
            tokenizer = _load_tokenizer(tokenizer)
        if tokenizer is not None and not (hasattr(tokenizer, "encode") or callable(tokenizer)):
            raise RewardConfigError(
                "tokenizer must be a Hugging Face tokenizer, a callable text -> tokens, or a tokenizer name; "
                f"got {type(tokenizer).__name__}"
            )
        self.tokenizer = tokenizer  # kept as an object (not a closure) so the reward pickles

    def __call__(self, completions, kwargs: dict) -> list[int | None]:
        items = texts(completions)
        if self.unit == "words":
            return [len(text.split()) for text in items]
        if self.unit == "chars":
            return [len(text) for text in items]
        ids = kwargs.get("completion_ids")
        if isinstance(ids, (list, tuple)) and len(ids) == len(items):
            return [len(row) if hasattr(row, "__len__") else None for row in ids]
        if self.tokenizer is None:
            if self.estimate_tokens:
                return [math.ceil(len(text) / CHARS_PER_TOKEN) for text in items]
            return [None] * len(items)
        return [self.count_tokens(text) for text in items]

    def count_tokens(self, text: str) -> int | None:
        tokenizer = self.tokenizer
        try:
            if hasattr(tokenizer, "encode"):
                try:
                    return len(tokenizer.encode(text, add_special_tokens=False))
                except TypeError:  # a tokenizer without add_special_tokens
                    return len(tokenizer.encode(text))
            result = tokenizer(text)
            if isinstance(result, dict) or hasattr(result, "keys"):
                result = result["input_ids"]
            return result if isinstance(result, int) else len(result)
        except Exception:  # noqa: BLE001 - a tokenizer choking on odd text: this row cannot be measured
            return None


def _load_tokenizer(name: str):
    # Lazy: the reward library must not import transformers unless asked to.
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(name)
    except Exception as exc:  # noqa: BLE001 - any failure means the name is unusable here
        raise RewardConfigError(f"could not load tokenizer {name!r} ({exc}); pass a local path or a tokenizer object") from None


def _positive(name: str, value: Any, *, allow_zero: bool = False) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise RewardConfigError(f"{name} must be a finite number {bound}, got {value!r}")
    return float(value)


@register("ideal_length", family="length", examples={"target": 200})
def ideal_length(target: float, tolerance: float | None = None, scale: float | None = None, unit: str | None = None, tokenizer: Any = None):
    """1.0 for completions within `tolerance` of `target` length, falling off smoothly outside.

    Score = 0.5 ** ((excess / scale) ** 2), where excess = max(0, |n - target|
    - tolerance) and n is the completion's length: 1.0 inside the band, 0.5 at
    `scale` beyond it, approaching 0 further out, in [0, 1]. Symmetric: too
    short and too long cost the same.

    Parameters:
      target: the ideal length (required).
      tolerance: half-width of the full-score band (default 10% of target).
      scale: distance beyond the band at which the score halves (default 50% of target).
      unit: "words" (default), "chars" or "tokens" (see the module notes).
      tokenizer: for unit="tokens" when TRL's completion_ids are not available.

    Columns: `completion_ids` (passed by TRL) for unit="tokens".
    """
    target = _positive("target", target)
    tolerance = 0.1 * target if tolerance is None else _positive("tolerance", tolerance, allow_zero=True)
    scale = 0.5 * target if scale is None else _positive("scale", scale)
    counter = _Counter(unit, tokenizer, "words")

    return BatchReward("ideal_length", _ideal_batch, counter=counter, target=target, tolerance=tolerance, scale=scale)


def _ideal_batch(completions, kwargs, counter, target, tolerance, scale):
    out = []
    for n in counter(completions, kwargs):
        excess = None if n is None else max(0.0, abs(n - target) - tolerance)
        out.append(None if excess is None else 0.5 ** ((excess / scale) ** 2))
    return out


@register("min_length", family="length", examples={"min_len": 50})
def min_length(min_len: float, unit: str | None = None, tokenizer: Any = None):
    """1.0 for completions at least `min_len` long; linear partial credit below.

    Score = min(1, n / min_len), in [0, 1]: an empty completion scores 0.0.
    Useful against collapse to one-line answers; pair with a correctness
    reward, since length alone is easy to game.

    Parameters:
      min_len: the shortest length that earns full credit (required).
      unit: "words" (default), "chars" or "tokens".
      tokenizer: for unit="tokens" when TRL's completion_ids are not available.

    Columns: `completion_ids` (passed by TRL) for unit="tokens".
    """
    min_len = _positive("min_len", min_len)
    counter = _Counter(unit, tokenizer, "words")

    return BatchReward("min_length", _min_batch, counter=counter, min_len=min_len)


def _min_batch(completions, kwargs, counter, min_len):
    return [None if n is None else min(1.0, n / min_len) for n in counter(completions, kwargs)]


@register("max_length_penalty", family="length", examples={"max_len": 300})
def max_length_penalty(max_len: float, unit: str | None = None, tokenizer: Any = None):
    """0.0 up to `max_len`; beyond it a penalty growing linearly to -1 at twice `max_len`.

    Score = -min(1, max(0, n - max_len) / max_len), in [-1, 0]. It never
    rewards brevity, it only punishes rambling; for the DAPO-style ramp just
    before a hard limit use `soft_overlong_punishment`. Unscorable: a completion
    that cannot be measured (a tokenizer that fails on it) scores -1 where its
    row-mates were measured; None only when nothing can be measured.

    Parameters:
      max_len: the longest length without penalty (required).
      unit: "words" (default), "chars" or "tokens".
      tokenizer: for unit="tokens" when TRL's completion_ids are not available.

    Columns: `completion_ids` (passed by TRL) for unit="tokens".
    """
    max_len = _positive("max_len", max_len)
    counter = _Counter(unit, tokenizer, "words")

    return BatchReward("max_length_penalty", _max_batch, counter=counter, max_len=max_len)


def _max_batch(completions, kwargs, counter, max_len):
    scores = [None if n is None else -min(1.0, max(0.0, n - max_len) / max_len) for n in counter(completions, kwargs)]
    return settled(scores, kwargs, -1.0)  # text the tokenizer cannot count earns the floor, not None's 0


@register("soft_overlong_punishment", family="length")
def soft_overlong_punishment(max_len: int = 1024, cache: int = 256, unit: str | None = None, tokenizer: Any = None):
    """DAPO's soft overlong punishment: 0 until max_len - cache, then linear down to -1 at max_len.

    With L = max_len, C = cache and n the completion length:
      0                  when n <= L - C
      ((L - C) - n) / C  when L - C < n <= L
      -1                 when n > L
    (Eq. 13 of the DAPO paper, arXiv:2503.14476). Set max_len to the
    trainer's max_completion_length so truncated completions get -1.
    Unscorable: a completion that cannot be measured scores -1 where its
    row-mates were measured; None only when nothing can be measured.

    Parameters:
      max_len: the hard length limit L (default 1024).
      cache: length of the penalty ramp C (default 256; must be <= max_len).
      unit: "tokens" (default: TRL's completion_ids, else `tokenizer`),
        "words" or "chars". With neither unit nor tokenizer given and no
        completion_ids in the call (a direct call, `grpokit rewards test` on
        a JSONL), tokens are estimated as one per 4 characters, so a right
        answer still scores as right rather than None.
      tokenizer: counts tokens when completion_ids are not passed.

    Columns: `completion_ids` (passed by TRL).
    """
    max_len = _positive("max_len", max_len)
    cache = _positive("cache", cache, allow_zero=True)
    if cache > max_len:
        raise RewardConfigError(f"cache ({cache:g}) must not exceed max_len ({max_len:g}); lower cache")
    counter = _Counter(unit, tokenizer, "tokens")
    return BatchReward("soft_overlong_punishment", _overlong_batch, counter=counter, max_len=max_len, cache=cache)


def _overlong_batch(completions, kwargs, counter, max_len, cache):
    free = max_len - cache
    out: list[float | None] = []
    for n in counter(completions, kwargs):
        if n is None:
            out.append(None)
        elif n > max_len:
            out.append(-1.0)
        elif n <= free:
            out.append(0.0)
        else:
            out.append((free - n) / cache)
    return settled(out, kwargs, -1.0)  # text the tokenizer cannot count earns the floor, not None's 0


# What "correct" means when neither correctness= nor correct= is given: the
# cosine reward's home ground is math answers (as in TRL and open-r1).
DEFAULT_CORRECTNESS = "math_equivalence"


def _check_correctness(correctness: Any, correct: Any) -> tuple[Any, Any]:
    """(reward function or None, correct function or None), at most one given; neither means math_equivalence."""
    if correctness is not None and correct is not None:
        raise RewardConfigError(
            "cosine_scaled takes one of correctness= (a reward name such as 'numeric_match', or a reward "
            "function) or correct= (a function text, **row -> bool), not both; drop one"
        )
    if correctness is None and correct is None:
        correctness = DEFAULT_CORRECTNESS
    if correct is not None:
        if not callable(correct):
            raise RewardConfigError(f"correct must be a function text, **row -> bool, got {correct!r}")
        return None, correct
    func = get(correctness) if isinstance(correctness, str) else correctness
    if not callable(func):
        raise RewardConfigError(f"correctness must be a reward name or a reward function, got {correctness!r}")
    return func, None


def _verdicts(completions, kwargs: dict, reward: Any, correct: Any, threshold: float) -> list[bool | None]:
    if reward is not None:
        return [None if s is None else s >= threshold for s in reward(completions, **kwargs)]
    items = texts(completions)
    out: list[bool | None] = []
    for i, text in enumerate(items):
        # the row's own column values, as the `correct` function documents
        row = {k: v[i] for k, v in kwargs.items() if isinstance(v, (list, tuple)) and len(v) == len(items)}
        verdict = correct(text, **row)
        out.append(None if verdict is None else bool(verdict))
    return out


@register("cosine_scaled", family="length")
def cosine_scaled(
    correctness: Any = None,
    correct: Any = None,
    max_len: int = 1000,
    min_value_correct: float = 0.5,
    max_value_correct: float = 1.0,
    min_value_wrong: float = -1.0,
    max_value_wrong: float = -0.5,
    exceed_penalty: float | None = None,
    threshold: float = 1.0,
    unit: str | None = None,
    tokenizer: Any = None,
):
    """Length-aware correctness: short right answers beat long ones, long wrong answers beat short ones.

    The cosine schedule of "Demystifying Long Chain-of-Thought Reasoning in
    LLMs" (Yeo et al., 2025, arXiv:2502.03373). With t = min(n, max_len) and
        cos_fn(t, a, b) = b + 0.5 * (a - b) * (1 + cos(pi * t / max_len))
    (a at t = 0, b at t = max_len):
      correct: cos_fn(t, max_value_correct, min_value_correct)  1.0 -> 0.5
      wrong:   cos_fn(t, min_value_wrong,  max_value_wrong)    -1.0 -> -0.5
    so a correct answer always outscores a wrong one, brevity pays when right,
    and a wrong answer is punished less for having thought longer. With
    `exceed_penalty` set, completions longer than max_len score exactly that
    (the paper's r_e). The paper's values are 2 / 1 / -10 / 0 / r_e = -10;
    the defaults here stay within [-1, 1] to sit next to other rewards.
    Unscorable: a completion whose correctness cannot be judged (an answer
    the math check screens out: 400 digits, `3001!`, an overlong `\\boxed{}`)
    or whose length cannot be measured, while the other completions of its
    row were scored, earns the floor (the lowest of the end points and
    `exceed_penalty`: -1 by default), never None (TRL adds None as 0, above a
    wrong answer's -1). None only where no completion of the row can be judged
    (no gold answer, no way to count tokens).

    Parameters:
      correctness: a reward name (e.g. "numeric_match") or reward function;
        a score >= `threshold` (default 1.0) counts as correct. Default:
        "math_equivalence" (the `answer` column, checked with math-verify).
      correct: instead, a function (text, **row) -> bool | None, called with
        the completion text and that row's columns (answer=..., ...).
      threshold: the correctness score that counts as correct (default 1.0).
      max_len: the length at which the schedule ends (default 1000).
      min_value_correct, max_value_correct, min_value_wrong, max_value_wrong:
        the schedule's end points (see above).
      exceed_penalty: score for completions longer than max_len (default:
        none, they score as if exactly max_len).
      unit: "tokens" (default: TRL's completion_ids, else `tokenizer`),
        "words" or "chars". With neither unit nor tokenizer given and no
        completion_ids in the call (a direct call, `grpokit rewards test` on
        a JSONL), tokens are estimated as one per 4 characters, so a right
        answer still scores as right rather than None.
      tokenizer: counts tokens when completion_ids are not passed.

    Columns: whatever the correctness reward reads (usually `answer`), and
    `completion_ids` (passed by TRL) for unit="tokens".
    """
    reward_func, correct_func = _check_correctness(correctness, correct)
    max_len = _positive("max_len", max_len)
    values = dict(
        min_value_correct=min_value_correct,
        max_value_correct=max_value_correct,
        min_value_wrong=min_value_wrong,
        max_value_wrong=max_value_wrong,
    )
    if exceed_penalty is not None:
        values["exceed_penalty"] = exceed_penalty
    for key, value in values.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise RewardConfigError(f"{key} must be a finite number, got {value!r}")
    if min_value_correct > max_value_correct or min_value_wrong > max_value_wrong:
        raise RewardConfigError("need min_value_correct <= max_value_correct and min_value_wrong <= max_value_wrong")
    if max_value_wrong > min_value_correct:
        raise RewardConfigError(
            f"max_value_wrong ({max_value_wrong}) is above min_value_correct ({min_value_correct}): a long wrong answer "
            "would beat a long right one; lower max_value_wrong"
        )
    counter = _Counter(unit, tokenizer, "tokens", estimate_tokens=True)
    return BatchReward(
        "cosine_scaled",
        _cosine_batch,
        counter=counter,
        reward=reward_func,
        correct=correct_func,
        threshold=float(threshold),
        max_len=max_len,
        correct_range=(float(max_value_correct), float(min_value_correct)),
        wrong_range=(float(min_value_wrong), float(max_value_wrong)),
        exceed_penalty=None if exceed_penalty is None else float(exceed_penalty),
    )


def _cosine_batch(completions, kwargs, counter, reward, correct, threshold, max_len, correct_range, wrong_range, exceed_penalty):
    out: list[float | None] = []
    for ok, n in zip(_verdicts(completions, kwargs, reward, correct, threshold), counter(completions, kwargs)):
        if ok is None or n is None:
            out.append(None)
        elif exceed_penalty is not None and n > max_len:
            out.append(exceed_penalty)
        else:
            # (start, end): the score at zero length and at max_len
            start, end = correct_range if ok else wrong_range
            progress = min(n, max_len) / max_len
            out.append(end + 0.5 * (start - end) * (1.0 + math.cos(math.pi * progress)))
    # An answer the correctness check screens out (400 digits, `3001!`) or a length that cannot be
    # measured, where its row-mates were judged, earns the lowest score, never None's 0 above a wrong -1.
    ends = [*correct_range, *wrong_range] + ([exceed_penalty] if exceed_penalty is not None else [])
    return settled(out, kwargs, min(ends))
