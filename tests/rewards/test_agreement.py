"""Agreement of the correctness rewards with real human/grader labels.

- numeric_match vs `is_correct` of gsm8k_model_solutions.jsonl (1319 questions x 4 GPT-3 solutions);
- math_equivalence vs `score` of math_cot100_labeled.jsonl (100 MATH problems x 8 Qwen responses).

Both must agree on >= 99.5% of rows. Every remaining disagreement is listed
below with the reason it is label noise, so a new one fails the test.
"""
from __future__ import annotations

import json

import pytest

from grpokit.rewards import get

REQUIRED = 0.995
GSM8K_MODELS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")

# (problem idx, response index) -> why the label, not the reward, is wrong.
MATH_LABEL_NOISE = {
    # Gold "10{,}000", the response boxes 10000: the same number; the original
    # grader compared strings and marked it wrong.
    (72, 7): "10000 == 10{,}000",
}
GSM8K_LABEL_NOISE: dict[tuple[int, str], str] = {}


def _rows(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def test_numeric_match_agrees_with_gsm8k_labels(shared_data):
    rows = _rows(shared_data / "gsm8k_model_solutions.jsonl")
    keys, completions, golds, labels = [], [], [], []
    for i, row in enumerate(rows):
        for model in GSM8K_MODELS:
            keys.append((i, model))
            completions.append(row[model]["solution"])
            golds.append(row["ground_truth"])
            labels.append(bool(row[model]["is_correct"]))
    scores = get("numeric_match")(completions, answer=golds)
    disagree = {k for k, s, label in zip(keys, scores, labels) if (s == 1.0) != label}
    agreement = 1 - len(disagree) / len(keys)
    assert agreement >= REQUIRED, agreement
    assert disagree <= set(GSM8K_LABEL_NOISE), sorted(disagree - set(GSM8K_LABEL_NOISE))[:10]


def test_math_equivalence_agrees_with_math_labels(shared_data):
    rows = _rows(shared_data / "math_cot100_labeled.jsonl")
    keys, completions, golds, labels = [], [], [], []
    for row in rows:
        for j, (response, label) in enumerate(zip(row["code"], row["score"])):
            keys.append((row["idx"], j))
            completions.append(response)
            golds.append(row["answer"])
            labels.append(bool(label))
    scores = get("math_equivalence", timeout=10.0)(completions, answer=golds)
    assert all(s is not None for s in scores)  # every gold parses, nothing timed out
    disagree = {k for k, s, label in zip(keys, scores, labels) if (s == 1.0) != label}
    agreement = 1 - len(disagree) / len(keys)
    assert agreement >= REQUIRED, agreement
    assert disagree <= set(MATH_LABEL_NOISE), sorted(disagree - set(MATH_LABEL_NOISE))


@pytest.mark.parametrize(
    "completion,gold,label",
    [
        # The lines that decide GSM8K model solutions, as unit cases:
        ("She makes 9 * 2 = $<<9*2=18>>18\nA: 18", "...\nA: 18", True),  # the A: line
        ("so 2 + 1 = <<2+1=3>>3.0 bolts altogether.\nA: 3", "...\nA: 3", True),  # 3.0 == 3
        ("Total 13 * 2 = $<<13*2=26>>26\nA: 26", "...\nA: 18", False),  # wrong final line
    ],
)
def test_gsm8k_solution_format(completion, gold, label):
    assert (get("numeric_match")([completion], answer=[gold])[0] == 1.0) is label
