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
    assert env.nap(seconds=0.05) == "awake"
    with pytest.raises(ValueError):
        env.nap(seconds=0.06)  # a failing call cost the step its time too
    assert tool_seconds() - before == pytest.approx(0.11, abs=0.05)


def test_callback_adds_the_share_of_the_step_to_its_log():
    [callback] = tool_time_callbacks([ToolSpec("nap")])
    env = trainer_kwargs([ToolSpec("nap")], EnvironmentConfig())["environment_factory"]()
    callback.on_step_begin(None, None, None)
    env.nap(seconds=0.04)
    time.sleep(0.04)  # the rest of the step: generation, backward, ...
    callback.on_step_end(None, None, None)
    logs = {"loss": 1.0}
    callback.on_log(None, None, None, logs=logs)
    assert logs["tools/seconds"] == pytest.approx(0.04, abs=0.02)
    assert logs["tools/time_share"] == pytest.approx(0.5, abs=0.2)
    # The end-of-training summary is not a step; a second log of the same step adds nothing.
    summary = {"train_runtime": 3.0}
    callback.on_log(None, None, None, logs=summary)
    assert "tools/seconds" not in summary
    assert tool_time_callbacks([]) == []  # no tools, no callback
