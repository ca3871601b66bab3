"""The TrainerCallback that keeps run_status.json current (grpokit.health.run_status explains why)."""
from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import Any, Callable

from transformers import TrainerCallback

from grpokit.health.memory import GIB
from grpokit.health.run_status import memory_snapshot, write_status


class RunStatusCallback(TrainerCallback):
    """Keeps run_status.json current: running (each log), finished (train end).

    `estimate`: called once with the model at the start, returns the planned peak memory in bytes
    (the doctor's estimate) or None; kept beside the limit so a post-mortem can compare them.
    `finishes_run`: whether the end of this training is the end of the run. grpokit's own trainer passes
    False: a stage's end is followed by saving its final weights and by the next stage, and the run is
    finished only after the last of those (run_status.mark_finished).
    """

    def __init__(self, run_dir: str | os.PathLike, stage: str | None = None,
                 estimate: Callable[[Any], float | None] | None = None, finishes_run: bool = True):
        self.run_dir = Path(run_dir)
        self.stage = stage
        self.estimate = estimate
        self.finishes_run = finishes_run
        self.status: dict[str, Any] = {}

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        if not state.is_world_process_zero:
            return control
        estimate = None
        if self.estimate is not None and model is not None:
            try:
                dataset = getattr(kwargs.get("train_dataloader"), "dataset", None)
                rows = [dataset[i] for i in range(min(50, len(dataset)))] if dataset is not None else []
                estimate = self.estimate(model, kwargs.get("processing_class"), rows)
            except Exception:  # an estimate is a hint for a post-mortem; never a reason to stop training
                estimate = None
        self.status = {"state": "running", "pid": os.getpid(), "host": socket.gethostname(), "stage": self.stage,
                       "started": time.time(), "updated": time.time(), "step": state.global_step,
                       "max_steps": state.max_steps,
                       "estimate_gib": round(estimate / GIB, 3) if estimate else None,
                       "memory": memory_snapshot()}
        write_status(self.run_dir, self.status)
        return control

    def on_log(self, args, state, control, logs=None, **kwargs):
        if state.is_world_process_zero and self.status:
            self.status.update({"updated": time.time(), "step": state.global_step, "memory": memory_snapshot()})
            write_status(self.run_dir, self.status)
        return control

    def on_train_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero and self.status and self.finishes_run:
            self.status.update({"state": "finished", "updated": time.time(), "step": state.global_step,
                                "memory": memory_snapshot()})
            write_status(self.run_dir, self.status)
        return control
