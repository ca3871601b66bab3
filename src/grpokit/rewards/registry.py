"""The reward registry: names -> reward factories.

Every entry is a factory. `get(name, **params)` calls it and returns a plain
reward function `f(completions, **kwargs) -> list[float | None]` whose
`__name__` is stable (TRL logs each reward under that name). A reward that takes
no parameters is registered as the function itself; `register` tells the two
apart by the first parameter's name (`completions` means a ready reward).
"""
from __future__ import annotations

import difflib
import inspect
import json
from dataclasses import dataclass, field
from typing import Any, Callable

from grpokit.errors import RewardConfigError
from grpokit.rewards.unscorable import attach

RewardFunc = Callable[..., list]


@dataclass
class _Entry:
    name: str
    factory: Callable[..., RewardFunc]
    doc: str
    family: str
    aliases: tuple[str, ...] = field(default_factory=tuple)
    is_factory: bool = True
    examples: dict[str, Any] = field(default_factory=dict)
    precheck: Callable[..., None] | None = None


_REGISTRY: dict[str, _Entry] = {}
_ALIASES: dict[str, str] = {}


def register(name: str, *, aliases: tuple[str, ...] | list[str] = (), family: str = "custom",
             examples: dict[str, Any] | None = None, precheck: Callable[..., None] | None = None):
    """Decorator: register a reward function, or a factory that builds one.

    `examples` gives a typical value for each parameter that has no default,
    quoted by the error when someone leaves it out. `precheck(**params)`, when given,
    judges parameter values cheaply (no model, no worker, no network) and raises
    RewardConfigError: config validation calls it, so a bad value fails before training.

    >>> @register("shouts")
    ... def shouts(completions, **kwargs):
    ...     return [1.0 if text.isupper() else 0.0 for text in texts(completions)]
    """

    def decorator(obj: Callable) -> Callable:
        params = list(inspect.signature(obj).parameters)
        is_factory = not (params and params[0] == "completions")
        for key in (name, *aliases):
            if key in _REGISTRY or key in _ALIASES:
                owner = _ALIASES.get(key, key)
                if _REGISTRY[owner].factory is not obj:
                    raise RewardConfigError(f"reward name {key!r} is already registered; pick another name")
        _REGISTRY[name] = _Entry(
            name=name,
            factory=obj,
            doc=inspect.getdoc(obj) or "",
            family=family,
            aliases=tuple(aliases),
            is_factory=is_factory,
            examples=dict(examples or {}),
            precheck=precheck,
        )
        for alias in aliases:
            _ALIASES[alias] = name
        return obj

    return decorator


def _ensure_builtins() -> None:
    # Importing the family modules registers the built-in rewards.
    from grpokit.rewards import _builtin  # noqa: F401


def canonical(name: str) -> str:
    """The registered name for `name` (which may be an alias); raises with a hint."""
    _ensure_builtins()
    if name in _REGISTRY:
        return name
    if name in _ALIASES:
        return _ALIASES[name]
    options = sorted([*_REGISTRY, *_ALIASES])
    close = difflib.get_close_matches(name, options, n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise RewardConfigError(
        f"unknown reward {name!r}.{hint} `grpokit rewards list` shows every registered name."
    )


def names() -> list[str]:
    """Every registered reward name (aliases not included), sorted."""
    _ensure_builtins()
    return sorted(_REGISTRY)


def aliases(name: str) -> tuple[str, ...]:
    return _REGISTRY[canonical(name)].aliases


def family(name: str) -> str:
    return _REGISTRY[canonical(name)].family


def describe(name: str) -> str:
    """The reward's documentation (its docstring)."""
    return _REGISTRY[canonical(name)].doc


def takes(name: str, param: str) -> bool:
    """Whether the registered reward `name` is a factory with a parameter called `param`."""
    entry = _REGISTRY[canonical(name)]
    return entry.is_factory and param in inspect.signature(entry.factory).parameters


def check(name: str, **params) -> None:
    """Raise RewardConfigError unless `get(name, **params)` would accept these parameter names.

    Builds nothing: config validation uses it so that checking a run starts no worker.
    Values are judged by the factory itself, when `get` builds the reward, and before
    that by the entry's `precheck`, where it has one.
    """
    entry = _REGISTRY[canonical(name)]
    _check_entry(entry, params)
    if entry.precheck is not None:
        try:
            entry.precheck(**params)
        except RewardConfigError:
            raise
        except (TypeError, ValueError) as exc:
            raise RewardConfigError(f"reward {entry.name!r}: {exc}") from exc


def _check_entry(entry: _Entry, params: dict) -> None:
    if not entry.is_factory:
        if params:
            raise RewardConfigError(
                f"reward {entry.name!r} takes no parameters, got {sorted(params)}; remove them"
            )
        return
    accepted = inspect.signature(entry.factory).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    if not takes_any:
        unknown = [k for k in params if k not in accepted]
        if unknown:
            valid = [k for k in accepted]
            hints = []
            for k in unknown:
                close = difflib.get_close_matches(k, valid, n=1)
                hints.append(f"{k!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
            raise RewardConfigError(
                f"reward {entry.name!r} has no parameter {', '.join(hints)}; valid parameters: {valid}"
            )
    missing = [p.name for p in accepted.values()
               if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in params]
    if missing:
        raise RewardConfigError(_missing_message(entry, missing[0]))


def get(name: str, **params) -> RewardFunc:
    """A ready reward function for `name`, built with `params`.

    Bad parameters fail here, at construction, with a message naming the fix. The reward
    carries `floor`, the lowest score it pays, where grpokit.rewards.unscorable declares one.
    """
    entry = _REGISTRY[canonical(name)]
    _check_entry(entry, params)
    if not entry.is_factory:
        return attach(entry.name, entry.factory)
    try:
        func = entry.factory(**params)
    except RewardConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise RewardConfigError(f"reward {entry.name!r}: {exc}") from exc
    # Its floor: the lowest score it pays, what a completion it cannot score earns (unscorable.py).
    return attach(entry.name, func)


def _missing_message(entry: _Entry, param: str) -> str:
    # No default fits every task for this parameter: say which one to pass, and how, in each place a reward is named.
    example = entry.examples.get(param)
    value = "..." if example is None else repr(example)
    shown = value if example is None else json.dumps(example)
    return (f"reward {entry.name!r} needs {param}= (it has no default that suits every task); "
            f"e.g. get({entry.name!r}, {param}={value}), in a config "
            f"{{name: {entry.name}, params: {{{param}: {shown}}}}}, or on the command line "
            f"--reward {entry.name}:{param}={shown}. `grpokit rewards describe {entry.name}` explains it.")
