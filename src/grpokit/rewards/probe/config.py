"""The probe on a run config: its rewards (per stage), against rows of its own data set.

What `grpokit rewards probe CONFIG` and the doctor run. Config and data modules
are imported inside the functions, so the probe itself stays importable alone.
"""
from __future__ import annotations

from typing import Any, Sequence

from grpokit.rewards.probe.run import ProbeReport, probe_rewards


def reward_sets(cfg: Any) -> list[tuple[str, list]]:
    """(label, reward specs) for the run's rewards and each stage that brings its own."""
    sets = [("rewards", list(cfg.rewards))] if cfg.rewards else []
    for stage in cfg.stages or []:
        if stage.rewards is not None:
            sets.append((f"stage {stage.name}", list(stage.rewards)))
    return sets


def build(specs: Sequence[Any], answer_format: Any = None) -> tuple[list, list[float]]:
    """The rewards as the run builds them (with its answer format), and their weights."""
    from grpokit import rewards
    from grpokit.rewards.answer_format import with_answer_format

    return ([rewards.get(s.name, **with_answer_format(s.name, s.params, answer_format)) for s in specs],
            [float(s.weight) for s in specs])


def probe_config(cfg: Any, rows: Sequence[dict]) -> list[tuple[str, ProbeReport]]:
    """Probe every reward set of a loaded RunConfig on `rows` (dicts with `prompt` and reward columns)."""
    from grpokit.errors import ConfigError

    sets = reward_sets(cfg)
    if not sets:
        raise ConfigError("the config has no rewards to probe; add entries under rewards:")
    fmt = cfg.data.answer_format
    return [(label, _probe(specs, rows, fmt)) for label, specs in sets]


def _probe(specs: Sequence[Any], rows: Sequence[dict], answer_format: Any = None) -> ProbeReport:
    funcs, weights = build(specs, answer_format)
    return probe_rewards(funcs, rows, weights, answer_format=answer_format)


def data_rows(cfg: Any, count: int) -> list[dict]:
    """The first `count` training rows of the config's data set, as the rewards will see them."""
    from grpokit.data import load_data

    train_set, _ = load_data(cfg.data)
    return [dict(train_set[i]) for i in range(min(count, len(train_set)))]


def render(results: list[tuple[str, ProbeReport]], echo) -> None:
    """Plain lines: one per exploit (reward, probe, score, ceiling, fix), then a verdict."""
    for label, report in results:
        checked = sum(len(v) for v in report.checked.values())
        echo(f"{label}: {len(report.rewards)} reward(s) x the probes that fit {report.rows} row(s): {checked} checks")
        for name, error in report.errors.items():
            echo(f"  FAIL {name}: raised {error}")
        for exploit in sorted(report.worst(), key=lambda e: (e.severity != "fail", e.reward, e.probe)):
            echo(f"  {exploit.severity.upper()} {exploit}")
        if report.no_signal:
            echo(f"  note: {', '.join(report.no_signal)} gave an honest correct answer no more than a wrong one "
                 "(shaping rewards: judged through the weighted total)")
    failed = [label for label, report in results if not report.ok]
    echo(f"rewards can be gamed: {', '.join(failed)}" if failed else "no reward could be gamed by the probes")
