"""What one rule found at one step: whether its condition holds, the number against its threshold,
the words, and, where it stood down although part of its condition held, why.

A stand-down is said, not swallowed: the report shows "truncation stood down at steps 2-9: the cut
leaves the answer (cut completions score +0.02 against finished ones)" instead of nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Evidence:
    holds: bool
    value: float | None = None
    threshold: float | None = None
    message: str = ""             # what was measured, with numbers
    # (reason, detail) for each part of the rule that kept it quiet although its first test passed.
    stood_down_for: list[tuple[str, str]] = field(default_factory=list)
    # Logged steps in a row this reading needs before it alerts (before the short-run cap); None: the
    # rule's own patience. Truncation's two levels differ in it.
    patience: int | None = None
    # The findings this reading makes redundant; None: the rule's `explains`. Half the completions cut
    # explains nothing (the other half could still differ), so truncation's slower level says ().
    explains: tuple[str, ...] | None = None
    # Rules whose explanation this reading does not accept (every reward 0: no cut explains that).
    not_explained_by: tuple[str, ...] = ()
    # (rule, joining words): where that rule holds too, this reading's message names what it saw.
    tells: tuple[tuple[str, str], ...] = ()


def quiet(*stood_down_for: tuple[str, str]) -> Evidence:
    """A reading that does not hold, with the stand-downs that kept it quiet (none: it simply did not)."""
    return Evidence(False, stood_down_for=list(stood_down_for)) if stood_down_for else _NOT_HOLDING


# Most readings of most steps: one shared instance (the engine only reads a reading that does not hold).
_NOT_HOLDING = Evidence(False)


@dataclass
class RunReading(Evidence):
    """What a rule that reads the whole run (its history, its config, run_status.json) found: one finding,
    with the words where they depend on what was found (a reward's name, how the run ended)."""
    title: str | None = None      # None: the rule's
    severity: str | None = None
    cause: str | None = None
    fix: str | None = None
    first_step: int | None = None
    last_step: int | None = None
    count: int = 1
    ranges: list[list[int]] = field(default_factory=list)
    stage: str | None = None
    source: str | None = None     # what it was read from, for Finding.sources: "metrics" or "run_status"
