"""completions/cut_answer_gap: do completions cut at the length limit score lower or higher on the
answer than the finished completions of the same prompt? Logged by TrainerRewards as TRL calls it."""
from __future__ import annotations

import pytest

from grpokit.rewards.cut_gap import CUT_SCORE, METRIC, CutGap, answer_rewards, is_cut, stop_ids
from grpokit.rewards.registry import get
from grpokit.rewards.reward_set import RewardSet
from grpokit.rewards.trainer_rewards import TrainerRewards

EOS, PAD = 2, 0
STOP = frozenset({EOS, PAD})
DEMO = [get("numeric_match", take="first"), get("numeric_closeness", take="first"), get("regex_format")]


def test_format_and_length_rewards_are_not_answer_rewards():
    assert answer_rewards(["numeric_match", "numeric_closeness", "regex_format", "soft_overlong_punishment",
                           "my_plugin", "numeric_match_2"]) == [0, 1, 4, 5]


def test_tool_rewards_are_not_answer_rewards():
    # They pay an episode for its calls, and calls make it long: in the gap they would read as a length hack.
    assert answer_rewards(["numeric_match", "tool_call_success", "tool_calls", "malformed_tool_call",
                           "tool_turn_limit"]) == [0]


def test_a_completion_is_cut_when_it_does_not_end_on_eos_or_pad():
    assert is_cut([5, 6, EOS], STOP) is False
    assert is_cut([5, 6, PAD], STOP) is False
    assert is_cut([5, 6, 7], STOP) is True
    assert is_cut([], STOP) is None


@pytest.mark.parametrize("declared, pad", [(None, True), (99, False), ([98, 99], True)])
def test_stop_ids_are_what_the_trainer_counts_as_finished(tmp_path, declared, pad):
    # Known before GRPOTrainer is built (so the reward wrapper is built whole); held to the trainer's own
    # test: its eos_token_ids and the pad id it settles on (the EOS, for a tokenizer without a pad token).
    pytest.importorskip("trl")
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from grpokit.models.checkpointing_names import new_names
    from grpokit.models.tiny import build_tiny_model

    model, tok = build_tiny_model(chat_format="roles", vocab_size=0)
    model.generation_config.eos_token_id = declared
    if not pad:
        tok.pad_token = None
    ours = stop_ids(model, tok)
    args = GRPOConfig(**new_names(dict(output_dir=str(tmp_path), per_device_train_batch_size=2, num_generations=2,
                                       max_steps=1, max_completion_length=4, report_to=[], use_cpu=True,
                                       bf16=False), GRPOConfig))
    trainer = GRPOTrainer(model=model, reward_funcs=[lambda completions, **_: [0.0] * len(completions)], args=args,
                          train_dataset=Dataset.from_list([{"prompt": "a"}] * 2), processing_class=tok)
    assert ours == frozenset([*trainer.eos_token_ids, trainer.processing_class.pad_token_id])


def test_no_stop_ids_without_an_eos():
    class Tok:
        eos_token_id, pad_token, pad_token_id = None, "<pad>", PAD

    assert stop_ids(object(), Tok()) is None  # nothing says what ends a completion: no metric rather than a guess


def _demo_batch(calls, completions, ids, answers):
    prompts = [f"Q{i // 4}" for i in range(len(completions))]
    for func in calls.funcs:
        func(completions, prompts=prompts, completion_ids=ids, answer=answers)
    return calls.window()


def test_the_demo_cut_after_its_answer_loses_only_the_format_reward():
    # The CPU demo: the first number is the answer, so " 85\nQuestion" still earns numeric_match.
    calls = TrainerRewards(RewardSet(DEMO, [1.0, 0.5, 0.25]), stop_ids=STOP)
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
    calls = TrainerRewards(RewardSet(DEMO[:1]), stop_ids=STOP)
    window = _demo_batch(calls, [" Let", " 85", " Let", " 85"], [[1, 1], [1, EOS], [1, 1], [1, EOS]], ["85"] * 4)
    assert window[METRIC] == -1.0


def test_no_metric_without_stop_ids_or_without_both_kinds_in_a_group():
    calls = TrainerRewards(RewardSet(DEMO[:1]))
    assert METRIC not in _demo_batch(calls, [" 85", " 85"], [[1, 1], [1, EOS]], ["85"] * 2)  # stop ids unknown
    calls = TrainerRewards(RewardSet(DEMO[:1]), stop_ids=STOP)
    assert METRIC not in _demo_batch(calls, [" 8", " 8"], [[1, 1], [1, 1]], ["85"] * 2)  # every one cut
    assert METRIC not in _demo_batch(calls, [" 85", " 85"], None, ["85"] * 2)  # a TRL that passes no ids


def test_a_batch_without_completion_ids_is_skipped_not_an_error():
    gap = CutGap(["numeric_match"], [1.0], STOP)
    gap.observe(None, ["Q"], {"numeric_match": [1.0]})
    assert gap.window() == {}


def test_every_completion_cut_logs_what_the_cut_ones_earn_on_the_answer():
    # No finished completion, so no gap; the cut score tells an answer line then talk (paid) from a
    # limit that cuts the answer itself (nothing).
    calls = TrainerRewards(RewardSet(DEMO[:1]), stop_ids=STOP)
    window = _demo_batch(calls, [" 85\nQuestion", " 85\nThe", " 8", " 84\nSo"], [[1, 1]] * 4, ["85"] * 4)
    assert METRIC not in window and window[CUT_SCORE] == 0.5
    window = _demo_batch(calls, [" 8", " 8", " 85", " 85"], [[1, 1], [1, 1], [1, EOS], [1, EOS]], ["85"] * 4)
    assert window[CUT_SCORE] == 0.0 and window[METRIC] == -1.0  # only cut completions count in the score
