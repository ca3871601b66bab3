"""Diagnosis of a run directory: replay the health rules over metrics.jsonl, merge
the live alerts, and say in plain words what is wrong and what to change.

Works on a run that is still going: a half-written last line is skipped.

    for finding in diagnose("runs/math-demo"):
        print(finding.severity, finding.title, finding.fix)
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from grpokit.health.rules import (HealthConfig, expected_logged_steps, finite, is_held_out_log, is_train_log,
                                  replay_monitor, step_ranges)
from grpokit.health.loss_words import explain_loss  # noqa: F401  (re-exported: the report and docs read it here)
from grpokit.health.evidence import RunReading
from grpokit.health.run_signals import RunSignals
from grpokit.health.stand_downs import StandDown, gather
from grpokit.health.table import TABLE
from grpokit.health.symptoms import BY_RULE, SYMPTOMS, Symptom, to_markdown  # noqa: F401  (to_markdown re-exported)
from grpokit.run_directory import layout
from grpokit.run_directory.jsonl import read_jsonl, without_redone
from grpokit.run_directory.progress import stage_max_steps

SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}


@dataclass
class Finding:
    rule: str
    severity: str               # critical | warning | info
    title: str
    evidence: str               # what was measured, with steps and numbers
    cause: str
    fix: str
    first_step: int | None = None
    last_step: int | None = None
    count: int = 1
    sources: list[str] = field(default_factory=list)  # "metrics" (replayed) and/or "alerts" (live)
    ranges: list[list[int]] = field(default_factory=list)  # [first, last] step of every stretch it held
    # The stage of each of `ranges` (None in a run without stages), and of first_step: every stage counts
    # its own steps, so "step 2" alone names two places in a two-stage run.
    stages: list[str | None] = field(default_factory=list)
    first_stage: str | None = None
    # The measurement behind the first alert, against the threshold it crossed (None: not a number).
    value: float | None = None
    threshold: float | None = None
    # Where this rule stayed quiet although part of its condition held (health/stand_downs.py).
    stood_down: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RunData:
    run_dir: Path
    metrics: list[dict[str, Any]]
    alerts: list[dict[str, Any]]
    completions: list[dict[str, Any]]
    eval: Any
    config: dict[str, Any]
    skipped_lines: int = 0      # unreadable lines (a partial last line of a live run, or corruption)

    @property
    def train_metrics(self) -> list[dict[str, Any]]:
        return [r for r in self.metrics if is_train_log(r)]

    @property
    def curve_metrics(self) -> list[dict[str, Any]]:
        """Training logs and held-out evaluation records, in the order they were written."""
        return [r for r in self.metrics if is_train_log(r) or is_held_out_log(r)]

    @property
    def finished(self) -> bool:
        """True when the last stage left its done marker at its max_steps (run_directory.progress); for a
        run without markers (trained outside `grpokit train`), when it logged its summary or reached
        training.max_steps."""
        from grpokit.run_directory.progress import run_finished

        marked = run_finished(self.run_dir, self.config)
        if marked is not None:
            return marked
        if any("train_runtime" in r for r in self.metrics):
            return True
        training = self.config.get("training") if isinstance(self.config.get("training"), dict) else {}
        max_steps = finite(training.get("max_steps"))
        train = self.train_metrics
        last = finite(train[-1].get("step")) if train else None
        stages = self.config.get("stages")
        # With stages each stage counts its own steps; only a single-stage run can be judged this way.
        return bool(max_steps and last and not stages and last >= max_steps)


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        from grpokit.config.safe_yaml import load

        data = load(path.read_bytes(), str(path))
    except Exception:  # a broken config.yaml must not stop the diagnosis of the metrics
        return {}
    return data if isinstance(data, dict) else {}


def load_run(run_dir: str | Path) -> RunData:
    run_dir = Path(run_dir)
    metrics, bad_m = read_jsonl(run_dir / layout.METRICS)
    alerts, bad_a = read_jsonl(run_dir / layout.ALERTS)
    completions, bad_c = read_jsonl(run_dir / layout.COMPLETIONS)
    eval_data = None
    if (run_dir / layout.EVAL).is_file():
        try:
            eval_data = json.loads((run_dir / layout.EVAL).read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            eval_data = None
    # Steps logged after a checkpoint and redone by a resume count once, as the resumed run logged them.
    return RunData(run_dir, without_redone(metrics), alerts, completions, eval_data, _read_yaml(run_dir / layout.CONFIG),
                   skipped_lines=bad_m + bad_a + bad_c)


def health_config_for(config: dict[str, Any], metrics: list[dict[str, Any]] | None = None,
                      stage: str | None = None) -> HealthConfig:
    """The run's own thresholds (its `health:` section), with the length limit from `training:` (and the
    length of `stage`, which the live callback reads off its own trainer).

    When the config does not name the limit (a profile default), it is read off the metrics:
    at a step where some completions were clipped, completions/max_length is the limit.
    """
    health = dict(config.get("health") or {})
    training = config.get("training") or {}
    try:
        hc = HealthConfig.from_dict(health)
    except ValueError:
        hc = HealthConfig()  # diagnosis of a run with a bad health section still uses the defaults
    if hc.max_completion_length is None and isinstance(training, dict):
        limit = finite(training.get("max_completion_length"))
        hc.max_completion_length = int(limit) if limit else None
    if hc.expected_logged_steps is None and isinstance(training, dict):
        # The live callback caps patience by the run's length; the replay must judge the same way.
        max_steps = stage_max_steps(config, stage) if stage is not None else training.get("max_steps")
        hc.expected_logged_steps = expected_logged_steps(max_steps, training.get("logging_steps", 1))
    if hc.completions_per_step is None and isinstance(training, dict):
        hc.completions_per_step = completions_per_step(training)
    if hc.max_completion_length is None and metrics:
        clipped = [finite(r.get("completions/max_length")) for r in metrics
                   if (finite(r.get("completions/clipped_ratio")) or 0) > 0]
        clipped = [v for v in clipped if v]
        hc.max_completion_length = int(max(clipped)) if clipped else None
    return hc


def completions_per_step(training: dict) -> int | None:
    """The completions one optimizer step scores, from a run's training section: TRL's generation batch on
    one process (per_device_train_batch_size x steps_per_generation, which defaults to
    gradient_accumulation_steps). The process count is not in the config; one process under-counts, so the
    noise read from it is the larger, the cautious side for a rule that weighs a fall against it."""
    batch = finite(training.get("per_device_train_batch_size"))
    every = finite(training.get("steps_per_generation")) or finite(training.get("gradient_accumulation_steps")) or 1
    return int(batch * every) if batch and batch > 0 and every > 0 else None


def _symptom_finding(symptom: Symptom, evidence: str, steps: list[int], source: str, fix: str = "") -> Finding:
    # `fix`: the alert's own, read against the run's rewards (health/fixes.py); the table's otherwise.
    return Finding(rule=symptom.rule, severity=symptom.severity, title=symptom.title, evidence=evidence,
                   cause=symptom.cause, fix=fix or symptom.fix, first_step=min(steps) if steps else None,
                   last_step=max(steps) if steps else None, count=len(steps) or 1, sources=[source])


@dataclass
class Diagnosis:
    findings: list[Finding]
    # Stand-downs of the rules that raised no finding: what the rules looked at and why they stayed quiet.
    stood_down: list[StandDown]


def diagnose(run_dir: str | Path | RunData) -> list[Finding]:
    """Findings for a run directory, most severe first. An empty list means nothing wrong was seen."""
    return diagnosis(run_dir).findings


def diagnosis(run_dir: str | Path | RunData) -> Diagnosis:
    """The findings (most severe first) and the stand-downs of the rules that stayed quiet."""
    run = run_dir if isinstance(run_dir, RunData) else load_run(run_dir)
    findings: dict[str, Finding] = {}
    quiet: dict[tuple[str, str], StandDown] = {}
    # Each stage is replayed on its own monitor, as each stage's trainer had its own live one: its
    # baselines are its first steps (a stage often changes the rewards). The held-out records go in too,
    # where they were written: reward_stuck weighs them as the live monitor does.
    for stage, records in by_stage(run.curve_metrics):
        hc = health_config_for(run.config, [r for r in records if is_train_log(r)], stage)
        hc.enabled = True
        monitor = replay_monitor(records, hc)
        gather(monitor.stood_down, stage, quiet)
        for alert in monitor.alerts:
            f = findings.get(alert.rule)
            if f is None:
                findings[alert.rule] = f = _symptom_finding(BY_RULE[alert.rule], alert.message, [alert.step], "metrics",
                                                              alert.fix)
                f.first_stage, f.value, f.threshold = stage, alert.value, alert.threshold
            else:
                f.count += 1
                f.last_step = alert.step
        for rule, pairs in monitor.firing.items():
            if rule in findings:
                # Every stretch the condition held, not only where the alert fired: "steps 2-8, 14-20".
                stretches = [list(r) for r in step_ranges(pairs)]
                findings[rule].ranges += stretches
                findings[rule].stages += [stage] * len(stretches)
    for f in findings.values():
        if f.ranges:
            f.last_step = max(f.last_step or 0, f.ranges[-1][1])
    # Live alerts can see what metrics.jsonl lacks (e.g. reward errors counted by the tracker).
    for record in run.alerts:
        rule = record.get("rule")
        if not isinstance(rule, str) or rule not in BY_RULE:  # a hand-edited or corrupted line
            continue
        step = finite(record.get("step"))
        step = int(step) if step is not None else None
        stage = record.get("stage") if isinstance(record.get("stage"), str) else None
        f = findings.get(rule)
        if f is None:
            fix = record.get("fix") if isinstance(record.get("fix"), str) else ""
            findings[rule] = f = _symptom_finding(BY_RULE[rule], str(record.get("message", "")),
                                                  [step] if step is not None else [], "alerts", fix)
            f.first_stage = stage
        elif "alerts" not in f.sources:
            f.sources.append("alerts")
        if "metrics" not in f.sources and step is not None:  # seen live only: each alert is a stretch of its own
            f.ranges.append([step, step])
            f.stages.append(stage)
            f.first_step, f.last_step = min(f.first_step or step, step), max(f.last_step or step, step)
    out = _after_run(run, findings)
    # Most severe first; within a severity the rules before the notes derived from them (a reward that never
    # varied is what truncation or a too-hard task looks like from that reward), then by first step.
    out.sort(key=lambda f: (SEVERITY_ORDER.get(f.severity, 3), f.rule in DERIVED,
                            f.first_step if f.first_step is not None else 0, f.rule in GENERIC))
    for f in out:
        f.stood_down = [s.to_dict() for s in quiet.values() if s.rule == f.rule]
    fired = {f.rule for f in out}
    return Diagnosis(out, [s for s in quiet.values() if s.rule not in fired])


DERIVED = ("reward_constant",)
# Symptoms many causes produce. Starting at the same step as a specific finding (a tool never called,
# a reward that cannot score), they come after it: the specific one names what to change.
GENERIC = ("truncation", "no_learning_signal", "length_drift", "reward_stuck")


def _after_run(run: RunData, findings: dict[str, Finding]) -> list[Finding]:
    """`findings` with the table's after-run rules added: how the run ended (run_status.json: it knows more
    than a live alert of the same rule, which it replaces), then the notes on the whole history."""
    signals = RunSignals(run)
    hc = health_config_for(run.config)
    notes: list[Finding] = []
    for rule in TABLE:
        if rule.after_run is None or rule.id in hc.disable or not hc.params(rule.id).enabled:
            continue
        for reading in rule.after_run(signals, hc.params(rule.id)):
            finding = _run_finding(rule, reading)
            if reading.source == "run_status":
                findings[rule.id] = finding
            else:
                notes.append(finding)
    return list(findings.values()) + notes


def _run_finding(rule, reading: RunReading) -> Finding:
    return Finding(rule=rule.id, severity=reading.severity or rule.severity, title=reading.title or rule.title,
                   evidence=reading.message, cause=reading.cause or rule.cause, fix=reading.fix or rule.fix,
                   first_step=reading.first_step, last_step=reading.last_step, count=reading.count,
                   sources=[reading.source] if reading.source else [], ranges=list(reading.ranges),
                   first_stage=reading.stage, value=reading.value, threshold=reading.threshold)


def format_findings(findings: list[Finding]) -> str:
    """Findings as plain text for a terminal."""
    if not findings:
        return "No problems found."
    lines = []
    for f in findings:
        where = f" ({where_text(f)})" if where_text(f) else ""
        lines.append(f"[{f.severity}] {f.title}{where}\n  seen: {f.evidence}\n  why: {f.cause}\n  fix: {f.fix}")
        if measured_text(f):
            lines.append(f"  measured: {measured_text(f)}")
        for s in f.stood_down:
            lines.append(f"  stood down ({StandDown(**s).where()}): {s['reason']}: {s['detail']}")
    return "\n".join(lines)



def measured_text(f: Finding) -> str:
    """The first alert's value against its threshold, in words ("" where the rule gives no number)."""
    if f.value is None:
        return ""
    return f"{f.value:.4g}" + (f" against a threshold of {f.threshold:.4g}" if f.threshold is not None else "")


def by_stage(records: list[dict[str, Any]]) -> list[tuple[str | None, list[dict[str, Any]]]]:
    """Records grouped by their stage, the stages in the order they first appear."""
    groups: dict[Any, list[dict[str, Any]]] = {}
    for record in records:
        stage = record.get("stage")
        groups.setdefault(stage if isinstance(stage, str) else None, []).append(record)
    return list(groups.items())


def _steps(pairs: list[list[int]]) -> str:
    one = len(pairs) == 1 and pairs[0][0] == pairs[0][1]
    return ("step " if one else "steps ") + ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in pairs)


def where_text(f: Finding) -> str:
    """Where a finding held, in words: "steps 2-8, 22-30"; in a run with stages, each stage named
    ("stage format step 2, stage correctness step 2"), since each stage counts its own steps."""
    if f.ranges:
        stages = f.stages if len(f.stages) == len(f.ranges) else [None] * len(f.ranges)
        if all(s is None for s in stages):
            return "steps " + ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in f.ranges)
        parts: list[tuple[str | None, list[list[int]]]] = []
        for stage, pair in zip(stages, f.ranges):
            if parts and parts[-1][0] == stage:
                parts[-1][1].append(pair)
            else:
                parts.append((stage, [pair]))
        return ", ".join(f"stage {stage} {_steps(pairs)}" if stage else _steps(pairs) for stage, pairs in parts)
    stage = f"stage {f.first_stage} " if f.first_stage else ""
    if f.first_step is not None and f.last_step in (None, f.first_step):
        return f"{stage}step {f.first_step}"
    return f"{stage}steps {f.first_step}-{f.last_step}" if f.first_step is not None else ""
