"""The predicted seconds per step: the step's shape, the arithmetic, and doctor's line (it said nothing)."""
import pytest

from grpokit.config.run_config import from_dict
from grpokit.health.doctor import config_checks
from grpokit.health.step_time import Rates, StepPlan, check_step_time, measure_rates, plan_for, predict

BASE = {"per_device_train_batch_size": 8, "gradient_accumulation_steps": 1, "max_completion_length": 128,
        "beta": 0.0, "max_steps": 30}

# Table: training settings -> (sequences per step, micro-steps, extra no-grad forwards)
PLANS = [
    ({}, (8, 1, 0)),                                                  # the cpu profile: one micro-batch
    ({"per_device_train_batch_size": 2, "gradient_accumulation_steps": 4}, (8, 4, 0)),  # profile memory
    ({"beta": 0.04}, (8, 1, 1)),                                      # a reference model's forward
    ({"beta": 0.04, "num_iterations": 2}, (8, 1, 2)),                 # and old log-probabilities
]


@pytest.mark.parametrize("changes,expected", PLANS)
def test_plan_reads_the_steps_shape(changes, expected):
    plan = plan_for({**BASE, **changes}, prompt_len=80)
    assert (plan.sequences, plan.micro_steps, plan.extra_forwards) == expected


def test_prediction_scales_generation_by_tokens_and_training_by_sequence_tokens():
    rates = Rates(prefill_s=1.0, decode_s_per_token=0.1, train_s_per_token=0.01, forward_s_per_token=0.003, probe_s=0)
    plan = StepPlan(sequences=8, micro_batch=8, prompt_len=72, completion_len=128, extra_forwards=1, max_steps=30)
    seconds = predict(rates, plan)
    assert seconds["generation"] == pytest.approx(1.0 + 128 * 0.1)
    assert seconds["training"] == pytest.approx(8 * 200 * 0.013)
    check = check_step_time(seconds, plan)
    assert check.status == "info" and "about 35 s per step" in check.detail and "30 steps: 17 min" in check.detail
    long = check_step_time(seconds, StepPlan(8, 8, 72, 128, 1, max_steps=200))
    assert long.status == "warn" and "max_steps" in long.fix  # 200 steps of 35 s: over the hour


def test_measuring_leaves_the_model_as_it_was(tiny_gqa_model):
    model, tok = tiny_gqa_model
    model.eval()
    flags = [p.requires_grad for p in model.parameters()]
    rates = measure_rates(model, tok, StepPlan(4, 4, 12, 8), trainable="full")
    assert rates.decode_s_per_token > 0 and rates.train_s_per_token > 0 and rates.forward_s_per_token > 0
    assert [p.requires_grad for p in model.parameters()] == flags and not model.training
    assert all(p.grad is None for p in model.parameters())


def test_doctor_states_the_seconds_per_step(tiny_gqa_model):
    model, tok = tiny_gqa_model
    cfg = from_dict({"name": "t", "model": {"lora": {"r": 4}}, "rewards": [{"name": "numeric_match"}],
                     "training": {"num_generations": 4, "max_completion_length": 8, "per_device_train_batch_size": 4,
                                  "max_steps": 5}}, validate=False)
    rows = [{"prompt": [{"role": "user", "content": f"what is {i} + {i}?"}], "answer": str(2 * i)} for i in range(4)]
    checks = config_checks(cfg, model, tok, rows, [lambda completions, **kw: [0.0] * len(completions)], [1.0],
                           probe=False, cuda=False)
    (step,) = [c for c in checks if c.name == "step time"]
    assert step.area == "time" and "s per step here" in step.detail and "5 steps:" in step.detail
    assert not hasattr(model, "peft_config")  # the probe's adapter is gone again
