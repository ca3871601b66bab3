"""What a run writes while it trains: metrics.jsonl, completions.jsonl, the progress line.

The rewards reach TRL through one wrapper (grpokit.rewards.trainer_rewards); what is
written here observes it.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from transformers import TrainerCallback

from grpokit.completions import prompt_text, transcript
from grpokit.run_directory.ranks import is_main_process
from grpokit.health.rules import is_train_log
from grpokit.rewards.trainer_rewards import ScoredBatch, TrainerRewards, numeric
from grpokit.run_directory.jsonl import append_jsonl


class RewardRecorder:
    """Writes a sample of each scored batch to completions.jsonl: an observer of TrainerRewards,
    so the scores TRL computes anyway are recorded without scoring twice."""

    def __init__(self, path: Path, stage: str | None, per_batch: int = 4):
        self.path = Path(path)
        self.stage = stage
        self.per_batch = per_batch

    def record(self, batch: ScoredBatch) -> None:
        if not is_main_process():
            return
        columns = batch.columns
        step = getattr(columns.get("trainer_state"), "global_step", None)
        prompts = columns.get("prompts") or [None] * len(batch.completions)
        answers = columns.get("answer")
        with open(self.path, "a", encoding="utf-8") as fh:
            for i in range(min(self.per_batch, len(batch.completions))):
                record = {
                    "step": None if step is None else step + 1,  # the step being trained
                    "stage": self.stage,
                    "prompt": prompt_text(prompts[i]) if prompts[i] is not None else None,
                    "completion": transcript(batch.completions[i]),  # a tool trajectory in full
                    "answer": answers[i] if isinstance(answers, list) and i < len(answers) else None,
                    "scores": {name: values[i] for name, values in batch.scores.items()},
                    "reward": batch.totals[i],  # TRL's total: rewards that returned None are left out
                }
                fh.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")


class RewardStatsCallback(TrainerCallback):
    """Adds the rewards' own numbers (None and error shares, timeouts, distinct completions, judge
    latency: TrainerRewards.window) to every training log, whether or not health checks run,
    so metrics.jsonl and the report have them. Runs before the health and metrics callbacks."""

    def __init__(self, calls: TrainerRewards):
        self.calls = calls

    def on_train_begin(self, args, state, control, **kwargs):
        self.calls.start_window()
        return control

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and is_train_log(logs):
            logs.update(numeric(self.calls.window()))
        return control


class MetricsCallback(TrainerCallback):
    """One JSON object per logged step in metrics.jsonl (TRL's metric names), plus a progress line."""

    def __init__(self, path: Path, stage: str | None, console=None, reward_names: list[str] | None = None):
        self.path = Path(path)
        self.stage = stage
        self.console = console
        self.reward_names = reward_names or []
        self._t0 = None
        self._step_times: list[float] = []

    def on_step_begin(self, args, state, control, **kwargs):
        self._t0 = time.perf_counter()
        return control

    def on_step_end(self, args, state, control, **kwargs):
        if self._t0 is not None:
            self._step_times.append(time.perf_counter() - self._t0)
        return control

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs:
            return control
        if "train_runtime" in logs:  # the end-of-training summary, not a step
            return control
        record = {"step": state.global_step, "stage": self.stage, "time": time.time()}
        record.update(logs)
        if self._step_times:
            record["step_time"] = self._step_times[-1]
        record.update(memory_metrics())
        append_jsonl(self.path, record)
        self._progress(state, record)
        return control

    def _progress(self, state, rec: dict) -> None:
        if self.console is None:
            return
        parts = [f"[bold]{self.stage + ' ' if self.stage else ''}step {state.global_step}/{state.max_steps}[/bold]"]
        if "reward" in rec:
            parts.append(f"reward {rec['reward']:.3f}")
        if "reward_std" in rec:
            parts.append(f"reward_std {rec['reward_std']:.3f}")
        for name in self.reward_names:
            key = f"rewards/{name}/mean"
            if key in rec and isinstance(rec[key], (int, float)):
                parts.append(f"{name} {rec[key]:.3f}")
        if self._step_times:
            recent = self._step_times[-5:]
            per_step = sum(recent) / len(recent)
            left = max(state.max_steps - state.global_step, 0) * per_step
            parts.append(f"{per_step:.1f} s/step, ~{left / 60:.0f} min left")
        self.console.print("  ".join(parts), highlight=False)


def memory_metrics() -> dict:
    """This process's resident memory now and at its peak, and the GPU's (GB), for OOM post-mortems."""
    out = {}
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            fields = dict(line.split(":", 1) for line in fh if line.startswith(("VmRSS", "VmHWM")))
        out["memory/rss_gb"] = round(int(fields["VmRSS"].split()[0]) / 2**20, 3)
        out["memory/peak_rss_gb"] = round(int(fields["VmHWM"].split()[0]) / 2**20, 3)
    except (OSError, KeyError, ValueError):
        pass  # not Linux
    try:
        import torch

        if torch.cuda.is_available() and torch.cuda.is_initialized():
            out["memory/cuda_allocated_gb"] = round(torch.cuda.memory_allocated() / 2**30, 3)
            out["memory/cuda_peak_gb"] = round(torch.cuda.max_memory_allocated() / 2**30, 3)
    except Exception:  # noqa: BLE001 - a metric must never stop training
        pass
    return out


def trim_metrics(path: Path, stage: str | None, after_step: int) -> None:
    """Drop records of `stage` logged after `after_step` (they are redone on resume).

    Works on metrics.jsonl and completions.jsonl alike: both carry `stage` and `step`.
    """
    path = Path(path)
    if not path.is_file():
        return
    kept = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a line cut by the crash
        if rec.get("stage") == stage and int(rec.get("step") or 0) > after_step:
            continue
        kept.append(line)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
    os.replace(tmp, path)
