"""The online zero-variance filter: group judging, observing the reward wrapper, the sampler, the config key, a real run."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from grpokit.data.zero_variance import (
    ROW_COLUMN,
    FilteredRepeatSampler,
    ZeroVarianceFilter,
    filter_for,
    is_flat,
    with_row_ids,
)
from grpokit.errors import ConfigError, RunError


@pytest.mark.parametrize("totals, flat", [
    ([1.0, 1.0, 1.0, 1.0], True),              # always solved: no advantage
    ([0.0, 0.0, 0.0, 0.0], True),              # never solved: no advantage
    ([0.0, 1.0, 0.0, 0.0], False),             # one success is a signal
    ([0.3, None, 0.3, 0.3], True),             # unscorable completions are skipped, as TRL's nanstd does
    ([None, None, 1.0, None], False),          # one scored value has no std (TRL: NaN, not zero)
    ([0.1 + 0.2, 0.3, 0.3, 0.3], True),        # float rounding is not variance
])
def test_is_flat(totals, flat):
    assert is_flat(totals) is flat


def test_rows_drop_after_n_flat_groups():
    f = ZeroVarianceFilter(2, num_generations=2)
    # Row 7 flat, row 8 varied, row 9 flat.
    assert f.observe([7, 7, 8, 8, 9, 9], [1.0, 1.0, 0.0, 1.0, 0.0, 0.0]) == []
    assert f.flat_counts == {7: 1, 9: 1}
    assert f.observe([7, 7, 9, 9], [0.0, 0.0, 0.0, 1.0]) == [7]   # second flat group of row 7: dropped
    assert f.dropped == {7} and f.groups_seen == 5
    # A slice that is not a whole group (two rows in one group) is not judged.
    assert f.observe([9, 8, 8, 9], [0.0, 0.0, 0.0, 0.0]) == [] and f.flat_counts[9] == 1


def test_bad_threshold_is_a_config_error():
    with pytest.raises(ConfigError, match="whole number >= 1"):
        ZeroVarianceFilter(0, num_generations=2)


def always_one(completions, **kwargs):
    """Always 1."""
    assert ROW_COLUMN not in kwargs  # the row ids never reach a reward
    return [1.0] * len(completions)


def by_position(completions, **kwargs):
    return [float(i % 2) if kwargs["answer"][i] == "odd" else None for i in range(len(completions))]


def test_the_filter_judges_each_batch_once_all_rewards_scored():
    from grpokit.rewards.reward_set import RewardSet
    from grpokit.rewards.trainer_rewards import TrainerRewards

    f = ZeroVarianceFilter(1, num_generations=2)
    wrapped = TrainerRewards(RewardSet([always_one, by_position], [1.0, 3.0]), observers=[f.observe_batch]).funcs
    assert [w.__name__ for w in wrapped] == ["always_one", "by_position"] and wrapped[0].__doc__ == "Always 1."
    logged = []
    completions = ["a", "b", "c", "d"]
    columns = {ROW_COLUMN: [4, 4, 5, 5], "answer": ["even", "even", "odd", "odd"],
               "log_metric": lambda name, value: logged.append((name, value))}
    assert wrapped[0](completions, **columns) == [1.0] * 4
    assert f.groups_seen == 0  # waits for the second reward of the batch
    assert wrapped[1](completions, **columns) == [None, None, 0.0, 1.0]
    # Row 4: totals 1, 1 (by_position unscored) -> flat; row 5: 1, 4 -> varied.
    assert f.dropped == {4} and logged == [("data/dropped_zero_variance", 1.0)]
    # Evaluation batches carry no row ids: scored, not judged.
    wrapped[0](["x", "y"], answer=["even", "even"])
    wrapped[1](["x", "y"], answer=["even", "even"])
    assert f.groups_seen == 2


def _chunks(indices, size):
    return [indices[i:i + size] for i in range(0, len(indices), size)]


def test_sampler_matches_repeat_samplers_order_without_drops():
    torch = pytest.importorskip("torch")  # noqa: F841 - TRL's sampler needs it
    from trl.trainer.utils import RepeatSampler

    options = dict(mini_repeat_count=3, batch_size=2, repeat_count=2)
    ours = list(FilteredRepeatSampler(ZeroVarianceFilter(1, 3), 7, shuffle=True, seed=1, **options))
    theirs = list(RepeatSampler(list(range(7)), shuffle=True, seed=1, **options))
    assert len(ours) == len(theirs) == len(FilteredRepeatSampler(ZeroVarianceFilter(1, 3), 7, **options))
    for sequence in (ours, theirs):
        blocks = _chunks(sequence, 2 * 3)  # one chunk: 2 prompts x 3 generations
        assert all(a == b for a, b in zip(blocks[::2], blocks[1::2]))            # each chunk twice (repeat_count)
        assert all(len(set(g)) == 1 for g in _chunks(sequence, 3))                # a prompt 3 times in a row
    assert len(set(ours)) == 6  # 7 rows, 3 chunks of 2: one row waits, as in RepeatSampler


def test_sampler_draws_around_dropped_rows_and_keeps_its_length():
    f = ZeroVarianceFilter(1, 2)
    sampler = FilteredRepeatSampler(f, 6, mini_repeat_count=1, batch_size=2, shuffle=False)
    stream = iter(sampler)
    first = [next(stream), next(stream)]
    assert first == [0, 1]
    f.observe([2, 2, 3, 3], [0.0, 0.0, 0.0, 1.0])  # row 2 judged flat before its chunk is drawn
    rest = list(stream)
    assert len(first + rest) == len(sampler) == 6   # the epoch keeps its length: the Trainer's step count holds
    assert 2 not in rest and rest[:2] == [3, 4]      # row 2 skipped, the chunk filled from the next rows
    assert rest[2:] == [5, 0]                        # the next pass starts over without row 2


def test_sampler_says_what_to_do_when_every_row_is_dropped():
    f = ZeroVarianceFilter(1, 2)
    f.observe([0, 0, 1, 1], [0.0, 0.0, 1.0, 1.0])
    with pytest.raises(RunError, match="every training row was dropped"):
        list(FilteredRepeatSampler(f, 2, mini_repeat_count=1, batch_size=1))


class _Cfg:
    def __init__(self, after):
        self.data = type("Data", (), {"drop_zero_variance_after": after})()


def test_no_filter_when_unset_row_ids_and_one_process_only(monkeypatch):
    datasets = pytest.importorskip("datasets")
    train_set = datasets.Dataset.from_list([{"prompt": "p", "answer": "1"}] * 3)
    assert filter_for(_Cfg(None), 2) is None
    assert filter_for(_Cfg(2), 2).after == 2
    assert with_row_ids(with_row_ids(train_set))[ROW_COLUMN] == [0, 1, 2]  # an old id column is replaced
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ConfigError, match="one process only"):
        filter_for(_Cfg(2), 2)


@pytest.mark.parametrize("value, ok", [(3, True), (0, False), (True, False), ("2", False), (1.5, False)])
def test_config_key_is_validated(value, ok):
    from grpokit.config.run_config import from_dict

    raw = {"name": "zv", "model": {"name": "bundled:smollm2-135m-instruct"},
           "data": {"source": "synthetic:arithmetic", "drop_zero_variance_after": value},
           "rewards": [{"name": "numeric_match"}]}
    if ok:
        assert from_dict(raw).data.drop_zero_variance_after == value
    else:
        with pytest.raises(ConfigError, match="drop_zero_variance_after"):
            from_dict(raw)


# --- a real run on the tiny model: flat rows stop coming back --------------------------------------

SEEN: list[str] = []


def zv_parity(completions, answer, prompts, **kwargs):
    # Even answers: every completion scores 0 (a flat group); odd answers: scores differ within the group.
    SEEN.extend(str(p) for p in prompts[::4])
    return [0.0 if int(a) % 2 == 0 else float(i % 4) for i, a in enumerate(answer)]


@pytest.mark.slow
def test_training_stops_drawing_flat_prompts(tmp_path_factory):
    # Without the filter, 8 steps x 2 prompts are two full passes over the 8 rows: each even row comes twice (8).
    pytest.importorskip("trl")
    from grpokit.models.tiny import make_tiny_model
    from grpokit.config.run_config import from_dict
    from grpokit.rewards import names, register
    from grpokit.training.trainer import train

    if "zv_parity" not in names():
        register("zv_parity")(zv_parity)
    root = tmp_path_factory.mktemp("zv")
    model = make_tiny_model(root / "model", chat_format="roles", vocab_size=0, hidden_size=32)
    rows = root / "rows.jsonl"
    rows.write_text("".join(json.dumps({"question": f"question number {i}", "answer": str(i)}) + "\n" for i in range(8)))
    SEEN.clear()
    data = {"source": str(rows), "eval_size": 0, "system_prompt": None, "drop_zero_variance_after": 1}
    run_dir = train(from_dict({
        "name": "zv", "output_dir": str(root / "run"), "model": {"name": str(model), "lora": {"r": 4}},
        "data": data, "rewards": [{"name": "zv_parity"}], "profile": "cpu",
        "training": {"max_steps": 8, "num_generations": 4, "per_device_train_batch_size": 8,
                     "max_completion_length": 4, "save_steps": 100, "learning_rate": 0.01}}))
    even = sum(int(p.rsplit("number ", 1)[1].split()[0].strip("'\"}]")) % 2 == 0 for p in SEEN)
    assert len(SEEN) == 16  # 8 steps x 2 prompts: the filter keeps the step count
    metrics = [json.loads(line) for line in Path(run_dir, "metrics.jsonl").read_text().splitlines()]
    # Each even row is seen once, then dropped; one prefetched generation batch may still hold one.
    assert even <= 4 + 2
    assert metrics[-1]["data/dropped_zero_variance"] == 4
    assert metrics[-1]["frac_reward_zero_std"] < 0.5
