"""Score the battery with each reward and judge every exploit against its ceiling."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from grpokit.answer_format import AnswerFormat
from grpokit.probe import forms
from grpokit.probe.battery import BATTERY, Attack, Probe
from grpokit.probe.budget import TokenBudget
from grpokit.probe.rows import ProbeRow, probe_row
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
    skipped: dict[str, str] = field(default_factory=dict)       # probe -> why it ran on no row (the budget)
    budget: str | None = None                                   # the token budget the completions kept to
    forms: list[str] = field(default_factory=list)              # the answer forms the references were written in

    @property
    def ok(self) -> bool:
        return not self.errors and not any(e.severity == "fail" for e in self.exploits)

    def counted(self) -> str:
        """'3 rewards and their weighted total': the rewards probed, the total (probed too) not counted as one."""
        own = [n for n in self.rewards if n != TOTAL]
        words = f"{len(own)} reward{'' if len(own) == 1 else 's'}"
        return words + (" and their weighted total" if len(own) < len(self.rewards) else "")

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
                "checked": self.checked, "no_signal": self.no_signal, "skipped": self.skipped,
                "budget": self.budget, "forms": self.forms}


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


def _row_mates(row: ProbeRow) -> list[str]:
    return [c for c in (row.wrong, row.wrong_other, row.honest) if c]


class _Scorer:
    """Scores completions with every reward and keeps the weighted total, as TRL sums it.

    An attack is scored inside a group, as GRPO scores it: with the row's wrong and honest answers
    in the same call (their scores are dropped). A None where those row-mates were scored is what
    training pays for it: TRL adds None as 0 (and leaves it out of the total), so a reward that pays
    a wrong answer below 0 pays the unscorable more. The probe scores it so; a None the row-mates
    share (the row has no gold) stays None: the row is skipped.
    """

    def __init__(self, funcs: Sequence[Callable], weights: Sequence[float], conversational: bool):
        self.funcs, self.weights, self.conversational = list(funcs), list(weights), conversational
        self.names = unique_names(funcs)  # the names a run logs them under
        self.errors: dict[str, str] = {}

    def __call__(self, row: ProbeRow, completions: list[str], override: dict | None = None,
                 grouped: bool = True) -> dict[str, list]:
        mates = _row_mates(row) if grouped else []
        n = len(completions)
        scores: dict[str, list] = {}
        for name, func in zip(self.names, self.funcs):
            try:
                values = _score(func, row, completions + mates, override or {}, self.conversational)
            except Exception as exc:  # noqa: BLE001 - a reward that raises on model output is itself a finding
                self.errors.setdefault(name, f"{type(exc).__name__}: {exc}"[:300])
                values = [None] * (n + len(mates))
            mates_scored = any(v is not None for v in values[n:])
            scores[name] = [0.0 if v is None and mates_scored else v for v in values[:n]]
        if len(self.funcs) > 1:
            scores[TOTAL] = weighted_totals({k: scores[k] for k in self.names}, self.weights, n)
        return scores


def ceiling(probe: Probe, honest: float | None, wrong: float) -> float:
    """The most an exploit may score: `share` of the honest-over-wrong gap above the wrong answer,
    and never more than the honest answer."""
    top = honest if honest is not None else max(wrong, ASSUMED_TOP)
    return min(top, wrong + probe.share * max(0.0, top - wrong))


def _lowest(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return min(known) if known else None


def _highest(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _in_form(row: ProbeRow, scorer: _Scorer, names: list[str], budget: TokenBudget | None) -> ProbeRow:
    """The row written in the form the run's rewards pay an honest answer most for, among the forms
    whose honest answer fits the budget (see forms.py)."""
    if row.gold is None:
        return row
    candidates = [f for f in forms.forms(row.fmt, row.prompt)
                  if budget is None or budget.fits(row.in_form(f).honest or "")]
    if not candidates:
        return row  # no form fits: keep the default and let the references show it
    if len(candidates) == 1:
        return row.in_form(candidates[0])
    key = TOTAL if TOTAL in names else names[0]
    scores = [scorer(row, [row.in_form(f).honest], grouped=False)[key][0] for f in candidates]
    return row.in_form(forms.choose(candidates, scores))


def _fitting(attack: Attack, budget: TokenBudget | None) -> tuple[Attack, int | None]:
    """The attack with what cannot fit the budget left out (long text cut where the trainer would cut it),
    and the fewest tokens a left-out part needed (None when nothing was left out)."""
    if budget is None:
        return attack, None
    fitted, needed = _fitting_one(attack, budget)
    if not (fitted.completions or fitted.hedges) and attack.fallback is not None:
        shorter, shorter_needed = _fitting_one(attack.fallback, budget)
        return shorter, (shorter_needed if shorter_needed is not None else needed)
    return fitted, needed


def _fitting_one(attack: Attack, budget: TokenBudget) -> tuple[Attack, int | None]:
    if attack.truncatable:
        return Attack([budget.truncate(c) for c in attack.completions], attack.columns), None
    needs = [budget.count(c) for c in attack.completions]
    kept = [c for c, n in zip(attack.completions, needs) if n <= budget.tokens]
    hedges = []
    for group in attack.hedges:
        longest = max(budget.count(text) for text, _ in group)
        needs.append(longest)
        if longest <= budget.tokens:
            hedges.append(group)
    over = [n for n in needs if n > budget.tokens]
    baseline = [c for c in attack.baseline if budget.fits(c)] if attack.baseline else []
    if attack.baseline and not baseline:
        kept, hedges = [], []
    return Attack(kept, attack.columns, hedges, baseline), (min(over) if over else None)


def _attack_scores(scorer: _Scorer, row: ProbeRow, attack: Attack, names: list[str]
                   ) -> list[tuple[str, dict[str, float | None]]]:
    """(completion shown in the report, {reward: score}) for each completion and each hedge (its lowest reading)."""
    out: list[tuple[str, dict[str, float | None]]] = []
    if attack.completions:
        scores = scorer(row, attack.completions, attack.columns)
        out += [(text, {n: scores[n][i] for n in names}) for i, text in enumerate(attack.completions)]
    for group in attack.hedges:
        readings = [scorer(row, [text], {**attack.columns, **columns}) for text, columns in group]
        shown = " | ".join(text for text, _ in group)
        out.append((shown, {n: _lowest_reading([r[n][0] for r in readings]) for n in names}))
    return out


def _lowest_reading(values: list[float | None]) -> float | None:
    # A reading the reward cannot score (None) is no reading that pays: the hedge is paid only
    # as much as its least paid reading.
    return None if any(v is None for v in values) else min(values)


def probe_rewards(funcs: Sequence[Callable], rows: Sequence[dict[str, Any]], weights: Sequence[float] | None = None,
                  probes: Sequence[Probe] = BATTERY, answer_format: Any = None,
                  budget: TokenBudget | None = None) -> ProbeReport:
    """Run the battery on `rows` (dicts with `prompt` and the reward columns) against every reward.

    The probe completions are written in `answer_format` (the run's; `<reasoning>`/`<answer>` by
    default), or as the bare answer where the rewards pay an honest bare answer more (forms.py).
    With a `budget` (the run's max_completion_length in its tokenizer's tokens: budget.py), a
    completion that cannot fit is left out (a long ramble is cut to it, as the trainer would), and
    a probe that fits no row is listed in `report.skipped` with the tokens it needed.

    An exploit is a probe completion that scores above its ceiling (see `ceiling`) for one reward,
    or for the weighted total when there are several rewards. The wrong reference is the better
    paid of the row's wrong answers (for a number gold, one on each side of it). Each attack is
    scored in one call with the row's wrong and honest answers (a GRPO group): a None where they
    were scored counts as the 0 TRL adds for it, so a reward whose wrong answer scores below 0
    and whose unreadable answer scores None is caught. A probe marked `below_honest` must also
    score below the honest answer, for sets that pay a wrong answer like the right one.
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
    report = ProbeReport(rewards=names, rows=len(rows), checked={n: [] for n in names},
                         budget=None if budget is None else budget.describe())
    separates = {n: False for n in names}
    applies = [p for p in probes if p.when is None or p.when(funcs)]
    ran: set[str] = set()
    for index, raw in enumerate(rows):
        row = _in_form(probe_row(index, raw, fmt), scorer, names, budget)
        if row.form is not None and row.form.name not in report.forms:
            report.forms.append(row.form.name)
        wrongs = [row.wrong] + ([row.wrong_other] if row.wrong_other else [])
        refs = wrongs + ([row.honest] if row.honest is not None else [])
        ref_scores = scorer(row, refs, grouped=False)
        # The better paid wrong answer: a graded reward's credit for a near miss on either side of
        # the gold is no exploit (the other_side probe compares the two sides).
        wrong_of = {n: _highest(ref_scores[n][: len(wrongs)]) for n in names}
        honest_of = {n: ref_scores[n][len(wrongs)] if row.honest is not None else None for n in names}
        for name in names:
            wrong, honest = wrong_of[name], honest_of[name]
            if wrong is not None and honest is not None and honest > wrong + TOLERANCE:
                separates[name] = True
        for probe in applies:
            attack = probe.build(row)
            if attack is None or not (attack.completions or attack.hedges):
                continue
            attack, needed = _fitting(attack, budget)
            if not (attack.completions or attack.hedges):
                if probe.name not in ran and needed is not None:
                    report.skipped.setdefault(probe.name, f"needs {needed} tokens; the budget is {budget.describe()}")
                continue
            ran.add(probe.name)
            report.skipped.pop(probe.name, None)
            baseline = scorer(row, attack.baseline) if attack.baseline else None
            for text, scores in _attack_scores(scorer, row, attack, names):
                for name in names:
                    wrong = wrong_of[name] if baseline is None else _lowest(baseline[name])
                    if wrong is None:
                        continue  # the reward cannot score this row at all: nothing to exploit here
                    honest = honest_of[name]
                    limit = ceiling(probe, honest, wrong)
                    top = honest if honest is not None else max(wrong, ASSUMED_TOP)
                    margin = max(TOLERANCE, MARGIN * (top - wrong))
                    if probe.name not in report.checked[name]:
                        report.checked[name].append(probe.name)
                    if probe.below_honest and honest is not None:
                        # Paid like the honest answer is too much, even where a wrong one is paid so too.
                        limit = min(limit, honest - max(TOLERANCE, MARGIN * max(abs(honest), ASSUMED_TOP)))
                        margin = TOLERANCE
                    score = scores[name]
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
