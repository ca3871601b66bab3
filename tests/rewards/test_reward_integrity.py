"""Answers that hedge across readings: a percentage read two ways, JSON booleans as numbers,
and cosine_scaled left without a length. Each case once let one answer score for what it is not."""
from __future__ import annotations

import pytest

from grpokit.rewards import get


def score(name: str, completion: str, gold, **params):
    return get(name, **params)([completion], answer=[gold])[0]


# --------------------------------------------------------------- percentages, one reading

PERCENT = [
    # (completion, gold, expected): a percentage is the number written, on both sides
    ("<answer>5000%</answer>", "50", 0.0),    # 5000% is 5000, not also the fraction 50
    ("<answer>5000%</answer>", "5000", 1.0),  # ... so it matches one gold, not two
    ("<answer>0.5%</answer>", "50%", 0.0),    # 0.5% is not 50%, though 0.5 is 50% as a fraction
    ("<answer>50%</answer>", "50%", 1.0),
    ("<answer>50</answer>", "50%", 1.0),      # the question asked for a percentage; the sign dropped
    ("<answer>25%</answer>", "25", 1.0),      # GSM8K: "what percent ...?" with gold 25
    ("<answer>25%</answer>", "0.25", 0.0),
]


@pytest.mark.parametrize("name", ["numeric_match", "math_equivalence"])
@pytest.mark.parametrize("completion, gold, expected", PERCENT)
def test_a_percentage_is_read_one_way_only(name, completion, gold, expected):
    assert score(name, completion, gold) == expected


@pytest.mark.parametrize("name", ["numeric_match", "math_equivalence"])
def test_one_percent_answer_cannot_match_two_golds(name):
    for hedge in ("<answer>5000%</answer>", "<answer>50\\%</answer>", "The answer is $\\boxed{0.5\\%}$"):
        golds = ["50", "5000", "0.5", "0.005"]  # four different values
        scores = get(name)([hedge] * len(golds), answer=golds)
        assert sum(s == 1.0 for s in scores) <= 1, (hedge, dict(zip(golds, scores)))


# --------------------------------------------------------------- JSON types

@pytest.mark.parametrize("completion, gold, expected", [
    ('{"count": true}', '{"count": 1}', 0.0),      # a boolean is not a number, as the doc says
    ('{"count": 1}', '{"count": true}', 0.0),
    ('{"ok": false}', '{"ok": 0}', 0.0),
    ('{"items": [1, true]}', '{"items": [1, 1]}', 0.0),  # nested too
    ('{"count": 1.0}', '{"count": 1}', 1.0),       # JSON has one number type
    ('{"count": "1"}', '{"count": 1}', 0.0),
    ('{"a": {"b": [true]}}', '{"a": {"b": [true]}}', 1.0),
])
def test_json_object_match_compares_types(completion, gold, expected):
    assert score("json_object_match", completion, gold) == expected


@pytest.mark.parametrize("completion, expected", [
    ('{"qty": 3}', 1.0),
    ('Maybe {"qty": 3}, but I answer {"qty": 4}', 0.0),   # the gold quoted on the way is not the answer
    ('{"qty": 4} or rather {"qty": 3}', 1.0),              # the committed (last) object is read
    ('Draft {"qty": 4}\n```json\n{"qty": 3}\n```', 1.0),  # a fenced block is a deliberate answer
    ('The order is {"qty": 3}. Done.', 1.0),
])
def test_json_object_match_reads_the_committed_object(completion, expected):
    assert score("json_object_match", completion, '{"qty": 3}') == expected


# --------------------------------------------------------------- cosine_scaled on TRL's own case

def test_cosine_scaled_scores_trls_case_like_math_equivalence():
    # TRL's example: gold \frac{1}{3}; without token ids the length is estimated, not left unknown
    completions = [[{"role": "assistant", "content": c}] for c in ("\\boxed{\\frac{1}{3}}", "\\boxed{\\frac{1}{2}}")]
    gold = ["\\frac{1}{3}", "\\frac{1}{3}"]
    assert get("math_equivalence")(completions, answer=gold) == [1.0, 0.0]
    right, wrong = get("cosine_scaled")(completions, answer=gold)
    assert right > 0.9 and wrong < -0.9  # short and right; short and wrong


def test_cosine_scaled_still_prefers_token_ids_when_given():
    completions = ["\\boxed{\\frac{1}{3}}"]
    with_ids = get("cosine_scaled", max_len=100)(completions, answer=["\\frac{1}{3}"], completion_ids=[[1] * 50])
    assert with_ids == [pytest.approx(0.75)]  # TRL's documented value at half of max_len
