"""How a run ended, from run_status.json (run_status.post_mortem): interrupted, failed, killed, out of
memory, or running on another machine. Each is a rule of its own; the post-mortem's words win over a
live alert of the same rule, since it knows how the run ended."""
from __future__ import annotations

from typing import Any

from grpokit.config.health_params import RuleParams, RunFailed, RunInterrupted, RunKilled, RunStatusUnknown
from grpokit.health.evidence import RunReading
from grpokit.health.history import finite
from grpokit.health.rule import Rule


def ended_as(s: Any, p: RuleParams) -> list[RunReading]:
    """The post-mortem's finding, where it names this rule."""
    dead = s.ending
    if dead is None or dead["rule"] != p.RULE:
        return []
    step = int(dead["step"]) if finite(dead.get("step")) is not None else None
    stage = dead.get("stage")
    return [RunReading(True, message=dead["evidence"], title=dead["title"], severity=dead["severity"],
                       cause=dead["cause"], fix=dead["fix"], first_step=step, last_step=step,
                       stage=stage if isinstance(stage, str) else None, source="run_status")]


def _ending(params: type[RuleParams], title: str, looks_like: str) -> Rule:
    # The words are the post-mortem's (run_status.py), which knows the error and the memory numbers.
    return Rule(params=params, severity="critical", title=title, reads=("run_status.json",), check=None,
                after_run=ended_as, looks_like=looks_like, cause="", fix="")


RULES = (
    _ending(RunInterrupted, "Training was interrupted (Ctrl-C)", "run_status.json says interrupted."),
    _ending(RunFailed, "Training stopped with an error", "run_status.json says failed, with the error."),
    _ending(RunStatusUnknown, "The run says it is running on another machine",
            "run_status.json says running, on a host that is not this one."),
    _ending(RunKilled, "The run stopped without finishing: its process is gone",
            "run_status.json says running, and its process is gone."),
)
