"""Imports every built-in reward family so that each registers itself."""
from grpokit.rewards import code, correctness, format, judge, length, restated, reward_model, style, tool_use  # noqa: F401,A004
