"""What the judge did since the last logged step, per reward name, for the health rules and the report.

Judge rewards record every batch here (process-wide, thread-safe); the training
callback drains it once per logged step into metrics named like TRL's:

    judge/<name>/latency_s      median seconds per judge request
    judge/<name>/latency_max_s  slowest request
    judge/<name>/seconds        wall seconds the reward spent judging
    judge/<name>/failure_frac   share of completions left unscored because the judge failed
    judge/<name>/cache_hit_frac share of completions answered from the cache
    judge/<name>/addressed_frac share of completions that addressed the grader (scored 0, not sent)
    judge/<name>/answer_lower_frac share of completions paid their answer view's lower grade (the text beyond
                                the answer had raised the judge's grade: an attempt on the judge, or padding)
    judge/<name>/first_error    the first failure's text (not a number: alerts only)
"""
from __future__ import annotations

import statistics
import threading
from dataclasses import dataclass, field

_LOCK = threading.Lock()


@dataclass
class _Tally:
    completions: int = 0
    failed: int = 0
    cached: int = 0
    addressed: int = 0
    lowered: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    first_error: str | None = None


_TALLIES: dict[str, _Tally] = {}


def record(name: str, *, completions: int, failed: int, cached: int, seconds: float,
           latencies: list[float], first_error: str | None, addressed: int = 0, lowered: int = 0) -> None:
    with _LOCK:
        tally = _TALLIES.setdefault(name, _Tally())
        tally.completions += completions
        tally.addressed += addressed
        tally.lowered += lowered
        tally.failed += failed
        tally.cached += cached
        tally.seconds += seconds
        tally.latencies.extend(latencies)
        if tally.first_error is None and first_error:
            tally.first_error = first_error[:300]


def drain() -> dict[str, float | str]:
    """The metrics since the last drain (see the module docstring); then start afresh."""
    with _LOCK:
        tallies = dict(_TALLIES)
        _TALLIES.clear()
    out: dict[str, float | str] = {}
    for name, t in tallies.items():
        prefix = f"judge/{name}/"
        out[prefix + "seconds"] = t.seconds
        if t.completions:
            out[prefix + "failure_frac"] = t.failed / t.completions
            out[prefix + "cache_hit_frac"] = t.cached / t.completions
            out[prefix + "addressed_frac"] = t.addressed / t.completions
            out[prefix + "answer_lower_frac"] = t.lowered / t.completions
        if t.latencies:
            out[prefix + "latency_s"] = statistics.median(t.latencies)
            out[prefix + "latency_max_s"] = max(t.latencies)
        if t.first_error:
            out[prefix + "first_error"] = t.first_error
    return out
