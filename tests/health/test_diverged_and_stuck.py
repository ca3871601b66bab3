"""diverged and reward_stuck on the real histories that showed where they misfired.

diverge-lr-flat-entropy and diverge-lr-low-entropy are the health zoo's learning-rate-1.0 case retrained:
the reward fell to 0 and every completion ran to the limit at step 2 as in diverge-lr, but the step-2
entropy was 1.45 and 0.85 against 1.53 at the first step, so an entropy-rise rule missed the first run and
was a step late on the second. stuck-low-lr is the demo at learning rate 1e-7 with held-out evaluation on.
"""
from __future__ import annotations

import json
from pathlib import Path

from grpokit.health.callback import HealthCallback
from grpokit.health.diagnose import diagnose, health_config_for, load_run
from grpokit.health.rules import HealthConfig, HealthMonitor, replay, replay_monitor, step_ranges

FIXTURES = Path(__file__).parent / "fixtures"


def _step(step, reward, *, entropy=1.0, clipped=0.3, std=0.6, **extra):
    return {"step": step, "loss": 0.0, "grad_norm": 1.0, "reward": reward, "reward_std": std,
            "frac_reward_zero_std": 0.0 if std else 1.0, "entropy": entropy,
            "completions/clipped_ratio": clipped, **extra}


def _fired(records, **config):
    return [(a.rule, a.step) for a in replay(records, HealthConfig(**config))]


def test_each_real_learning_rate_1_run_is_diverged_from_the_step_after_the_jump():
    for case in ("diverge-lr", "diverge-lr-flat-entropy", "diverge-lr-low-entropy"):
        run = load_run(FIXTURES / case)
        entropy = [r["entropy"] for r in run.train_metrics]
        first = [f for f in diagnose(run) if f.severity in ("warning", "critical")][0]
        assert (first.rule, first.ranges) == ("diverged", [[2, 4]]), (case, first.evidence)
        if case == "diverge-lr-flat-entropy":
            # Never twice nor half the first step's entropy: the every-completion-cut reading caught it.
            assert all(entropy[0] / 2 < e < 2 * entropy[0] for e in entropy), entropy
            assert "ran to the length limit" in first.evidence


def test_one_empty_step_of_a_hard_task_is_not_divergence():
    # The base model solves a few prompts; one step draws none. Entropy and the cut share do not move.
    records = [_step(1, 0.06), _step(2, 0.0, std=0.0), _step(3, 0.12), _step(4, 0.0, std=0.0)]
    assert "diverged" not in [rule for rule, _ in _fired(records)]


def test_a_slide_to_nothing_over_many_steps_is_not_divergence():
    # Every completion cut in the end and the reward gone, but step by step: not one update blowing up.
    records = [_step(i, max(0.0, 0.8 - 0.1 * i), clipped=min(1.0, 0.3 + 0.1 * i)) for i in range(1, 15)]
    assert "diverged" not in [rule for rule, _ in _fired(records)]


def test_a_diverged_run_stays_diverged_past_the_rule_windows():
    records = [_step(1, 0.5), _step(2, 0.6)] + [_step(i, 0.0, entropy=0.05, clipped=1.0, std=0.0)
                                                 for i in range(3, 41)]
    monitor = replay_monitor(records, HealthConfig(expected_logged_steps=40))
    assert step_ranges(monitor.firing["diverged"]) == [(3, 40)]
    # What it explains (no signal, every completion cut, a flat reward) stays hidden all the way.
    assert [a.rule for a in monitor.alerts] == ["diverged"]


def _seed1(tmp_path: Path, held_out=(), components=True) -> Path:
    """healthy-demo-seed1 (its adapter learned) written to tmp_path, with held-out records at steps 0, 10
    and 20 where the run wrote them (before that step's training log)."""
    records = [json.loads(line) for line in (FIXTURES / "healthy-demo-seed1" / "metrics.jsonl").open()]
    if not components:
        records = [{k: v for k, v in r.items() if not k.startswith("rewards/")} for r in records]
    out = []
    for r in records:
        for step, accuracy in held_out:
            if r.get("step") == max(step, 1):
                out.append({"step": step, "stage": None, "eval/accuracy": accuracy, "eval/reward": accuracy,
                            "eval/prompts": 32, "eval/samples_per_prompt": 2})
        out.append(r)
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in out))
    (tmp_path / "config.yaml").write_text((FIXTURES / "healthy-demo-seed1" / "config.yaml").read_text())
    return tmp_path


def _stuck_ranges(run_dir: Path):
    # At step 20 all its groups happened to be all right, and no_learning_signal hid reward_stuck: the
    # reading itself is what is tested.
    run = load_run(run_dir)
    config = health_config_for(run.config, run.train_metrics)
    config.disable = ["no_learning_signal"]
    monitor = replay_monitor(run.curve_metrics, config)
    return step_ranges(monitor.firing.get("reward_stuck", [])), monitor


def test_healthy_seed1_is_not_stuck_its_format_reward_rose(tmp_path):
    # Its training reward after its first 5 steps was lower than over them (1.03 vs 1.13: it drew easy
    # prompts first), but regex_format went 0.57 -> 0.88, where twice its noise is 0.15.
    assert _stuck_ranges(_seed1(tmp_path))[0] == []


def test_held_out_accuracy_that_rose_says_the_run_learns(tmp_path):
    # With the total reward alone the seed-1 history reads as stuck at step 20 ...
    ranges, _ = _stuck_ranges(_seed1(tmp_path / "total", components=False))
    assert ranges == [(20, 20)]
    # ... unless held-out accuracy rose beyond its sampling noise (0.18 -> 0.48 on 32 prompts x 2) ...
    ranges, monitor = _stuck_ranges(_seed1(tmp_path / "learned", [(0, 0.18), (10, 0.3), (20, 0.48)], components=False))
    assert ranges == [] and len(monitor.history.held_out) == 3
    # ... and not when it moved within that noise (0.18 -> 0.25: twice its noise is 0.15).
    ranges, monitor = _stuck_ranges(_seed1(tmp_path / "flat", [(0, 0.18), (10, 0.2), (20, 0.25)], components=False))
    assert ranges == [(20, 20)]
    assert "held-out accuracy 0.18 -> 0.25" in monitor.alerts[-1].message


def test_the_report_weighs_held_out_records(tmp_path):
    run_dir = _seed1(tmp_path, [(0, 0.18), (10, 0.3), (20, 0.48)], components=False)
    assert "reward_stuck" not in [f.rule for f in diagnose(run_dir)]


def test_held_out_records_stay_out_of_the_train_rules():
    monitor = HealthMonitor(HealthConfig())
    held_out = {"step": 0, "eval/accuracy": 0.3, "eval/reward": 0.0, "eval/truncated_rate": 1.0,
                "eval/prompts": 32, "eval/samples_per_prompt": 2}
    assert monitor.observe(0, held_out) == []
    assert monitor.history.count == 0 and monitor.history.latest == {} and monitor.history.held_out == [held_out]


def test_the_live_callback_is_handed_each_held_out_record(monkeypatch, tmp_path):
    import grpokit.evaluate.generation as generation
    from grpokit.evaluate.during import HeldOutEvalCallback

    health = HealthCallback({}, run_dir=tmp_path)
    monkeypatch.setattr(generation, "evaluate", lambda *a, **k: {"accuracy": 0.25, "reward": 0.5, "prompts": 32,
                                                                 "samples_per_prompt": 2})
    evaluator = HeldOutEvalCallback([{"question": "1 + 1", "answer": "2"}], [], [], every=10, accuracy="auto",
                                    metrics_path=tmp_path / "metrics.jsonl", stage=None, samples=2,
                                    max_new_tokens=4, temperature=1.0, seed=0, observers=[health.observe_held_out])
    evaluator._evaluate(10, model=object(), tokenizer=object())
    (record,) = health.monitor.history.held_out
    assert record["step"] == 10 and record["eval/accuracy"] == 0.25


def test_a_reward_that_rose_while_another_fell_is_still_stuck():
    # The total stays flat because two rewards pull against each other: what reward_stuck is there for.
    def step(i, fmt, acc):
        return _step(i, 0.5 * fmt + acc, **{"rewards/fmt/mean": fmt, "rewards/fmt/std": 0.3,
                                            "rewards/acc/mean": acc, "rewards/acc/std": 0.4})
    trading = [step(i, 0.2 + 0.04 * i, 0.6 - 0.02 * i) for i in range(1, 21)]
    assert ("reward_stuck", 20) in _fired(trading)
    learning_format = [step(i, min(0.95, 0.3 + 0.06 * i), 0.4 + (0.3 if i % 2 else -0.3)) for i in range(1, 21)]
    assert "reward_stuck" not in [rule for rule, _ in _fired(learning_format)]


def test_stuck_low_lr_is_stuck_though_it_has_held_out_records():
    finding = next(f for f in diagnose(FIXTURES / "stuck-low-lr") if f.rule == "reward_stuck")
    assert finding.ranges == [[20, 24]]
    assert "held-out accuracy 0.28 -> 0.28" in finding.evidence


def test_the_trend_fit_closed_form_is_the_sum_it_replaces_exactly():
    # reward_stuck fits a slope at every log; the closed form must not move any finding by a rounding.
    from grpokit.health.checks.trend import _spread_of_steps, slope

    assert all(_spread_of_steps(n) == sum((i - (n - 1) / 2) ** 2 for i in range(n)) for n in range(1000))
    assert slope([1.0, 3.0, 5.0, 7.0]) == 2.0 and slope([4.0]) == 0.0
