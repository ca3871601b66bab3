"""The per-episode environment TRL drives: the configured tools as methods of one object.

TRL's `environment_factory` builds one environment per rollout, calls `reset(**row)`
before each episode and exposes the environment's public methods as tools (their
names, type hints and docstrings become the schema in the prompt). This module
builds that class from the `tools:` list: each method forwards to the tool's own
per-episode object, so state (the python tool's cells) lives for one episode and
is cleared by reset. Output longer than `environment.max_output_chars` is cut,
with a note saying how much, so one huge print cannot fill the context.
"""
from __future__ import annotations

import inspect
import time

from grpokit.tools.config import EnvironmentConfig, ToolSpec, build_tool
from grpokit.tools.registry import ToolEntry, ToolError, get_tool
from grpokit.tools.timing import add_call_time


class ToolEnvironment:
    """Base of the generated environment classes; one instance per rollout."""

    entries: tuple[tuple[str, ToolEntry, dict], ...] = ()
    max_output_chars: int = 2000

    def __init__(self) -> None:
        # A fresh object per stateful tool: environments never share state.
        self._tools = {name: build_tool(entry, params, f"tools[{name}]") for name, entry, params in self.entries}
        self.calls = 0  # calls this episode, for tests and diagnostics

    def reset(self, **row) -> None:
        self.calls = 0
        for (name, entry, _), tool in zip(self.entries, self._tools.values()):
            if entry.stateful:
                tool.reset(**row)

    def _call(self, name: str, arguments: dict) -> str:
        self.calls += 1
        start = time.perf_counter()
        try:
            return self._run(name, arguments)
        finally:
            add_call_time(time.perf_counter() - start)  # tools/seconds, tools/time_share (timing.py)

    def _run(self, name: str, arguments: dict) -> str:
        entry = dict((n, e) for n, e, _ in self.entries)[name]
        function = getattr(self._tools[name], name) if entry.stateful else self._tools[name]
        try:
            inspect.signature(function).bind(**arguments)
        except TypeError as exc:
            raise ToolError(f"bad arguments for {name}: {exc}") from None
        try:
            output = function(**arguments)
        except ToolError as exc:
            raise ToolError(truncate(str(exc), self.max_output_chars)) from None
        return truncate(str(output), self.max_output_chars)


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[output truncated: {len(text) - limit} more characters]"


def _method(name: str, entry: ToolEntry):
    source = entry.signature_source()
    signature = inspect.signature(source)
    params = list(signature.parameters.values())
    if entry.stateful:
        params = params[1:]  # the tool class's own self

    def method(self, **arguments):
        return self._call(name, arguments)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = inspect.getdoc(source)
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__signature__ = signature.replace(parameters=[self_param, *params])
    method.__annotations__ = {k: v for k, v in getattr(source, "__annotations__", {}).items()}
    return method


class ToolEnvironmentFactory:
    """TRL's environment_factory: a callable returning a fresh environment for one rollout."""

    def __init__(self, tools: list[ToolSpec], settings: EnvironmentConfig | None = None):
        settings = settings or EnvironmentConfig()
        entries = tuple((spec.name, get_tool(spec.name), dict(spec.params)) for spec in tools)
        namespace = {name: _method(name, entry) for name, entry, _ in entries}
        namespace.update(entries=entries, max_output_chars=settings.max_output_chars)
        self.environment_class = type("ToolEnvironment", (ToolEnvironment,), namespace)
        self.tool_names = [name for name, _, _ in entries]

    def __call__(self) -> ToolEnvironment:
        return self.environment_class()
