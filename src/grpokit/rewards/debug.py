"""Try reward functions on samples before training with them.

    from grpokit.rewards.debug import debug_reward
    result = debug_reward(["numeric_match", my_reward], completions, answer=answers, label=labels)
    result.scores["numeric_match"]; result.warnings; result.ok

A reward that crashes, returns NaN, never varies, returns None for most rows or
disagrees with human labels looks, during training, like a model that does not
learn. Here each of those is found on a handful of samples and said in words.
How agreement with labels is measured and judged: grpokit/rewards/agreement.py.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable

from grpokit.rewards import agreement as label_agreement
from grpokit.completions import to_text
from grpokit.errors import ConfigError
from grpokit.rewards.reward_set import as_score, unique_names
from grpokit.rewards.watchdog import DEFAULT_TIMEOUT, RewardTimeout, call_with_timeout

# Thresholds for the warnings; each names the failure it catches.
_MOSTLY_NONE = 0.5  # TRL skips None rows: above half, the reward barely trains
_SLOW_SECONDS_PER_ROW = 0.25  # TRL calls rewards on every batch of every step
_FLAT_GROUPS = 0.5  # above this share of flat prompt groups, most of the batch teaches nothing


@dataclass
class RewardFinding:
    """One thing wrong (severity "error"), suspicious ("warning") or worth knowing ("note") about a reward."""

    reward: str
    kind: str  # raises | bad_return | non_finite | constant | flat_groups | mostly_none | unscored | label_disagreement | slow
    severity: str
    message: str
    rows: list[int] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.severity.upper()} {self.reward}: {self.message}"


@dataclass
class RewardStats:
    n: int
    scored: int  # finite scores
    none: int
    errors: int  # rows that raised or returned something unusable
    mean: float | None
    std: float | None
    min: float | None
    max: float | None
    seconds: float
    label_correlation: float | None = None
    label_accuracy: float | None = None
    label_auc: float | None = None  # true/false labels: P(a correct sample outscores a wrong one)


@dataclass
class DebugResult:
    """Per-reward scores, per-row errors, statistics and findings for one sample set."""

    names: list[str]
    completions: list[str]
    scores: dict[str, list[float | None]]
    errors: dict[str, dict[int, str]]
    stats: dict[str, RewardStats]
    warnings: list[RewardFinding]
    labels: list[Any] | None = None

    @property
    def failed(self) -> bool:
        """True when some reward raised, returned a bad value or a non-finite number, or a
        correctness reward disagrees with the labels."""
        return any(f.severity == "error" for f in self.warnings)

    @property
    def ok(self) -> bool:
        return not self.failed

    def findings(self, reward: str | None = None, kind: str | None = None) -> list[RewardFinding]:
        return [f for f in self.warnings if (reward is None or f.reward == reward) and (kind is None or f.kind == kind)]

    def to_dict(self) -> dict:
        """JSON-ready: non-finite numbers become the strings "nan", "inf", "-inf"."""
        return {
            "rows": len(self.completions),
            "ok": self.ok,
            "rewards": {
                name: {
                    "scores": [_json_number(v) for v in self.scores[name]],
                    "errors": {str(row): msg for row, msg in self.errors[name].items()},
                    "stats": {k: _json_number(v) for k, v in asdict(self.stats[name]).items()},
                }
                for name in self.names
            },
            "labels": self.labels,
            "findings": [asdict(f) for f in self.warnings],
        }

    def render(self, console=None, max_rows: int = 20, preview: int = 60) -> None:
        """Print the score table, the per-reward summary and the findings."""
        _render(self, console=console, max_rows=max_rows, preview=preview)


def _json_number(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def resolve_rewards(funcs: Any) -> list[tuple[str, Callable]]:
    """(display name, callable) for a callable, a registered name, a config entry
    ({"name", "params"}), or a list of those. Duplicate names get "#2", "#3"."""
    from grpokit.rewards.registry import get

    if callable(funcs) or isinstance(funcs, (str, dict)):
        items = [funcs]
    elif isinstance(funcs, Iterable):
        items = list(funcs)
    else:
        raise ConfigError(f"cannot use {funcs!r} as a reward: give a callable, a registered name, or a list of them")
    if not items:
        raise ConfigError("no reward functions given: pass a callable, a registered name, or a list of them")
    funcs_found: list[Callable] = []
    for item in items:
        if isinstance(item, str):
            func = get(item)
        elif isinstance(item, dict) and "name" in item:
            func = get(item["name"], **(item.get("params") or {}))
        elif callable(item):
            func = item
        else:
            raise ConfigError(f"cannot use {item!r} as a reward: give a callable or a registered reward name")
        funcs_found.append(func)
    # The names TRL logs the rewards under in a run (a repeat gets _2), so the table matches metrics.jsonl.
    return list(zip(unique_names(funcs_found), funcs_found))


def _check_columns(n: int, columns: dict[str, Any]) -> dict[str, list]:
    checked = {}
    for key, values in columns.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise ConfigError(f"column {key!r} must be a list with one value per completion, got {type(values).__name__}")
        values = list(values)
        if len(values) != n:
            raise ConfigError(f"column {key!r} has {len(values)} values for {n} completions; give one per completion")
        checked[key] = values
    return checked


def _score_batch(func: Callable, completions: list, columns: dict[str, list]):
    """(scores, per-row errors, batch problem (kind, message) or None, seconds)."""
    n = len(completions)
    scores: list[float | None] = [None] * n
    errors: dict[int, str] = {}
    start = time.perf_counter()
    problem = None
    try:
        out = call_with_timeout(func, completions, columns, DEFAULT_TIMEOUT)  # the watchdog every reward call has
    except RewardTimeout as exc:  # scoring row by row would hang again: the batch is the finding
        return scores, {i: f"hung: {exc}" for i in range(n)}, ("raises", str(exc)), time.perf_counter() - start
    except Exception as exc:  # the point is to report it, with the row
        problem = ("raises", f"raised {type(exc).__name__}: {str(exc)[:200]}")
    if problem is None:
        try:
            out = list(out)
        except TypeError:
            problem = ("bad_return", f"returned a {type(out).__name__}, not a list")
        else:
            if len(out) != n:
                problem = ("bad_return", f"returned {len(out)} values for {n} completions")
        if problem:
            return scores, {i: "bad return" for i in range(n)}, problem, time.perf_counter() - start
    else:
        # Find the rows that make it raise by scoring them one at a time.
        out = []
        for i in range(n):
            try:
                single = list(func([completions[i]], **{k: [v[i]] for k, v in columns.items()}))
                out.append(single[0] if len(single) == 1 else None)
            except Exception as exc:
                errors[i] = f"{type(exc).__name__}: {str(exc)[:200]}"
                out.append(None)
    seconds = time.perf_counter() - start
    for i, value in enumerate(out):
        if i in errors:
            continue
        try:
            scores[i] = as_score(value)
        except TypeError as exc:
            errors[i] = f"returned {exc}, not a number or None"
    return scores, errors, problem, seconds


def _stats(name, scores, errors, seconds, labels, failed=False) -> tuple[RewardStats, list[RewardFinding]]:
    n = len(scores)
    finite = [v for v in scores if v is not None and math.isfinite(v)]
    bad = [i for i, v in enumerate(scores) if v is not None and not math.isfinite(v)]
    none_rows = [i for i, v in enumerate(scores) if v is None and i not in errors]
    mean = sum(finite) / len(finite) if finite else None
    std = math.sqrt(sum((v - mean) ** 2 for v in finite) / len(finite)) if finite else None
    stats = RewardStats(
        n=n, scored=len(finite), none=len(none_rows), errors=len(errors), mean=mean, std=std,
        min=min(finite) if finite else None, max=max(finite) if finite else None, seconds=seconds,
    )
    found: list[RewardFinding] = []
    if bad:
        found.append(RewardFinding(name, "non_finite", "error",
                             f"returned NaN or infinity on {len(bad)} of {n} rows (first: row {bad[0]}); "
                             "TRL turns it into a NaN loss. Return None for rows it cannot score.", bad))
    # "Never varies" matters only once the reward works: a crash comes first.
    if not failed and not errors and not bad and len(finite) >= 2 and max(finite) - min(finite) < 1e-9:
        found.append(RewardFinding(name, "constant", "warning",
                             f"gives {finite[0]:g} to every scored row: a reward that never varies cannot change "
                             "the advantage (GRPO learns from differences within a group). Check the samples "
                             "include good and bad answers and that the reward reads the right column."))
    if n and len(none_rows) > _MOSTLY_NONE * n:
        found.append(RewardFinding(name, "mostly_none", "warning",
                             f"{len(none_rows)} of {n} rows could not be scored (None); TRL skips those rows, so this "
                             "reward barely trains. Check that the column it reads is present and filled.", none_rows))
    elif none_rows:
        # Never a silent 0: say how many rows the reward could not judge (no gold, unreadable gold, ...).
        found.append(RewardFinding(name, "unscored", "note",
                             f"{len(none_rows)} of {n} rows could not be scored (None; first: row {none_rows[0]}); "
                             "TRL skips them for this reward.", none_rows))
    if n and seconds / n > _SLOW_SECONDS_PER_ROW:
        found.append(RewardFinding(name, "slow", "warning",
                             f"took {seconds / n:.2f} s per row; TRL calls it on every batch, so it will slow training."))
    if labels is not None:
        found.extend(_label_findings(name, stats, scores, labels, constant=any(f.kind == "constant" for f in found)))
    return stats, found


def _label_findings(name: str, stats: RewardStats, scores: list, labels: list, constant: bool) -> list[RewardFinding]:
    agreement = label_agreement.measure(scores, labels)
    if agreement is None:
        return []
    stats.label_correlation, stats.label_accuracy, stats.label_auc = agreement.correlation, agreement.accuracy, agreement.auc
    strict = label_agreement.judges_correctness(name)
    # A constant reward that is not a correctness reward is already reported as constant.
    if not agreement.weak or (constant and not strict):
        return []
    message, rows = label_agreement.explain(agreement, scores, labels, strict)
    return [RewardFinding(name, "label_disagreement", "error" if strict else "warning", message, rows)]


def _flat_groups(name: str, scores: list, prompts: list | None) -> RewardFinding | None:
    """GRPO's advantage is a score minus its prompt group's mean: a reward equal
    within every group gives zero advantage even when it varies across prompts."""
    if prompts is None:
        return None
    from grpokit.completions import prompt_text

    groups: dict[str, list[int]] = {}
    for i, prompt in enumerate(prompts):
        groups.setdefault(prompt_text(prompt), []).append(i)
    sized = [rows for rows in groups.values() if len(rows) >= 2]
    flat = []
    for rows in sized:
        values = [scores[i] for i in rows if scores[i] is not None and math.isfinite(scores[i])]
        if len(values) >= 2 and max(values) - min(values) < 1e-9:
            flat.append(rows)
    if not sized or len(flat) <= _FLAT_GROUPS * len(sized):
        return None
    return RewardFinding(name, "flat_groups", "warning",
                   f"gives the same score to every completion of {len(flat)} of {len(sized)} prompts: those groups "
                   "have reward_std 0 and zero advantage, so they teach nothing. Make the reward graded (partial "
                   "credit), add a diversity reward, or raise num_generations / temperature.",
                   sorted(i for rows in flat for i in rows))


def debug_reward(
    funcs: Any,
    completions: list,
    *,
    show: bool = True,
    console=None,
    max_rows: int = 20,
    **columns,
) -> DebugResult:
    """Score `completions` with each reward, print a table, and report what looks wrong.

    funcs: a reward callable, a registered name, a config entry {"name", "params"},
    or a list of them. completions: strings or message lists, as TRL passes them.
    columns: data-set columns (answer=[...], prompts=[...], ...), one value per
    completion; `label` (bool or number per row, e.g. human "is correct") is not
    passed to the rewards but checked against their scores.
    Findings with severity "error": the reward raised (with the row), returned
    something that is not a number or None, returned NaN/infinity, or is a
    correctness-family reward that agrees weakly with `label` (AUC below 0.75 for
    true/false labels, correlation below 0.3 for graded ones).
    Warnings: it never varies, gives one score to all completions of most
    prompts (with a `prompts` column: zero advantage), returns None for most
    rows, is slow, or (any other reward) agrees weakly with `label`.
    """
    completions = list(completions)
    if not completions:
        raise ConfigError("no completions to score: give at least one sample")
    labels = columns.pop("label", None)
    columns = _check_columns(len(completions), columns)
    if labels is not None:
        labels = _check_columns(len(completions), {"label": labels})["label"]
    numeric = label_agreement.numeric_labels(labels) if labels is not None else None
    resolved = resolve_rewards(funcs)

    scores, errors, stats, findings = {}, {}, {}, []
    for name, func in resolved:
        row_scores, row_errors, problem, seconds = _score_batch(func, completions, columns)
        scores[name], errors[name] = row_scores, row_errors
        if problem and problem[0] == "bad_return":
            findings.append(RewardFinding(name, "bad_return", "error",
                                    f"{problem[1]}; a reward returns one number (or None) per completion.",
                                    list(range(len(completions)))))
        elif row_errors:
            first = min(row_errors)
            kind = "raises" if problem else "bad_return"
            findings.append(RewardFinding(name, kind, "error",
                                    f"failed on {len(row_errors)} of {len(completions)} rows (first: row {first}: "
                                    f"{row_errors[first]}). A reward must return None, not fail, on rows it cannot score.",
                                    sorted(row_errors)))
        elif problem:
            findings.append(RewardFinding(name, "raises", "error",
                                    f"{problem[1]} on the whole batch but on no single row: it depends on the batch "
                                    "(group size, column lengths)."))
        stats[name], found = _stats(name, row_scores, row_errors, seconds, numeric, failed=problem is not None)
        if not problem and not any(f.kind == "constant" for f in found):
            flat = _flat_groups(name, row_scores, columns.get("prompts"))
            found.extend([flat] if flat else [])
        findings.extend(found)

    result = DebugResult(
        names=[n for n, _ in resolved],
        completions=[to_text(c) for c in completions],
        scores=scores,
        errors=errors,
        stats=stats,
        warnings=findings,
        labels=labels,
    )
    if show:
        result.render(console=console, max_rows=max_rows)
    return result


def _preview(text: str, width: int) -> str:
    # One line per row: newlines shown as a symbol, long text cut with an ellipsis.
    flat = " ".join(text[: width * 4].replace("\n", " \u23ce ").split())
    return flat if len(flat) <= width else flat[: width - 1] + "\u2026"


def _cell(result: DebugResult, name: str, row: int) -> Any:
    from rich.text import Text

    if row in result.errors[name]:
        return Text("ERR", style="bold red")
    value = result.scores[name][row]
    if value is None:
        return Text("None", style="dim")
    if not math.isfinite(value):
        return Text(str(value), style="bold red")
    return f"{value:.3f}"


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _render(result: DebugResult, console=None, max_rows: int = 20, preview: int = 60) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    if console is None:
        console = Console()
        if not console.is_terminal:
            # Piped or captured output has no width to respect: do not squeeze.
            console = Console(width=160)
    # Fit the preview to what the score columns leave, so rich need not squeeze them.
    fixed = 7 + (8 if result.labels is not None else 0) + sum(max(len(n), 6) + 3 for n in result.names)
    preview = max(10, min(preview, console.width - fixed))
    rows = Table(title=f"reward scores ({len(result.completions)} samples)", show_lines=False)
    rows.add_column("#", justify="right", no_wrap=True, min_width=len(str(len(result.completions))))
    # The preview stays one line; rich shrinks it before the score columns.
    rows.add_column("completion", no_wrap=True, max_width=preview + 2)
    if result.labels is not None:
        rows.add_column("label", no_wrap=True)
    for name in result.names:
        rows.add_column(name, justify="right", no_wrap=True)
    for i, text in enumerate(result.completions[:max_rows]):
        label = [Text(str(result.labels[i]))] if result.labels is not None else []
        rows.add_row(str(i), Text(_preview(text, preview)), *label, *(_cell(result, n, i) for n in result.names))
    console.print(rows)
    if len(result.completions) > max_rows:
        console.print(f"... {len(result.completions) - max_rows} more rows not shown")

    summary = Table(title="per reward")
    for column in ("reward", "mean", "std", "min", "max", "None", "errors", "r(label)", "acc(label)", "auc(label)", "seconds"):
        summary.add_column(column, justify="left" if column == "reward" else "right")
    for name in result.names:
        st = result.stats[name]
        summary.add_row(name, _fmt(st.mean), _fmt(st.std), _fmt(st.min), _fmt(st.max), str(st.none), str(st.errors),
                        _fmt(st.label_correlation, ".2f"), _fmt(st.label_accuracy, ".0%"),
                        _fmt(st.label_auc, ".2f"), f"{st.seconds:.3f}")
    console.print(summary)

    if not result.warnings:
        console.print(Text("no problems found", style="green"))
    for finding in result.warnings:
        style = {"error": "bold red", "warning": "yellow"}.get(finding.severity, "cyan")
        console.print(Text.assemble((f"{finding.severity.upper()} ", style), (f"{finding.reward}: ", "bold"), finding.message))
