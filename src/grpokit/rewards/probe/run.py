"""Score the battery with each reward and judge every exploit against its ceiling."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from grpokit.rewards.probe.battery import BATTERY, Probe
from grpokit.rewards.answer_format import AnswerFormat
from grpokit.rewards.probe.rows import ProbeRow, probe_row
from grpokit.rewards.reward_set import unique_names, weighted_totals

TOLERANCE = 1e-6
# Graded rewards give crumbs to any text (fuzzy similarity 0.0004 for a ramble); an
# exploit has to clear the ceiling by 5% of the honest-over-wrong gap to count.
MARGIN = 0.05
TOTAL = "total (weighted)"
# A reward's scale when a row has no honest reference to measure it by (e.g. code rows
# without a solution column): the built-in rewards score 0..1.
ASSUMED_TOP = 1.0


@dataclass
class Exploit:
    """One reward beaten by one probe on one row."""

    reward: str
    probe: str
    what: str
    row: int
    completion: str
    score: float
    honest: float | None
    wrong: float
    limit: float
    fix: str
    severity: str = "fail"  # "warn" for a shaping reward (format, length, style) beside others: see probe_rewards

    def __str__(self) -> str:
        honest = "n/a" if self.honest is None else f"{self.honest:.3g}"
        return (f"{self.reward}: probe {self.probe} ({self.what}) scored {self.score:.3g} on row {self.row} "
                f"(honest answer {honest}, wrong answer {self.wrong:.3g}, ceiling {self.limit:.3g}); "
                f"fix: {self.fix}")


@dataclass
class ProbeReport:
    rewards: list[str]
    rows: int
    exploits: list[Exploit] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)       # reward -> what it raised
    checked: dict[str, list[str]] = field(default_factory=dict)  # reward -> probes that applied
    no_signal: list[str] = field(default_factory=list)          # rewards that never told honest from wrong

    @property
    def ok(self) -> bool:
        return not self.errors and not any(e.severity == "fail" for e in self.exploits)

    def worst(self) -> list[Exploit]:
        """The highest-scoring exploit per (reward, probe): what a report shows."""
        best: dict[tuple[str, str], Exploit] = {}
        for e in self.exploits:
            key = (e.reward, e.probe)
            if key not in best or e.score - e.limit > best[key].score - best[key].limit:
                best[key] = e
        return list(best.values())

    def to_dict(self) -> dict:
        return {"ok": self.ok, "rewards": self.rewards, "rows": self.rows,
                "exploits": [asdict(e) for e in self.worst()], "errors": self.errors,
                "checked": self.checked, "no_signal": self.no_signal}


def _batch_columns(row: ProbeRow, n: int, override: dict) -> dict[str, list]:
    columns = {**row.columns, **override}
    return {k: [v] * n for k, v in columns.items()}


def _score(func: Callable, row: ProbeRow, completions: list[str], override: dict,
           conversational: bool) -> list[float | None]:
    batch: list[Any] = [[{"role": "assistant", "content": c}] for c in completions] if conversational else completions
    out = list(func(batch, prompts=[row.prompt] * len(completions), **_batch_columns(row, len(completions), override)))
    if len(out) != len(completions):
        raise ValueError(f"returned {len(out)} scores for {len(completions)} completions")
    return [None if s is None or not math.isfinite(float(s)) else float(s) for s in out]


class _Scorer:
    """Scores completions with every reward and keeps the weighted total, as TRL sums it."""

    def __init__(self, funcs: Sequence[Callable], weights: Sequence[float], conversational: bool):
        self.funcs, self.weights, self.conversational = list(funcs), list(weights), conversational
        self.names = unique_names(funcs)  # the names a run logs them under
        self.errors: dict[str, str] = {}

    def __call__(self, row: ProbeRow, completions: list[str], override: dict | None = None) -> dict[str, list]:
        scores: dict[str, list] = {}
        for name, func in zip(self.names, self.funcs):
            try:
                scores[name] = _score(func, row, completions, override or {}, self.conversational)
            except Exception as exc:  # noqa: BLE001 - a reward that raises on model output is itself a finding
                self.errors.setdefault(name, f"{type(exc).__name__}: {exc}"[:300])
                scores[name] = [None] * len(completions)
        if len(self.funcs) > 1:
            scores[TOTAL] = weighted_totals({n: scores[n] for n in self.names}, self.weights, len(completions))
        return scores


def ceiling(probe: Probe, honest: float | None, wrong: float) -> float:
    """The most an exploit may score: `share` of the honest-over-wrong gap above the wrong answer,
    and never more than the honest answer."""
    top = honest if honest is not None else max(wrong, ASSUMED_TOP)
    return min(top, wrong + probe.share * max(0.0, top - wrong))


def probe_rewards(funcs: Sequence[Callable], rows: Sequence[dict[str, Any]], weights: Sequence[float] | None = None,
                  probes: Sequence[Probe] = BATTERY, answer_format: Any = None) -> ProbeReport:
    """Run the battery on `rows` (dicts with `prompt` and the reward columns) against every reward.

    The probe completions are written in `answer_format` (the run's; `<reasoning>`/`<answer>` by default).

    An exploit is a probe completion that scores above its ceiling (see `ceiling`) for one reward,
    or for the weighted total when there are several rewards.
    """
    if not funcs:
        raise ValueError("give at least one reward to probe")
    if not rows:
        raise ValueError("give at least one data-set row to build the probes from")
    weights = list(weights) if weights is not None else [1.0] * len(funcs)
    if len(weights) != len(funcs):
        raise ValueError(f"{len(weights)} weights for {len(funcs)} rewards; give one weight per reward")
    conversational = any(isinstance(r.get("prompt"), list) for r in rows)
    fmt = AnswerFormat.of(answer_format)
    scorer = _Scorer(funcs, weights, conversational)
    names = scorer.names + ([TOTAL] if len(funcs) > 1 else [])
    report = ProbeReport(rewards=names, rows=len(rows), checked={n: [] for n in names})
    separates = {n: False for n in names}
    for index, raw in enumerate(rows):
        row = probe_row(index, raw, fmt)
        refs = [row.wrong] + ([row.honest] if row.honest is not None else [])
        ref_scores = scorer(row, refs)
        for name in names:
            wrong = ref_scores[name][0]
            honest = ref_scores[name][1] if row.honest is not None else None
            if wrong is not None and honest is not None and honest > wrong + TOLERANCE:
                separates[name] = True
        for probe in probes:
            attack = probe.build(row)
            if attack is None or not attack.completions:
                continue
            scores = scorer(row, attack.completions, attack.columns)
            for name in names:
                wrong = ref_scores[name][0]
                if wrong is None:
                    continue  # the reward cannot score this row at all: nothing to exploit here
                honest = ref_scores[name][1] if row.honest is not None else None
                limit = ceiling(probe, honest, wrong)
                top = honest if honest is not None else max(wrong, ASSUMED_TOP)
                margin = max(TOLERANCE, MARGIN * (top - wrong))
                if probe.name not in report.checked[name]:
                    report.checked[name].append(probe.name)
                for text, score in zip(attack.completions, scores[name]):
                    if score is not None and score > limit + margin:
                        report.exploits.append(Exploit(name, probe.name, probe.what, index, text[:200], score,
                                                       honest, wrong, limit, probe.fix))
    report.errors = scorer.errors
    report.no_signal = [n for n in names if not separates[n] and n != TOTAL]
    # A shaping reward (it never told an honest answer from a wrong one) is content-blind by design;
    # beside other rewards, what the policy can game is the weighted total, which is judged on its own.
    if len(funcs) > 1:
        for exploit in report.exploits:
            if exploit.reward in report.no_signal:
                exploit.severity = "warn"
    return report
