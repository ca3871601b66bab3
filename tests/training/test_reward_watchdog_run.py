"""A real run with a plugin reward that sleeps forever on one row: the step finishes, the row's batch
scores None for that reward, the hang is counted in metrics.jsonl and raises an alert."""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

NEVER = threading.Event()


def hangs_on_one_row(completions, prompts, **kwargs):
    """1 for every completion, except that it never returns on a batch holding the HANG row."""
    if any("HANG" in str(p) for p in prompts):
        NEVER.wait()
    return [1.0] * len(completions)


def test_a_reward_that_hangs_on_one_row_does_not_stop_the_run(tmp_path):
    pytest.importorskip("trl")
    from grpokit.models.tiny import make_tiny_model
    from grpokit.config.run_config import from_dict
    from grpokit.rewards import names, register
    from grpokit.training.trainer import train

    if "hangs_on_one_row" not in names():
        register("hangs_on_one_row")(hangs_on_one_row)
    model = make_tiny_model(tmp_path / "model", chat_format="roles", vocab_size=0, hidden_size=32)
    rows = tmp_path / "rows.jsonl"
    questions = ["what is one", "what is two", "HANG on this one", "what is four"]
    rows.write_text("".join(json.dumps({"question": q, "answer": str(i)}) + "\n" for i, q in enumerate(questions)))
    started = time.perf_counter()
    run_dir = train(from_dict({
        "name": "hang", "output_dir": str(tmp_path / "run"), "model": {"name": str(model), "lora": {"r": 4}},
        "data": {"source": str(rows), "eval_size": 0, "system_prompt": None},
        "rewards": [{"name": "hangs_on_one_row", "timeout": 1}, {"name": "numeric_match"}],
        "profile": "cpu",
        # Two prompts per step, two steps: one pass over the four rows, so the HANG row comes exactly once.
        "training": {"max_steps": 2, "num_generations": 4, "per_device_train_batch_size": 8,
                     "max_completion_length": 4, "save_steps": 100}}))
    assert time.perf_counter() - started < 600
    metrics = [json.loads(line) for line in Path(run_dir, "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2]  # both steps trained
    hung = [m for m in metrics if m.get("rewards/hangs_on_one_row/timeouts")]
    assert len(hung) == 1 and hung[0]["rewards/hangs_on_one_row/error_frac"] == 1.0
    other = next(m for m in metrics if m is not hung[0])
    assert other["rewards/hangs_on_one_row/mean"] == 1.0 and other["rewards/hangs_on_one_row/error_frac"] == 0.0
    alerts = [json.loads(line) for line in Path(run_dir, "alerts.jsonl").read_text().splitlines()]
    assert any(a["rule"] == "reward_hung" and "hung" in a["message"] for a in alerts), alerts
    samples = [json.loads(line) for line in Path(run_dir, "completions.jsonl").read_text().splitlines()]
    assert any(s["scores"]["hangs_on_one_row"] is None for s in samples)  # recorded as unscored, not 0
