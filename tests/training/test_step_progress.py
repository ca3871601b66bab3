"""A long step says what it is doing while it runs (it printed nothing for 3.5 minutes)."""
from __future__ import annotations

import io
import re
import time
from types import SimpleNamespace

import pytest
from rich.console import Console

from grpokit.config.run_config import from_dict
from grpokit.rewards import names, register
from grpokit.training.progress import StepProgress


def slow_reward(completions, **kwargs):
    time.sleep(1.5)  # a slow judge: the step spends its time scoring
    return [float(len(str(c)) % 3) for c in completions]


if "slow_reward" not in names():
    register("slow_reward")(slow_reward)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_slow_step_prints_its_phase_while_it_runs(tiny_roles_model_dir, tmp_path):
    from grpokit.training.trainer import train

    out = io.StringIO()
    cfg = from_dict({
        "name": "slow", "output_dir": str(tmp_path / "run"),
        "model": {"name": str(tiny_roles_model_dir), "lora": {"r": 4}},
        "data": {"source": "synthetic:arithmetic", "max_samples": 16, "eval_size": 0},
        "rewards": [{"name": "slow_reward"}], "profile": "cpu",
        "training": {"max_steps": 1, "num_generations": 4, "per_device_train_batch_size": 4,
                     "max_completion_length": 8, "save_steps": 100, "learning_rate": 0.01}})
    train(cfg, console=Console(file=out, width=200, soft_wrap=True), progress_every=0.3)
    text = out.getvalue()
    scoring = [line for line in text.splitlines() if re.match(r"step 1/1: scoring 4 completions with the rewards", line)]
    assert scoring, text
    # Printed while the step ran, before the step's own line.
    assert text.index(scoring[0]) < text.index("step 1/1  reward")


def _state(step, max_steps=10):
    return SimpleNamespace(global_step=step, max_steps=max_steps)


# Table: (seconds since the last line, in a step?) -> a line is due?
CASES = [
    (0.0, True, False),   # just printed (or the step just began)
    (9.9, True, False),   # under the interval
    (10.0, True, True),   # the interval reached
    (60.0, False, False), # between steps nothing is printed, however long
]


@pytest.mark.parametrize("elapsed,in_step,due", CASES)
def test_a_line_is_due_only_inside_a_step_after_the_interval(monkeypatch, elapsed, in_step, due):
    clock = [1000.0]
    monkeypatch.setattr("grpokit.training.progress.time.monotonic", lambda: clock[0])
    progress = StepProgress(console=None, every=10)
    progress.on_step_begin(None, _state(2), None)
    progress.phase("generating 8 completions")
    if not in_step:
        progress.on_step_end(None, _state(3), None)
    text = progress.line(now=clock[0] + elapsed)
    assert (text is not None) == due
    if due:
        assert text.startswith("step 3/10: generating 8 completions (10 s; 10 s into the step)")


def test_the_interval_must_be_positive():
    with pytest.raises(ValueError, match="> 0 seconds"):
        StepProgress(console=None, every=0)
