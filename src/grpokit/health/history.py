"""What the health rules see of a run: each metric's recent finite values, the first few of each
(the run's baselines), the latest raw logs, and the held-out evaluation records.

Pure Python, JSON-able (a checkpoint keeps it; see HealthMonitor.state).
"""
from __future__ import annotations

import math
from collections import deque
from itertools import islice
from typing import Any, Iterator


def finite(value: Any) -> float | None:
    """A log value as a finite float, or None (missing, None, NaN, inf, a string)."""
    if type(value) is float:  # nearly every log value: skip the conversions below
        return value if math.isfinite(value) else None
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


class History:
    """Per-metric recent values (finite ones only), the first few of each, the latest raw log, and the
    run's held-out evaluation records (kept apart: no train-log rule reads them by accident)."""

    def __init__(self, maxlen: int, first: int = 3, whole: tuple[str, ...] = ("reward",)):
        self._values: dict[str, deque] = {}
        self._maxlen = maxlen
        # Keys kept for the whole run (one float a step): diverged looks back to where a fall began.
        self._whole = set(whole)
        self._first_n = max(3, int(first))
        self.first: dict[str, list[float]] = {}  # the first few values, for baselines
        self.latest: dict[str, Any] = {}
        self._logs: deque = deque(maxlen=maxlen)
        self.count = 0  # training logs added so far
        self._fresh: set[str] = set()  # keys whose first-values list took this step's value
        self.held_out: list[dict[str, Any]] = []

    def add(self, logs: dict[str, Any]) -> None:
        self.latest = logs
        self._logs.append(logs)
        self.count += 1
        self._fresh = set()
        values, first = self._values, self.first
        for key, raw in logs.items():
            value = finite(raw)
            if value is None:
                continue
            # get before creating: setdefault would build a deque and a list per key per step only to drop them.
            recent = values.get(key)
            if recent is None:
                recent = values[key] = deque(maxlen=None if key in self._whole else self._maxlen)
            recent.append(value)
            head = first.get(key)
            if head is None:
                head = first[key] = []
            if len(head) < self._first_n:
                head.append(value)
                self._fresh.add(key)

    def add_held_out(self, record: dict[str, Any]) -> None:
        self.held_out.append(record)

    def last(self, key: str, n: int) -> list[float]:
        return list(islice(self.newest_first(key), n))[::-1]

    def newest_first(self, key: str) -> Iterator[float]:
        return reversed(self._values.get(key, ()))

    def before_now(self, key: str, n: int = 3) -> list[float]:
        """The first n values of `key`, leaving out this step's: a baseline the step is not part of."""
        head = self.first.get(key, [])
        if key in self._fresh:
            head = head[:-1]
        return head[:n]

    def recent(self, n: int) -> list[dict[str, Any]]:
        """The last n logged steps' raw logs, oldest first."""
        return list(self._logs)[-n:]

    def now(self, key: str) -> float | None:
        """This step's value, only if it was logged this step and is finite."""
        return finite(self.latest.get(key))

    def state(self) -> dict[str, Any]:
        """Everything the rules read, as JSON-able data (a checkpoint keeps it; see HealthMonitor.state)."""
        return {"values": {k: list(v) for k, v in self._values.items()}, "first": self.first, "latest": self.latest,
                "logs": list(self._logs), "count": self.count, "fresh": sorted(self._fresh),
                "held_out": self.held_out}

    def restore(self, state: dict[str, Any]) -> None:
        self._values = {k: deque(v, maxlen=None if k in self._whole else self._maxlen)
                        for k, v in state["values"].items()}
        self.first = {k: list(v) for k, v in state["first"].items()}
        self.latest = dict(state["latest"])
        self._logs = deque(state["logs"], maxlen=self._maxlen)
        self.count = int(state["count"])
        self._fresh = set(state["fresh"])
        self.held_out = list(state["held_out"])
