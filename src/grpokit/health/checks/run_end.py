"""How a run ended, from run_status.json: interrupted, failed, killed, out of memory, or running on another
machine. run_status.post_mortem reads the facts (which way it ended, the step, the error, the memory
numbers); which rule that is, and its words, are here and on out_of_memory (checks/resources.py). Each is a rule
of its own; its finding wins over a live alert of the same rule, since it knows how the run ended."""
from __future__ import annotations

import time
from typing import Any

from grpokit.config.health_params import RuleParams, RunFailed, RunInterrupted, RunKilled, RunStatusUnknown
from grpokit.health.evidence import RunReading
from grpokit.health.history import finite
from grpokit.health.rule import Ending, Rule

GONE = ("run_status.json: started, last seen at {where} ({last_seen}), never finished, and process {pid} is gone")
RESUME = "`grpokit train CONFIG --resume` continues from the last checkpoint."


# A peak this close to the limit means the next allocation could not fit.
NEAR_LIMIT = 0.85


def memory_verdict(dead: dict[str, Any]) -> tuple[bool, str]:
    """(memory is the likely cause, the numbers in words) from the post-mortem's facts."""
    mem = dead.get("memory") or {}
    limit, peak, estimate = mem.get("limit_gib"), mem.get("peak_gib"), dead.get("estimate_gib")
    if not limit:
        return False, "no memory limit was recorded"
    words = f"peak {peak:.2f} GiB of a {limit:.2f} GiB limit ({mem.get('limit', 'memory')})" if peak else ""
    if estimate:
        words += f"{'; ' if words else ''}the planned peak (doctor's estimate) was {estimate:.2f} GiB"
    planned = (estimate or 0.0) + (mem.get("not_resident_gib") or 0.0)
    near = bool(peak and peak >= NEAR_LIMIT * limit) or bool(estimate and planned >= limit)
    return near, words


def ending_rule(dead: dict[str, Any]) -> str:
    """The rule that names how the run ended (run_status.post_mortem's facts)."""
    how = dead["how"]
    if how == "interrupted":
        return "run_interrupted"
    if how == "failed":
        return "out_of_memory" if dead.get("out_of_memory") else "run_failed"
    if how == "elsewhere":
        return "run_status_unknown"
    return "out_of_memory" if memory_verdict(dead)[0] else "run_killed"


def _in_words(dead: dict[str, Any]) -> dict[str, Any]:
    """The facts an Ending's template reads: {where}, {error}, {host}, {pid}, {last_seen}, {memory}."""
    step = dead.get("step")
    return {"where": f"step {step}" + (f" of {dead['max_steps']}" if dead.get("max_steps") else ""),
            "error": str(dead.get("error") or "unknown error"), "host": dead.get("host"), "pid": dead.get("pid"),
            "last_seen": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(dead.get("updated") or 0))),
            "memory": memory_verdict(dead)[1]}


def ended_as(s: Any, p: RuleParams) -> list[RunReading]:
    """The post-mortem's finding, where it names this rule, in the words of the rule's matching Ending."""
    from grpokit.health.table import BY_ID  # the table is built over this module

    dead = s.ending
    if dead is None or ending_rule(dead) != p.RULE:
        return []
    rule = BY_ID[p.RULE]
    ending = next(e for e in rule.endings if e.how == dead["how"])
    words = _in_words(dead)
    evidence = ending.evidence.format(**words)
    if ending.with_memory and words["memory"]:
        evidence += f"; {words['memory']}"
    step = int(dead["step"]) if finite(dead.get("step")) is not None else None
    stage = dead.get("stage")
    return [RunReading(True, message=evidence, title=ending.title or None, severity=ending.severity or None,
                       cause=ending.cause.format(cause=rule.cause) or None, fix=ending.fix or None,
                       first_step=step, last_step=step, stage=stage if isinstance(stage, str) else None,
                       source="run_status")]


# How near its limit a gone process's memory must have been for the post-mortem to blame memory.
MEMORY_NEAR = (f"its peak >= {NEAR_LIMIT} x the memory limit run_status.json recorded, or the doctor's planned "
               "peak at or above it")


def _ending(params: type[RuleParams], severity: str, title: str, looks_like: str, cause: str, fix: str,
            ending: Ending, threshold: str) -> Rule:
    return Rule(params=params, severity=severity, title=title, reads=("run_status.json",), check=None,
                after_run=ended_as, looks_like=looks_like, cause=cause, fix=fix, endings=(ending,),
                threshold=threshold)


RULES = (
    _ending(RunInterrupted, "info", "Training was interrupted (Ctrl-C)", "run_status.json says interrupted.",
            cause="The run was stopped by hand; the steps after the last checkpoint were not kept.",
            fix="`grpokit train CONFIG --resume` continues from the last complete checkpoint.",
            ending=Ending("interrupted", "run_status.json: interrupted at {where}"),
            threshold="run_status.json says interrupted (KeyboardInterrupt)"),
    _ending(RunFailed, "critical", "Training stopped with an error", "run_status.json says failed, with the error.",
            cause="Training raised the error above; the steps after it never ran.",
            fix="Read the error (the run's console output has the traceback), fix what it names, then " + RESUME,
            ending=Ending("failed", "run_status.json: failed at {where} with {error:.500}"),
            threshold="run_status.json says failed, with an error that is not an allocation failure"),
    _ending(RunStatusUnknown, "info", "The run says it is running on another machine",
            "run_status.json says running, on a host that is not this one.",
            cause="The status was written by a process on another host; from here it cannot be told whether it "
                  "still runs.", fix="Check the process on that host.",
            ending=Ending("elsewhere", "run_status.json: running at {where} on host {host!r}, pid {pid}"),
            threshold="run_status.json says running, written on another host"),
    _ending(RunKilled, "critical", "The run stopped without finishing: its process is gone",
            "run_status.json says running, and its process is gone.",
            cause="The process was killed from outside before it could write an error: the kernel's out-of-memory "
                  "killer (look for it with `dmesg | grep -i kill`), a job scheduler's time limit, Ctrl-C or a "
                  "closed terminal, or a machine restart.",
            fix="Find which in the system or scheduler log; run under `nohup`/tmux or give the job more time; then "
                + RESUME,
            ending=Ending("killed", GONE, with_memory=True),
            threshold="run_status.json says running, its process on this host is gone, and memory was not near "
                      f"its limit (not {MEMORY_NEAR})"),
)
