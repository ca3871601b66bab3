"""completions.py: every TRL completion shape becomes text; extractors never raise and stay linear."""

import pytest

from grpokit.completions import (
    code_blocks,
    extract_boxed,
    extract_code_block,
    extract_json,
    extract_tag,
    prompt_text,
    texts,
    to_text,
)

MSG = [{"role": "assistant", "content": "hi"}]


@pytest.mark.parametrize(
    "completion, expected",
    [
        ("plain", "plain"),  # plain-text data sets hand strings through
        (MSG, "hi"),  # conversational: the assistant message's content
        ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], "a"),  # other roles are not the completion
        ([{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}], "ab"),  # several assistant turns join
        ([{"role": "assistant", "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]}], "xy"),  # multimodal parts
        ({"role": "assistant", "content": "d"}, "d"),  # a bare message dict
        ([{"role": "assistant", "content": None}], ""),  # a None content is empty, not "None"
        (None, ""),  # a missing completion is empty text
        ("a\x00b", "a\x00b"),  # NUL bytes are kept, they are text
        ("bad \ud800 half", "bad ? half"),  # a lone surrogate is replaced so encoders downstream cannot fail
    ],
)
def test_to_text(completion, expected):
    assert to_text(completion) == expected


def test_texts_and_prompt_text():
    assert texts(["a", MSG]) == ["a", "hi"]  # mixed batches work item by item
    # prompts keep every turn (system, user) in order, one per line
    assert prompt_text([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]) == "s\nu"


@pytest.mark.parametrize(
    "text, tag, expected",
    [
        ("<answer>5</answer>", "answer", "5"),  # simplest case
        ("<answer>\n line1\n line2\n</answer>", "answer", "line1\n line2"),  # multi-line content, stripped
        ("<answer>1</answer> then <answer>2</answer>", "answer", "2"),  # the last block is the committed one
        ("<answer>1</answer> then <answer>2", "answer", "1"),  # a last block left open does not count
        ("<answer>unclosed", "answer", None),  # no closing tag: nothing to extract
        ("</answer>5<answer>", "answer", None),  # close before open is not a block
        ("<answer><answer>x</answer>", "answer", "x"),  # nested open: the open nearest the last close pairs with it
        ("<final>7</final><answer>8</answer>", "final", "7"),  # any tag name
        ("no tags", "answer", None),  # nothing at all
    ],
)
def test_extract_tag(text, tag, expected):
    assert extract_tag(text, tag) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("so \\boxed{42}", "42"),  # the usual case
        ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),  # nested braces are balanced
        ("\\boxed{1} and \\boxed{2}", "2"),  # the last box wins
        ("\\boxed 7.", "7"),  # brace-less form
        ("\\boxed{unclosed", None),  # unbalanced: nothing
        ("no box", None),
    ],
)
def test_extract_boxed(text, expected):
    assert extract_boxed(text) == expected


@pytest.mark.parametrize(
    "text, language, expected",
    [
        ("```python\nprint(1)\n```", None, "print(1)"),  # closed block
        ("```python\nprint(1)\n```", "py", "print(1)"),  # language aliases
        ("```js\nx\n```\n```python\ny\n```", "python", "y"),  # pick the wanted language
        ("```\nplain\n```", "python", "plain"),  # untagged blocks count for any language
        ("```python\ncut off", None, "cut off"),  # an unterminated final block still has code
        ("```rust\nfn\n```", "python", None),  # no block of that language
        ("no code", None, None),
    ],
)
def test_extract_code_block(text, language, expected):
    assert extract_code_block(text, language) == expected


def test_code_blocks_reports_language_and_closure():
    blocks = code_blocks("```Python title='x'\na\n```\n```sh\nb")
    assert blocks == [("python", "a\n", True), ("sh", "b", False)]  # language lower-cased, final block open


@pytest.mark.parametrize(
    "text, containers_only, expected",
    [
        ('{"a": 1}', False, {"a": 1}),  # whole text is JSON
        ('Here:\n```json\n{"a": 2}\n```', False, {"a": 2}),  # fenced block first
        ('prefix {"a": 3} suffix', False, {"a": 3}),  # embedded object
        ("[1, 2]", False, [1, 2]),  # arrays count
        ("42", False, 42),  # a scalar whole text parses
        ("42", True, None),  # ... unless only objects/arrays are wanted
        ("{broken", False, None),  # nothing parses
        ("[" * 100_000, False, None),  # deep nesting hits RecursionError, which is caught
    ],
)
def test_extract_json(text, containers_only, expected):
    assert extract_json(text, containers_only=containers_only) == expected


PATHOLOGICAL = [
    "`" * 1_000_000,  # a million backticks: fence regex must not backtrack per position
    "<answer>" * 125_000,  # unclosed tags: naive lazy regexes go quadratic
    "{" * 1_000_000,
    "1," * 500_000,
    "\\boxed{" * 100_000,
]


@pytest.mark.parametrize("text", PATHOLOGICAL, ids=["backticks", "open-tags", "braces", "commas", "boxes"])
def test_extractors_stay_fast_on_adversarial_text(text, cpu_clock):
    with cpu_clock() as clock:
        extract_tag(text, "answer")
        extract_code_block(text, "python")
        extract_json(text)
        extract_boxed(text)
    # CPU seconds, so other jobs on the machine cannot break it; quadratic behaviour takes minutes
    assert clock.seconds < 3.0, clock.seconds


@pytest.mark.parametrize(
    "text, expected",
    [
        ('a [1] b {"x": {"y": 2}} c {"z": 3}', [[1], {"x": {"y": 2}}, {"z": 3}]),  # nested objects are not repeated
        ('```json\n{"f": 1}\n```', [{"f": 1}]),  # the fenced block; whole text does not parse
        ("null", []),  # null is "nothing found"
        ("{" * 1000, []),  # only failures, bounded
    ],
)
def test_json_values(text, expected):
    from grpokit.completions import json_values

    assert list(json_values(text)) == expected


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PIECES = st.sampled_from(["<answer>", "</answer>", "```", "```python\n", "\n", "{", "}", "[", "]", '"a"', ":", "\\boxed{", "-1,000.5", "\x00", "\ud800"])
_TEXT = st.lists(st.one_of(_PIECES, st.text(st.characters(blacklist_categories=()), max_size=10)), max_size=25).map("".join)


@settings(max_examples=100, deadline=None, database=None)
@given(_TEXT)
def test_extractors_never_raise(text):
    # model output is arbitrary: every extractor returns a value or None, and to_text always text
    assert isinstance(to_text(text), str) and isinstance(to_text([{"role": "assistant", "content": text}]), str)
    for result in (extract_tag(text, "answer"), extract_boxed(text), extract_code_block(text, "python")):
        assert result is None or isinstance(result, str)
    extract_json(text)
    assert all(isinstance(b, tuple) and len(b) == 3 for b in code_blocks(text))
    # the last tag's content never holds an opening tag (the open nearest the last close pairs with it),
    # and without a closing tag there is nothing
    found = extract_tag(text, "answer")
    assert found is None or "<answer>" not in found
    assert "</answer>" in text or found is None


def _call(name, **arguments):
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


TRAJECTORY = [
    {"role": "assistant", "content": "Let me compute.", "tool_calls": [_call("python", code="x = 6 * 7\nprint(x)")]},
    {"role": "tool", "name": "python", "content": "42"},
    {"role": "assistant", "content": "", "tool_calls": [_call("search", query="primes", top_k=2)]},
    {"role": "tool", "name": "search", "content": "{'error': 'no documents'}"},
    {"role": "assistant", "content": "The answer is 42"},
]


@pytest.mark.parametrize("completion, expected", [
    # A tool trajectory in full: turns, calls (code as written, other arguments as JSON), outputs, in order.
    (TRAJECTORY, "[assistant]\nLet me compute.\n[call python] code:\nx = 6 * 7\nprint(x)\n[python output]\n42\n"
                 '[call search] {"query": "primes", "top_k": 2}\n[search output]\n{\'error\': \'no documents\'}\n'
                 "[assistant]\nThe answer is 42"),
    # An episode that ended on a call that never ran shows the call last.
    (TRAJECTORY[:1], "[assistant]\nLet me compute.\n[call python] code:\nx = 6 * 7\nprint(x)"),
    # Without tool turns nothing changes: the text a reward reads.
    (MSG, "hi"),
    ("plain", "plain"),
    ([{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}], "ab"),
])
def test_transcript_shows_a_tool_trajectory_in_full(completion, expected):
    from grpokit.completions import transcript

    assert transcript(completion) == expected


def test_transcript_never_raises_on_odd_calls():
    from grpokit.completions import transcript

    odd = [{"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "f", "arguments": "not a dict"}},
                                                                  "junk", {"type": "function"}]},
           {"role": "tool", "content": ["part"]}, "stray"]
    text = transcript(odd)
    assert "[call f]" in text and "[call ?]" in text and "[tool output]" in text and "stray" in text
