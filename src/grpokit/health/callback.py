"""Live health checks: a TrainerCallback that reads TRL's logs and raises alerts.

    monitor = HealthCallback(HealthConfig.from_dict(cfg.health), run_dir="runs/demo")
    funcs = monitor.tracker.wrap(reward_funcs)   # optional: None/error shares, distinct completions
    trainer = GRPOTrainer(..., reward_funcs=funcs, callbacks=[monitor])

Alerts go to the console (rich) and to <run_dir>/alerts.jsonl, on rank 0 only.
The rules themselves live in rules.py (pure, cheap, replayable).
"""
from __future__ import annotations

import inspect
import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from transformers import TrainerCallback

from grpokit.completions import prompt_text, texts
from grpokit.rewards.reward_set import call_reward
from grpokit.health.memory import memory_metrics
from grpokit.health.rules import Alert, HealthConfig, HealthMonitor, expected_logged_steps, is_train_log

ALERTS_FILE = "alerts.jsonl"


class RewardTracker:
    """Counts, per reward function, the share of None scores and of calls that raised,
    and the share of distinct completions per prompt group -- numbers TRL does not log.

    `wrap(funcs)` returns functions with the same __name__ (TRL names metrics by it).
    A reward that raises is turned into a counted None for that batch, so one bad
    sample does not kill a long run, and the health rule reports the error.
    """

    def __init__(self, catch_errors: bool = True):
        self.catch_errors = catch_errors
        self._last_flush = time.perf_counter()
        self._reset()

    def _reset(self) -> None:
        self._seen: dict[str, int] = {}
        self._none: dict[str, int] = {}
        self._errors: dict[str, int] = {}
        self._first_error: dict[str, str] = {}
        self._distinct: list[float] = []
        self._modes: list[str] = []  # each group's most common completion (stripped)

    def wrap(self, funcs: Iterable[Callable]) -> list[Callable]:
        wrapped = []
        for i, func in enumerate(funcs):
            wrapped.append(self._wrap_one(func, count_distinct=(i == 0)))
        return wrapped

    def _wrap_one(self, func: Callable, count_distinct: bool) -> Callable:
        name = getattr(func, "__name__", None) or type(func).__name__
        if not callable(func) or _is_model(func) or inspect.iscoroutinefunction(func):
            # Reward models (nn.Modules) and async rewards are called differently by TRL; left as they are.
            return func

        def tracked(completions, **kwargs):
            if count_distinct:
                self._observe_groups(completions, kwargs.get("prompts"))
            if self.catch_errors:  # a reward must not raise: its batch becomes counted Nones, reported
                scores, error = call_reward(func, completions, **kwargs)
            else:
                scores, error = func(completions, **kwargs), None
            self._seen[name] = self._seen.get(name, 0) + len(completions)
            if error is not None:
                self._errors[name] = self._errors.get(name, 0) + len(completions)
                self._first_error.setdefault(name, error)
            else:
                self._none[name] = self._none.get(name, 0) + sum(1 for s in scores if s is None)
            return scores

        tracked.__name__ = name
        tracked.__qualname__ = name
        tracked.__doc__ = getattr(func, "__doc__", None)
        tracked.__wrapped__ = func
        return tracked

    def _observe_groups(self, completions: list, prompts: list | None) -> None:
        # TRL repeats each prompt num_generations times; grouping by prompt text is
        # robust to how the batch is ordered.
        if not prompts or len(prompts) != len(completions):
            return
        groups: dict[str, list[str]] = {}
        for prompt, text in zip(prompts, texts(completions)):
            groups.setdefault(prompt_text(prompt), []).append(text)
        for group in groups.values():
            if len(group) > 1:
                self._distinct.append(len(set(group)) / len(group))
                stripped = [g.strip() for g in group]
                self._modes.append(max(set(stripped), key=stripped.count))

    def flush(self) -> dict[str, Any]:
        """Metrics since the last flush, named like TRL's; then start counting afresh."""
        out: dict[str, Any] = {}
        for name, seen in self._seen.items():
            if seen:
                out[f"rewards/{name}/none_frac"] = self._none.get(name, 0) / seen
                out[f"rewards/{name}/error_frac"] = self._errors.get(name, 0) / seen
            if name in self._first_error:
                out[f"rewards/{name}/first_error"] = self._first_error[name]
        if self._distinct:
            out["completions/distinct_frac"] = sum(self._distinct) / len(self._distinct)
        if len(self._modes) > 1:
            # Collapse is one answer whatever the question; a model sure of its answers gives each
            # question its own. Share of groups whose usual completion is the step's most common one.
            out["completions/shared_answer_frac"] = max(self._modes.count(m) for m in set(self._modes)) / len(self._modes)
        out.update(self._judge_metrics())
        self._reset()
        return out

    def start_window(self) -> None:
        """Forget judge calls made before now (a doctor probe, an earlier run in this process)."""
        from grpokit.rewards.judge.stats import drain

        drain()
        self._last_flush = time.perf_counter()

    def _judge_metrics(self) -> dict[str, Any]:
        """llm_judge's latency, failures and cache hits since the last log, and its share of that time."""
        from grpokit.rewards.judge.stats import drain

        now = time.perf_counter()
        elapsed, self._last_flush = now - self._last_flush, now
        judged = drain()
        for key in [k for k in judged if k.endswith("/seconds")]:
            if elapsed > 0:
                judged[key[:-len("seconds")] + "step_share"] = min(1.0, judged[key] / elapsed)
        return judged


def _is_model(obj: Any) -> bool:
    return hasattr(obj, "forward") and hasattr(obj, "parameters")


class HealthCallback(TrainerCallback):
    """Runs the health rules on every training log; writes alerts; optionally stops on critical ones."""

    def __init__(self, config: HealthConfig | dict | None = None, run_dir: str | os.PathLike | None = None,
                 console: Any = None, tracker: RewardTracker | None = None):
        if isinstance(config, dict) or config is None:
            config = HealthConfig.from_dict(config)
        self.config = config
        self.monitor = HealthMonitor(config)
        self.run_dir = Path(run_dir) if run_dir else None
        self.tracker = tracker or RewardTracker()
        self._console = console
        self.seconds = 0.0  # time spent in on_log, for the overhead benchmark
        self.stopped_by: Alert | None = None

    @classmethod
    def from_config(cls, health: dict | HealthConfig | None, run_dir: str | os.PathLike | None = None,
                    **kwargs) -> "HealthCallback":
        """From a run config's `health:` section (raises ConfigError on an unknown key)."""
        return cls(health, run_dir=run_dir, **kwargs)

    def on_train_begin(self, args, state, control, **kwargs):
        if self.config.max_completion_length is None:
            self.config.max_completion_length = getattr(args, "max_completion_length", None)
        if self.config.expected_logged_steps is None:
            every = getattr(state, "logging_steps", None) or getattr(args, "logging_steps", 1)
            self.config.expected_logged_steps = expected_logged_steps(getattr(state, "max_steps", None), every)
        self.tracker.start_window()
        if self.run_dir is None:
            self.run_dir = Path(args.output_dir)
        if state.is_world_process_zero:
            # An empty alerts.jsonl says "watched, nothing wrong"; a missing one would say nothing.
            self.run_dir.mkdir(parents=True, exist_ok=True)
            (self.run_dir / ALERTS_FILE).touch()
        return control

    def on_log(self, args, state, control, logs=None, **kwargs):
        start = time.perf_counter()
        try:
            if not logs or not self.config.enabled or not is_train_log(logs):
                return control
            tracked = self.tracker.flush()
            tracked.update(memory_metrics())  # the out_of_memory rule: peak against the limit that binds
            # Numbers go into `logs` so a metrics writer that runs after us records them too;
            # error text only reaches the rules (loggers such as TensorBoard want scalars).
            logs.update({k: v for k, v in tracked.items() if isinstance(v, (int, float))})
            alerts = self.monitor.observe(state.global_step, {**logs, **tracked})
            if alerts and state.is_world_process_zero:
                self._emit(alerts)
            critical = [a for a in alerts if a.severity == "critical"]
            if critical and self.config.stop_on_critical:
                # Save first so the run can resume from just before the problem.
                control.should_save = True
                control.should_training_stop = True
                self.stopped_by = critical[0]
                if state.is_world_process_zero:
                    self._print(f"[bold red]health: stopping after a checkpoint at step {state.global_step} "
                                f"because of {critical[0].rule}[/]")
            return control
        finally:
            self.seconds += time.perf_counter() - start

    def _emit(self, alerts: list[Alert]) -> None:
        for alert in alerts:
            color = "red" if alert.severity == "critical" else "yellow"
            self._print(f"[bold {color}]health {alert.severity} (step {alert.step}) {alert.rule}:[/] "
                        f"{alert.message}\n  [dim]fix:[/] {alert.fix}")
        if self.run_dir is not None:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            with open(self.run_dir / ALERTS_FILE, "a", encoding="utf-8") as f:
                for alert in alerts:
                    f.write(json.dumps(alert.to_dict(), allow_nan=False, default=str) + "\n")

    def _print(self, text: str) -> None:
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True, highlight=False)
        self._console.print(text)
