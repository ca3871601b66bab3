"""What the health engine says over every recorded run: the live monitor's alerts (its replay of each
stage, as the callback would have raised them) and `grpokit report`'s findings, as JSON.

The inputs are the zoo's real runs (tests/health/fixtures/<case>/) and the synthetic failure histories,
frozen in snapshots/synthetic_inputs.json so that a change to the generator does not move the golden file.

    PYTHONPATH=src .venv/bin/python -m tests.health.engine_snapshot --write   # regenerate on purpose
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from grpokit.health.diagnose import RunData, by_stage, diagnose, health_config_for, load_run
from grpokit.health.rules import HealthConfig, is_train_log, replay

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
GOLDEN = HERE / "snapshots" / "engine_findings.json"
SYNTHETIC = HERE / "snapshots" / "synthetic_inputs.json"
# The limit the synthetic histories were written against (tests/helpers/synthetic_runs.py).
SYNTHETIC_LIMIT = 128


def _number(value: Any) -> Any:
    # Nine significant digits: the same arithmetic in another order may move the last bits.
    return float(f"{value:.9g}") if isinstance(value, float) else value


def _alerts(alerts) -> list[dict[str, Any]]:
    return [{"rule": a.rule, "step": a.step, "severity": a.severity, "message": a.message, "fix": a.fix,
             "value": _number(a.value), "threshold": _number(a.threshold)} for a in alerts]


def _findings(findings) -> list[dict[str, Any]]:
    keep = ("rule", "severity", "title", "evidence", "cause", "fix", "first_step", "last_step", "count",
            "sources", "ranges", "stages", "first_stage")
    return [{k: getattr(f, k) for k in keep} for f in findings]


def live(run: RunData) -> list[dict[str, Any]]:
    """Each stage on its own monitor, with the thresholds its callback would have had."""
    out = []
    for stage, records in by_stage(run.curve_metrics):
        config = health_config_for(run.config, [r for r in records if is_train_log(r)], stage)
        config.enabled = True
        out += [{"stage": stage, **a} for a in _alerts(replay(records, config))]
    return out


def fixture_snapshot(case: Path) -> dict[str, Any]:
    run = load_run(case)
    return {"live": live(run), "report": _findings(diagnose(run))}


def synthetic_snapshot(records: list[dict[str, Any]]) -> dict[str, Any]:
    config = {"training": {"max_completion_length": SYNTHETIC_LIMIT, "max_steps": len(records)}}
    run = RunData(Path("/nonexistent/synthetic-run"), records, [], [], None, config)
    return {"live": _alerts(replay(records, HealthConfig(max_completion_length=SYNTHETIC_LIMIT))),
            "live_known_length": _alerts(replay(records, HealthConfig(max_completion_length=SYNTHETIC_LIMIT,
                                                                      expected_logged_steps=len(records)))),
            "report": _findings(diagnose(run))}


def snapshot() -> dict[str, Any]:
    cases = sorted(p for p in FIXTURES.iterdir() if (p / "metrics.jsonl").is_file())
    synthetic = json.loads(SYNTHETIC.read_text(encoding="utf-8"))
    return {"fixtures": {case.name: fixture_snapshot(case) for case in cases},
            "synthetic": {name: synthetic_snapshot(records) for name, records in synthetic.items()}}


def _hand_made() -> dict[str, list[dict[str, Any]]]:
    """Two shapes the generator has no scenario for: every reward 0 with every completion cut (the
    no-signal reading that names the cut), and a reward that hung (its watchdog's timeouts)."""
    nothing = [{"step": i, "loss": 0.0, "reward": 0.0, "reward_std": 0.0, "frac_reward_zero_std": 1.0,
                "completions/clipped_ratio": 1.0, "completions/mean_length": 128.0,
                "rewards/numeric_match/mean": 0.0, "rewards/numeric_match/std": 0.0} for i in range(1, 13)]
    hung = [{"step": i, "loss": 0.01, "reward": 0.3 + 0.02 * i, "reward_std": 0.3, "frac_reward_zero_std": 0.1,
             "rewards/slow_check/mean": 0.4, "rewards/slow_check/std": 0.2,
             **({"rewards/slow_check/timeouts": 1, "rewards/slow_check/error_frac": 0.25} if i in (4, 9) else {})}
            for i in range(1, 13)]
    return {"hand_nothing_scores_all_cut": nothing, "hand_reward_hung": hung}


def _freeze_synthetic() -> None:
    from tests.helpers.synthetic_runs import MAX_COMPLETION_LENGTH, SCENARIOS, history

    assert MAX_COMPLETION_LENGTH == SYNTHETIC_LIMIT
    frozen = {name: [{k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()}
                     for r in history(name, seed=0)] for name in SCENARIOS}
    frozen.update(_hand_made())
    SYNTHETIC.write_text(json.dumps(frozen, separators=(",", ":")) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if "--freeze-inputs" in sys.argv:
        _freeze_synthetic()
    if "--write" in sys.argv:
        GOLDEN.write_text(json.dumps(snapshot(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
