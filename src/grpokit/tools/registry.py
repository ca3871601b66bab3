"""The tool registry: built-in tools and the user's own, by name.

A tool is either a plain function (stateless) or a class (state kept for one
episode). TRL renders a tool's schema from its name, type hints and Google-style
docstring, so both kinds need those:

    @register_tool("lookup")
    def lookup(key: str) -> str:
        \"\"\"Look a key up in the project glossary.

        Args:
            key: The term to look up.
        \"\"\"

    @register_tool("notes")
    class Notes:
        def __init__(self, limit: int = 10): ...      # params: from the config's tools: entry
        def reset(self, **row) -> None: ...           # a new episode; row = the data set row
        def notes(self, text: str) -> str: ...        # the tool itself: a method named like the tool

A tool reports a failure by raising (ToolError or any exception): TRL counts it
in tools/failure_frequency and shows the model {"error": "<message>"}.
"""
from __future__ import annotations

import difflib
import inspect
from dataclasses import dataclass
from typing import Any, Callable

from grpokit.errors import ConfigError


class ToolError(Exception):
    """A tool call failed; the message is what the model sees."""


@dataclass(frozen=True)
class ToolEntry:
    name: str
    factory: Callable[..., Any]
    stateful: bool  # a class: one instance per episode, reset() before each

    def signature_source(self) -> Callable:
        """The function whose signature and docstring make the tool's schema."""
        return getattr(self.factory, self.name) if self.stateful else self.factory


_REGISTRY: dict[str, ToolEntry] = {}


def register_tool(name: str):
    """Decorator: register a function or class as the tool `name` (see the module docstring)."""
    if not name.isidentifier():
        raise ValueError(f"tool name {name!r} must be a Python identifier (the model calls it by name)")

    def decorator(obj):
        stateful = inspect.isclass(obj)
        if stateful and not callable(getattr(obj, name, None)):
            raise TypeError(f"tool class {obj.__name__} must define a method named {name!r} (the tool itself)")
        entry = ToolEntry(name, obj, stateful)
        if not (inspect.getdoc(entry.signature_source()) or "").strip():
            raise TypeError(f"tool {name!r} needs a docstring: the chat template shows it to the model as the "
                            "tool's description (Google style, with an Args: section)")
        _REGISTRY[name] = entry
        return obj

    return decorator


def _ensure_builtins() -> None:
    from grpokit.tools import calculator, python_tool, search  # noqa: F401  (each registers itself)


def tool_names() -> list[str]:
    _ensure_builtins()
    return sorted(_REGISTRY)


def get_tool(name: str) -> ToolEntry:
    _ensure_builtins()
    if name not in _REGISTRY:
        close = difflib.get_close_matches(name, list(_REGISTRY), n=1, cutoff=0.5)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(f"unknown tool {name!r}: {hint}the tools are {', '.join(sorted(_REGISTRY))}; "
                          "register your own with @grpokit.tools.register_tool in a file listed under imports:")
    return _REGISTRY[name]
