"""The one place that turns TRL's completion formats into text, plus extractors.

TRL hands a reward either a list of strings (plain-text data sets) or a list of
message lists (conversational data sets). Every reward goes through `texts()` so
none of them has to care which.  Extractors never raise on model output: they
return None when there is nothing to extract.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Callable, Iterable, Iterator

# Completions are model output; cap what the regex engines ever see so a 1 MB
# completion cannot make a reward slow. Rewards that need the whole text use it.
_MAX_SCAN = 200_000


def to_text(completion: Any) -> str:
    """One completion (a string, a message dict, or a list of messages) as text."""
    if completion is None:
        return ""
    if isinstance(completion, str):
        return _clean(completion)
    if isinstance(completion, dict):
        return _clean(_content_text(completion.get("content", "")))
    if isinstance(completion, (list, tuple)):
        # Conversational: the assistant's turns, joined. A list of plain strings
        # (rare, e.g. a tokenizer-decoded chunk list) is joined too.
        parts = []
        for message in completion:
            if isinstance(message, dict):
                if message.get("role", "assistant") == "assistant":
                    parts.append(_content_text(message.get("content", "")))
            else:
                parts.append(str(message))
        return _clean("".join(parts))
    return _clean(str(completion))


def is_trajectory(completion: Any) -> bool:
    """A multi-turn completion of a run with tools: it holds a tool call or a tool message."""
    return isinstance(completion, (list, tuple)) and any(
        isinstance(m, dict) and (m.get("role") == "tool" or m.get("tool_calls")) for m in completion)


def transcript(completion: Any) -> str:
    """A completion as readable text; a tool trajectory in full, turn by turn.

    A plain completion is `to_text`. A trajectory (runs with `tools:`) shows every
    assistant turn, each tool call (a single string argument such as code is shown
    as written, others as JSON) and each tool's output, in order:

        [assistant]
        Let me compute.
        [call python] code:
        print(6 * 7)
        [python output]
        42
        [assistant]
        The answer is 42
    """
    if not is_trajectory(completion):
        return to_text(completion)
    parts = []
    for message in completion:
        if not isinstance(message, dict):
            parts.append(str(message))
            continue
        role = message.get("role", "assistant")
        content = _content_text(message.get("content", ""))
        if role == "tool":
            parts.append(f"[{message.get('name') or 'tool'} output]\n{content}")
            continue
        if content.strip() or not message.get("tool_calls"):
            parts.append(f"[{role}]\n{content}")
        for call in message.get("tool_calls") or []:
            parts.append(_call_text(call))
    return _clean("\n".join(parts))


def _call_text(call: Any) -> str:
    function = call.get("function", call) if isinstance(call, dict) else {}
    name = function.get("name", "?") if isinstance(function, dict) else "?"
    arguments = function.get("arguments", {}) if isinstance(function, dict) else {}
    if isinstance(arguments, dict) and len(arguments) == 1 and isinstance(next(iter(arguments.values())), str):
        [(key, value)] = arguments.items()
        return f"[call {name}] {key}:\n{value}"
    try:
        shown = json.dumps(arguments, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        shown = str(arguments)
    return f"[call {name}] {shown}"


def _content_text(content: Any) -> str:
    # Multimodal messages carry a list of {"type": "text", "text": ...} parts.
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)


def _clean(text: str) -> str:
    # Lone surrogates (invalid UTF-16 halves) break regex-free encoders later on
    # (json.dumps is fine, but .encode() is not); NUL bytes are kept as text.
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def texts(completions: Iterable[Any]) -> list[str]:
    """Every completion of a batch as text."""
    return [to_text(c) for c in completions]


def prompt_text(prompt: Any) -> str:
    """A prompt (string or message list) as text: every turn, any role."""
    if prompt is None:
        return ""
    if isinstance(prompt, str):
        return _clean(prompt)
    if isinstance(prompt, (list, tuple)):
        return _clean("\n".join(_content_text(m.get("content", "")) if isinstance(m, dict) else str(m) for m in prompt))
    return to_text(prompt)


def extract_tag(text: str, tag: str) -> str | None:
    """Content of the last `<tag>...</tag>`, stripped (multi-line); None when there is no closed pair.

    The one tag extractor: the answer format (grpokit.answer_format)
    reads answers with it. The last closing tag, then the nearest opening tag
    before it, found with two reverse searches, so it stays linear on hostile
    text (`"<answer>" * 100_000`), where a non-greedy regex is quadratic.
    """
    close = text.rfind(f"</{tag}>")
    if close < 0:
        return None
    open_ = text.rfind(f"<{tag}>", 0, close)
    if open_ < 0:
        return None
    return text[open_ + len(tag) + 2 : close].strip()


def extract_boxed(text: str) -> str | None:
    """Content of the last `\\boxed{...}` (or `\\fbox{...}`), braces balanced."""
    text = text[-_MAX_SCAN:]
    start = max(text.rfind("\\boxed"), text.rfind("\\fbox"))
    if start < 0:
        return None
    brace = text.find("{", start)
    if brace < 0:
        # `\boxed 5` without braces
        rest = text[start:].split(None, 1)
        return rest[1].split()[0].strip("$.") if len(rest) > 1 and rest[1].split() else None
    depth = 0
    for i in range(brace, len(text)):
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[brace + 1 : i].strip()
    return None


# The info string is bounded and backtick-free so that a failed match costs
# O(200), not O(rest of line): a line of 100k backticks must stay linear.
_FENCE = re.compile(r"```([^`\n]{0,200})\n(.*?)(```|\Z)", re.DOTALL)
_LANG = re.compile(r"[\w+#.-]*")
_LANG_ALIASES = {
    "python": {"python", "py", "python3"},
    "javascript": {"javascript", "js"},
    "typescript": {"typescript", "ts"},
    "bash": {"bash", "sh", "shell", "zsh"},
    "cpp": {"cpp", "c++", "cc", "cxx"},
}


def code_blocks(text: str) -> list[tuple[str, str, bool]]:
    """Every fenced code block as (language, body, closed), in order.

    `language` is the lower-cased first word of the info string ("" when
    absent); `closed` is False for a final fence cut off by the length limit.
    """
    blocks = []
    for info, body, end in _FENCE.findall(text[:_MAX_SCAN]):
        lang = _LANG.match(info.strip()).group(0).lower()
        blocks.append((lang, body, end == "```"))
    return blocks


def language_matches(block_language: str, wanted: str) -> bool:
    """Whether a fence's language tag names `wanted` (aliases: py, js, sh, ...)."""
    wanted = wanted.lower()
    group = next((names for names in _LANG_ALIASES.values() if wanted in names), {wanted})
    return block_language in group


def extract_code_block(text: str, language: str | None = None) -> str | None:
    """The last fenced code block (optionally only blocks of `language`).

    An unterminated final fence counts: a completion cut at the length limit
    still carries its code. With `language`, untagged blocks count too.
    """
    blocks = [(lang, body) for lang, body, _ in code_blocks(text)]
    if language is not None:
        blocks = [b for b in blocks if b[0] == "" or language_matches(b[0], language)]
    if not blocks:
        return None
    return blocks[-1][1].rstrip("\n")


def extract_json(text: str, *, containers_only: bool = False) -> Any | None:
    """The first JSON object or array in the text (a fenced ```json block first).

    Returns the parsed value, or None when nothing parses. A whole text that is
    a JSON scalar (`42`, `"yes"`) counts unless `containers_only`.
    """
    for value in json_values(text):
        if not containers_only or isinstance(value, (dict, list)):
            return value
    return None


def committed_json(text: str, wanted: Callable[[Any], bool] | None = None) -> Any | None:
    """The JSON value a completion commits to as its answer, or None.

    A fenced ```json block, else the whole text, else the LAST object or array in
    the prose that `wanted` accepts (default: any): an answer comes after the
    reasoning, so an object quoted on the way (the gold among guesses, a draft) is
    not the answer. Reading the first one paid for the gold mentioned anywhere
    before a wrong final object. Prose with more than 1,000 JSON values commits to
    none (None). JSON is read strictly (`loads_json`).
    """
    text = text[:_MAX_SCAN]
    for value in _whole_json_values(text):
        return value
    # Every embedded value in order, repeats included: with repeats dropped, "wrong, gold,
    # wrong" read the gold as last. Past _MAX_EMBEDDED values the text commits to none
    # (no answer is prose around a thousand JSON values): reading only the first N would
    # take the gold placed N-th before a wrong final object, and reading them all costs
    # 0.3 s on 200 kB of "[1]".
    last = None
    for count, value in enumerate(_embedded_json_values(text)):
        if count >= _MAX_EMBEDDED:
            return None
        if isinstance(value, (dict, list)) and (wanted is None or wanted(value)):
            last = value
    return last


_MAX_EMBEDDED = 1000


def _not_json(literal: str) -> float:
    raise ValueError(f"{literal} is not a JSON number")


def _finite(literal: str) -> float:
    value = float(literal)
    if value in (math.inf, -math.inf):  # 1e999 overflows to inf: a bound check would pass it
        raise ValueError(f"{literal} overflows a JSON number")
    return value


# JSON (RFC 8259) has no NaN or Infinity, but Python's json module reads them as floats by
# default; NaN then passes every schema bound (NaN < 18 and NaN > 90 are both false), so
# `{"age": NaN}` validated against minimum 18 / maximum 90. Model output is parsed strictly.
_DECODER = json.JSONDecoder(parse_constant=_not_json, parse_float=_finite)


def loads_json(text: str) -> Any:
    """`json.loads` for model output: strict JSON, so NaN, Infinity and numbers that overflow to inf raise ValueError."""
    return _DECODER.decode(text)


def _whole_json_values(text: str) -> Iterator[Any]:
    """The fenced ```json (or untagged) block, then the whole text, each where it parses (never `null`)."""
    fenced = extract_code_block(text, "json")
    for candidate in ([fenced] if fenced else []) + [text.strip()]:
        try:
            value = loads_json(candidate)
        except (ValueError, RecursionError):
            continue
        if value is not None:
            yield value


def json_values(text: str, limit: int = 8) -> Iterator[Any]:
    """Up to `limit` JSON values found in the text, in order of preference.

    First a fenced ```json (or untagged) block, then the whole text, then each
    object or array embedded in prose, left to right (an embedded value's own
    nested objects are not yielded again). `null` is never yielded.
    """
    text = text[:_MAX_SCAN]
    seen: list[Any] = []  # the fenced block is met again by the scan below
    found = 0
    for value in _whole_json_values(text):
        if value not in seen:
            seen.append(value)
            found += 1
            yield value
            if found >= limit:
                return
    for value in _embedded_json_values(text):
        if value in seen:
            continue
        seen.append(value)
        found += 1
        yield value
        if found >= limit:
            return


def _embedded_json_values(text: str) -> Iterator[Any]:
    """Each object or array embedded in the text, left to right, repeats included (not their nested values)."""
    pos, failures = 0, 0
    # Bounded: a completion full of braces must not make this quadratic.
    while failures < 64:
        match = _JSON_START.search(text, pos)
        if match is None:
            return
        try:
            value, end = _DECODER.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            failures += 1
            pos = match.start() + 1
            continue
        pos = end
        yield value


_JSON_START = re.compile(r"[\[{]")
