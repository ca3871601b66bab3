"""The reward contract, checked for every registered built-in reward.

Each reward accepts both completion formats, survives pickle and cloudpickle
(TRL's async workers, spawned loaders and Ray ship rewards between
processes), gives None for a row it cannot score, never raises on hostile
text, documents every parameter, and either works without parameters or
says which one to pass. A built-in reward without a case below fails
`test_every_builtin_reward_has_a_case`, so no reward can skip the contract.
"""
from __future__ import annotations

import inspect
import math
import pickle
import re
from dataclasses import dataclass
from typing import Any

import pytest

from grpokit.rewards import RewardConfigError, describe, get, names
from grpokit.rewards import registry

cloudpickle = pytest.importorskip("cloudpickle")

SAMPLES = [
    "<think>\nStep 1: 1 + 1 = 2\nTherefore the sum is 2.\n</think>\n<answer>\n2\n</answer>",
    "So the answer is $\\boxed{3}$, as stated in [1] (Smith, 2020).",
    "```python\ndef f(x):\n    return x + 1\n```",
    '{"name": "Ada", "age": 36}',
]

# Text a model can write that has broken parsers before: quadratic regexes,
# unclosed markup, power towers, control and bidi characters, huge inputs.
HOSTILE = [
    "",
    "   \n\t ",
    "\x00\x01\x7f\ufeff",
    "<answer>" * 20_000,
    "\\boxed{" * 5_000,
    "$\\boxed{9^{9^{9^{9}}}}$ and 100000!",
    "a." * 50_000,
    "[1-9999]" * 1_000 + "(Smith, 2020)" * 1_000,
    "{" * 10_000 + '"' * 10_000,
    "\u202e\u0645\u0631\u062d\u0628\u0627 \U0001F600 e\u0301 " * 500,
    "```python\n" * 2_000,
    "<think>" * 5_000 + "</think>" * 5_000,
]


@dataclass
class Case:
    params: dict[str, Any]  # non-default parameters: the built reward must keep them through pickling
    columns: dict[str, Any]  # one row's column values, repeated for each sample
    unscorable: dict[str, Any] | None  # one row's columns that cannot be scored (None: every row can be)
    why: str


CASES = {
    "citation": Case({"target": 2}, {"sources": ["Smith (2020): sums of small numbers"]}, None,
                     "a completion without citations scores 0; there is always something to score"),
    "code_block_format": Case({"language": "python"}, {}, None, "format is visible in any text"),
    "code_execution": Case({"timeout": 3.0}, {"tests": "assert f(1) == 2"}, {"tests": None},
                           "a row without tests cannot be graded"),
    "code_syntax_valid": Case({}, {}, None, "any text either compiles or not"),
    "contains_answer": Case({"case_sensitive": True}, {"answer": "2"}, {"answer": None}, "no gold answer"),
    "cosine_scaled": Case({"max_len": 50}, {"answer": "2", "completion_ids": [1, 2, 3]}, {"answer": "Answer is forty two."},
                          "a gold answer math-verify cannot read"),
    "exact_match": Case({"ignore_whitespace": True}, {"answer": "2"}, {"answer": None}, "no gold answer"),
    "fuzzy_match": Case({"threshold": 0.5}, {"answer": "2"}, {"answer": ""}, "an empty gold answer"),
    "group_diversity": Case({"method": "fuzz"}, {"prompts": "What is 1 + 1?"}, {"prompts": "a prompt sampled once"},
                            "a prompt with one completion has nothing to differ from"),
    "ideal_length": Case({"target": 10}, {}, None, "length in words is always measurable"),
    "incremental_format": Case({"trailing_penalty": 0.01}, {}, None, "format is visible in any text"),
    "json_format": Case({"whole": True}, {}, None, "any text either is JSON or not"),
    "json_schema": Case({"partial_max": 0.25}, {"schema": {"type": "object", "required": ["name"]}}, {"schema": None},
                        "a row with no schema cannot be validated"),
    "language_consistency": Case({"binary": True}, {"prompts": "What is one plus one?"}, {"prompts": "12 + 30 = ?"},
                                 "a prompt without letters has no language"),
    "math_equivalence": Case({"timeout": 2.0}, {"answer": "2"}, {"answer": "Answer is forty two."},
                             "a gold answer math-verify cannot read"),
    "max_length_penalty": Case({"max_len": 5}, {}, None, "length in words is always measurable"),
    "min_length": Case({"min_len": 3}, {}, None, "length in words is always measurable"),
    "multiple_choice": Case({"letters": "ABCD"}, {"answer": "B"}, {"answer": "Z"}, "a gold that is not an option letter"),
    "numeric_match": Case({"rel_tol": 0.01}, {"answer": "2"}, {"answer": "Answer is forty two."}, "a gold with no number"),
    "reasoning_quality": Case({"target_steps": 2}, {}, None, "steps and connectives can be counted in any text"),
    "reference_overlap": Case({"max_n": 1}, {"reference": "the sum is 2"}, {"reference": None}, "no reference text"),
    "repetition_penalty": Case({"n": 2}, {}, None, "repetition can be counted in any text"),
    "soft_overlong_punishment": Case({"max_len": 20, "cache": 5}, {"completion_ids": [1, 2, 3]}, {},
                                     "no completion_ids and no tokenizer: the length in tokens is unknown"),
    "soft_xml_format": Case({"tags": ["think", "answer"]}, {}, None, "format is visible in any text"),
    "strict_xml_format": Case({"allow_empty": True}, {}, None, "format is visible in any text"),
    "tag_count": Case({"tags": ["think", "answer"]}, {}, None, "format is visible in any text"),
    "think_format": Case({"require_open": False}, {}, None, "format is visible in any text"),
}


def _builtin(name: str) -> bool:
    return registry._REGISTRY[name].factory.__module__.startswith("grpokit.rewards.")


BUILTINS = [n for n in names() if _builtin(n)]


def _columns(case: Case, rows: int, which: dict | None = None) -> dict[str, list]:
    return {key: [value] * rows for key, value in (case.columns if which is None else which).items()}


def _as_messages(completions: list[str]) -> list[list[dict]]:
    return [[{"role": "assistant", "content": text}] for text in completions]


def _build(name: str) -> Any:
    return get(name, **CASES[name].params)


def _score(reward, completions, columns) -> list:
    scores = reward(completions, **columns)
    assert len(scores) == len(completions)
    for value in scores:
        assert value is None or (isinstance(value, float) and math.isfinite(value)), value
    return scores


def test_every_builtin_reward_has_a_case():
    # A new built-in reward must say here how it is scored and what it cannot score.
    assert sorted(CASES) == sorted(BUILTINS)


@pytest.mark.parametrize("name", BUILTINS)
def test_both_completion_formats_score_the_same(name):
    reward = _build(name)
    columns = _columns(CASES[name], len(SAMPLES))
    plain = _score(reward, SAMPLES, columns)
    assert _score(reward, _as_messages(SAMPLES), columns) == plain
    assert any(s is not None for s in plain), "the case's columns should make the samples scorable"


@pytest.mark.parametrize("with_params", [False, True], ids=["defaults", "params"])
@pytest.mark.parametrize("name", BUILTINS)
@pytest.mark.parametrize("dumps, loads", [(pickle.dumps, pickle.loads), (cloudpickle.dumps, cloudpickle.loads)],
                         ids=["pickle", "cloudpickle"])
def test_pickles_keeps_its_name_and_scores(name, with_params, dumps, loads):
    # "defaults": only what the reward cannot do without (its registered example values).
    reward = _build(name) if with_params else get(name, **registry._REGISTRY[name].examples)
    columns = _columns(CASES[name], len(SAMPLES))
    copy = loads(dumps(reward))
    assert copy.__name__ == reward.__name__ == name  # TRL logs the metric under this name
    assert _score(copy, SAMPLES, columns) == _score(reward, SAMPLES, columns)


@pytest.mark.parametrize("name", BUILTINS)
def test_unscorable_rows_give_none(name):
    case = CASES[name]
    reward = _build(name)
    if case.unscorable is None:
        # The claim that every row can be scored, checked: no columns at all, and an empty completion.
        assert None not in _score(reward, [*SAMPLES, ""], {}), case.why
        return
    # The unscorable row sits alone in its batch (a group of one, for group-wise rewards).
    assert _score(reward, SAMPLES[:1], _columns(case, 1, case.unscorable)) == [None], case.why


@pytest.mark.parametrize("name", BUILTINS)
def test_hostile_text_never_raises(name):
    reward = _build(name)
    _score(reward, HOSTILE, _columns(CASES[name], len(HOSTILE)))
    _score(reward, _as_messages(HOSTILE), _columns(CASES[name], len(HOSTILE)))


@pytest.mark.parametrize("name", BUILTINS)
def test_describe_documents_every_parameter(name):
    entry = registry._REGISTRY[name]
    params = list(inspect.signature(entry.factory).parameters) if entry.is_factory else []
    doc = describe(name)
    undocumented = [p for p in params if not re.search(rf"(?<![\w]){re.escape(p)}(?![\w])", doc)]
    assert undocumented == [], f"{name}'s docstring does not mention {undocumented}"


@pytest.mark.parametrize("name", BUILTINS)
def test_defaults_or_a_named_parameter(name):
    # Either the reward works with no parameters, or the error names the one to pass and shows a value.
    try:
        reward = get(name)
    except RewardConfigError as exc:
        message = str(exc)
        required = [p.name for p in inspect.signature(registry._REGISTRY[name].factory).parameters.values()
                    if p.default is p.empty]
        assert len(required) == 1 and f"needs {required[0]}=" in message and "e.g." in message, message
        assert "..." not in message, f"register {name} with examples={{{required[0]!r}: ...}}"
        return
    assert reward.__name__ == name
