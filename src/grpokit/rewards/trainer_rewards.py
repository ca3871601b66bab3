"""TrainerRewards: the one wrapper between a RewardSet and TRL's GRPOTrainer.

    calls = TrainerRewards(reward_set, observers=[recorder.record, zero_variance.observe_batch])
    GRPOTrainer(..., reward_funcs=calls.funcs, args=GRPOConfig(reward_weights=calls.weights, ...))

TRL calls each reward function once per generation batch, one after another, with the
same `completions` list. Each function in `calls.funcs` runs its reward through
`call_reward` (the watchdog: a hang, a raise, a wrong count or a non-number scores None
for that batch and is counted), keeps the reward's name (`__name__`, which TRL logs it
under), and once every reward has scored the batch hands a `ScoredBatch` -- scores, TRL's
weighted totals, the columns -- to each observer. Everything that watches rewards
during training is an observer of this one wrapper rather than a wrapper of its own:
completions.jsonl, the zero-variance filter.

Per-reward bookkeeping for the logs lives here too: `window()` returns, since its last
call, each reward's share of None scores and of failed calls (`rewards/NAME/none_frac`,
`error_frac`, `timeouts`, `first_error`), the share of distinct completions per prompt
group, whether completions cut at the length limit score lower or higher on the answer than
finished ones (grpokit.rewards.cut_gap, given TRL's stop ids at construction), and llm_judge's
latency and failures (grpokit.rewards.judge.stats).

Columns whose names start with `grpokit_` (the zero-variance filter's row ids) are grpokit's
own: they are taken off before a reward sees the columns and handed to the observers.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from grpokit.completions import prompt_text, texts
from grpokit.rewards.cut_gap import CutGap
from grpokit.rewards.reward_set import RewardSet, call_reward, weighted_totals
from grpokit.rewards.unscorable import floor_of, settled
from grpokit.rewards.watchdog import RewardTimeout

PRIVATE_PREFIX = "grpokit_"


@dataclass
class ScoredBatch:
    """One generation batch, scored by every reward of the set."""

    completions: list
    columns: dict[str, Any]               # what TRL passed: prompts, the data set's columns, trainer_state, ...
    private: dict[str, Any]               # grpokit_* columns, taken off before the rewards saw the columns
    scores: dict[str, list[float | None]]  # reward name -> one score per completion (None: not scored)
    totals: list[float | None]            # TRL's weighted total per completion (None where no reward scored)
    errors: dict[str, str] = field(default_factory=dict)  # reward name -> why it scored nothing


Observer = Callable[[ScoredBatch], None]


class TrainerRewards:
    """A RewardSet as TRL calls it: `funcs` and `weights` for the trainer, `window()` for the logs."""

    def __init__(self, rewards: RewardSet, observers: Iterable[Observer] = (), stop_ids: frozenset[int] | None = None):
        self.rewards = rewards
        self.names = list(rewards.names)
        self.weights = list(rewards.weights)
        self.observers = list(observers)
        self.funcs = [self._wrap(i) for i in range(len(rewards))]
        self.cut_gap = CutGap(self.names, self.weights, stop_ids)
        self._batch: tuple[int, dict[int, tuple[list, str | None]]] | None = None
        self.last_window: dict[str, Any] = {}
        self._window_start = time.perf_counter()
        self._reset()

    # ------------------------------------------------------------------ the calls TRL makes

    def _wrap(self, index: int) -> Callable:
        name, func, timeout = self.names[index], self.rewards.funcs[index], self.rewards.timeouts[index]
        isolate = self.rewards.isolate[index]

        def scored(completions, **columns):
            private = {k: columns.pop(k) for k in list(columns) if k.startswith(PRIVATE_PREFIX)}
            values, error = call_reward(func, completions, columns, timeout, isolate)
            self._count(name, values, error, len(completions))  # none_frac counts what the reward could not score
            # ...and TRL, which adds None as 0, gets a None among scored row-mates at the reward's floor
            # (or the row's lowest score): any reward, a plugin too, pays the unscorable no more than
            # a wrong answer (grpokit.rewards.unscorable).
            values = settled(values, columns, floor_of(func))
            self._collect(index, completions, columns, private, values, error)
            return values

        scored.__name__ = scored.__qualname__ = name  # TRL's metric names: rewards/<name>/mean
        scored.__doc__ = getattr(func, "__doc__", None)
        scored.__wrapped__ = func
        return scored

    def _collect(self, index, completions, columns, private, values, error) -> None:
        key = id(completions)
        if self._batch is None or self._batch[0] != key:
            self._batch = (key, {})
        parts = self._batch[1]
        parts[index] = (values, error)
        if len(parts) < len(self.funcs):
            return
        self._batch = None
        scores = {self.names[i]: parts[i][0] for i in range(len(self.funcs))}
        batch = ScoredBatch(completions=list(completions), columns=columns, private=private, scores=scores,
                            totals=weighted_totals(scores, self.weights, len(completions)),
                            errors={self.names[i]: parts[i][1] for i in parts if parts[i][1] is not None})
        self._observe_groups(batch)
        for observer in [self._observe_cut, *self.observers]:
            try:
                observer(batch)
            except Exception as exc:  # noqa: BLE001 - bookkeeping must never stop a training step
                print(f"grpokit: {getattr(observer, '__qualname__', observer)} failed on a batch: {exc!r}",
                      file=sys.stderr)

    def _observe_cut(self, batch: ScoredBatch) -> None:
        self.cut_gap.observe(batch.columns.get("completion_ids"), batch.columns.get("prompts"), batch.scores)

    # ------------------------------------------------------------------ the numbers for the logs

    def _reset(self) -> None:
        self._seen: dict[str, int] = {}
        self._none: dict[str, int] = {}
        self._errors: dict[str, int] = {}
        self._timeouts: dict[str, int] = {}
        self._first_error: dict[str, str] = {}
        self._distinct: list[float] = []
        self._modes: list[str] = []  # each group's most common completion (stripped)

    def _count(self, name: str, values: list, error: str | None, n: int) -> None:
        self._seen[name] = self._seen.get(name, 0) + n
        if error is None:
            self._none[name] = self._none.get(name, 0) + sum(v is None for v in values)
            return
        self._errors[name] = self._errors.get(name, 0) + n
        self._first_error.setdefault(name, error)
        if error.startswith(RewardTimeout.__name__):
            self._timeouts[name] = self._timeouts.get(name, 0) + 1
            # Said at once, not only at the next log: the step the user is watching just waited on it.
            print(f"grpokit: reward {name!r} hung: {error}", file=sys.stderr)

    def _observe_groups(self, batch: ScoredBatch) -> None:
        # TRL repeats each prompt num_generations times; grouping by prompt text does not depend on the order.
        prompts = batch.columns.get("prompts")
        if not prompts or len(prompts) != len(batch.completions):
            return
        groups: dict[str, list[str]] = {}
        for prompt, text in zip(prompts, texts(batch.completions)):
            groups.setdefault(prompt_text(prompt), []).append(text)
        for group in groups.values():
            if len(group) > 1:
                self._distinct.append(len(set(group)) / len(group))
                stripped = [g.strip() for g in group]
                self._modes.append(max(set(stripped), key=stripped.count))

    def start_window(self) -> None:
        """Forget what came before now (judge calls of a doctor probe, an earlier run in this process)."""
        from grpokit.rewards.judge.stats import drain

        drain()
        self._reset()
        self.cut_gap.window()
        self._window_start = time.perf_counter()

    def window(self) -> dict[str, Any]:
        """The numbers since the last window, named like TRL's metrics; counting then starts afresh.
        `rewards/NAME/first_error` is text, every other value a number. Also kept as `last_window`."""
        out: dict[str, Any] = {}
        for name, seen in self._seen.items():
            if seen:
                out[f"rewards/{name}/none_frac"] = self._none.get(name, 0) / seen
                out[f"rewards/{name}/error_frac"] = self._errors.get(name, 0) / seen
            if name in self._timeouts:
                out[f"rewards/{name}/timeouts"] = self._timeouts[name]
            if name in self._first_error:
                out[f"rewards/{name}/first_error"] = self._first_error[name]
        if self._distinct:
            out["completions/distinct_frac"] = sum(self._distinct) / len(self._distinct)
        if len(self._modes) > 1:
            # Collapse is one answer whatever the question; a model sure of its answers gives each
            # question its own. Share of groups whose usual completion is the step's most common one.
            out["completions/shared_answer_frac"] = max(self._modes.count(m) for m in set(self._modes)) / len(self._modes)
        out.update(self.cut_gap.window())
        out.update(self._judge_metrics())
        self._reset()
        self.last_window = out
        return out

    def _judge_metrics(self) -> dict[str, Any]:
        """llm_judge's latency, failures and cache hits since the last window, and its share of that time."""
        from grpokit.rewards.judge.stats import drain

        now = time.perf_counter()
        elapsed, self._window_start = now - self._window_start, now
        judged = drain()
        for key in [k for k in judged if k.endswith("/seconds")]:
            if elapsed > 0:
                judged[key[:-len("seconds")] + "step_share"] = min(1.0, judged[key] / elapsed)
        return judged


def numeric(window: dict[str, Any]) -> dict[str, float]:
    """The numbers of a window (what may go into a trainer's logs; error text may not)."""
    return {k: v for k, v in window.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}

