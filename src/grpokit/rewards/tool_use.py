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

import ast
import json
import re
from typing import Any

from grpokit.rewards._bound import BatchReward
from grpokit.rewards.registry import RewardConfigError, register

_ERROR_PREFIX = "{'error':"  # str() of the dict TRL's tool loop puts in a failed call's message
_ERROR_PREFIXES = (_ERROR_PREFIX, '{"error":')
# Error text a program printed itself (a caught exception shown with traceback.print_exc(),
# repr(e) or `f"{type(e).__name__}: {e}"`): the call failed, whatever its status says.
_PRINTED_ERROR = re.compile(r"Traceback \(most recent call last\)|\b[A-Z]\w*(?:Error|Exception)\b")
# What a call that did nothing shows: the python tool's "(no output)", or nothing at all.
_NO_OUTPUT = ("", "(no output)")


def _messages(completion: Any) -> list[dict]:
    if isinstance(completion, (list, tuple)):
        return [m for m in completion if isinstance(m, dict)]
    return []


def _tool_outputs(completion: Any) -> list[str]:
    if isinstance(completion, str):
        return []
    return [str(m.get("content", "")) for m in _messages(completion) if m.get("role") == "tool"]


def call_count(completion: Any) -> int:
    return sum(len(m.get("tool_calls") or []) for m in _messages(completion) if m.get("role") == "assistant")


def failed_calls(completion: Any) -> int:
    """Calls whose tool message is TRL's error dict (the tool raised)."""
    return sum(out.startswith(_ERROR_PREFIXES) for out in _tool_outputs(completion))


def _calls(completion: Any) -> list[dict]:
    """Every tool call the assistant made, in order (each TRL tool message answers one, in this order)."""
    calls = []
    for m in _messages(completion):
        if m.get("role") == "assistant":
            calls.extend(c for c in (m.get("tool_calls") or []) if isinstance(c, dict))
    return calls


def _arguments(call: dict) -> dict:
    function = call.get("function") if isinstance(call.get("function"), dict) else call
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return {}
    return arguments if isinstance(arguments, dict) else {}


def _code_tree(call: dict) -> ast.Module | None:
    code = _arguments(call).get("code")
    if not isinstance(code, str):
        return None
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the tool reports it as an error of its own


def _catches(tree: ast.Module) -> bool:
    # The tool reports an exception as a failed call; code that catches one only hides it from this reward.
    return any(isinstance(node, ast.ExceptHandler) for node in ast.walk(tree))


def _literal_only(tree: ast.Module) -> bool:
    """Code that computes nothing: `pass`, bare literals, print() of literals (`print(1)`, `print("ok")`)."""
    def literal(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) or (isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant))

    for stmt in tree.body:
        if isinstance(stmt, ast.Pass):
            continue
        if not isinstance(stmt, ast.Expr):
            return False
        value = stmt.value
        if literal(value):
            continue
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "print"
                and all(literal(a) for a in value.args) and all(literal(k.value) for k in value.keywords)):
            continue
        return False
    return True


def call_outcomes(completion: Any) -> list[str]:
    """Each call that ran, in order, as `failed`, `idle` (did nothing) or `worked`.

    failed: the tool raised (TRL's error dict), the output shows error text the
    program printed itself (a traceback, `ZeroDivisionError`), or the code catches
    exceptions (try/except), which hides a failure from the tool. idle: no output,
    or code that only shows literals (`print(1)`, `pass`), or a bare number for
    the calculator. worked: every other call.
    """
    outputs = _tool_outputs(completion)
    if not outputs:
        return []
    outcomes = []
    calls = _calls(completion)
    for i, output in enumerate(outputs):
        call = calls[i] if i < len(calls) else {}
        tree = _code_tree(call)
        if output.startswith(_ERROR_PREFIXES) or _PRINTED_ERROR.search(output[:20_000]) \
                or (tree is not None and _catches(tree)):
            outcomes.append("failed")
        elif output.strip() in _NO_OUTPUT or (tree is not None and _literal_only(tree)) or _bare_number(call):
            outcomes.append("idle")
        else:
            outcomes.append("worked")
    return outcomes


def _bare_number(call: dict) -> bool:
    expression = _arguments(call).get("expression")
    if not isinstance(expression, str):
        return False
    try:
        float(expression.strip())
    except ValueError:
        return False
    return True


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
        outcomes = call_outcomes(completion)
        if "failed" in outcomes:
            scores.append(0.0)
        elif "worked" in outcomes:
            scores.append(1.0)
        else:
            scores.append(no_call_score)  # no call, or only calls that did nothing
    return scores


@register("tool_call_success", family="tools")
def tool_call_success(no_call_score: float | None = 0.0):
    """1.0 when the episode's tool calls worked, 0.0 when any of them failed: one verdict per episode.

    Reads the tool messages of a multi-turn completion (runs with `tools:`). Scored
    per episode, not per call, so that more calls can never raise it: a share of
    calls that worked would pay a failed call padded with `print(1)` calls 0.75.

    - A call failed when the tool raised (TRL shows `{'error': ...}`), when its
      output shows error text the program printed itself (a traceback,
      `ZeroDivisionError: ...`), or when its code catches exceptions
      (`try/except`): the tool already reports a failure, so catching one only
      hides it. Any failed call makes the episode 0.0, even if a later call
      worked (a recovered answer is the correctness reward's to pay).
    - A call did nothing when it showed no output, ran code that only shows
      literals (`print(1)`, `pass`), or gave the calculator a bare number. An
      episode of such calls scores as one without calls.
    - Otherwise (at least one call did work, none failed): 1.0.

    An episode that made no call scores `no_call_score` (default 0.0, so the
    reward also asks for the tool to be used; None leaves such episodes out).
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
