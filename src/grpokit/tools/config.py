"""The `tools:` and `environment:` sections of a run config, and their checks.

    tools:
      - {name: python, params: {timeout: 5}}
      - {name: calculator}
    environment:
      max_turns: 4            # tool-calling rounds per episode (TRL's max_tool_calling_iterations)
      chat_template: auto     # auto | model | chatml
      max_output_chars: 2000  # longer tool output is cut, with a note saying so

Everything here is checked before a model loads; the tokenizer check (does the
chat template render tool calls?) runs in chat_template.py as soon as the
tokenizer exists.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from grpokit.errors import ConfigError

CHAT_TEMPLATES = ("auto", "model", "chatml")
# Added with weight 0 to every run with tools, so the health rules and the report see them.
DIAGNOSTIC_REWARDS = ("tool_turn_limit", "malformed_tool_call")
# TRL's environment_factory needs transformers 5.2 (GRPOTrainer checks it, but only once the model is loaded).
MIN_TRANSFORMERS = "5.2.0"


@dataclass
class ToolSpec:
    name: str = ""
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class EnvironmentConfig:
    max_turns: int = 4
    chat_template: str = "auto"
    max_output_chars: int = 2000


def check_tools(tools: list[ToolSpec], environment: EnvironmentConfig, training: dict, conversational: bool) -> None:
    """Raise ConfigError, saying what to change, for anything that would fail once training starts."""
    if not tools:
        if environment != EnvironmentConfig():
            raise ConfigError("environment: is set but tools: is empty; list the tools the model may call, "
                              "e.g. tools: [{name: python}]")
        return
    from grpokit.tools.registry import get_tool

    seen = set()
    for i, spec in enumerate(tools):
        where = f"tools[{i}]"
        if not spec.name:
            raise ConfigError(f"{where} has no name; write it like {{name: python}}")
        if spec.name in seen:
            raise ConfigError(f"{where}: tool {spec.name!r} is listed twice; list each tool once")
        seen.add(spec.name)
        build_tool(get_tool(spec.name), spec.params, where)
    if not isinstance(environment.max_turns, int) or environment.max_turns < 1:
        raise ConfigError(f"environment.max_turns must be at least 1 (2-6 is usual), got {environment.max_turns!r}")
    if environment.chat_template not in CHAT_TEMPLATES:
        raise ConfigError(f"environment.chat_template is {environment.chat_template!r}: choose one of "
                          f"{', '.join(CHAT_TEMPLATES)} (auto: the model's when it renders tool calls, else ChatML)")
    if not isinstance(environment.max_output_chars, int) or environment.max_output_chars < 100:
        raise ConfigError(f"environment.max_output_chars must be an integer of at least 100, "
                          f"got {environment.max_output_chars!r}")
    turns = training.get("max_tool_calling_iterations")
    if turns is not None and turns != environment.max_turns:
        raise ConfigError(f"training.max_tool_calling_iterations ({turns}) and environment.max_turns "
                          f"({environment.max_turns}) disagree; set only environment.max_turns")
    if not conversational:
        raise ConfigError("tools: need chat prompts (tool calls are chat messages); set data.conversational: true")
    check_versions()


def build_tool(entry, params: dict, where: str):
    """The tool's per-episode object (a class instance) or its function; ConfigError for bad params."""
    if not entry.stateful:
        if params:
            raise ConfigError(f"{where}: tool {entry.name!r} takes no params, got {sorted(params)}; remove them")
        return entry.factory
    accepted = inspect.signature(entry.factory).parameters
    unknown = [k for k in params if k not in accepted]
    if unknown:
        valid = [k for k in accepted if k != "self"]
        raise ConfigError(f"{where}: tool {entry.name!r} has no param(s) {unknown}; its params are {valid}")
    try:
        return entry.factory(**params)
    except ConfigError:
        raise
    except (TypeError, ValueError, ImportError, OSError) as exc:
        raise ConfigError(f"{where}: tool {entry.name!r}: {exc}") from exc


def check_versions() -> None:
    """TRL must take environment_factory and transformers must be new enough for its tool loop."""
    import transformers
    from packaging.version import Version
    from trl import GRPOConfig, GRPOTrainer

    if "environment_factory" not in inspect.signature(GRPOTrainer.__init__).parameters or not hasattr(
            GRPOConfig, "max_tool_calling_iterations"):
        import trl

        raise ConfigError(f"tools: need a TRL whose GRPOTrainer takes environment_factory (TRL {trl.__version__} "
                          "does not); pip install --upgrade trl")
    if Version(transformers.__version__) < Version(MIN_TRANSFORMERS):
        raise ConfigError(f"tools: need transformers >= {MIN_TRANSFORMERS} for TRL's tool loop (installed: "
                          f"{transformers.__version__}); pip install --upgrade transformers")


def trainer_kwargs(tools: list[ToolSpec], environment: EnvironmentConfig) -> dict:
    """The GRPOTrainer keyword arguments for a run with tools ({} without)."""
    if not tools:
        return {}
    from grpokit.tools.environment import ToolEnvironmentFactory

    return {"environment_factory": ToolEnvironmentFactory(tools, environment)}


def grpo_fields(tools: list[ToolSpec], environment: EnvironmentConfig) -> dict:
    """The GRPOConfig fields tools need ({} without tools): the turn limit (TRL's default is no limit at all)."""
    return {"max_tool_calling_iterations": environment.max_turns} if tools else {}
