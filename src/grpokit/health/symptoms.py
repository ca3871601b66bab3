"""The symptom -> cause -> fix table, as data: the words of the rule table (table.py), one row per rule.

The live callback, the after-the-fact diagnosis (diagnose.py), the HTML report and the docs all read
it, so a fix is written once and every surface says the same thing.
"""
from __future__ import annotations

from dataclasses import dataclass

from grpokit.health.table import STEP_RULES


@dataclass(frozen=True)
class Symptom:
    rule: str          # the health rule's id, also the `rule` field of alerts.jsonl
    title: str         # a short name a person recognises
    severity: str      # "critical" (the run is wasting compute) or "warning"
    metrics: tuple[str, ...]  # TRL metric names the rule reads
    looks_like: str    # what the curves show
    cause: str         # why it happens
    fix: str           # what to change, with grpokit config keys
    # When the live rule fires and how long it must hold, in words with the default parameters, and the
    # parameters (`health.rules.<rule>.<key>`) that change it.
    threshold: str = ""
    patience: str = ""
    keys: tuple[str, ...] = ()


def _symptom(rule) -> Symptom:
    threshold, patience = rule.describe()
    keys = tuple(name for name in rule.params.names() if name != "enabled")
    return Symptom(rule=rule.id, title=rule.title, severity=rule.severity, metrics=rule.reads,
                   looks_like=rule.looks_like, cause=rule.cause, fix=rule.fix, threshold=threshold,
                   patience=patience, keys=keys)


# The live rules' rows; the after-run notes (reward_constant, loss_*, how the run ended) have their own words.
SYMPTOMS: tuple[Symptom, ...] = tuple(_symptom(rule) for rule in STEP_RULES.values())
BY_RULE: dict[str, Symptom] = {s.rule: s for s in SYMPTOMS}
RULES: tuple[str, ...] = tuple(BY_RULE)


def _cell(text: str) -> str:
    # A pipe inside a cell would split it into two columns.
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(symptoms: tuple[Symptom, ...] = SYMPTOMS) -> str:
    """The table as Markdown, for the docs and for `grpokit report`."""
    lines = [
        "| Rule | Symptom | Looks like | Cause | Fix |",
        "| --- | --- | --- | --- | --- |",
    ]
    for s in symptoms:
        lines.append(
            f"| `{s.rule}` ({s.severity}) | {_cell(s.title)} | {_cell(s.looks_like)} "
            f"| {_cell(s.cause)} | {_cell(s.fix)} |"
        )
    return "\n".join(lines) + "\n"
