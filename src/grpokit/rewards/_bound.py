"""Rewards built by factories, as picklable objects instead of closures.

TRL's async GRPO trainer (and any multiprocessing launcher) pickles reward functions
to send them to a worker process; a closure cannot be pickled, an instance of a
module-level class holding a module-level function and plain settings can. Each
instance carries the stable `__name__` TRL logs the reward under.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from grpokit.completions import texts

_BUILD_LOCK = threading.Lock()  # two threads scoring at once must not start two pools


class BatchReward:
    """`fn(completions, kwargs, **settings) -> list[float | None]` bound to its settings."""

    def __init__(self, name: str, fn: Callable[..., list], **settings: Any):
        self.__name__ = self.__qualname__ = name
        self.fn = fn
        self.settings = settings

    def __call__(self, completions, **kwargs):
        return self.fn(completions, kwargs, **self.settings)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.settings.items() if not k.startswith("_"))
        return f"<reward {self.__name__}({shown})>"


class TextReward(BatchReward):
    """`fn(text, **settings) -> float | bool` applied to each completion's text."""

    def __call__(self, completions, **kwargs):
        return [float(self.fn(text, **self.settings)) for text in texts(completions)]


class Lazy:
    """A process-local resource (a worker pool) built on first use and never pickled.

    A reward that checks answers in subprocesses cannot carry its pool to
    another process; it carries this recipe instead, and the receiving
    process builds its own pool the first time the reward runs there.
    `factory` must be a module-level callable so the recipe itself pickles.
    """

    def __init__(self, factory: Callable[..., Any], **kwargs: Any):
        self.factory = factory
        self.kwargs = kwargs
        self._value: Any = None

    def get(self) -> Any:
        if self._value is None:
            with _BUILD_LOCK:
                if self._value is None:
                    self._value = self.factory(**self.kwargs)
        return self._value

    def __getstate__(self) -> dict:
        return {"factory": self.factory, "kwargs": self.kwargs, "_value": None}

    def __repr__(self) -> str:
        return f"{getattr(self.factory, '__name__', self.factory)}({', '.join(f'{k}={v!r}' for k, v in self.kwargs.items())})"
