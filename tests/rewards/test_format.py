"""Format rewards: one table per reward; every case runs as a string and as a conversational message list."""
import json
import time

import pytest

from grpokit.rewards import RewardConfigError, describe, get
from grpokit.rewards import format as format_rewards

GOOD = "<reasoning>\n2 + 3 = 5\n</reasoning>\n<answer>\n5\n</answer>"


def score(name, text, **params):
    """Score `text` as a plain string and as a message list; both shapes must agree."""
    columns = params.pop("columns", {})
    func = get(name, **params)
    plain = func([text], **{k: [v] for k, v in columns.items()})
    chat = func([[{"role": "assistant", "content": text}]], **{k: [v] for k, v in columns.items()})
    assert plain == chat, f"{name}: string and conversational completions scored differently"
    return plain[0]


STRICT = [
    (GOOD, 1.0),  # right: both blocks, multi-line contents (needs DOTALL-style matching)
    ("<reasoning>a</reasoning><answer>b</answer>", 1.0),  # right: no whitespace at all
    ("  \n" + GOOD + "\n\n", 1.0),  # surrounding whitespace is not text
    (GOOD + "\nHope this helps!", 0.0),  # near miss: trailing text after </answer>
    ("Sure! " + GOOD, 0.0),  # near miss: leading chatter
    ("<reasoning>a</reasoning> so <answer>b</answer>", 0.0),  # text between the blocks
    ("<answer>b</answer><reasoning>a</reasoning>", 0.0),  # wrong order
    ("<reasoning>a<reasoning>b</reasoning></reasoning><answer>c</answer>", 0.0),  # nested tags
    ("<reasoning>a</reasoning><answer>b</answer><answer>c</answer>", 0.0),  # repeated block
    ("<reasoning>a<answer>b</reasoning></answer>", 0.0),  # interleaved: answer opens inside reasoning
    ("<reasoning>a</reasoning><answer>  </answer>", 0.0),  # empty answer is not an answer
    ("<reasoning>a</reasoning>", 0.0),  # wrong: answer missing
    ("", 0.0),  # empty completion
    ("   \n ", 0.0),  # whitespace only
]


@pytest.mark.parametrize("text, expected", STRICT)
def test_strict_xml_format(text, expected):
    assert score("strict_xml_format", text) == expected


@pytest.mark.parametrize(
    "text, params, expected",
    [
        ("<think>x</think><answer>y</answer>", {"tags": ["think", "answer"]}, 1.0),  # configurable tags
        ("<reasoning>a</reasoning><answer>b</answer>", {"tags": ["think", "answer"]}, 0.0),  # other tags do not count
        ("<reasoning>a</reasoning><answer></answer>", {"allow_empty": True}, 1.0),  # empty blocks when allowed
        ("<answer>42</answer>", {"tags": "answer"}, 1.0),  # a single tag given as a string
    ],
)
def test_strict_xml_format_params(text, params, expected):
    assert score("strict_xml_format", text, **params) == expected


SOFT = [
    (GOOD, 1.0),  # right
    ("Let me think.\n<reasoning>\nmany\nlines\n</reasoning>\ntext\n<answer>5</answer>\nbye", 1.0),  # chatter allowed
    ("<answer>5</answer><reasoning>r</reasoning>", 0.0),  # near miss: order matters
    ("<reasoning>r</reasoning><answer>5", 0.0),  # near miss: answer never closed
    ("<reasoning>r<answer>5</answer>", 0.0),  # reasoning never closed before the answer
    ("no tags at all", 0.0),  # wrong
    ("", 0.0),
    ("\t\n", 0.0),
]


@pytest.mark.parametrize("text, expected", SOFT)
def test_soft_xml_format(text, expected):
    assert score("soft_xml_format", text) == expected


INCREMENTAL = [
    (GOOD, 1.0),  # every marker once, nothing after </answer>
    (GOOD + "\n\n  ", 1.0),  # trailing whitespace is free
    (GOOD + "abcdefghij", 1.0 - 0.01),  # 10 trailing characters at 0.001 each
    (GOOD + "x" * 10_000, 0.5),  # penalty capped at max_penalty
    ("<reasoning>\nhalf way", 0.25),  # near miss: one of four markers
    ("<reasoning>a</reasoning><answer>b", 0.75),  # three of four markers
    ("<reasoning>a</reasoning><reasoning>b</reasoning><answer>c</answer>", 0.5),  # duplicated tags earn nothing
    ("nothing", 0.0),  # wrong
    ("", 0.0),
    (" ", 0.0),
]


@pytest.mark.parametrize("text, expected", INCREMENTAL)
def test_incremental_format(text, expected):
    assert score("incremental_format", text) == pytest.approx(expected)


def test_incremental_format_params():
    # four-tag format: each marker is worth 1/8
    assert score("incremental_format", "<a>1</a><b>2", tags=["a", "b", "c", "d"]) == pytest.approx(3 / 8)
    # trailing text after the final tag's closing marker, with a custom rate
    assert score("incremental_format", "<a>x</a>tail", tags=["a"], trailing_penalty=0.1) == pytest.approx(0.6)


TAG_COUNT = [
    (GOOD, 1.0),  # both pairs once
    ("<reasoning>a</reasoning> <answer>b", 0.5),  # near miss: answer never closed
    ("</answer>b<answer><reasoning>a</reasoning>", 0.5),  # answer's markers in the wrong order
    ("<reasoning>a</reasoning><reasoning>a</reasoning><answer>b</answer>", 0.5),  # reasoning repeated
    (GOOD + " trailing text", 1.0),  # tag_count ignores trailing text (incremental_format does not)
    ("none", 0.0),
    ("", 0.0),
]


@pytest.mark.parametrize("text, expected", TAG_COUNT)
def test_tag_count(text, expected):
    assert score("tag_count", text) == expected


JSON_FORMAT = [
    ('{"answer": 5}', {}, 1.0),  # right: the whole text
    ('The result:\n```json\n{"answer": 5}\n```', {}, 1.0),  # JSON inside prose
    ('{"answer": 5', {}, 0.0),  # near miss: truncated
    ("42", {}, 0.0),  # a bare scalar is not a JSON document
    ("Let \\{\\} be the empty set and x[] an array", {}, 0.0),  # empty {} / [] in LaTeX or code prose are not answers
    ("{} {\"a\": 1}", {}, 1.0),  # ... but a real object later in the text still counts
    ("no json here", {}, 0.0),  # wrong
    ('{"answer": 5}', {"whole": True}, 1.0),  # whole: just JSON
    ('\n```json\n[1, 2]\n```\n', {"whole": True}, 1.0),  # whole: one fenced block is still only JSON
    ('Here it is: {"answer": 5}', {"whole": True}, 0.0),  # whole: prose around it fails
    ('{"a": 1}\n{"b": 2}', {"whole": True}, 0.0),  # whole: two documents
    ("", {}, 0.0),
    ("  ", {"whole": True}, 0.0),
]


@pytest.mark.parametrize("text, params, expected", JSON_FORMAT)
def test_json_format(text, params, expected):
    assert score("json_format", text, **params) == expected


SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}, "tags": {"type": "array"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}

JSON_SCHEMA = [
    ('{"name": "Ada", "age": 36}', SCHEMA, 1.0),  # right
    ('Sure:\n```json\n{"name": "Ada", "age": 36}\n```', SCHEMA, 1.0),  # fenced JSON in prose
    ('{"name": "Ada"}', SCHEMA, 0.25),  # near miss: one of two required keys -> 0.5 * 1/2
    ('{"name": "Ada", "age": "36"}', SCHEMA, 0.25),  # wrong type: that key does not count
    ('{"name": "Ada", "age": 36, "extra": 1}', SCHEMA, 0.5),  # both keys fine, object still invalid -> capped at 0.5
    ("[1, 2]", SCHEMA, 0.0),  # valid JSON of the wrong shape
    ("not json", SCHEMA, 0.0),  # wrong: nothing to validate
    ('{"name": "Ada", "age": 36}', json.dumps(SCHEMA), 1.0),  # the column may hold a JSON string
    ('{"name": "Ada", "age": 36}', "{not a schema", None),  # unparseable schema in a row: cannot score
    ('{"name": "Ada", "age": 36}', {"type": "no-such-type"}, None),  # invalid schema in a row: cannot score
    ('{"a": 1}', {"$ref": "https://example.com/remote.json"}, None),  # unresolvable remote $ref: no network, no raise
    ("", SCHEMA, 0.0),
]


@pytest.mark.parametrize("text, schema, expected", JSON_SCHEMA)
def test_json_schema_column(text, schema, expected):
    assert score("json_schema", text, columns={"schema": schema}) == expected


def test_json_schema_parameter_and_precedence():
    func = get("json_schema", schema={"type": "object", "required": ["x"]})
    # rows without a schema fall back to the parameter; a row's own schema wins
    assert func(['{"x": 1}', '{"x": 1}'], schema=[None, {"type": "array"}]) == [1.0, 0.0]
    # no column at all: the parameter applies to every row
    assert func(['{"x": 1}', "{}"]) == [1.0, 0.0]
    # neither column nor parameter: the rows cannot be scored
    assert get("json_schema")(['{"x": 1}']) == [None]


@pytest.mark.parametrize(
    "params, fragment",
    [
        ({"schema": {"type": "no-such-type"}}, "not a valid JSON schema"),  # caught at construction
        ({"schema": "{broken"}, "not a valid JSON schema"),
        ({"partial_max": 1.5}, "partial_max"),
    ],
)
def test_json_schema_bad_params(params, fragment):
    with pytest.raises(RewardConfigError, match=fragment):
        get("json_schema", **params)


CODE_BLOCK = [
    ("Here:\n```python\nprint(1)\n```", {}, 1.0),  # right
    ("```\nx = 1\n```", {}, 1.0),  # any language when none is required
    ("```python\nprint(1)\n```", {"language": "py"}, 1.0),  # aliases
    ("```\nprint(1)\n```", {"language": "python"}, 0.5),  # near miss: untagged when python was asked for
    ("```js\nx\n```", {"language": "python"}, 0.5),  # near miss: other language
    ("```python\nprint(1)", {}, 0.5),  # near miss: cut off before the closing fence
    ("```python\n\n```", {}, 0.0),  # an empty block is not code
    ("print(1)", {}, 0.0),  # wrong: no fence
    ("", {}, 0.0),
]


@pytest.mark.parametrize("text, params, expected", CODE_BLOCK)
def test_code_block_format(text, params, expected):
    assert score("code_block_format", text, **params) == expected


THINK = [
    ("<think>\nstep 1\nstep 2\n</think>\nThe answer is 5.", {}, 1.0),  # right, multi-line thinking
    ("  <think>x</think> 5", {}, 1.0),  # leading whitespace is fine
    ("<think>x</think>", {}, 0.0),  # near miss: no answer after thinking
    ("<think>x</think>   \n", {}, 0.0),  # whitespace is not an answer
    ("Okay. <think>x</think> 5", {}, 0.0),  # text before <think>
    ("<think>a</think><think>b</think> 5", {}, 0.0),  # two think blocks
    ("<think>a <think>b</think> 5", {}, 0.0),  # nested open
    ("x</think> 5", {}, 0.0),  # opening tag required by default
    ("x</think> 5", {"require_open": False}, 1.0),  # ... but not when the template opened it in the prompt
    ("The answer is 5", {}, 0.0),  # wrong
    ("", {}, 0.0),
]


@pytest.mark.parametrize("text, params, expected", THINK)
def test_think_format(text, params, expected):
    assert score("think_format", text, **params) == expected


@pytest.mark.parametrize(
    "name, params",
    [
        ("strict_xml_format", {"tags": ["<answer>"]}),  # brackets in a tag name
        ("strict_xml_format", {"tags": []}),  # no tags
        ("soft_xml_format", {"tags": ["a", "a"]}),  # duplicate tag
        ("incremental_format", {"trailing_penalty": -1}),
        ("json_format", {"whole": "yes"}),
        ("code_block_format", {"language": ""}),
        ("think_format", {"unknown": 1}),  # unknown parameter names the valid ones
    ],
)
def test_bad_params_raise_config_error(name, params):
    with pytest.raises(RewardConfigError):
        get(name, **params)


@pytest.mark.parametrize(
    "name",
    ["strict_xml_format", "soft_xml_format", "incremental_format", "tag_count", "json_format", "json_schema", "code_block_format", "think_format"],
)
def test_stable_names_and_docs(name):
    # TRL logs each reward under __name__; the catalogue uses the docstring's first line
    assert get(name).__name__ == name
    doc = describe(name)
    assert doc.splitlines()[0].endswith(".") and "Columns:" in doc


def test_mixed_batch_keeps_order():
    func = get("strict_xml_format")
    assert func([GOOD, "bad", [{"role": "assistant", "content": GOOD}]]) == [1.0, 0.0, 1.0]


@pytest.mark.parametrize(
    "text, expected",
    [
        ('Step [1]: add.\n{"name": "Ada", "age": 36}', 1.0),  # an array in prose before the object the schema wants
        ('{"note": {"name": "x"}} then {"name": "Ada", "age": 36}', 1.0),  # the last object in prose is the answer
        # A valid draft quoted before a broken final answer: the final one is scored (half its required keys).
        ('Draft: {"name": "Ada", "age": 36}. Final: {"name": "Ada"}', 0.25),
        ('Final: {"name": "Ada"}', 0.25),
        # A fenced block is what the completion commits to, whatever the prose around it holds.
        ('{"name": "Ada", "age": 36}\n```json\n{"name": 7}\n```', 0.0),
    ],
)
def test_json_schema_scores_the_committed_value_of_the_schemas_type(text, expected):
    assert score("json_schema", text, columns={"schema": SCHEMA}) == expected


def test_no_false_positives_on_real_math_responses(shared_data):
    # 800 Qwen2.5-Math responses: LaTeX full of braces, some Python blocks, no XML tags
    rows = [json.loads(line) for line in (shared_data / "math_cot100_labeled.jsonl").open()]
    texts = [c for row in rows for c in row["code"]]
    for name in ("json_format", "strict_xml_format", "soft_xml_format", "incremental_format", "tag_count", "think_format"):
        assert set(get(name)(texts)) == {0.0}, name
    # code_block_format fires exactly on the responses that carry a ```python block
    code = get("code_block_format", language="python")(texts)
    assert [s == 1.0 for s in code] == ["```python\n" in t for t in texts]


REGEX = [
    # (text, params, expected)
    (" 85", {}, 1.0),  # the default: a bare number, surrounding whitespace aside
    ("-3.5\n", {}, 1.0),  # negative and decimal numbers
    (" 85\nQuestion: what next?", {}, 0.0),  # talk after the number
    ("85 apples", {}, 0.0),  # the whole answer must match
    ("", {}, 0.0),  # nothing
    ("yes", {"pattern": "(yes|no)"}, 1.0),  # a user pattern
    ("yes!", {"pattern": "(yes|no)"}, 0.0),  # full match, not search
    ("1" * 20_000, {}, 0.0),  # longer than any answer: not read
]


@pytest.mark.parametrize("text, params, expected", REGEX)
def test_regex_format(text, params, expected):
    assert score("regex_format", text, **params) == expected


# Texts near the default pattern's edges, and the ones that make a number regex backtrack most.
DEFAULT_PATTERN_TEXTS = [
    "85", "-85", "--85", "-", ".5", "5.", "5.5", "5.5.5", "-0.25", " 7 ", "1,000", "\u0663\u0664", "\uff17",
    "1e5", "12a", "a12", "1" * 9_999 + "x", "1" * 5_000 + "." + "1" * 4_000 + "x", "1." * 4_000, "-" * 9_000,
]


def test_the_default_pattern_scores_as_the_time_bounded_matcher_does():
    # The default runs on `re` without a bound; a user pattern with the same text keeps the bound.
    default = get("regex_format")
    bounded = get("regex_format", pattern="(?:" + format_rewards.DEFAULT_ANSWER_PATTERN + ")")
    assert default(DEFAULT_PATTERN_TEXTS) == bounded(DEFAULT_PATTERN_TEXTS)
    assert sum(default(DEFAULT_PATTERN_TEXTS)) == 7


def test_the_default_pattern_is_linear_on_the_texts_that_make_number_regexes_backtrack():
    default = get("regex_format")
    start = time.thread_time()
    default(DEFAULT_PATTERN_TEXTS[-4:] * 10)
    assert time.thread_time() - start < 0.1


@pytest.mark.parametrize("pattern, message", [("(", "not a valid regular expression"), ("", "must be a regular expression")])
def test_regex_format_bad_pattern(pattern, message):
    with pytest.raises(RewardConfigError, match=message):
        get("regex_format", pattern=pattern)
