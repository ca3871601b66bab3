"""Hostile completions for the rewards, and the parameters and columns each reward is called with.

The battery tests/rewards/test_worst_case.py times (quick=True) and benchmarks/reward_worst_case.py
measures in full: 1 MB of prose, runs of newlines and spaces, digit runs, nested and unclosed
brackets, repeated unclosed tags, huge numbers past a math screen, deeply nested JSON, bait for
catastrophic backtracking in a schema `pattern`.
"""
from __future__ import annotations

import json

# A common e-mail regex: catastrophic backtracking on 26 characters under Python's `re`.
EMAIL = r"^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$"
SCHEMA = {"type": "object", "properties": {"email": {"type": "string", "pattern": EMAIL}, "answer": {"type": "number"}},
          "required": ["email"], "patternProperties": {"^x_([a-z]+)*$": {"type": "string"}}}

PARAMS = {
    "ideal_length": {"target": 100},
    "min_length": {"min_len": 20},
    "max_length_penalty": {"max_len": 200},
    "soft_overlong_punishment": {"max_len": 200, "cache": 50, "unit": "words"},
    "cosine_scaled": {"max_len": 200, "unit": "words"},
    "json_schema": {"schema": SCHEMA},
    "regex_format": {"pattern": r"(a|aa)+$"},
    "restated_expression": {},
}

# Columns a reward reads differently from the rest (a letter gold, a JSON gold).
COLUMNS = {
    "multiple_choice": {"answer": "C"},
    "json_object_match": {"answer": json.dumps({"answer": 42, "email": "bob@example.com"})},
}

HUGE = [r"9^{\left(9^{9}\right)}", r"{1000000}!", r"\Gamma(10^{7})", r"10^{10^{10}}", r"\binom{10^{7}}{5000000}",
        r"e^{10^{9}}", r"\left(2^{3}\right)^{100000000}", r"(10!)!"]


def battery(quick: bool) -> dict[str, str]:
    """name -> hostile completion. Quick: the same kinds, smaller (tests time them on a loaded machine)."""
    k = 10 if quick else 1
    mb = 1_000_000 // k
    out = {
        "prose_1mb": ("The quick brown fox jumps over the lazy dog. " * (mb // 45 + 1))[:mb],
        "newlines_20k": "\n" * (20_000 // k),
        "newlines_40k": "\n" * (40_000 // k),
        "newlines_then_answer": "\n" * (20_000 // k) + "The answer is 42.",
        "spaces_100k": " " * (100_000 // k) + "x",
        "answer_then_spaces": "answer" + " " * (100_000 // k) + "!",
        "digits_100k": "7" * (100_000 // k),
        "digit_tokens": "1 " * (50_000 // k),
        "digits_dots": "1." * (50_000 // k),
        "parens_nested": "(" * (50_000 // k) + ")" * (50_000 // k),
        "braces_open": "{" * (50_000 // k),
        "brackets_open": "[" * (50_000 // k),
        "boxed_open": "\\boxed{" * (10_000 // k),
        "answer_tag_open": "<answer>" * (20_000 // k),
        "think_tag_open": "<think>" * (20_000 // k),
        "tool_call_open": "<tool_call>" * (20_000 // k),
        "backticks": "`" * (100_000 // k),
        "fence_open": "```python\n" * (10_000 // k),
        "repeated_token": "hmm " * (100_000 // k),
        "counter_loop": " ".join(f"hmm {i}" for i in range(20_000 // k)),
        "a_dot": "a." * (50_000 // k),
        "dollars": "$" * (100_000 // k),
        "json_nested_obj": '{"a":' * (10_000 // k) + "1" + "}" * (10_000 // k),
        "json_nested_arr": "[" * (20_000 // k) + "]" * (20_000 // k),
        "json_many_objects": '{"answer": 1} ' * (20_000 // k),
        "regex_bait": "a" * 30 + "b",  # for regex_format's pattern (a|aa)+$: exponential under `re`
        "schema_bait": json.dumps({"email": "a" * 26 + "!", "answer": 42, "x_" + "a" * 30 + "1": "x"}),
        "equals_spaces": "x" + " " * (50_000 // k) + "=",
        "citation_brackets": "[1, 2, 3] " * (20_000 // k),
        "quote_open": '"' * (50_000 // k),
    }
    for i, expr in enumerate(HUGE):
        out[f"huge_boxed_{i}"] = f"The answer is $\\boxed{{{expr}}}$."
        out[f"huge_bare_{i}"] = f"So it is ${expr}$. " + "That is the end of it. " * 40
    return out


def columns_for(n: int, name: str = "") -> dict[str, list]:
    row = {
        "answer": "42",
        "prompts": [{"role": "user", "content": "What is 6 times 7? Answer in <answer></answer> tags."}],
        "reference": "Six times seven is 42. The answer is 42.",
        "sources": ["Six sevens are forty-two."],
        "tests": ["assert f(1) == 1"],
        "entry_point": "f",
        "expression": "6*7",
        "schema": json.dumps(SCHEMA),
    }
    row.update(COLUMNS.get(name, {}))
    return {key: [value] * n for key, value in row.items()}
