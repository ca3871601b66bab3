"""Live health checks: a TrainerCallback that reads TRL's logs and raises alerts.

    calls = TrainerRewards(reward_set)            # grpokit.rewards.trainer_rewards
    monitor = HealthCallback(HealthConfig.from_dict(cfg.health), run_dir="runs/demo", reward_calls=calls)
    trainer = GRPOTrainer(..., reward_funcs=calls.funcs,
                          callbacks=[RewardStatsCallback(calls), monitor])   # stats first: they feed the rules

The per-reward numbers (None and error shares, timeouts, first errors) come from the
one reward wrapper; RewardStatsCallback (grpokit.training.callbacks) puts the numbers into
each log, and the error text reaches the rules through `reward_calls.last_window`.

Alerts go to the console (rich) and to <run_dir>/alerts.jsonl (each with its step and stage), on rank 0 only.
The rules themselves are the table's (table.py), run by monitor.py (pure, cheap, replayable); a hung
reward (the watchdog's timeouts) is one of them, reward_hung.

The monitor's state (baselines, patience, alerts raised) goes into every checkpoint (state_dict, written by
grpokit.training.checkpoints before the completion marker) and comes back on resume (restore), so a resumed
run is watched as if it had never stopped, and agrees with the report's replay of metrics.jsonl.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from grpokit.health.memory import memory_metrics
from grpokit.health.rules import Alert, HealthConfig, HealthMonitor, expected_logged_steps, is_train_log
from grpokit.rewards.trainer_rewards import TrainerRewards
from grpokit.run_directory.layout import ALERTS, HEALTH_STATE

STATE_VERSION = 1


class HealthCallback(TrainerCallback):
    """Runs the health rules on every training log; writes alerts; optionally stops on critical ones."""

    def __init__(self, config: HealthConfig | dict | None = None, run_dir: str | os.PathLike | None = None,
                 console: Any = None, reward_calls: TrainerRewards | None = None, stage: str | None = None):
        if isinstance(config, dict) or config is None:
            config = HealthConfig.from_dict(config)
        self.config = config
        self.monitor = HealthMonitor(config)
        self.run_dir = Path(run_dir) if run_dir else None
        self.reward_calls = reward_calls
        self.stage = stage  # written into each alert: two stages both have a step 2
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
        if self.config.completions_per_step is None:
            # TRL's generation batch: every process's completions of one optimizer step, scored together.
            batch = getattr(args, "generation_batch_size", None)
            self.config.completions_per_step = int(batch) if isinstance(batch, int) and batch > 0 else None
        if self.run_dir is None:
            self.run_dir = Path(args.output_dir)
        if state.is_world_process_zero:
            # An empty alerts.jsonl says "watched, nothing wrong"; a missing one would say nothing.
            self.run_dir.mkdir(parents=True, exist_ok=True)
            (self.run_dir / ALERTS).touch()
        return control

    def on_log(self, args, state, control, logs=None, **kwargs):
        start = time.perf_counter()
        try:
            if not logs or not self.config.enabled or not is_train_log(logs):
                return control
            # The out_of_memory rule: the peak against the limit that binds. Into `logs`, so metrics.jsonl has it.
            logs.update(memory_metrics())
            # The numbers are in `logs` already (RewardStatsCallback); the error text comes from the window.
            tracked = self.reward_calls.last_window if self.reward_calls is not None else {}
            # The watchdog's timeouts are a rule of the table (reward_hung), so the report's replay sees them too.
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

    def observe_held_out(self, record: dict[str, Any]) -> None:
        """A held-out evaluation record (grpokit.evaluate.during hands each one over as it writes it): the
        rules that weigh learning (reward_stuck) see it, as a replay of metrics.jsonl does."""
        if self.config.enabled:
            self.monitor.observe(int(record.get("step") or 0), record)

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps of the monitor (JSON-able)."""
        return {"version": STATE_VERSION, "stage": self.stage, "monitor": self.monitor.state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"health state version {state.get('version')!r}, expected {STATE_VERSION}")
        self.monitor.restore(state["monitor"])

    def restore(self, checkpoint: str | os.PathLike, metrics: str | os.PathLike | None = None) -> str:
        """The monitor as it was at `checkpoint`: from the state saved in it, else (a checkpoint from before
        the state was saved, or an unreadable one) by replaying this stage's records of `metrics`
        (metrics.jsonl, already trimmed to the checkpoint's step). Returns which of the two it used."""
        path = Path(checkpoint) / HEALTH_STATE
        try:
            self.load_state_dict(json.loads(path.read_text(encoding="utf-8")))
            return "checkpoint"
        except (OSError, ValueError, KeyError, TypeError):
            self.monitor = HealthMonitor(self.config)
        if metrics is not None:
            from grpokit.run_directory.jsonl import read_records, without_redone

            for record in without_redone(read_records(Path(metrics))):
                if record.get("stage") == self.stage:
                    self.monitor.observe(int(record.get("step") or 0), record)
        return "replay"

    def _emit(self, alerts: list[Alert]) -> None:
        for alert in alerts:
            color = "red" if alert.severity == "critical" else "yellow"
            self._print(f"[bold {color}]health {alert.severity} (step {alert.step}) {alert.rule}:[/] "
                        f"{alert.message}\n  [dim]fix:[/] {alert.fix}")
        if self.run_dir is not None:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            with open(self.run_dir / ALERTS, "a", encoding="utf-8") as f:
                for alert in alerts:
                    f.write(json.dumps({**alert.to_dict(), "stage": self.stage}, allow_nan=False, default=str) + "\n")

    def _print(self, text: str) -> None:
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True, highlight=False)
        self._console.print(text)
