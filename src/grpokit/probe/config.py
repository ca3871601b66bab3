"""The probe on a run config: its rewards (per stage), against rows of its own data set.

What `grpokit rewards probe CONFIG` and the doctor run. Config and data modules
are imported inside the functions, so the probe itself stays importable alone.
"""
from __future__ import annotations

from typing import Any, Sequence

from grpokit.probe.run import ProbeReport, probe_rewards


def reward_sets(cfg: Any) -> list[tuple[str, list]]:
    """(label, reward specs) for the run's rewards and each stage that brings its own."""
    return [(label, specs) for label, specs, _ in _sets(cfg)]


def _sets(cfg: Any) -> list[tuple[str, list, Any]]:
    """(label, reward specs, max_completion_length) per reward set; a stage's own length wins."""
    length = (cfg.training or {}).get("max_completion_length")
    sets = [("rewards", list(cfg.rewards), length)] if cfg.rewards else []
    for stage in cfg.stages or []:
        if stage.rewards is not None:
            sets.append((f"stage {stage.name}", list(stage.rewards),
                         (stage.training or {}).get("max_completion_length", length)))
    return sets


def build(specs: Sequence[Any], answer_format: Any = None) -> tuple[list, list[float]]:
    """The rewards as the run builds them (with its answer format), and their weights."""
    from grpokit import rewards
    from grpokit.rewards.format_params import with_answer_format

    return ([rewards.get(s.name, **with_answer_format(s.name, s.params, answer_format)) for s in specs],
            [float(s.weight) for s in specs])


def probe_config(cfg: Any, rows: Sequence[dict]) -> list[tuple[str, ProbeReport]]:
    """Probe every reward set of a loaded RunConfig on `rows` (dicts with `prompt` and reward columns).

    Completions are kept to the set's `max_completion_length` in the model's tokens: an exploit
    the policy cannot write within it is left out, and the report says which (budget.py).
    """
    from grpokit.errors import ConfigError
    from grpokit.probe.budget import budget_for

    sets = _sets(cfg)
    if not sets:
        raise ConfigError("the config has no rewards to probe; add entries under rewards:")
    fmt = cfg.data.answer_format
    budgets: dict[Any, Any] = {}
    for _, _, length in sets:
        if length not in budgets:
            budgets[length] = budget_for(cfg.model.name, length)
    return [(label, _probe(specs, rows, fmt, budgets[length])) for label, specs, length in sets]


def _probe(specs: Sequence[Any], rows: Sequence[dict], answer_format: Any = None, budget: Any = None) -> ProbeReport:
    funcs, weights = build(specs, answer_format)
    return probe_rewards(funcs, rows, weights, answer_format=answer_format, budget=budget)


def data_rows(cfg: Any, count: int) -> list[dict]:
    """The first `count` training rows of the config's data set, as the rewards will see them."""
    from grpokit.data import load_data

    train_set, _ = load_data(cfg.data)
    return [dict(train_set[i]) for i in range(min(count, len(train_set)))]


def render(results: list[tuple[str, ProbeReport]], echo) -> None:
    """Plain lines: one per exploit (reward, probe, score, ceiling, fix), then a verdict."""
    for label, report in results:
        checked = sum(len(v) for v in report.checked.values())
        echo(f"{label}: {report.counted()} x the probes that fit {report.rows} row(s): {checked} checks")
        if report.budget or report.forms:
            echo(f"  completions: {', '.join(report.forms) or 'as the data holds them'}"
                 + (f", at most {report.budget}" if report.budget else ""))
        for probe, why in sorted(report.skipped.items()):
            echo(f"  skipped {probe}: no completion of it fits; it {why}")
        for name, error in report.errors.items():
            echo(f"  FAIL {name}: raised {error}")
        for exploit in sorted(report.worst(), key=lambda e: (e.severity != "fail", e.reward, e.probe)):
            echo(f"  {exploit.severity.upper()} {exploit}")
        if report.no_signal:
            echo(f"  note: {', '.join(report.no_signal)} gave an honest correct answer no more than a wrong one "
                 "(shaping rewards: judged through the weighted total)")
    failed = [label for label, report in results if not report.ok]
    echo(f"rewards can be gamed: {', '.join(failed)}" if failed else "no reward could be gamed by the probes")
