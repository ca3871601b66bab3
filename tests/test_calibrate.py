"""Difficulty calibration: the zero-variance estimate, and a real run on the tiny random model."""
import json
from math import comb

import pytest

from grpokit.evaluate.calibrate import calibrate, suggestion, write_rows, zero_variance_chance


@pytest.mark.parametrize("totals, group, expected", [
    ([1.0] * 8, 4, 1.0),                                   # every sample the same: always flat
    ([0.0, 1.0] * 4, 4, 2 * comb(4, 4) / comb(8, 4)),      # half pass: flat only when 4 of a kind are drawn
    ([0.0, 1.0, 2.0, 3.0], 4, 0.0),                        # all different: never flat
    ([1.0, 1.0, None, 1.0], 2, 1.0),                       # None rows are skipped, as TRL does
    ([0.0, 1.0], 4, 2 * 0.5 ** 4),                         # fewer samples than a group: plug-in estimate
])
def test_zero_variance_chance(totals, group, expected):
    assert zero_variance_chance(totals, group) == pytest.approx(expected)


@pytest.fixture(scope="module")
def tiny(tiny_gqa_model):
    return tiny_gqa_model  # built once per test run (conftest.py)


ROWS = [{"prompt": [{"role": "user", "content": f"what is {i} + {i}?"}], "answer": str(2 * i)} for i in range(4)]


def first_char_is_even_code(completions, **kwargs):
    # Varies with the sampled text, so groups have real variance.
    return [float(ord((c[0]["content"] or " ")[0]) % 2) for c in completions]


def always_right(completions, **kwargs):
    return [1.0 for _ in completions]


def never_right(completions, **kwargs):
    return [0.0 for _ in completions]


def test_calibrate_on_tiny_model_classifies_prompts(tiny, tmp_path):
    model, tok = tiny
    easy = calibrate(model, tok, ROWS, [always_right], [1.0], samples=4, num_generations=4,
                     accuracy=always_right, max_new_tokens=6)
    assert easy["predicted_zero_variance_share"] == 1.0 and easy["too_easy"] == 4
    hard = calibrate(model, tok, ROWS, [never_right], [1.0], samples=4, num_generations=4,
                     accuracy=never_right, max_new_tokens=6)
    assert hard["too_hard"] == 4 and "No prompt is in range" in suggestion(hard)
    mixed = calibrate(model, tok, ROWS, [first_char_is_even_code], [1.0], samples=6, num_generations=2,
                      accuracy=first_char_is_even_code, max_new_tokens=6, seed=3)
    per = mixed["per_prompt"]
    assert len(per) == 4 and all(0.0 <= p["pass_rate"] <= 1.0 for p in per)
    assert mixed["predicted_zero_variance_share"] == pytest.approx(sum(p["zero_variance"] for p in per) / 4)
    # A prompt solved sometimes is in range; the written file holds exactly those rows.
    in_range = [p["index"] for p in per if 0.0 < p["pass_rate"] < 1.0]
    assert in_range  # seeded: some prompts are solved sometimes
    assert {p["index"] for p in per if p["verdict"] == "in_range"} == set(in_range)
    out = tmp_path / "kept.jsonl"
    assert write_rows(out, ROWS, mixed, curriculum=True) == len(in_range)
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["answer"] for r in written) == sorted(ROWS[i]["answer"] for i in in_range)


@pytest.mark.parametrize("kwargs, message", [
    (dict(samples=1, num_generations=4), "samples must be at least 2"),
    (dict(samples=4, num_generations=1), "num_generations must be at least 2"),
])
def test_calibrate_rejects_settings_that_cannot_measure_variance(tiny, kwargs, message):
    model, tok = tiny
    with pytest.raises(ValueError, match=message):
        calibrate(model, tok, ROWS, [always_right], [1.0], **kwargs)


def length_style(completions, **kwargs):
    # A style reward with many values: it varies between completions whatever they answer.
    return [len(c[0]["content"] or "") % 7 / 6 for c in completions]


def passes_only_the_first_prompt(completions, answer, **kwargs):
    # The correctness reward of a set the model cannot solve: 7 of 8 prompts at 0.00, the first one varying.
    return [float(ord((c[0]["content"] or " ")[0]) % 2) if a == "0" else 0.0 for c, a in zip(completions, answer)]


def test_style_rewards_cannot_make_a_too_hard_set_in_range(tiny):
    # Issue 35.6: "0 of 8 too easy, 7 too hard, 1 in range. The data is in range for GRPO": the total's
    # zero-variance share came from a style reward that varies while the answer never passes.
    model, tok = tiny
    rows = [{"prompt": [{"role": "user", "content": f"what is {i} + {i}?"}], "answer": str(2 * i)} for i in range(8)]
    result = calibrate(model, tok, rows, [length_style, passes_only_the_first_prompt], [1.0, 1.0],
                       samples=6, num_generations=4, accuracy=passes_only_the_first_prompt, max_new_tokens=6, seed=3)
    assert result["too_hard"] >= 7 and result["predicted_zero_variance_share"] < 0.5  # the style reward varies
    assert result["verdict"] == "too_hard" and result["correct_zero_variance_share"] >= 0.85
    words = suggestion(result)
    assert "in range for GRPO" not in words and "too hard" in words and "they reward form, not the task" in words
