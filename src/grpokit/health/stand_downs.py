"""Where a rule stayed quiet although part of its condition held, and why: the monitors' stand-downs
(HealthMonitor.stood_down), gathered over a run's stages for the report.

"truncation stood down at steps 2-9: the cut leaves the answer (...)" tells a user the rule looked,
and what it would take to fire, where silence would say nothing.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class StandDown:
    rule: str
    reason: str                 # "the cut leaves the answer", "explained by truncation", ...
    detail: str                 # the first such step's numbers
    ranges: list[list[int]] = field(default_factory=list)  # [first, last] step of each stretch
    stages: list[str | None] = field(default_factory=list)  # the stage of each of `ranges`

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def where(self) -> str:
        parts = []
        for (first, last), stage in zip(self.ranges, self.stages):
            steps = f"step {first}" if first == last else f"steps {first}-{last}"
            parts.append(f"stage {stage} {steps}" if stage else steps)
        return ", ".join(parts)


def gather(stood_down: dict[str, dict[str, dict[str, Any]]], stage: str | None,
           into: dict[tuple[str, str], StandDown]) -> None:
    """Add one stage's monitor.stood_down to `into` ((rule, reason) -> StandDown)."""
    for rule, reasons in stood_down.items():
        for reason, entry in reasons.items():
            found = into.setdefault((rule, reason), StandDown(rule, reason, str(entry.get("detail", ""))))
            for _, first, _, last in entry.get("ranges", []):
                found.ranges.append([int(first), int(last)])
                found.stages.append(stage)
