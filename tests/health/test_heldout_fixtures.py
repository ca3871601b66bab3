"""The first held-out runs (tests/health/fixtures_heldout: real runs of other recipes, labelled before they
were run) replayed by today's rules: the failure classes they showed stay fixed.

- diverged on a reward never clear of its sampling noise (tool-math at 1 prompt x 4 a step, json at 16
  tokens): a fall of under noise_z standard errors stands down;
- truncation missing a limit that leaves a reward no room (the words recipe at 5 tokens: restated_expression
  0 on every completion while the answer rewards' cut gap was about 0).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from grpokit.config.health_section import HealthConfig
from grpokit.health.diagnose import completions_per_step, diagnose, diagnosis, load_run
from grpokit.health.rules import replay

HELD_OUT = Path(__file__).parent / "fixtures_heldout"


def _problems(case: str) -> list:
    return [f for f in diagnose(load_run(HELD_OUT / case)) if f.severity in ("warning", "critical")]


@pytest.mark.parametrize("case", ["heldout-words-seed7", "heldout-words-resumed", "heldout-two-stage"])
def test_healthy_held_out_runs_raise_nothing(case):
    assert _problems(case) == []


@pytest.mark.parametrize("case", ["heldout-tool-math", "heldout-json-truncated"])
def test_a_fall_within_sampling_noise_is_not_divergence(case):
    read = diagnosis(HELD_OUT / case)
    assert "diverged" not in {f.rule for f in read.findings}
    reasons = {s.reason for s in read.stood_down if s.rule == "diverged"}
    assert "within sampling noise" in reasons, reasons


def test_a_limit_that_leaves_a_reward_no_room_is_truncation():
    problems = _problems("heldout-words-truncated")
    assert [f.rule for f in problems] == ["truncation"]
    assert "restated_expression scored 0 on every completion" in problems[0].evidence


def _step(i: int, reward: float, std: float, entropy: float, clipped: float = 0.2) -> dict:
    return {"step": i, "loss": 0.0, "grad_norm": 0.1, "reward": reward, "reward_std": std, "entropy": entropy,
            "frac_reward_zero_std": 0.0, "completions/clipped_ratio": clipped, "completions/mean_length": 30.0,
            "rewards/numeric_match/mean": reward, "rewards/numeric_match/std": std}


# A start at 0.2 with std 0.4, then nothing and entropy 2.5x: noise at 4 completions a step, a fall of
# 0.2 / sqrt(0.16/4 + 0) = 1.0 standard errors; at 64 a step, 4.0.
DROP = [_step(1, 0.2, 0.4, 1.0), _step(2, 0.0, 0.0, 2.5, clipped=1.0)]


@pytest.mark.parametrize("per_step, fires", [(4, False), (64, True), (None, True)])
def test_diverged_weighs_the_fall_against_the_completions_a_step(per_step, fires):
    # None: a run whose batch is unknown keeps the rule without the noise test.
    config = HealthConfig(max_completion_length=64, expected_logged_steps=2, completions_per_step=per_step)
    assert ("diverged" in {a.rule for a in replay(DROP, config)}) is fires


def test_completions_per_step_is_the_generation_batch_of_one_process():
    assert completions_per_step({"per_device_train_batch_size": 8}) == 8
    assert completions_per_step({"per_device_train_batch_size": 8, "gradient_accumulation_steps": 4}) == 32
    assert completions_per_step({"per_device_train_batch_size": 8, "gradient_accumulation_steps": 4,
                                 "steps_per_generation": 2}) == 16
    assert completions_per_step({}) is None


def _cut(i: int, length: float, silent: float = 0.0) -> dict:
    return {"step": i, "loss": 0.0, "grad_norm": 0.1, "reward": 0.3, "reward_std": 0.4, "entropy": 1.0,
            "frac_reward_zero_std": 0.5, "completions/clipped_ratio": 0.7, "completions/mean_length": length,
            "completions/cut_answer_gap": 0.0, "rewards/numeric_match/mean": 0.3, "rewards/numeric_match/std": 0.4,
            "rewards/restated_expression/mean": silent, "rewards/restated_expression/std": silent}


@pytest.mark.parametrize("length, silent, fires", [
    (4.7, 0.0, True),    # the limit filled, one reward never paid: truncation names it
    (3.0, 0.0, False),   # room left under the limit: a reward at 0 is the task's, not the cut's
    (4.7, 0.25, False),  # the reward paid somewhere: the cut gap speaks for it (0: the cut costs nothing)
])
def test_a_silent_reward_names_the_limit_only_when_completions_fill_it(length, silent, fires):
    config = HealthConfig(max_completion_length=5, expected_logged_steps=4)
    alerts = replay([_cut(i, length, silent) for i in range(1, 5)], config)
    assert ("truncation" in {a.rule for a in alerts}) is fires, [a.message for a in alerts]
