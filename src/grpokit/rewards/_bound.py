"""Rewards built by factories, as picklable objects instead of closures.

TRL's async GRPO trainer (and any multiprocessing launcher) pickles reward functions
to send them to a worker process; a closure cannot be pickled, an instance of a
module-level class holding a module-level function and plain settings can. Each
instance carries the stable `__name__` TRL logs the reward under.
"""
from __future__ import annotations

from typing import Any, Callable

from grpokit.completions import texts


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
