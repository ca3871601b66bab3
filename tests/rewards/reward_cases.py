"""The reward contract's cases: how each built-in reward is scored, and what it cannot score.

Shared by test_contract.py (the contract, in-process) and test_spawn.py (the
same rewards shipped to spawned workers).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grpokit.rewards import get, names
from grpokit.rewards import registry

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
    # Tool-use rewards read a trajectory (a message list with tool calls); plain text has no calls.
    "tool_call_success": Case({"no_call_score": 0.5}, {}, None, "an episode without calls scores no_call_score"),
    "tool_calls": Case({}, {}, None, "calls can be counted in any completion (0 in plain text)"),
    "malformed_tool_call": Case({"penalty": -0.5}, {}, None, "a raw call marker is visible in any text"),
    "tool_turn_limit": Case({}, {}, None, "any completion either ends on an unanswered call or not"),
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
    # Judged by the real local judge (judge_local.py; base_url filled in by build): one group request per batch.
    "llm_judge": Case({"mode": "group", "rubric": "summary", "retries": 1}, {"prompts": "What is 1 + 1?"}, None,
                      "a judge grades any completion, even an empty one, prompt or not"),
    # The bundled model with a fresh seeded value head: scores mean nothing but must repeat everywhere.
    # 64 tokens: the hostile 100 kB texts cost a 135M forward pass each, cut short they cost little.
    "reward_model": Case({"path": "bundled:smollm2-135m-instruct", "batch_size": 2, "max_length": 64},
                         {"prompts": "What is 1 + 1?"}, None, "a reward model scores any text, with or without a prompt"),
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
    "numeric_closeness": Case({"tolerance": 0.1, "take": "first"}, {"answer": "2"}, {"answer": "Answer is forty two."},
                              "a gold with no number"),
    "json_object_match": Case({"answer_format": {"reasoning_tag": "think", "answer_tag": "answer"}},
                              {"answer": '{"name": "Ada", "age": 36}'}, {"answer": "42"}, "a gold that is not a JSON object"),
    "json_field_match": Case({"answer_format": {"reasoning_tag": "think", "answer_tag": "answer"}},
                             {"answer": '{"name": "Ada", "age": 36}'}, {"answer": "42"}, "a gold that is not a JSON object"),
    "numeric_match": Case({"rel_tol": 0.01, "answer_format": {"reasoning_tag": "think", "answer_tag": "answer"}},
                          {"answer": "2"}, {"answer": "Answer is forty two."}, "a gold with no number"),
    "reasoning_quality": Case({"target_steps": 2}, {}, None, "steps and connectives can be counted in any text"),
    "reference_overlap": Case({"max_n": 1}, {"reference": "the sum is 2"}, {"reference": None}, "no reference text"),
    "regex_format": Case({"pattern": r"\d+"}, {}, None, "any text either matches the pattern or not"),
    "restated_expression": Case({"either_order": False}, {"expression": "1 + 1"}, {"expression": None},
                                "a row with no expression"),
    "repetition_penalty": Case({"n": 2}, {}, None, "repetition can be counted in any text"),
    "soft_overlong_punishment": Case({"max_len": 20, "cache": 5}, {"completion_ids": [1, 2, 3]}, {},
                                     "no completion_ids and no tokenizer: the length in tokens is unknown"),
    "soft_xml_format": Case({"tags": ["think", "answer"]}, {}, None, "format is visible in any text"),
    "strict_xml_format": Case({"allow_empty": True}, {}, None, "format is visible in any text"),
    "tag_count": Case({"tags": ["think", "answer"]}, {}, None, "format is visible in any text"),
    "think_format": Case({"require_open": False}, {}, None, "format is visible in any text"),
}


def builtin(name: str) -> bool:
    return registry._REGISTRY[name].factory.__module__.startswith("grpokit.rewards.")


BUILTINS = [n for n in names() if builtin(n)]


def columns_for(case: Case, rows: int, which: dict | None = None) -> dict[str, list]:
    return {key: [value] * rows for key, value in (case.columns if which is None else which).items()}


def as_messages(completions: list[str]) -> list[list[dict]]:
    return [[{"role": "assistant", "content": text}] for text in completions]


# Rewards that need a server: the contract runs them against the real local judge.
SERVER_REWARDS = {"llm_judge"}


def build(name: str) -> Any:
    params = dict(CASES[name].params)
    if name in SERVER_REWARDS:
        from judge_local import judge_url

        params["base_url"] = judge_url()
    return get(name, **params)
