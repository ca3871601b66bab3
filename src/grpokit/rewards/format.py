"""Format rewards: does the completion have the shape the task asked for?

Every reward here reads only the completion (plus the `schema` column for
`json_schema`). Scores are in [0, 1] except `incremental_format`, whose
trailing-text penalty can take it below 0 (down to -max_penalty).
Tag matching is plain `str.find`/`str.count`, never a backtracking regex, so a
1 MB completion full of half-open tags costs linear time.
"""
from __future__ import annotations

import json
import re
from itertools import islice
from typing import Any, Iterator, Sequence

from grpokit.completions import code_blocks, committed_json, language_matches, loads_json, texts
from grpokit.rewards import _user_patterns
from grpokit.rewards._bound import BatchReward, TextReward
from grpokit.answer_format import AnswerFormat, check_tag, tags_in_order
from grpokit.rewards.registry import RewardConfigError, register


def _check_tags(tags: Any, param: str = "tags") -> tuple[str, ...]:
    if isinstance(tags, str):
        tags = (tags,)
    try:
        tags = tuple(tags)
    except TypeError:
        raise RewardConfigError(f"{param} must be a list of tag names like ['reasoning', 'answer'], got {tags!r}") from None
    if not tags:
        raise RewardConfigError(f"{param} must name at least one tag, e.g. ['reasoning', 'answer']")
    for tag in tags:
        check_tag(tag, param)
    if len(set(tags)) != len(tags):
        raise RewardConfigError(f"{param} lists a tag twice: {list(tags)}; list each tag once")
    return tags


def _resolve_tags(tags: Any, answer_format: Any) -> tuple[str, ...]:
    """The tags a format reward checks: its own `tags`, else the answer format's (default reasoning, answer)."""
    if tags is not None and answer_format is not None:
        raise RewardConfigError(
            "give tags or answer_format, not both: answer_format sets the tags (reasoning tag, then answer tag)"
        )
    if tags is not None:
        return _check_tags(tags)
    return AnswerFormat.of(answer_format).tags


def _markers(tag: str) -> tuple[str, str]:
    return f"<{tag}>", f"</{tag}>"


def _strict_ok(text: str, tags: tuple[str, ...], allow_empty: bool) -> bool:
    # Each tag exactly once (this also rules out nested or repeated blocks),
    # blocks back to back in order, only whitespace around and between them.
    pos = 0
    for tag in tags:
        opening, closing = _markers(tag)
        if text.count(opening) != 1 or text.count(closing) != 1:
            return False
        start = text.find(opening)
        if start < pos or text[pos:start].strip():  # interleaved, or text between blocks
            return False
        content_start = start + len(opening)
        end = text.find(closing, content_start)
        if end < 0:
            return False
        if not allow_empty and not text[content_start:end].strip():
            return False
        pos = end + len(closing)
    return not text[pos:].strip()


@register("strict_xml_format", family="format")
def strict_xml_format(tags: Sequence[str] | None = None, allow_empty: bool = False, answer_format: Any = None):
    """1.0 when the whole completion is exactly `<reasoning>...</reasoning><answer>...</answer>`.

    Scores 1.0 or 0.0. The blocks must come in the order of `tags`, each tag
    exactly once (no nested or repeated blocks), with nothing but whitespace
    before, between and after them. Block contents may span many lines.

    Parameters:
      tags: tag names in order (default: the answer format's, ["reasoning",
        "answer"]); e.g. ["think", "answer"].
      allow_empty: accept a block with only whitespace inside (default False).
      answer_format: the run's answer format, e.g. {reasoning_tag: think,
        answer_tag: final}; a run config sets it once as `data.answer_format`
        (then leave tags out).

    Columns: none.
    """
    tags = _resolve_tags(tags, answer_format)

    return TextReward("strict_xml_format", _strict_ok, tags=tags, allow_empty=bool(allow_empty))


def _soft_ok(text: str, tags: tuple[str, ...]) -> bool:
    # Open and close of each tag, in order, anywhere in the text; whatever
    # lies between (several lines, prose) is fine. The same check as
    # evaluation's format rate (AnswerFormat.has_format).
    return tags_in_order(text, tags)


@register("soft_xml_format", family="format")
def soft_xml_format(tags: Sequence[str] | None = None, answer_format: Any = None):
    """1.0 when `<reasoning>...</reasoning>` and `<answer>...</answer>` appear in order anywhere.

    Scores 1.0 or 0.0. Lenient: text before, between and after the blocks is
    allowed, blocks may span lines, and repeats do not matter. Use
    `strict_xml_format` for the exact shape, `incremental_format` for partial
    credit.

    Evaluation's format rate counts the same shape.

    Parameters:
      tags: tag names in order (default: the answer format's, ["reasoning", "answer"]).
      answer_format: the run's answer format, e.g. {reasoning_tag: think,
        answer_tag: final}; a run config sets it once as `data.answer_format`.

    Columns: none.
    """
    tags = _resolve_tags(tags, answer_format)

    return TextReward("soft_xml_format", _soft_ok, tags=tags)


def _incremental_score(text: str, tags: tuple[str, ...], per_char: float, max_penalty: float) -> float:
    markers = [m for tag in tags for m in _markers(tag)]
    credit = sum(1 for m in markers if text.count(m) == 1) / len(markers)
    # Text after the last closing tag is what a model learns to ramble into;
    # it costs per character (whitespace is free), never more than max_penalty.
    last_close = _markers(tags[-1])[1]
    end = text.rfind(last_close)
    penalty = 0.0
    if end >= 0:
        trailing = len(text) - end - len(last_close) - _trailing_space(text, end + len(last_close))
        penalty = min(max_penalty, per_char * trailing)
    return credit - penalty


def _trailing_space(text: str, start: int) -> int:
    # Whitespace characters after `start` (without copying a 1 MB tail twice).
    tail = text[start:]
    return len(tail) - len("".join(tail.split()))


@register("incremental_format", family="format")
def incremental_format(tags: Sequence[str] | None = None, trailing_penalty: float = 0.001, max_penalty: float = 0.5,
                       answer_format: Any = None):
    """Partial credit for each expected tag opened and closed exactly once, minus trailing text.

    Each opening and closing marker (`<answer>`, `</answer>`, ...) that appears
    exactly once earns 1/(2 * number of tags), so a perfect completion scores
    1.0 and a model that has learnt half the format gets half. Characters
    (whitespace excluded) after the final closing tag cost `trailing_penalty`
    each, at most `max_penalty`, so the score lies in [-max_penalty, 1].
    A dense signal for the first steps of training, when strict format
    rewards are all zero.

    Parameters:
      tags: tag names (default: the answer format's, ["reasoning", "answer"]);
        the last one's closing tag marks the end of the expected output.
      trailing_penalty: penalty per character after that closing tag (0.001).
      max_penalty: cap on the trailing-text penalty (0.5).
      answer_format: the run's answer format, e.g. {reasoning_tag: think,
        answer_tag: final}; a run config sets it once as `data.answer_format`.

    Columns: none.
    """
    tags = _resolve_tags(tags, answer_format)
    for pname, value in (("trailing_penalty", trailing_penalty), ("max_penalty", max_penalty)):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value < float("inf"):
            raise RewardConfigError(f"{pname} must be a finite number >= 0, got {value!r}")
    return TextReward(
        "incremental_format", _incremental_score, tags=tags, per_char=float(trailing_penalty), max_penalty=float(max_penalty)
    )


def _tag_count_score(text: str, tags: tuple[str, ...]) -> float:
    good = 0
    for tag in tags:
        opening, closing = _markers(tag)
        if text.count(opening) == 1 and text.count(closing) == 1 and text.find(opening) < text.find(closing):
            good += 1
    return good / len(tags)


@register("tag_count", family="format")
def tag_count(tags: Sequence[str] | None = None, answer_format: Any = None):
    """Share of expected tags that appear as exactly one well-ordered `<tag>...</tag>` pair.

    A tag counts when its opening and closing markers each appear exactly once
    and the opening comes first; the score is (tags that count) / (number of
    tags). Unlike `incremental_format`, a lone opening tag earns nothing and
    trailing text is not penalised.

    Parameters:
      tags: tag names (default: the answer format's, ["reasoning", "answer"]).
      answer_format: the run's answer format, e.g. {reasoning_tag: think,
        answer_tag: final}; a run config sets it once as `data.answer_format`.

    Columns: none.
    """
    tags = _resolve_tags(tags, answer_format)

    return TextReward("tag_count", _tag_count_score, tags=tags)


def _whole_json(text: str) -> bool:
    stripped = text.strip()
    # A reply that is one fenced ```json block and nothing else is still "only JSON".
    if len(stripped) > 6 and stripped.startswith("```") and stripped.endswith("```"):
        newline = stripped.find("\n")
        body = stripped[newline + 1 : -3] if newline > 0 else ""
        if newline > 0 and "`" not in stripped[3:newline] and "```" not in body:
            stripped = body
    try:
        value = loads_json(stripped)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, (dict, list))


@register("json_format", family="format")
def json_format(whole: bool = False):
    """1.0 when the completion's answer is (or, with whole=True, the completion is) a JSON object or array.

    Scores 1.0 or 0.0. By default the answer is the value the completion
    commits to (`completions.committed_json`): a fenced ```json block, else the
    whole text, either a non-empty object or array; else, in prose, the last
    non-empty JSON *object*. A bracket in prose is not a JSON answer ("Step [2]",
    "see [1, 3]" parse as arrays), nor are the `{}` and `[]` of LaTeX and code.
    With `whole=True` the completion, stripped, must parse as one object or
    array; a single fenced ```json block around it is allowed. Bare scalars
    (`42`, `"yes"`) never count, and JSON is read strictly: `NaN`, `Infinity`
    and numbers that overflow (`1e999`) are not JSON.

    Parameters:
      whole: require the entire completion to be JSON (default False).

    Columns: none.
    """
    if not isinstance(whole, bool):
        raise RewardConfigError(f"whole must be true or false, got {whole!r}")

    return TextReward("json_format", _whole_json if whole else _answer_json)


def _prose_object(value: Any) -> bool:
    return isinstance(value, dict) and bool(value)


def _answer_json(text: str) -> bool:
    value = committed_json(text, _prose_object)
    return isinstance(value, (dict, list)) and bool(value)


# The shipped default: an integer or decimal number.
DEFAULT_ANSWER_PATTERN = r"-?\d+(?:\.\d+)?"

# Patterns whose full match costs time linear in the text, so they need no time bound and run
# on the standard `re` (the bounded `regex` call costs ~4 us per completion, mostly setting up
# its timeout: 8x what this reward otherwise costs). For the default: a full match starts at
# position 0 only; `-?` is one choice; `\d+` backtracks at most once per digit it took, and at
# each of those positions the rest (`(?:\.\d+)?` then the end) fails or succeeds on its first
# character unless that character is the '.', which only the first non-digit can be, so the
# inner `\d+` runs once: at most 2n steps on n characters. Any other pattern (a user's) keeps
# the time bound, since telling in general whether a pattern backtracks is not cheap to prove.
# (`re` reads `\d` by Python's Unicode tables, as this reward did before it had a bound; the
# `regex` module's newer tables also count digits of scripts encoded since.)
_LINEAR_PATTERNS = frozenset({DEFAULT_ANSWER_PATTERN})


@register("regex_format", aliases=("pattern_format",), family="format")
def regex_format(pattern: str = DEFAULT_ANSWER_PATTERN):
    """1.0 when the whole completion (surrounding whitespace aside) matches `pattern`, else 0.0.

    For answers whose shape is the format: a bare number (the default), a
    yes/no, a date, a single letter. With prompts that end where the answer
    goes (`... 47 + 38 =`), a model that writes the number and stops scores
    1.0; one that goes on talking after it scores 0.0, and so learns to stop.

    Parameters:
      pattern: a Python regular expression the whole answer must match
        (default: an integer or decimal number, e.g. `-12`, `3.5`).

    Columns: none. Completions longer than 10,000 characters score 0.0
    unread (no answer shape is that long). The pattern runs with a time bound
    (grpokit.rewards._user_patterns: 0.03 s per completion); a completion on
    which it backtracks past that scores 0.0, as a non-match. The default
    pattern, whose match time is linear in the text, needs no bound.
    """
    if not isinstance(pattern, str) or not pattern:
        raise RewardConfigError(f"regex_format: pattern must be a regular expression, e.g. '(yes|no)', got {pattern!r}")
    try:
        compiled = _user_patterns.compile_pattern(pattern)
    except _user_patterns.PatternError as exc:
        raise RewardConfigError(f"regex_format: pattern {exc}") from None
    if pattern in _LINEAR_PATTERNS:
        return TextReward("regex_format", _linear_regex_ok, compiled=re.compile(pattern))
    return TextReward("regex_format", _regex_ok, compiled=compiled)


def _linear_regex_ok(text: str, compiled: "re.Pattern") -> bool:
    stripped = text.strip()
    return len(stripped) <= 10_000 and compiled.fullmatch(stripped) is not None


def _regex_ok(text: str, compiled) -> bool:
    stripped = text.strip()
    if len(stripped) > 10_000:
        return False
    try:  # one match: its own budget, without the shared one's bookkeeping
        return compiled.fullmatch(stripped, timeout=_user_patterns.BUDGET_S) is not None
    except TimeoutError:
        return False


@register("code_block_format", family="format")
def code_block_format(language: str | None = None):
    """1.0 when the completion contains a closed, non-empty fenced code block (of `language`, if given).

    Scores: 1.0 for a closed ``` block with a non-blank body (and, when
    `language` is set, tagged with it: ```python, ```py ...); 0.5 for a near
    miss (a block left unterminated, or tagged with another or no language);
    0.0 when there is no code block.

    Parameters:
      language: required language tag, e.g. "python" (default: any).

    Columns: none.
    """
    if language is not None and (not isinstance(language, str) or not language.strip()):
        raise RewardConfigError(f"language must be a language name like 'python' or omitted, got {language!r}")

    return TextReward("code_block_format", _code_block_score, language=language)


def _code_block_score(text: str, language: str | None) -> float:
    best = 0.0
    for lang, body, closed in code_blocks(text):
        if not body.strip():
            continue
        if closed and (language is None or language_matches(lang, language)):
            return 1.0
        best = 0.5
    return best


@register("think_format", family="format")
def think_format(require_open: bool = True):
    """1.0 when the completion is one `<think>...</think>` block followed by a non-empty answer.

    Scores 1.0 or 0.0. The completion must start (after whitespace) with
    `<think>`, contain exactly one `<think>` and one `</think>`, and have some
    non-whitespace text after `</think>`: the answer.

    Parameters:
      require_open: set False for chat templates (DeepSeek-R1 style) that put
        `<think>` in the prompt, so the completion starts inside the block and
        has no opening tag (one is still accepted).

    Columns: none.
    """
    if not isinstance(require_open, bool):
        raise RewardConfigError(f"require_open must be true or false, got {require_open!r}")

    return TextReward("think_format", _think_ok, require_open=require_open)


def _think_ok(text: str, require_open: bool) -> bool:
    if text.count("</think>") != 1:
        return False
    opens = text.count("<think>")
    if opens > 1 or (opens == 0 and require_open):
        return False
    if opens == 1 and not text.lstrip().startswith("<think>"):
        return False
    return bool(text[text.find("</think>") + len("</think>") :].strip())


def _load_schema(schema: Any) -> Any:
    # The column may hold a dict or a JSON string (CSV/Parquet data sets).
    if isinstance(schema, str):
        return json.loads(schema)
    return schema


def _validator_for(schema: Any):
    """A jsonschema validator for `schema`; raises jsonschema's SchemaError when invalid.

    Its regular expressions (`pattern`, `patternProperties`) come from the data and
    run on completions, so they run bounded (grpokit.rewards._user_patterns), not on
    `re`; a pattern the bounded matcher cannot compile makes the schema invalid. Not
    covered: `unevaluatedProperties` (2019-09+) finds the keys `patternProperties`
    evaluated with jsonschema's own helper, which still uses `re`.
    """
    from jsonschema.validators import validator_for

    if not isinstance(schema, (dict, bool)):
        raise TypeError(f"a JSON schema is an object, got {type(schema).__name__}")
    cls = validator_for(schema)
    cls.check_schema(schema)
    for pattern in _schema_patterns(schema):
        _user_patterns.compile_pattern(pattern)
    return _bounded_class(cls)(schema)


def _schema_patterns(schema: Any, depth: int = 0) -> Iterator[str]:
    """Every `pattern` and `patternProperties` key in a schema, at any depth."""
    if depth > 200:
        return
    if isinstance(schema, dict):
        if isinstance(schema.get("pattern"), str):
            yield schema["pattern"]
        if isinstance(schema.get("patternProperties"), dict):
            yield from schema["patternProperties"]
        for value in schema.values():
            yield from _schema_patterns(value, depth + 1)
    elif isinstance(schema, list):
        for value in schema:
            yield from _schema_patterns(value, depth + 1)


_BOUNDED_CLASSES: dict[type, type] = {}


def _bounded_class(cls: type) -> type:
    """`cls` with the keywords that match patterns on the instance (its strings, its keys) bounded."""
    if cls not in _BOUNDED_CLASSES:
        from jsonschema.validators import extend

        _BOUNDED_CLASSES[cls] = extend(cls, {"pattern": _pattern, "patternProperties": _pattern_properties,
                                             "additionalProperties": _additional_properties})
    return _BOUNDED_CLASSES[cls]


def _pattern(validator, pattern, instance, schema):
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _user_patterns.search(pattern, instance):
        yield ValidationError(f"{instance[:80]!r} does not match {pattern!r}")


def _pattern_properties(validator, patterns, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _user_patterns.search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator, allowed, instance, schema):
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    known = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [key for key in instance
              if key not in known and not any(_user_patterns.search(p, key) for p in patterns)]
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif allowed is False and extras:
        shown = ", ".join(repr(key[:80]) for key in sorted(extras)[:20])
        yield ValidationError(f"additional properties are not allowed ({shown} unexpected)")


class _ValidatorCache:
    # A batch repeats each row's schema num_generations times; compiling and
    # check_schema-ing once per distinct schema keeps this fast. Bounded, so a
    # data set with a schema per row cannot grow it without limit.
    def __init__(self, size: int = 256):
        self.size = size
        self.items: dict[str, Any] = {}

    def __getstate__(self):
        # compiled validators stay behind when the reward is pickled; they rebuild on use
        return {"size": self.size, "items": {}}

    def get(self, schema: Any):
        """The validator, or None when the schema itself is broken."""
        try:
            key = schema if isinstance(schema, str) else json.dumps(schema, sort_keys=True)
        except (TypeError, ValueError):
            return None
        if key in self.items:
            return self.items[key]
        try:
            validator = _validator_for(_load_schema(schema))
        except Exception:  # noqa: BLE001 - any broken schema means "this row cannot be scored"
            validator = None
        if len(self.items) >= self.size:
            self.items.pop(next(iter(self.items)))
        self.items[key] = validator
        return validator


_NOTHING = object()
_JSON_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _pick_instance(text: str, schema: Any) -> Any:
    """The JSON value to validate: the one the completion commits to (completions.committed_json).

    In prose that is the last value of the schema's top-level type: a reply like
    "Step [1]: ... {"answer": 5}" holds an array before the object the schema
    asks for, and a valid object quoted before a broken final one is a draft, not
    the answer (taking the first paid for it).
    """
    wanted = schema.get("type") if isinstance(schema, dict) else None
    kinds = _JSON_TYPES.get(wanted) if isinstance(wanted, str) else None
    of_kind = None if kinds is None else (lambda v: isinstance(v, kinds) and not (kinds is not bool and isinstance(v, bool)))
    value = committed_json(text, of_kind)
    if value is None and of_kind is not None:
        value = committed_json(text)  # no value of that type: score what is there (it fails the schema)
    return _NOTHING if value is None else value


def _schema_score(validator, instance: Any, partial_max: float) -> float | None:
    try:
        with _user_patterns.budget():  # every pattern match of this completion shares one budget
            errors = list(islice(validator.iter_errors(instance), 1000))
        if not errors:
            return 1.0
        schema = validator.schema
        required = schema.get("required") if isinstance(schema, dict) else None
        if not isinstance(instance, dict) or not isinstance(required, list) or not required:
            return 0.0
        # A required key counts when present and no validation error lies
        # under it, so a right key with a wrong type earns less than a right one.
        blamed = {error.absolute_path[0] for error in errors if error.absolute_path}
        good = sum(1 for key in required if isinstance(key, str) and key in instance and key not in blamed)
        return partial_max * good / len(required)
    except RecursionError:
        return None  # a pathological recursive schema/instance pair: not scoreable
    except Exception:  # noqa: BLE001 - e.g. an unresolvable $ref in the row's schema
        return None


@register("json_schema", family="format")
def json_schema(schema: Any = None, partial_max: float = 0.5):
    """1.0 when the completion's JSON validates against the schema; partial credit for required keys.

    The JSON is a fenced ```json block, else the completion itself, else the
    last object/array of the schema's type in the text (a draft quoted before
    the final answer is not scored). JSON is read strictly, so `NaN` and
    `Infinity` (which pass every `minimum`/`maximum`) are not numbers: such an
    answer does not parse. This reward checks shape, not truth: an object of
    empty strings and zeros validates a schema of strings and integers, so pair
    it with a reward that compares values with a gold answer (`json_field_match`).
    Scores: 1.0 when it validates; otherwise, for a
    JSON object, `partial_max` x (share of the schema's top-level `required`
    keys that are present with a value their property schema accepts); 0.0
    when no JSON is found or nothing counts. None when the row has no usable
    schema (missing, or not a valid JSON schema): that row cannot be scored.

    Parameters:
      schema: a JSON schema (dict or JSON string) used for rows whose `schema`
        column is empty or absent; checked at construction.
      partial_max: the most a non-validating answer can earn (default 0.5,
        must be in [0, 1)).

    The schema's `pattern` and `patternProperties` regexes run with a time bound
    (0.03 s per completion, all matches together); a string or key on which a
    pattern backtracks past it counts as not matching.

    Columns: `schema` (optional; a dict or JSON string per row, overrides the
    `schema` parameter).
    """
    if not isinstance(partial_max, (int, float)) or isinstance(partial_max, bool) or not 0 <= partial_max < 1:
        raise RewardConfigError(f"partial_max must be a number in [0, 1), got {partial_max!r}")
    if schema is not None:
        try:
            _validator_for(_load_schema(schema))
        except Exception as exc:  # noqa: BLE001 - report any flavour of bad schema the same way
            message = getattr(exc, "message", None) or str(exc)
            raise RewardConfigError(
                f"json_schema: the schema parameter is not a valid JSON schema ({message}); fix it, "
                "or leave it out and give a `schema` column"
            ) from None
    return BatchReward("json_schema", _json_schema_batch, default=schema, partial_max=float(partial_max), _cache=_ValidatorCache())


def _json_schema_batch(completions, kwargs: dict, default: Any, partial_max: float, _cache: "_ValidatorCache") -> list:
    items = texts(completions)
    column = kwargs.get("schema")
    rows = column if isinstance(column, (list, tuple)) else [column] * len(items)
    scores: list[float | None] = []
    for i, text in enumerate(items):
        row = rows[i] if i < len(rows) else None
        use = default if row is None or row == "" else row
        validator = None if use is None else _cache.get(use)
        if validator is None:
            scores.append(None)
            continue
        instance = _pick_instance(text, validator.schema)
        scores.append(0.0 if instance is _NOTHING else _schema_score(validator, instance, partial_max))
    return scores
