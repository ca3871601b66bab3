"""Rewards that read a tool-use trajectory, and the final-answer view for the rest.

With `tools:` a completion is a list of messages: assistant turns (some with
`tool_calls`), `tool` messages holding each call's output, and the final
assistant answer. TRL writes a failed call's output as `{'error': '...'}`. A call
the model wrote but TRL could not parse stays in the assistant's text as a raw
`<tool_call>` block. These rewards read that structure; every other reward sees
only the final assistant message (`final_answer_only`), so copying a tool's
output into an early turn, or the tool output itself, is never what gets scored.
"""
from __future__ import annotations

from typing import Any

from grpokit.rewards._bound import BatchReward
from grpokit.rewards.registry import RewardConfigError, register

_ERROR_PREFIX = "{'error':"  # str() of the dict TRL's tool loop puts in a failed call's message


def _messages(completion: Any) -> list[dict]:
    if isinstance(completion, (list, tuple)):
        return [m for m in completion if isinstance(m, dict)]
    return []


def _tool_outputs(completion: Any) -> list[str]:
    return [str(m.get("content", "")) for m in _messages(completion) if m.get("role") == "tool"]


def call_count(completion: Any) -> int:
    return sum(len(m.get("tool_calls") or []) for m in _messages(completion) if m.get("role") == "assistant")


def failed_calls(completion: Any) -> int:
    return sum(out.startswith(_ERROR_PREFIX) for out in _tool_outputs(completion))


def ended_on_unanswered_call(completion: Any) -> bool:
    """The episode stopped at a tool call that never ran (turn limit, or no room left for its output)."""
    messages = _messages(completion)
    return bool(messages) and messages[-1].get("role") == "assistant" and bool(messages[-1].get("tool_calls"))


def _assistant_text(completion: Any) -> str:
    if isinstance(completion, str):
        return completion
    return "".join(str(m.get("content") or "") for m in _messages(completion) if m.get("role") == "assistant")


def final_message(completion: Any) -> Any:
    """The last assistant message (as a one-message completion); plain-text completions as they are."""
    if not isinstance(completion, (list, tuple)):
        return completion
    assistants = [m for m in _messages(completion) if m.get("role") == "assistant"]
    return [assistants[-1]] if assistants else [{"role": "assistant", "content": ""}]


def _success(completions, kwargs, no_call_score):
    scores = []
    for completion in completions:
        outputs = _tool_outputs(completion)
        if not outputs:
            scores.append(no_call_score)
        else:
            scores.append(1.0 - failed_calls(completion) / len(outputs))
    return scores


@register("tool_call_success", family="tools")
def tool_call_success(no_call_score: float | None = 0.0):
    """Share of the episode's tool calls that ran without an error (1.0 = every call worked).

    Reads the tool messages of a multi-turn completion (runs with `tools:`). An episode
    that made no call scores `no_call_score` (default 0.0, so the reward also asks
    for the tool to be used; None leaves such episodes out).
    """
    if no_call_score is not None and not isinstance(no_call_score, (int, float)):
        raise RewardConfigError("tool_call_success: no_call_score must be a number or None")
    reward = BatchReward("tool_call_success", _success, no_call_score=no_call_score)
    reward.reads_trajectory = True
    return reward


@register("tool_calls", family="tools")
def tool_calls(completions, **kwargs):
    """Number of tool calls the episode made (a diagnostic: give it weight 0).

    Counts the tool_calls of every assistant turn of a multi-turn completion; 0 for
    plain completions.
    """
    return [float(call_count(c)) for c in completions]


tool_calls.reads_trajectory = True


def _malformed(completions, kwargs, marker, penalty):
    return [penalty if marker in _assistant_text(c) else 0.0 for c in completions]


@register("malformed_tool_call", family="tools")
def malformed_tool_call(marker: str = "<tool_call>", penalty: float = -1.0):
    """`penalty` (default -1.0) when a turn holds a tool call TRL could not parse, else 0.0.

    A call that parses becomes a structured tool call and leaves no `marker` in the
    assistant's text; one with broken JSON or a missing name stays there as text.
    marker: the opening tag of a call in the chat template (`<tool_call>` for ChatML/Qwen).
    """
    if not isinstance(marker, str) or not marker:
        raise RewardConfigError("malformed_tool_call: marker must be the non-empty opening tag of a call")
    if not isinstance(penalty, (int, float)) or penalty > 0:
        raise RewardConfigError("malformed_tool_call: penalty must be a number <= 0 (e.g. -1.0)")
    reward = BatchReward("malformed_tool_call", _malformed, marker=marker, penalty=float(penalty))
    reward.reads_trajectory = True
    return reward


@register("tool_turn_limit", family="tools")
def tool_turn_limit(completions, **kwargs):
    """1.0 when the episode ended on a tool call that never ran (the turn limit, or no room for its output).

    A diagnostic (weight 0): runs with `tools:` add it, and the `tool_turn_limit`
    health rule reads its mean. Raise environment.max_turns or
    training.max_completion_length when it stays high.
    """
    return [1.0 if ended_on_unanswered_call(c) else 0.0 for c in completions]


tool_turn_limit.reads_trajectory = True


class FinalAnswerOnly:
    """A reward scored on each completion's last assistant message only; keeps the reward's name."""

    def __init__(self, reward):
        self.reward = reward
        self.__name__ = self.__qualname__ = getattr(reward, "__name__", type(reward).__name__)

    def __call__(self, completions, **kwargs):
        return self.reward([final_message(c) for c in completions], **kwargs)


def final_answer_only(reward):
    """`reward` as it applies in a tool run: trajectory rewards see everything, the rest the final answer."""
    return reward if getattr(reward, "reads_trajectory", False) else FinalAnswerOnly(reward)
