"""A health rule, declared: its id and severity, what it reads, its parameters, its words, what it
explains, and its check. The rules are rows of one table (grpokit.health.table); the engine
(grpokit.health.monitor) runs every row the same way.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from grpokit.config.health_params import RuleParams
from grpokit.health.evidence import Evidence, RunReading
from grpokit.health.signals import Signals


@dataclass(frozen=True)
class RunFacts:
    """What the run itself says, beside the rules' parameters: its length limit, its length and how many
    completions each logged step scored."""
    max_completion_length: int | None = None
    expected_logged_steps: int | None = None
    completions_per_step: int | None = None

    def capped(self, steps: int) -> int:
        """A patience of `steps` as it applies to this run: on a run of N logged steps at most
        max(2, ceil(N / 4)) and at most N, so a 3-step run alerts after 2 steps in a row, not never."""
        steps, total = int(steps), self.expected_logged_steps
        if total:
            steps = min(steps, max(2, math.ceil(total / 4)), int(total))
        return max(1, steps)


@dataclass(frozen=True)
class Ending:
    """One way a run can end (run_status.post_mortem's `how`), in the words of the rule that names it.
    `evidence` is a template over the post-mortem's facts ({where}, {error}, {host}, {pid}, {last_seen});
    an empty title, severity, cause or fix is the rule's, and a cause may extend the rule's ({cause})."""
    how: str
    evidence: str
    title: str = ""
    severity: str = ""
    cause: str = ""
    fix: str = ""
    with_memory: bool = False     # append the memory numbers run_status.json recorded, where it has them


Check = Callable[[Signals, RuleParams, RunFacts], Evidence]
# A rule that reads the whole run (history, config, run_status.json): its findings, once the run is read.
AfterRun = Callable[[Any, RuleParams], list[RunReading]]


@dataclass(frozen=True)
class Rule:
    params: type[RuleParams]      # its parameters; params.RULE is the rule's id
    severity: str                 # "critical" (the run is wasting compute) or "warning"
    title: str                    # a short name a person recognises
    reads: tuple[str, ...]        # the metrics and signals it reads (the report marks their panels)
    check: Check | None           # on every logged step; None: the rule reads the finished run only
    looks_like: str               # what the curves show
    cause: str                    # why it happens
    fix: str                      # what to change, with grpokit config keys
    threshold: str = ""           # when it fires, a template over its parameters ({kl_max} -> 0.5)
    patience: str = ""            # how long it must hold, a template over its parameters
    explains: tuple[str, ...] = ()  # the findings it makes redundant when it holds
    after_run: AfterRun | None = None  # over the whole run, by `grpokit report` (health/run_signals.py)
    endings: tuple[Ending, ...] = ()   # the ways a run ends that this rule names (checks/run_end.py)
    # When its after-run reading fires, a template over its parameters like `threshold`: a rule that reads
    # only the finished run says it in `threshold`; this is for one that is also live (out_of_memory).
    after_run_threshold: str = ""

    @property
    def id(self) -> str:
        return self.params.RULE

    def describe(self, params: RuleParams | None = None) -> tuple[str, str]:
        """(threshold, patience) in words, with `params` (default: the defaults) filled in."""
        values = (params or self.params()).to_dict()
        return self.threshold.format(**values), self.patience.format(**values)

    def describe_after_run(self, params: RuleParams | None = None) -> str:
        """When its after-run reading fires, in words with `params` (default: the defaults) filled in."""
        text = self.after_run_threshold if self.check is not None else self.threshold
        return text.format(**(params or self.params()).to_dict())
