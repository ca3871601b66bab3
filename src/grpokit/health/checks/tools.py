"""The tool-run rules: TRL's tools/* metrics and the tool_turn_limit diagnostic reward."""
from __future__ import annotations

from grpokit.config.health_params import ToolCallsFail, ToolNeverCalled, ToolTurnLimit
from grpokit.health.evidence import Evidence, quiet
from grpokit.health.rule import Rule, RunFacts
from grpokit.health.signals import Signals


def check_tool_calls_fail(s: Signals, p: ToolCallsFail, run: RunFacts) -> Evidence:
    failing, calls = s.now("tools/failure_frequency"), s.now("tools/call_frequency")
    if failing is not None and calls and failing >= p.failure_frac:
        return Evidence(True, failing, p.failure_frac, f"{failing:.0%} of tool calls fail ({calls:.2g} calls per episode)")
    return quiet()


def check_tool_never_called(s: Signals, p: ToolNeverCalled, run: RunFacts) -> Evidence:
    calls = s.now("tools/call_frequency")
    if calls is not None and calls < p.min_calls:
        return Evidence(True, calls, p.min_calls, f"{calls:.2g} tool calls per episode")
    return quiet()


def check_tool_turn_limit(s: Signals, p: ToolTurnLimit, run: RunFacts) -> Evidence:
    share = s.now("rewards/tool_turn_limit/mean")
    if share is not None and share >= p.limit_frac:
        return Evidence(True, share, p.limit_frac, f"{share:.0%} of episodes end on a tool call that never ran")
    return quiet()


RULES = (
    Rule(
        params=ToolCallsFail, severity="warning", title="Tool calls always fail",
        reads=("tools/failure_frequency", "tools/call_frequency"), check=check_tool_calls_fail,
        looks_like="tools/failure_frequency near 1 while the model does call tools.",
        cause=("Every call errors: the model writes code that raises or runs past the tool's timeout, calls a tool "
               "with wrong argument names, or the tool cannot work (a search path with no documents)."),
        fix=("Read the tool messages in completions.jsonl; raise the tool's params.timeout, describe the tool "
             "and its arguments in data.system_prompt, add tool_call_success to rewards, or start from a model "
             "trained for tool calling."),
        threshold="tools/failure_frequency >= {failure_frac} (with calls made)",
        patience="{patience} logged steps in a row",
    ),
    Rule(
        params=ToolNeverCalled, severity="warning", title="The model never calls its tools",
        reads=("tools/call_frequency",), check=check_tool_never_called,
        looks_like="tools/call_frequency at or near 0 step after step.",
        cause=("The model does not know it has tools or how to call them (small models rarely call unprompted), "
               "or nothing rewards a call, so GRPO has no reason to try."),
        fix=("Say in data.system_prompt when to use the tool and show one call; add tool_call_success "
             "(weight 0.2-0.5) to rewards; use a tool-calling instruct model; keep malformed_tool_call to see "
             "calls that do not parse."),
        threshold="tools/call_frequency < {min_calls} calls per episode",
        patience="{patience} logged steps in a row",
    ),
    Rule(
        params=ToolTurnLimit, severity="warning", title="Episodes hit the turn limit",
        reads=("rewards/tool_turn_limit/mean",), check=check_tool_turn_limit,
        looks_like="rewards/tool_turn_limit/mean (a weight-0 diagnostic) at half or more.",
        cause=("Episodes end on a tool call that never ran: the model keeps calling tools until "
               "environment.max_turns runs out, or the completion has no room left for the tool's output."),
        fix=("Raise environment.max_turns or training.max_completion_length, lower environment.max_output_chars, "
             "or reward answering (the correctness rewards score the final answer only)."),
        threshold="share of episodes ending on an unanswered call >= {limit_frac}",
        patience="{patience} logged steps in a row",
    ),
)
