"""Rewards that pay the committed answer's values, not its look (issue 34, "shipped recipes the probe passes
but a policy games").

Each class has a generator of attacks, run against the reward alone and against the shipped recipe's
weighted total on the recipe's own data rows:
- placeholder JSON: an object of empty/zero/false/null values built from the key list or schema the prompt gives;
- non-JSON that parses: NaN, Infinity, overflowing numbers; a bracket in prose;
- a wrong number near the gold inside a fuzzy match;
- a citation set that is not the answer-holding sources (another real document, a wider range or list).
"""
from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from grpokit.completions import committed_json
from grpokit.rewards import get

ROOT = Path(__file__).resolve().parents[2]


def _recipe(name: str):
    from grpokit.config.run_config import load_config
    from grpokit.probe.config import build, data_rows

    cfg = load_config(str(ROOT / "configs" / name), [])
    funcs, weights = build(cfg.rewards, cfg.data.answer_format)
    return funcs, weights, data_rows(cfg, 20)


def _total(funcs, weights, completion: str, row: dict) -> float:
    columns = {k: [v] for k, v in row.items() if k != "prompt"}
    return sum(w * (f([completion], prompts=[row["prompt"]], **columns)[0] or 0.0) for f, w in zip(funcs, weights))


# ------------------------------------------------------------------ strict JSON

NOT_JSON_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1E400", "123e456"]


@pytest.mark.parametrize("literal", NOT_JSON_NUMBERS)
def test_nan_infinity_and_overflow_are_not_json_numbers(literal):
    from grpokit.completions import loads_json

    with pytest.raises(ValueError):
        loads_json(f'{{"age": {literal}}}')
    for text in (f'{{"age": {literal}}}', f'```json\n{{"age": {literal}}}\n```', f'Answer: {{"age": {literal}}}'):
        assert committed_json(text) is None


@pytest.mark.parametrize("literal", NOT_JSON_NUMBERS)
def test_schema_bounds_are_not_passed_by_nan_or_infinity(literal):
    schema = {"type": "object", "required": ["age"], "properties": {"age": {"type": "number", "minimum": 18, "maximum": 90}}}
    assert get("json_schema")([f'{{"age": {literal}}}'], schema=[schema]) == [0.0]
    assert get("json_schema")(['{"age": 30}'], schema=[schema]) == [1.0]  # an honest number in range still validates
    assert get("json_format")([f'{{"age": {literal}}}']) == [0.0]
    assert get("json_field_match")([f'{{"age": {literal}}}'], answer=['{"age": 30}']) == [0.0]


# ------------------------------------------------------------ brackets in prose

# Brackets a reply writes without answering in JSON: steps, citations, index lists, ranges.
PROSE_BRACKETS = ["Step [2]: add the numbers.", "as shown in [1, 3]", "See [1-3] and [4].", "values [1, 2, 3] sum to 6",
                  "x[0] = [5]", "The answer is [\"a\"] probably", "[[1]] nested note"]


@pytest.mark.parametrize("text", PROSE_BRACKETS)
def test_json_format_does_not_pay_a_bracket_in_prose(text):
    assert get("json_format")([text]) == [0.0]


@pytest.mark.parametrize("text, expected", [
    ('{"answer": 5}', 1.0),  # the whole text
    ("[1, 2]", 1.0),  # an array that is the whole answer
    ('Here:\n```json\n[1, 2]\n```', 1.0),  # a fenced block is the answer, prose around it or not
    ('Step [1]: read. Result: {"answer": 5}', 1.0),  # a JSON object in prose is still one
    ("[]", 0.0), ("{}", 0.0),  # empty
])
def test_json_format_still_pays_json_answers(text, expected):
    assert get("json_format")([text]) == [expected]


# ------------------------------------------------------------ placeholder JSON

def _placeholders(keys_and_types: dict[str, str]) -> list[dict]:
    """Objects a policy can build from a key list alone: every type's empty value, and each constant."""
    empty = {"string": "", "integer": 0, "number": 0, "boolean": False, "null": None, "array": [], "object": {}}
    objects = [{k: empty.get(t) for k, t in keys_and_types.items()}]
    for constant in ("", 0, 1, False, True, None, "unknown", "N/A"):
        objects.append({k: constant for k in keys_and_types})
    return objects


def _schema_types(schema) -> dict[str, str]:
    schema = json.loads(schema) if isinstance(schema, str) else schema
    return {k: (v or {}).get("type", "string") for k, v in schema["properties"].items()}


def test_json_output_recipe_pays_a_placeholder_less_than_the_gold_on_every_row():
    funcs, weights, rows = _recipe("json-output.yaml")
    assert len(rows) == 20
    for row in rows:
        honest = _total(funcs, weights, row["answer"], row)
        assert honest == pytest.approx(sum(weights)), row["answer"]  # the gold earns everything
        for placeholder in _placeholders(_schema_types(row["schema"])):
            cheat = _total(funcs, weights, json.dumps(placeholder), row)
            assert cheat < honest - 0.5, (row["answer"], placeholder, cheat, honest)


@pytest.mark.parametrize("fields", [2, 3, 5])
def test_json_field_match_pays_only_the_fields_the_placeholder_happens_to_get_right(fields):
    from grpokit.data.synthetic import generate

    reward = get("json_field_match")
    for row in generate("json", (("n", "30"), ("fields", str(fields))), 7):
        gold = json.loads(row["answer"])
        assert reward([row["answer"]], answer=[row["answer"]]) == [1.0]
        for placeholder in _placeholders(_schema_types(row["schema"])):
            lucky = sum(1 for k, v in gold.items() if json.dumps(placeholder[k]) == json.dumps(v))
            assert reward([json.dumps(placeholder)], answer=[row["answer"]]) == [pytest.approx(lucky / len(gold))]


@pytest.mark.parametrize("answer, expected", [
    ('{"a": 1, "b": "x"}', 1.0),
    ('{"b": "x", "a": 1.0}', 1.0),  # key order and 1 vs 1.0 do not matter
    ('{"a": 1}', 0.5),  # a missing field
    ('{"a": 1, "b": "x", "c": 3}', pytest.approx(2 / 3)),  # an invented field costs
    ('{"a": "1", "b": "x"}', 0.5),  # "1" is not 1
    ('{"a": true, "b": "x"}', 0.5),  # true is not 1
    ('Thinking {"a": 1, "b": "x"} ... final: {"a": 2, "b": "x"}', 0.5),  # the committed (last) object is read
    ("[1, 2]", 0.0), ("no json", 0.0), ('{"a": NaN, "b": "x"}', 0.0),
])
def test_json_field_match(answer, expected):
    assert get("json_field_match")([answer], answer=['{"a": 1, "b": "x"}']) == [expected]


def test_json_field_match_opens_nested_objects_and_survives_deep_ones():
    gold = '{"who": {"name": "Ana", "age": 30}, "tags": ["a", "b"]}'
    reward = get("json_field_match")
    assert reward(['{"who": {"name": "Ana", "age": 31}, "tags": ["a", "b"]}'], answer=[gold]) == [pytest.approx(2 / 3)]
    assert reward(['{"who": {"name": "Ana", "age": 30}, "tags": ["b", "a"]}'], answer=[gold]) == [pytest.approx(2 / 3)]
    deep = '{"a": ' * 5000 + "1" + "}" * 5000  # as deep as the parser goes: 0.0, never None
    assert reward([deep], answer=['{"a": 1}']) == [0.0]
    assert reward(['{"a": 1}'], answer=["not an object"]) == [None]


# ------------------------------------------------------------ near-miss numbers

def near_numbers(number: str) -> list[str]:
    """Wrong numbers a policy can write near `number`: off by one or ten, a digit added, dropped, changed or
    swapped, the decimal point moved, the sign flipped."""
    value = int(number)
    out = {str(value + d) for d in (-10, -1, 1, 10)} | {str(value * 10), number + "0", "1" + number, "-" + number}
    if len(number) > 1:
        out |= {number[:i] + number[i + 1:] for i in range(len(number))}  # a digit dropped
        out |= {number[:i] + number[i + 1] + number[i] + number[i + 2:] for i in range(len(number) - 1)}  # swapped
        out |= {number[:i] + "." + number[i:] for i in range(1, len(number))}  # the point moved
    out |= {number[:i] + d + number[i + 1:] for i in range(len(number)) for d in "0123456789"}  # a digit changed
    out.discard(number)
    return sorted(v for v in out if v and v.lstrip("-").lstrip("0") and float(v) != value)


def _kb_rows() -> list[dict]:
    import csv

    with (ROOT / "configs" / "data" / "kb_sample.csv").open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_fuzzy_match_pays_no_wrong_number_near_the_gold():
    import re

    reward = get("fuzzy_match", threshold=0.8)
    tried = 0
    for row in _kb_rows():
        gold = row["answer"]
        for number in re.findall(r"\d+", gold):
            for wrong in near_numbers(number):
                text = re.sub(rf"(?<!\d){number}(?!\d)", wrong, gold, count=1)
                for answer in (text, f"{text} or {gold}", f"{gold} or {text}"):
                    assert reward([f"<answer>{answer}</answer>"], answer=[gold]) == [0.0], (gold, answer)
                    tried += 1
        assert reward([f"<answer>{gold}</answer>"], answer=[gold]) == [1.0]
    assert tried > 1000


@pytest.mark.parametrize("answer, gold, expected", [
    ("140 euros", "14 euros", 0.0), ("14 euros", "14 euros", 1.0), ("14 Euros.", "14 euros", 1.0),
    ("14 euro", "14 euros", pytest.approx(14 / 15)),  # the unit is graded as text
    ("1,000 km", "1000 km", 1.0), ("50%", "50 %", 1.0),  # numbers as numbers, not characters
    ("Mondays", "Monday", pytest.approx(12 / 13)),  # no number: graded as text, as before
    ("room 12", "the manuscript room", 0.0),  # a number the gold does not have
])
def test_fuzzy_match_compares_numbers_as_numbers(answer, gold, expected):
    assert get("fuzzy_match")([f"<answer>{answer}</answer>"], answer=[gold]) == [expected]


# ------------------------------------------------------------ citations

def _citation_forms(ids: tuple[int, ...]) -> list[str]:
    forms = ["[" + ", ".join(map(str, ids)) + "]", "".join(f"[{i}]" for i in ids)]
    if len(ids) > 1 and list(ids) == list(range(ids[0], ids[-1] + 1)):
        forms.append(f"[{ids[0]}-{ids[-1]}]")
    return forms


def test_kb_qa_recipe_citation_pays_only_the_documents_that_hold_the_answer():
    funcs, weights, rows = _recipe("kb-qa-cpu.yaml")
    citation = funcs[[f.__name__ for f in funcs].index("citation")]
    for row in rows:
        n = len(row["sources"])
        holder = int(str(row["answer_sources"]))
        exact = f"<answer>{row['answer']}</answer> [{holder}]"
        columns = {k: [v] for k, v in row.items() if k != "prompt"}
        assert citation([exact], **columns) == [1.0]
        for size in range(1, n + 2):
            for ids in itertools.combinations(range(1, n + 2), size):  # every set, with one id past the documents
                for form in _citation_forms(ids):
                    got = citation([f"<answer>{row['answer']}</answer> {form}"], **columns)[0]
                    if ids == (holder,):
                        assert got == 1.0
                    elif holder in ids:
                        assert got == pytest.approx(1 / len(ids)), (row["answer"], form)  # wider than needed
                    else:
                        assert got == 0.0, (row["answer"], form)  # real documents without the answer


@pytest.mark.parametrize("params, answers, expected", [
    ({"answer_column": "answer"}, ["14 euros"], [1.0, 0.0, pytest.approx(1 / 3), 0.5, 0.0]),
    ({"answer_sources": "holders"}, ["14 euros"], [1.0, 0.0, pytest.approx(1 / 3), 0.5, 0.0]),
    ({"answer_column": "answer"}, ["free parking"], [None] * 5),  # no document holds it: cannot be checked
    ({}, ["14 euros"], [1.0, 1.0, 1.0, 1.0, 0.0]),  # without either, any real document pays, as before
])
def test_citation_against_the_answer_holding_sources(params, answers, expected):
    sources = ["The car park costs 3 euros per hour.", "An adult ticket costs 14 euros.", "Membership costs 60 euros."]
    texts = [f"<answer>{answers[0]}</answer> {c}" for c in ("[2]", "[1]", "[1-3]", "[2, 1]", "[7]")]
    reward = get("citation", after_answer=True, **params)
    assert reward(texts, sources=[sources] * 5, answer=answers * 5, holders=["2"] * 5) == expected


def test_citation_with_several_holders_and_target():
    sources = ["Tickets cost 14 euros.", "Parking costs 3 euros.", "Adults pay 14 euros."]
    one = get("citation", answer_column="answer")
    two = get("citation", answer_column="answer", target=2)
    texts = ["[1]", "[3]", "[1, 3]", "[1-3]", "[2]"]
    kw = {"sources": [sources] * 5, "answer": ["14 euros"] * 5}
    assert one(texts, **kw) == [1.0, 1.0, 1.0, pytest.approx(2 / 3), 0.0]
    assert two(texts, **kw) == [0.5, 0.5, 1.0, pytest.approx(2 / 3), 0.0]


def test_citation_names_a_missing_answer_column():
    from grpokit.rewards.registry import RewardConfigError

    with pytest.raises(RewardConfigError, match="'holders' column"):
        get("citation", answer_sources="holders")(["[1]"], sources=[["a doc"]])
    with pytest.raises(RewardConfigError, match="name of a data column"):
        get("citation", answer_column="")


# ------------------------------------------------------------ the committed object among others

def _hedges(gold: str, wrong: str) -> list[tuple[str, str]]:
    """(completion, the object it ends on): the gold among wrong objects in prose, in every order of three
    (repeats included), and the gold placed at position 64 or 65 before a wrong final object."""
    out = []
    for order in itertools.product((gold, wrong), repeat=3):
        out.append(("Options: " + " then ".join(order) + ".", order[-1]))
        out.append(("\\boxed{" + "} \\boxed{".join(order) + "}", order[-1]))
    for position in (63, 64, 65):
        out.append((" ".join([wrong] * position + [gold, wrong]), wrong))
    return out


@pytest.mark.parametrize("name", ["json_object_match", "json_field_match"])
def test_the_last_object_in_prose_is_the_answer_whatever_came_before(name):
    gold, wrong = '{"name": "Ana", "age": 30}', '{"name": "xAna", "age": 31}'
    reward = get(name)
    for text, last in _hedges(gold, wrong):
        assert reward([text], answer=[gold]) == [1.0 if last == gold else 0.0], text[:120]


def test_a_config_whose_citation_names_an_undelivered_column_is_refused(tmp_path):
    import yaml

    from grpokit.config.run_config import load_config
    from grpokit.errors import ConfigError

    data = tmp_path / "kb.csv"
    data.write_text("question,answer,sources,holds\n" + "How much?,60 euros,Tickets cost 60 euros.|Parking is free.,1\n" * 4,
                    encoding="utf-8")
    cfg = {"name": "kb", "data": {"source": str(data), "eval_size": 0, "columns": {"sources": "sources"},
                                  "answer_column": "answer"},
           "rewards": [{"name": "citation", "params": {"answer_sources": "holds"}}]}
    path = tmp_path / "kb.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"citation's answer_sources reads the `holds` column.*data.columns: \{holds: holds\}"):
        load_config(str(path))
    cfg["data"]["columns"]["holds"] = "holds"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    load_config(str(path))
    cfg["rewards"][0]["params"] = {"answer_column": "answer"}
    cfg["data"]["answer_column"] = None
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    with pytest.raises(ConfigError, match="citation's answer_column reads the `answer` column.*data.answer_column"):
        load_config(str(path))


@pytest.mark.parametrize("name", ["json_object_match", "json_field_match", "json_format"])
def test_prose_of_a_thousand_json_values_commits_to_none(name):
    # Reading every value of 200 kB of "[1]" cost 0.3 s; past 1,000 values there is no answer, gold last or not.
    gold = '{"name": "Ana", "age": 30}'
    reward = get(name)
    assert reward([" ".join(["[1]"] * 1000 + [gold])], answer=[gold]) == [0.0]
    assert reward([" ".join(["[1]"] * 998 + [gold])], answer=[gold]) == [1.0]
    assert committed_json("[1] " * 66_666) is None
