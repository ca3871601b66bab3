"""What tool calls cost a step: seconds spent inside tool calls, and their share of the step.

Every call through a tool environment adds its wall time to a per-process
clock; `ToolTimeCallback` reads it at each step's end and adds two metrics to
the step's log line (so they land in metrics.jsonl next to TRL's tool metrics):

- `tools/seconds`: wall seconds inside tool calls during the step (every
  rollout's calls, argument checks and output cap included);
- `tools/time_share`: that over the step's wall time (generation, tools,
  rewards, backward, optimizer: everything between step begin and step end).

TRL's tool loop runs the calls of a batch one after another in the trainer's
process, so the sum is time the step really waited for tools.
"""
from __future__ import annotations

import time

_clock = {"seconds": 0.0, "calls": 0}


def add_call_time(seconds: float) -> None:
    _clock["seconds"] += seconds
    _clock["calls"] += 1


def tool_seconds() -> float:
    """Wall seconds inside tool calls in this process so far."""
    return _clock["seconds"]


def tool_calls_made() -> int:
    return _clock["calls"]


def tool_time_callbacks(tools) -> list:
    """[ToolTimeCallback()] for a run with tools, [] without; place it before the callback that writes the logs."""
    return [tool_time_callback_class()()] if tools else []


_CLASS = None


def tool_time_callback_class():
    """The TrainerCallback class (built on first use: transformers is imported only then)."""
    global _CLASS
    if _CLASS is None:
        from transformers import TrainerCallback

        class ToolTimeCallback(TrainerCallback):
            """Adds tools/seconds and tools/time_share to each step's logs."""

            def __init__(self):
                self._start = None
                self._tools_at_start = 0.0
                self._pending: dict[str, float] = {}

            def on_step_begin(self, args, state, control, **kwargs):
                self._start = time.perf_counter()
                self._tools_at_start = tool_seconds()
                return control

            def on_step_end(self, args, state, control, **kwargs):
                if self._start is not None:
                    step = time.perf_counter() - self._start
                    spent = tool_seconds() - self._tools_at_start
                    self._pending = {"tools/seconds": round(spent, 4),
                                     "tools/time_share": round(spent / step, 4) if step > 0 else 0.0}
                return control

            def on_log(self, args, state, control, logs=None, **kwargs):
                if logs is not None and self._pending and "train_runtime" not in logs:
                    logs.update(self._pending)
                    self._pending = {}
                return control

        _CLASS = ToolTimeCallback
    return _CLASS
