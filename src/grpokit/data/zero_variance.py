"""Online difficulty filter (DAPO-style dynamic sampling): stop drawing prompts that teach nothing.

A GRPO group whose completions all earn the same total reward has zero advantage, so
it adds no gradient (TRL logs the share as `frac_reward_zero_std`). With
`data.drop_zero_variance_after: N`, a training row is dropped after N such groups
(always solved or never solved, N times) and later batches draw other rows instead.
Off by default.

How it sees groups: each training row carries its index in a `grpokit_row` column,
which TRL hands to every reward as a keyword. The filter observes the run's one reward
wrapper (grpokit.rewards.trainer_rewards.TrainerRewards, which takes `grpokit_*` columns
off before the rewards see them): each scored batch's weighted totals, as TRL sums them
(None skipped), are judged per group.

How it drops rows: grpokit's trainer (grpokit.training.grpo_trainer.GrpokitTrainer) asks
`filtered_sampler` for its train sampler instead of TRL's RepeatSampler: the same order as TRL's
RepeatSampler -- chunks of generation_batch_size / num_generations prompts, each
chunk yielded num_iterations * steps_per_generation times, each prompt num_generations
times in a row -- whose chunks are filled from reshuffled passes over the rows not yet
dropped. It yields as many indices per epoch as RepeatSampler, so max_steps and the
epoch count hold.

Limits: one process only (with several, each rank scores its own slice of a group and
the ranks would disagree on what to drop); the counts start afresh on resume and per
stage; a group is judged on the weighted total, as multi_objective_aggregation
"sum_then_normalize" (TRL's default) uses it.
"""
from __future__ import annotations

import os
import random
import statistics
from collections import Counter
from typing import Any, Iterator, Sequence

from grpokit.errors import ConfigError, RunError

ROW_COLUMN = "grpokit_row"
# TRL calls a group flat when torch.isclose(std, 0): |std| <= 1e-8 (+ float32 rounding of the sum).
FLAT_STD = 1e-6


def is_flat(totals: Sequence[float | None]) -> bool:
    """A group with zero reward variance: every scored completion earned the same total."""
    values = [t for t in totals if t is not None]
    return len(values) >= 2 and statistics.pstdev(values) <= FLAT_STD * max(1.0, abs(values[0]))


def check_after(after: Any) -> None:
    """The config check of data.drop_zero_variance_after: unset, or a whole number >= 1."""
    if after is not None and (isinstance(after, bool) or not isinstance(after, int) or after < 1):
        raise ConfigError(f"data.drop_zero_variance_after must be a whole number >= 1 (got {after!r}), e.g. 2 "
                          "to drop a prompt after two groups that all scored the same; leave it unset to keep every prompt")


class ZeroVarianceFilter:
    """Counts each row's zero-variance groups and drops the row after `after` of them."""

    def __init__(self, after: int, num_generations: int):
        check_after(after)
        self.after = after
        self.num_generations = num_generations
        self.flat_counts: Counter[int] = Counter()
        self.dropped: set[int] = set()
        self.groups_seen = 0

    def observe(self, rows: Sequence[int], totals: Sequence[float | None]) -> list[int]:
        """Judge one batch: `rows[i]` is completion i's row, groups of num_generations in a row.
        Returns the rows dropped by this batch."""
        newly = []
        g = self.num_generations
        for start in range(0, len(rows) - g + 1, g):
            group_rows = set(rows[start:start + g])
            if len(group_rows) != 1:
                continue  # not a whole group (a sampler other than RepeatSampler's order): judge nothing
            row = group_rows.pop()
            self.groups_seen += 1
            if not is_flat(totals[start:start + g]):
                continue
            self.flat_counts[row] += 1
            if self.flat_counts[row] >= self.after and row not in self.dropped:
                self.dropped.add(row)
                newly.append(row)
        return newly

    def observe_batch(self, batch: Any) -> None:
        """Observer of the reward wrapper: judge a scored batch (grpokit.rewards.trainer_rewards.ScoredBatch)."""
        rows = batch.private.get(ROW_COLUMN)
        if rows is None:  # evaluation batches have no row ids: nothing to judge
            return
        self.observe(list(rows), batch.totals)
        log_metric = batch.columns.get("log_metric")  # TRL's hook: averaged into the step's logs
        if callable(log_metric):
            log_metric("data/dropped_zero_variance", float(len(self.dropped)))


class FilteredRepeatSampler:
    """TRL's RepeatSampler order over the rows the filter has not dropped (see the module doc)."""

    def __init__(self, zero_variance: ZeroVarianceFilter, num_rows: int, *, mini_repeat_count: int,
                 batch_size: int, repeat_count: int = 1, shuffle: bool = True, seed: int | None = None):
        if num_rows < batch_size:
            raise ConfigError(f"{num_rows} training rows cannot fill one generation batch of {batch_size} prompts; "
                              "add rows or lower training.per_device_train_batch_size")
        self.filter, self.num_rows = zero_variance, num_rows
        self.mini_repeat_count, self.batch_size, self.repeat_count = mini_repeat_count, batch_size, repeat_count
        self.shuffle = shuffle
        self._rng = random.Random(seed)
        self._queue: list[int] = []

    def __len__(self) -> int:
        return (self.num_rows // self.batch_size) * self.batch_size * self.mini_repeat_count * self.repeat_count

    def __iter__(self) -> Iterator[int]:
        for _ in range(self.num_rows // self.batch_size):
            # Drawn when the chunk starts, so every repeat of a chunk holds the same prompts.
            chunk = [self._next_row() for _ in range(self.batch_size)]
            for _ in range(self.repeat_count):
                for row in chunk:
                    yield from [row] * self.mini_repeat_count

    def _next_row(self) -> int:
        while True:
            if not self._queue:
                kept = [r for r in range(self.num_rows) if r not in self.filter.dropped]
                if not kept:
                    raise RunError(f"every training row was dropped after {self.filter.after} zero-variance "
                                   "groups: the data is all too easy or all too hard for this model. Check it with "
                                   "`grpokit calibrate CONFIG`, or raise data.drop_zero_variance_after")
                if self.shuffle:
                    self._rng.shuffle(kept)
                self._queue = kept[::-1]  # popped from the end: the pass runs in the shuffled order
            row = self._queue.pop()
            if row not in self.filter.dropped:
                return row


def filter_for(cfg: Any, num_generations: int) -> ZeroVarianceFilter | None:
    """The run's filter when data.drop_zero_variance_after is set, else None."""
    after = getattr(cfg.data, "drop_zero_variance_after", None)
    if after is None:
        return None
    _refuse_many_processes(int(os.environ.get("WORLD_SIZE", "1") or 1))
    return ZeroVarianceFilter(after, int(num_generations))


def with_row_ids(train_set: Any) -> Any:
    """The train set with each row's index in ROW_COLUMN (an old one replaced)."""
    if ROW_COLUMN in getattr(train_set, "column_names", []):
        train_set = train_set.remove_columns(ROW_COLUMN)
    return train_set.add_column(ROW_COLUMN, list(range(len(train_set))))


def filtered_sampler(zero_variance: ZeroVarianceFilter, trainer: Any, dataset: Any) -> FilteredRepeatSampler:
    """The sampler a GRPOTrainer gets in place of its RepeatSampler, with the same arguments."""
    _refuse_many_processes(trainer.accelerator.num_processes)
    args = trainer.args
    return FilteredRepeatSampler(zero_variance, len(dataset), mini_repeat_count=trainer.num_generations,
                                 batch_size=args.generation_batch_size // trainer.num_generations,
                                 repeat_count=trainer.num_iterations * args.steps_per_generation,
                                 shuffle=trainer.shuffle_dataset, seed=args.seed)


def _refuse_many_processes(processes: int) -> None:
    if processes > 1:
        raise ConfigError(f"data.drop_zero_variance_after works in one process only ({processes} here): each rank "
                          "scores its own part of a group, so the ranks would drop different prompts. Unset it, "
                          "or filter the data before training with `grpokit calibrate CONFIG --write FILE`")
