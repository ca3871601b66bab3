"""Tool use for GRPO: built-in tools on the sandbox, and the environment TRL's tool loop drives.

    from grpokit.tools import register_tool, tool_names, ToolEnvironmentFactory, ToolSpec

A run config's `tools:` list names the tools (`python`, `calculator`, `search`, or
the user's own from `imports:`); `environment:` sets the turn limit, the chat
template and the output cap. training/trainer.py passes `ToolEnvironmentFactory` to
GRPOTrainer as `environment_factory`: one environment per rollout, reset before
each episode, its methods the tools. One file per job:

- registry.py: register_tool / get_tool / tool_names, ToolError
- config.py: the config sections, their checks, the mapping to TRL's arguments
- environment.py: the per-episode environment (state, argument checks, output cap)
- chat_template.py: a tokenizer whose template renders and parses tool calls
- python_tool.py, calculator.py, search.py: the built-in tools
Rewards that read the trajectory live with the other rewards (grpokit.rewards.tool_use).
"""
from grpokit.tools.config import EnvironmentConfig, ToolSpec, check_tools, trainer_kwargs  # noqa: F401
from grpokit.tools.registry import ToolError, get_tool, register_tool, tool_names  # noqa: F401


def __getattr__(name: str):
    if name == "ToolEnvironmentFactory":  # imported on use: it pulls in every built-in tool
        from grpokit.tools.environment import ToolEnvironmentFactory

        return ToolEnvironmentFactory
    raise AttributeError(f"module 'grpokit.tools' has no attribute {name!r}")
