"""tools/seconds and tools/time_share: the time a step spends inside tool calls, logged with the step."""
from __future__ import annotations

import time

import pytest

from grpokit.tools import ToolSpec, register_tool, trainer_kwargs
from grpokit.tools.config import EnvironmentConfig
from grpokit.tools.timing import tool_seconds, tool_time_callbacks


@register_tool("nap")
def nap(seconds: float) -> str:
    """Sleep, then say so.

    Args:
        seconds: How long to sleep.
    """
    time.sleep(seconds)
    if seconds > 0.05:
        raise ValueError("too sleepy")
    return "awake"


def test_every_call_is_timed_failures_included():
    env = trainer_kwargs([ToolSpec("nap")], EnvironmentConfig())["environment_factory"]()
    before = tool_seconds()
    # The naps' real length, measured around them here: on a loaded machine a sleep overruns, and the
    # timing must report what the calls took, not what they asked for.
    start = time.perf_counter()
    assert env.nap(seconds=0.05) == "awake"
    with pytest.raises(ValueError):
        env.nap(seconds=0.06)  # a failing call cost the step its time too
    took = time.perf_counter() - start
    assert 0.11 <= tool_seconds() - before <= took


def test_callback_adds_the_share_of_the_step_to_its_log():
    [callback] = tool_time_callbacks([ToolSpec("nap")])
    env = trainer_kwargs([ToolSpec("nap")], EnvironmentConfig())["environment_factory"]()
    callback.on_step_begin(None, None, None)
    start = time.perf_counter()
    env.nap(seconds=0.04)
    in_tool = time.perf_counter() - start  # measured here: a loaded machine overruns sleeps
    time.sleep(0.04)  # the rest of the step: generation, backward, ...
    callback.on_step_end(None, None, None)
    step = time.perf_counter() - start
    logs = {"loss": 1.0}
    callback.on_log(None, None, None, logs=logs)
    assert 0.04 <= logs["tools/seconds"] <= in_tool + 1e-4  # the log rounds to 4 places
    # The share is the tool's time over the step's, both as measured around them here.
    assert logs["tools/time_share"] == pytest.approx(logs["tools/seconds"] / step, rel=0.2)
    # The end-of-training summary is not a step; a second log of the same step adds nothing.
    summary = {"train_runtime": 3.0}
    callback.on_log(None, None, None, logs=summary)
    assert "tools/seconds" not in summary
    assert tool_time_callbacks([]) == []  # no tools, no callback
