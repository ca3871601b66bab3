"""The rule changes the health zoo's real runs asked for, each on the history shape that showed it.

Histories are built per step like TRL's logs of a 2-prompt, 8-completion demo step; the real
runs themselves are replayed in test_real_runs.py.
"""
from __future__ import annotations

import json
import random

from grpokit.health.diagnose import diagnose, format_findings
from grpokit.health.rules import HealthConfig, replay


def _step(step, reward, std=0.6, **extra):
    return {"step": step, "loss": 0.0, "grad_norm": 1.0, "reward": reward, "reward_std": std,
            "frac_reward_zero_std": 0.3, "entropy": 0.8, **extra}


def _rules(records, **config):
    return [(a.rule, a.step) for a in replay(records, HealthConfig(**config))]


def test_reward_stuck_is_quiet_on_a_run_that_learned_then_plateaued():
    # The demo's shape: the reward climbs in the first steps, then sits high with 2-prompt noise.
    # The old rule fitted the last 20 steps only and called the plateau stuck in every seed.
    rng = random.Random(0)
    records = [_step(i, min(1.2, 0.4 + 0.1 * i) + rng.gauss(0, 0.2)) for i in range(1, 31)]
    assert "reward_stuck" not in [rule for rule, _ in _rules(records)]


def test_reward_stuck_fires_when_nothing_moved_since_the_start():
    rng = random.Random(1)
    records = [_step(i, 0.4 + rng.gauss(0, 0.05)) for i in range(1, 31)]
    assert ("reward_stuck", 20) in _rules(records)


def test_reward_stuck_fires_on_a_fall_beyond_the_noise():
    # Learned, then lost it: high for a while, then down steadily.
    records = [_step(i, 1.2 if i <= 10 else 1.2 - 0.05 * (i - 10)) for i in range(1, 41)]
    alerts = replay(records)
    assert [a.rule for a in alerts] == ["reward_stuck"] and "fell" in alerts[0].message


def _sure(step, shared):
    # Most groups all right (zero std), entropy and per-group diversity fallen: a model sure of its answers.
    return {**_step(step, 1.5, std=0.2), "frac_reward_zero_std": 0.75, "entropy": 0.9 if step <= 3 else 0.1,
            "completions/distinct_frac": 0.15, "completions/shared_answer_frac": shared}


def test_collapse_is_quiet_when_each_question_gets_its_own_answer():
    # The demo after learning: both prompts of a step answered, each with its own (right) sum.
    assert "collapse" not in [rule for rule, _ in _rules([_sure(i, 0.5) for i in range(1, 16)])]


def test_collapse_fires_when_every_question_gets_the_same_answer():
    assert "collapse" in [rule for rule, _ in _rules([_sure(i, 1.0) for i in range(1, 16)])]


def test_collapse_without_the_shared_answer_metric_judges_as_before():
    # Runs logged before completions/shared_answer_frac existed keep the entropy + zero-std reading.
    records = [{k: v for k, v in _sure(i, 0.5).items() if k != "completions/shared_answer_frac"} for i in range(1, 16)]
    assert "collapse" in [rule for rule, _ in _rules(records)]


def test_half_unscorable_counts():
    # A reward that returns None on every other row: 0.5 reaches max_none_frac (it used to need more).
    records = [_step(i, 0.5, **{"rewards/half/mean": 1.0, "rewards/half/none_frac": 0.5}) for i in range(1, 5)]
    assert ("reward_unscorable", 2) in _rules(records)


def _write(tmp_path, records, rewards=()):
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "config.yaml").write_text(json.dumps({"rewards": list(rewards), "training": {"max_steps": len(records)}}))


def test_diagnosis_lists_every_range_an_alert_held(tmp_path):
    # Cut at the limit for steps 1-8, fine for 9-20, cut again 21-30: two stretches, both named.
    records = [_step(i, 0.5, **{"completions/clipped_ratio": 1.0 if i <= 8 or i > 20 else 0.0}) for i in range(1, 31)]
    _write(tmp_path, records)
    (finding,) = [f for f in diagnose(tmp_path) if f.rule == "truncation"]
    assert finding.ranges == [[2, 8], [22, 30]]
    assert "(steps 2-8, 22-30)" in format_findings([finding])


def test_diagnosis_names_a_reward_that_never_varied(tmp_path):
    records = [_step(i, 0.5, **{"rewards/exact_match/mean": 0.0, "rewards/exact_match/std": 0.0,
                                "rewards/fmt/mean": 0.5 + 0.01 * i, "rewards/fmt/std": 0.3}) for i in range(1, 13)]
    _write(tmp_path, records, rewards=[{"name": "exact_match", "weight": 1.0}, {"name": "fmt", "weight": 0.5}])
    (finding,) = [f for f in diagnose(tmp_path) if f.rule == "reward_constant"]
    assert finding.severity == "warning" and "exact_match" in finding.title
    assert "0.000" in finding.evidence and "(1-12, 12 steps)" in finding.evidence


def test_a_constant_weight_zero_diagnostic_is_only_a_note(tmp_path):
    records = [_step(i, 0.5, **{"rewards/calls/mean": 0.0, "rewards/calls/std": 0.0}) for i in range(1, 13)]
    _write(tmp_path, records, rewards=[{"name": "calls", "weight": 0.0}])
    (finding,) = [f for f in diagnose(tmp_path) if f.rule == "reward_constant"]
    assert finding.severity == "info"
