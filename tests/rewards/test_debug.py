"""debug_reward: scores, the findings it reports, the table, real labelled data."""
from __future__ import annotations

import json
import math
import time

import pytest
from rich.console import Console

from grpokit.completions import extract_boxed, texts
from grpokit.rewards.debug import DebugResult, debug_reward
from grpokit.errors import ConfigError
from grpokit.rewards import RewardConfigError

COMPLETIONS = ["The answer is 4.", "I think it is 5.", "Maybe 4?", "It is 7"]
ANSWERS = ["4", "5", "6", "7"]
LABELS = [True, True, False, True]


def contains_answer(completions, answer, **kwargs):
    return [1.0 if a in t else 0.0 for t, a in zip(texts(completions), answer)]


def raises_on_7(completions, **kwargs):
    out = []
    for t in texts(completions):
        if "7" in t:
            raise ValueError("cannot parse seven")
        out.append(1.0)
    return out


def raises_always(completions, **kwargs):
    raise RuntimeError("broken")


def needs_batch_of_four(completions, **kwargs):
    if len(completions) != 4:
        raise ValueError("expected a group of 4")
    return [0.0, 1.0, 0.0, 1.0]


def nan_on_row_1(completions, **kwargs):
    return [float("nan") if i == 1 else 1.0 for i in range(len(completions))] if len(completions) > 1 else [1.0]


def inf_everywhere(completions, **kwargs):
    return [math.inf] * len(completions)


def constant(completions, **kwargs):
    return [0.5] * len(completions)


def mostly_none(completions, **kwargs):
    return [1.0] + [None] * (len(completions) - 1)


def too_short(completions, **kwargs):
    return [1.0]


def returns_none(completions, **kwargs):
    return None


def returns_strings(completions, **kwargs):
    return ["1.0"] * len(completions)


def inverted(completions, answer, **kwargs):
    return [0.0 if s else 1.0 for s in contains_answer(completions, answer)]


def numpy_like(completions, **kwargs):
    class Scalar:  # numpy/torch scalars convert with float()
        def __init__(self, v):
            self.v = v

        def __float__(self):
            return self.v

    return [Scalar(float(i)) for i in range(len(completions))]


CASES = [
    # (reward, expected finding kinds, ok, why)
    (contains_answer, set(), True, "varies, agrees with labels, never fails"),
    (raises_on_7, {"raises"}, False, "a crash on one row is reported with that row"),
    (raises_always, {"raises"}, False, "a crash on every row"),
    (needs_batch_of_four, set(), True, "works on the real batch: row-by-row retry is never needed"),
    (nan_on_row_1, {"non_finite"}, False, "NaN poisons the loss"),
    (inf_everywhere, {"non_finite"}, False, "infinity too (and constant is not reported on no finite rows)"),
    (constant, {"constant"}, True, "never varies: no advantage signal"),
    (mostly_none, {"mostly_none"}, True, "3 of 4 rows skipped by TRL"),
    (too_short, {"bad_return"}, False, "one value for four completions"),
    (returns_none, {"bad_return"}, False, "None instead of a list"),
    (returns_strings, {"bad_return"}, False, "strings are not scores"),
    (inverted, {"label_disagreement"}, True, "anti-correlated with the human labels"),
    (numpy_like, {"label_disagreement"}, True, "scalars that float() accepts are fine; these ignore the labels"),
]


@pytest.mark.parametrize("reward,kinds,ok,why", CASES, ids=[c[0].__name__ for c in CASES])
def test_findings(reward, kinds, ok, why):
    result = debug_reward(reward, COMPLETIONS, answer=ANSWERS, label=LABELS, show=False)
    name = reward.__name__
    assert {f.kind for f in result.findings(name)} == kinds, (why, [str(f) for f in result.warnings])
    assert result.ok is ok and result.failed is (not ok), why
    assert len(result.scores[name]) == len(COMPLETIONS)


def test_crash_names_the_row_and_keeps_other_rows():
    # The rows that did score keep their scores; the failing row says why.
    result = debug_reward(raises_on_7, COMPLETIONS, show=False)
    assert result.scores["raises_on_7"] == [1.0, 1.0, 1.0, None]
    assert result.errors["raises_on_7"] == {3: "ValueError: cannot parse seven"}
    finding = result.findings("raises_on_7")[0]
    assert finding.rows == [3] and "row 3" in finding.message and finding.severity == "error"


def test_batch_only_failure_is_reported():
    # Fails on the batch but on no single row: it depends on the batch shape.
    def fails_on_batch(completions, **kwargs):
        if len(completions) > 1:
            raise IndexError("batch")
        return [1.0]

    result = debug_reward(fails_on_batch, COMPLETIONS, show=False)
    (finding,) = result.findings("fails_on_batch")
    assert finding.kind == "raises" and "depends on the batch" in finding.message


def test_label_statistics():
    # contains_answer matches the labels on 3 of 4 rows here ("It is 7" row is
    # labelled correct and contains 7; "Maybe 4?" is wrong and lacks 6).
    result = debug_reward(contains_answer, COMPLETIONS, answer=ANSWERS, label=LABELS, show=False)
    stats = result.stats["contains_answer"]
    assert stats.label_accuracy == 1.0 and stats.label_correlation == pytest.approx(1.0)
    result = debug_reward(inverted, COMPLETIONS, answer=ANSWERS, label=["yes", "yes", "no", "yes"], show=False)
    finding = result.findings("inverted", "label_disagreement")[0]
    assert "sign flipped" in finding.message and finding.rows == [0, 1, 2, 3]


def test_labels_are_not_passed_to_rewards():
    # `label` is for checking the reward, never an input a reward could cheat with.
    seen = {}

    def spy(completions, **kwargs):
        seen.update(kwargs)
        return [0.0] * len(completions)

    debug_reward(spy, COMPLETIONS, answer=ANSWERS, label=LABELS, show=False)
    assert "label" not in seen and seen["answer"] == ANSWERS


INPUTS = [
    # (funcs, completions, columns, error, why)
    ([], COMPLETIONS, {}, ConfigError, "no rewards"),
    (contains_answer, [], {}, ConfigError, "no completions"),
    (contains_answer, COMPLETIONS, {"answer": ["4"]}, ConfigError, "column shorter than the completions"),
    (contains_answer, COMPLETIONS, {"answer": "4"}, ConfigError, "a scalar where a column is expected"),
    (contains_answer, COMPLETIONS, {"label": [True]}, ConfigError, "label column misaligned"),
    ("nmbr_match_typo", COMPLETIONS, {}, RewardConfigError, "unknown name: registry suggests"),
    (42, COMPLETIONS, {}, ConfigError, "not a reward at all"),
]


@pytest.mark.parametrize("funcs,completions,columns,error,why", INPUTS)
def test_bad_input_is_a_usage_error(funcs, completions, columns, error, why):
    with pytest.raises(error):
        debug_reward(funcs, completions, show=False, **columns)


def test_names_entries_and_duplicates():
    # Registered names, config entries and callables mix; repeated names get _2, as in a run's metrics.
    result = debug_reward(
        ["repetition_penalty", {"name": "repetition_penalty", "params": {"n": 1}}, constant],
        ["go go go go", "fresh new words"],
        show=False,
    )
    assert result.names == ["repetition_penalty", "repetition_penalty_2", "constant"]
    assert result.scores["repetition_penalty_2"][0] == pytest.approx(-0.75)


def test_conversational_and_hostile_completions():
    # Message lists are previewed as text; 1 MB and NUL bytes do not break the table.
    completions = [[{"role": "assistant", "content": "chat answer 4"}], "x" * 1_000_000, "\x00 nul", "", "   "]
    console = Console(record=True, width=120)
    result = debug_reward(["repetition_penalty", "reasoning_quality"], completions, console=console)
    out = console.export_text()
    assert "chat answer 4" in out and "repetition_penalty" in out
    assert result.completions[0] == "chat answer 4"
    assert max(len(line) for line in out.splitlines()) <= 120


def test_table_marks_errors_and_lists_findings():
    console = Console(record=True, width=160)
    debug_reward([raises_on_7, nan_on_row_1, constant], COMPLETIONS, label=LABELS, console=console, max_rows=2)
    out = console.export_text()
    assert "ERR" not in out.split("per reward")[0]  # row 3 (the failing one) is beyond max_rows=2
    assert "nan" in out and "2 more rows not shown" in out
    assert "ERROR raises_on_7" in out and "ERROR nan_on_row_1" in out and "WARNING constant" in out


def test_to_dict_is_strict_json():
    # NaN is not JSON: it is written as the string "nan" so other tools can parse it.
    result = debug_reward([nan_on_row_1, raises_on_7], COMPLETIONS, label=LABELS, show=False)
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["ok"] is False and data["rows"] == 4
    assert data["rewards"]["nan_on_row_1"]["scores"][1] == "nan"
    assert data["rewards"]["raises_on_7"]["errors"] == {"3": "ValueError: cannot parse seven"}
    assert {f["kind"] for f in data["findings"]} >= {"non_finite", "raises"}


def test_slow_reward_is_flagged(monkeypatch):
    # Measured time, not guessed: a reward that sleeps is reported as slow.
    import grpokit.rewards.debug as debug

    monkeypatch.setattr(debug, "_SLOW_SECONDS_PER_ROW", 0.01)

    def sleepy(completions, **kwargs):
        time.sleep(0.05)
        return [float(i) for i in range(len(completions))]

    result = debug_reward(sleepy, ["a", "b"], show=False)
    assert [f.kind for f in result.findings("sleepy")] == ["slow"]


FLAT = [
    # (scores per row, prompts, flagged, why)
    ([1, 1, 0, 0], ["a", "a", "b", "b"], True, "varies across prompts but not within: zero advantage everywhere"),
    ([1, 0, 0, 0], ["a", "a", "b", "b"], False, "one of two groups flat: not most of them"),
    ([1, 0, 1, 0], ["a", "a", "b", "b"], False, "every group has a spread"),
    ([1, 1, 0, 0], ["a", "b", "c", "d"], False, "groups of one have no spread to lose"),
    ([1, 1, 0, 0], None, False, "no prompts column: groups unknown"),
]


@pytest.mark.parametrize("values,prompts,flagged,why", FLAT)
def test_flat_groups(values, prompts, flagged, why):
    def fixed(completions, **kwargs):
        return [float(v) for v in values]

    columns = {} if prompts is None else {"prompts": prompts}
    result = debug_reward(fixed, ["w", "x", "y", "z"], show=False, **columns)
    finding = result.findings("fixed", "flat_groups")
    assert bool(finding) is flagged, why
    if flagged:
        assert finding[0].rows == [0, 1, 2, 3] and "reward_std 0" in finding[0].message


def test_result_type():
    assert isinstance(debug_reward(constant, ["a"], show=False), DebugResult)


def test_real_labelled_math_answers(shared_data):
    # 800 model answers to MATH problems, each labelled right or wrong by the
    # Qwen2.5-Math grader. A boxed-answer string match agrees with the labels
    # far better than chance; its inverse is flagged as anti-correlated.
    rows = [json.loads(line) for line in open(shared_data / "math_cot100_labeled.jsonl", encoding="utf-8")]
    completions = [c for r in rows for c in r["code"]]
    answers = [r["answer"] for r in rows for _ in r["code"]]
    labels = [bool(s) for r in rows for s in r["score"]]

    def boxed_match(completions, answer, **kwargs):
        return [1.0 if (extract_boxed(t) or "").replace(" ", "") == a.replace(" ", "") else 0.0
                for t, a in zip(texts(completions), answer)]

    def boxed_mismatch(completions, answer, **kwargs):
        return [1.0 - s for s in boxed_match(completions, answer)]

    result = debug_reward([boxed_match, boxed_mismatch], completions, answer=answers, label=labels, show=False)
    good = result.stats["boxed_match"]
    assert good.label_accuracy > 0.8 and good.label_correlation > 0.4
    assert not result.findings("boxed_match")
    assert [f.kind for f in result.findings("boxed_mismatch")] == ["label_disagreement"]


def test_a_few_unscored_rows_are_a_note_not_a_failure():
    # 1 None in 4 rows: below the mostly_none warning, still said out loud ("could not be scored").
    def one_none(completions, **kwargs):
        return [None, 1.0, 0.0, 1.0]

    result = debug_reward(one_none, COMPLETIONS, show=False)
    [finding] = result.findings("one_none")
    assert (finding.kind, finding.severity, finding.rows) == ("unscored", "note", [0])
    assert "1 of 4 rows could not be scored" in finding.message
    assert result.ok
