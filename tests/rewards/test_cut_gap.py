"""completions/cut_answer_gap: do completions cut at the length limit score lower or higher on the
answer than the finished completions of the same prompt? Logged by TrainerRewards as TRL calls it."""
from __future__ import annotations

import pytest

from grpokit.rewards.cut_gap import CUT_SCORE, METRIC, CutGap, answer_rewards, is_cut, stop_ids_of
from grpokit.rewards.registry import get
from grpokit.rewards.reward_set import RewardSet
from grpokit.rewards.trainer_rewards import TrainerRewards

EOS, PAD = 2, 0
STOP = frozenset({EOS, PAD})
DEMO = [get("numeric_match", take="first"), get("numeric_closeness", take="first"), get("regex_format")]


def test_format_and_length_rewards_are_not_answer_rewards():
    assert answer_rewards(["numeric_match", "numeric_closeness", "regex_format", "soft_overlong_punishment",
                           "my_plugin", "numeric_match_2"]) == [0, 1, 4, 5]


def test_a_completion_is_cut_when_it_does_not_end_on_eos_or_pad():
    assert is_cut([5, 6, EOS], STOP) is False
    assert is_cut([5, 6, PAD], STOP) is False
    assert is_cut([5, 6, 7], STOP) is True
    assert is_cut([], STOP) is None


def test_stop_ids_are_the_trainers_eos_ids_and_the_pad_id():
    class Tok:
        pad_token_id = PAD

    class Trainer:
        eos_token_ids = [EOS, 3]

    assert stop_ids_of(Trainer(), Tok()) == frozenset({EOS, 3, PAD})
    assert stop_ids_of(object(), Tok()) is None  # a TRL that does not say: no metric rather than a guess


def _demo_batch(calls, completions, ids, answers):
    prompts = [f"Q{i // 4}" for i in range(len(completions))]
    for func in calls.funcs:
        func(completions, prompts=prompts, completion_ids=ids, answer=answers)
    return calls.window()


def test_the_demo_cut_after_its_answer_loses_only_the_format_reward():
    # The CPU demo: the first number is the answer, so " 85\nQuestion" still earns numeric_match.
    calls = TrainerRewards(RewardSet(DEMO, [1.0, 0.5, 0.25]))
    calls.cut_gap.stop_ids = STOP
    window = _demo_batch(calls, [" 85\nQuestion", " 85", " 85\nThe", " 84",      # group Q0
                                 " 12\nNow", " 12", " 13\nSo", " 12"],          # group Q1
                         [[1, 1, 1], [1, EOS], [1, 1, 1], [1, EOS], [1, 1, 1], [1, EOS], [1, 1, 1], [1, EOS]],
                         ["85"] * 4 + ["12"] * 4)
    # Q0: cut 1.5, 1.5 vs finished 1.5 and 0.0+closeness -> gap > 0; Q1: cut 1.5 and 0.46 vs 1.5, 1.5 -> gap < 0.
    assert window[METRIC] == pytest.approx(((1.5 - (1.5 + 0.5 * _close(84, 85)) / 2)
                                            + ((1.5 + 0.5 * _close(13, 12)) / 2 - 1.5)) / 2)


def _close(got, want):
    return get("numeric_closeness", take="first")([f" {got}"], answer=[str(want)])[0]


def test_cut_completions_that_lose_the_answer_give_a_negative_gap():
    calls = TrainerRewards(RewardSet(DEMO[:1]))
    calls.cut_gap.stop_ids = STOP
    window = _demo_batch(calls, [" Let", " 85", " Let", " 85"], [[1, 1], [1, EOS], [1, 1], [1, EOS]], ["85"] * 4)
    assert window[METRIC] == -1.0


def test_no_metric_without_stop_ids_or_without_both_kinds_in_a_group():
    calls = TrainerRewards(RewardSet(DEMO[:1]))
    assert METRIC not in _demo_batch(calls, [" 85", " 85"], [[1, 1], [1, EOS]], ["85"] * 2)  # stop ids unknown
    calls.cut_gap.stop_ids = STOP
    assert METRIC not in _demo_batch(calls, [" 8", " 8"], [[1, 1], [1, 1]], ["85"] * 2)  # every one cut
    assert METRIC not in _demo_batch(calls, [" 85", " 85"], None, ["85"] * 2)  # a TRL that passes no ids


def test_a_batch_without_completion_ids_is_skipped_not_an_error():
    gap = CutGap(["numeric_match"], [1.0])
    gap.stop_ids = STOP
    gap.observe(None, ["Q"], {"numeric_match": [1.0]})
    assert gap.window() == {}


def test_every_completion_cut_logs_what_the_cut_ones_earn_on_the_answer():
    # No finished completion, so no gap; the cut score tells an answer line then talk (paid) from a
    # limit that cuts the answer itself (nothing).
    calls = TrainerRewards(RewardSet(DEMO[:1]))
    calls.cut_gap.stop_ids = STOP
    window = _demo_batch(calls, [" 85\nQuestion", " 85\nThe", " 8", " 84\nSo"], [[1, 1]] * 4, ["85"] * 4)
    assert METRIC not in window and window[CUT_SCORE] == 0.5
    window = _demo_batch(calls, [" 8", " 8", " 85", " 85"], [[1, 1], [1, 1], [1, EOS], [1, EOS]], ["85"] * 4)
    assert window[CUT_SCORE] == 0.0 and window[METRIC] == -1.0  # only cut completions count in the score
