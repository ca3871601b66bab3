"""A line every `every` seconds while a step is long: what the step is doing and for how long.

A GRPO step on a CPU can take minutes (generation, then the rewards, then the backward pass),
and the progress line (MetricsCallback) prints only once the step has ended: a user saw nothing
for 3.5 minutes and could not tell a slow run from a hung one. TrainerCallbacks fire only
between steps, so the step's phase is set from inside it by GrpokitTrainer (its overrides of
TRL's `_generate` and `_calculate_rewards`), and a daemon thread prints it. A thread rather
than prints at the phase changes: a phase that blocks (a reward that hangs, a slow judge, one
long generate call) still gets its line.

    progress = StepProgress(console, every=25)
    trainer = GrpokitTrainer(..., progress=progress, callbacks=[progress, ...])
"""
from __future__ import annotations

import threading
import time

from transformers import TrainerCallback

from grpokit.run_directory.ranks import is_main_process

# 25 s with a tick of every/5 keeps the gap between two lines under 30 s.
DEFAULT_EVERY = 25.0


class StepProgress(TrainerCallback):
    def __init__(self, console, every: float = DEFAULT_EVERY, stage: str | None = None):
        if every <= 0:
            raise ValueError(f"progress interval must be > 0 seconds, got {every}")
        self.console = console
        self.every = float(every)
        self.stage = stage
        self._lock = threading.Lock()
        self._step: int | None = None       # the step being trained; None between steps
        self._max_steps = 0
        self._started = 0.0                 # when the step began (monotonic)
        self._phase = "starting"
        self._phase_started = 0.0
        self._last_line = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- set from inside the step (GrpokitTrainer)
    def phase(self, text: str) -> None:
        with self._lock:
            self._phase, self._phase_started = text, time.monotonic()

    # -- TrainerCallback
    def on_train_begin(self, args, state, control, **kwargs):
        if self.console is not None and is_main_process() and self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="grpokit-step-progress", daemon=True)
            self._thread.start()
        return control

    def on_step_begin(self, args, state, control, **kwargs):
        now = time.monotonic()
        with self._lock:
            self._step, self._max_steps = state.global_step + 1, state.max_steps
            self._started = self._last_line = self._phase_started = now
            self._phase = "starting"
        return control

    def on_step_end(self, args, state, control, **kwargs):
        with self._lock:
            self._step = None
        return control

    def on_train_end(self, args, state, control, **kwargs):
        self.close()
        return control

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    # -- the printer
    def line(self, now: float | None = None) -> str | None:
        """The line to print now, or None when no step is running or the last line is recent."""
        now = time.monotonic() if now is None else now
        with self._lock:
            if self._step is None or now - self._last_line < self.every:
                return None
            self._last_line = now
            where = f"{self.stage + ' ' if self.stage else ''}step {self._step}/{self._max_steps}"
            return (f"{where}: {self._phase} ({now - self._phase_started:.0f} s; "
                    f"{now - self._started:.0f} s into the step)")

    def _run(self) -> None:
        while not self._stop.wait(self.every / 5):
            text = self.line()
            if text is not None:
                try:
                    self.console.print(text, style="dim", highlight=False, markup=False)
                except Exception:  # a closed console must never take training down with it
                    return
