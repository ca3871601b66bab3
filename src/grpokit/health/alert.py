"""An alert: a rule's finding at the step it starts (or repeats), as alerts.jsonl writes it."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class Alert:
    step: int
    rule: str
    severity: str
    message: str          # what was measured, with numbers
    fix: str              # what to change (from the rule table, read against the run's rewards)
    value: float | None = None
    threshold: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
