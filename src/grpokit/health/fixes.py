"""A symptom's fix read against the run's own rewards: never advise adding a reward that is there.

The symptom table (symptoms.py) writes each fix once, for every run, and some of them say "add a
format reward" or "add tool_call_success". On a run that has that reward, the advice is wrong and
hides the real question: why does the reward that is there not help? Each such piece of advice is
a row of ADVICE; where the run has a reward it names, the advice becomes what that reward did
(scored 0 on every completion, gave every completion the same score, or varied) and what to check.

The run's rewards are read off a log record (`rewards/NAME/mean` and `/std`, what TRL and grpokit
log for every reward) or given as each reward's scores (the doctor's probe), so the live monitor,
the replay of metrics.jsonl and the doctor all say the same thing.
"""
from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from grpokit.health.symptoms import BY_RULE

# name -> (mean, std) of a reward's scores; None where it did not score.
Scores = Mapping[str, tuple[float | None, float | None]]


@dataclass(frozen=True)
class Advice:
    phrase: str                     # the words of a symptom's fix that advise adding a reward
    present: Callable[[str], bool]  # whether a reward (its registry name) is one the phrase advises
    what: str                       # what that reward is for, for the words that replace the phrase


def registry_name(logged: str) -> str:
    """The registry name of a logged reward name: TRL logs a repeated reward as name_2."""
    from grpokit.rewards import registry

    for candidate in (logged, re.sub(r"_\d+$", "", logged)):
        try:
            return registry.canonical(candidate)
        except Exception:  # noqa: BLE001 - a custom reward the registry does not know
            continue
    return logged


def _family(name: str) -> str:
    from grpokit.rewards import registry

    try:
        return registry.family(name)
    except Exception:  # noqa: BLE001 - a custom reward: no family
        return "custom"


def _named(*names: str) -> Callable[[str], bool]:
    return lambda name: name in names


ADVICE: tuple[Advice, ...] = (
    Advice("add a format reward such as incremental_format", lambda n: _family(n) == "format", "format"),
    Advice("add a length reward", lambda n: _family(n) == "length", "length"),
    Advice("add max_length_penalty or soft_overlong_punishment to rewards",
           _named("max_length_penalty", "soft_overlong_punishment"), "length"),
    Advice("add tool_call_success to rewards", _named("tool_call_success"), "tool-call"),
    Advice("add tool_call_success (weight 0.2-0.5) to rewards", _named("tool_call_success"), "tool-call"),
)


def scores_from_logs(logs: Mapping[str, Any]) -> dict[str, tuple[float | None, float | None]]:
    """Each reward a log record names (`rewards/NAME/mean`), with its mean and std at that step."""
    out: dict[str, tuple[float | None, float | None]] = {}
    for key in logs:
        if key.startswith("rewards/") and key.endswith("/mean") and key.count("/") == 2:
            name = key[len("rewards/"):-len("/mean")]
            out[name] = (_finite(logs.get(key)), _finite(logs.get(f"rewards/{name}/std")))
    return out


def scores_from_values(values: Mapping[str, Sequence[float | None]]) -> dict[str, tuple[float | None, float | None]]:
    """Each reward's (mean, std) from its scores (the doctor's probe)."""
    out: dict[str, tuple[float | None, float | None]] = {}
    for name, scored in values.items():
        kept = [float(v) for v in scored if v is not None]
        out[name] = (statistics.fmean(kept) if kept else None, statistics.pstdev(kept) if kept else None)
    return out


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _what_it_did(names: list[str], scores: Scores, what: str) -> str:
    listed = " and ".join(names)
    verb = "is" if len(names) == 1 else "are"
    pairs = [scores[n] for n in names]
    if all(m is not None and abs(m) < 1e-12 and (s or 0.0) < 1e-12 for m, s in pairs):
        return (f"the {what} reward {listed} {verb} in the rewards already and score{'s' if len(names) == 1 else ''} "
                f"0 on every completion: compare completions.jsonl with what it checks (`grpokit rewards test "
                f"{names[0]} ...`) and say in data.system_prompt what it expects")
    if all(m is not None and (s or 0.0) < 1e-12 for m, s in pairs):
        values = ", ".join(f"{m:g}" for m, _ in pairs)
        return (f"the {what} reward {listed} {verb} in the rewards already and give{'s' if len(names) == 1 else ''} "
                f"every completion the same score ({values}): it adds no signal as it is; make it grade finer")
    means = ", ".join("None" if m is None else f"{m:.3g}" for m, _ in pairs)
    return f"the {what} reward {listed} {verb} in the rewards already (mean {means}): raise its weight"


def fix_for(rule: str, scores: Scores | None = None, logs: Mapping[str, Any] | None = None) -> str:
    """The fix of `rule` (the symptom table's), with every "add reward X" read against `scores`
    (logged name -> (mean, std)): where the run has such a reward, the words say what it did instead.
    `logs` (the step's record) adds what the step shows beside the rewards: a cut at the length limit."""
    text = BY_RULE[rule].fix
    if scores is None and logs is not None:
        scores = scores_from_logs(logs)
    for advice in ADVICE:
        if advice.phrase not in text or not scores:
            continue
        present = [name for name in scores if advice.present(registry_name(name))]
        if present:
            text = text.replace(advice.phrase, _what_it_did(present, scores, advice.what))
    if rule == "no_learning_signal" and logs is not None:
        clipped = _finite(logs.get("completions/clipped_ratio"))
        if clipped is not None and clipped >= 0.5:
            text = (f"{clipped:.0%} of completions are cut at the length limit: if the answer comes after the cut, "
                    f"raise training.max_completion_length first. Otherwise: {text}")
    return text
