"""run_status.json and the post-mortem: a run killed by the kernel or by MemoryError still says what happened."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from grpokit.cli import app
from grpokit.health.diagnose import diagnose, format_findings
from grpokit.health.run_status import is_out_of_memory, mark_failed, post_mortem, read_status, write_status

TRAIN_STEP = {"step": 3, "loss": 0.0, "reward": 0.5, "reward_std": 0.4, "frac_reward_zero_std": 0.0}


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _running(run_dir, *, pid, peak_gib, limit_gib=3.0, estimate_gib=None, step=3):
    write_status(run_dir, {"state": "running", "pid": pid, "host": socket.gethostname(), "step": step,
                           "max_steps": 10, "started": time.time(), "updated": time.time(),
                           "estimate_gib": estimate_gib,
                           "memory": {"used_gib": peak_gib, "peak_gib": peak_gib, "limit_gib": limit_gib,
                                      "limit": "ulimit -v (RLIMIT_AS)", "counts": "address space"}})
    (run_dir / "metrics.jsonl").write_text(json.dumps(TRAIN_STEP) + "\n")


def test_killed_near_its_memory_limit_is_called_out_of_memory(tmp_path):
    # SIGKILL from the OOM killer leaves no error: "running", process gone, peak at 97% of the limit.
    _running(tmp_path, pid=_dead_pid(), peak_gib=2.9)
    first = diagnose(tmp_path)[0]
    assert first.rule == "out_of_memory" and first.severity == "critical" and first.first_step == 3
    assert "never finished" in first.evidence and "2.90 GiB of a 3.00 GiB limit" in first.evidence
    assert "lora" in first.fix.lower() and "--resume" in first.fix


def test_killed_with_memory_to_spare_is_not_blamed_on_memory(tmp_path):
    # Ctrl-C, a scheduler's time limit: the process is gone, memory was at a third of the limit.
    _running(tmp_path, pid=_dead_pid(), peak_gib=1.0)
    first = diagnose(tmp_path)[0]
    assert first.rule == "run_killed" and "process" in first.title and "dmesg" in first.cause


def test_an_estimate_above_the_limit_points_at_memory(tmp_path):
    # The kill came before the first log measured the peak; the planned peak already did not fit.
    _running(tmp_path, pid=_dead_pid(), peak_gib=0.8, estimate_gib=3.5)
    assert diagnose(tmp_path)[0].rule == "out_of_memory"


def test_a_live_or_finished_run_has_no_post_mortem(tmp_path):
    _running(tmp_path, pid=os.getpid(), peak_gib=2.9)
    assert post_mortem(tmp_path) is None
    status = read_status(tmp_path)
    write_status(tmp_path, {**status, "state": "finished"})
    assert post_mortem(tmp_path) is None
    assert post_mortem(tmp_path / "missing") is None  # runs from before run_status.json existed


def test_memory_error_is_recorded_and_reported(tmp_path):
    _running(tmp_path, pid=os.getpid(), peak_gib=1.2)
    try:
        try:
            raise RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 536870912 bytes")
        except RuntimeError as inner:
            raise ValueError("training run failed") from inner  # as trainer.py wraps it
    except ValueError as exc:
        mark_failed(tmp_path, exc)
    status = read_status(tmp_path)
    assert status["state"] == "failed" and status["out_of_memory"] is True
    first = diagnose(tmp_path)[0]
    assert first.rule == "out_of_memory" and "allocation failed" in first.title
    result = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "Out of memory" in result.output and "fix:" in result.output


def test_other_errors_are_reported_as_they_are(tmp_path):
    _running(tmp_path, pid=os.getpid(), peak_gib=1.2)
    mark_failed(tmp_path, KeyError("answer"))
    first = diagnose(tmp_path)[0]
    assert first.rule == "run_failed" and "KeyError" in first.evidence


@pytest.mark.parametrize("exc, oom", [
    (MemoryError(), True),
    (RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"), True),
    (RuntimeError("[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't allocate memory"), True),
    (RuntimeError("expected scalar type Float but found Half"), False),  # a real bug, not memory
    (ValueError("reward raised"), False),
])
def test_allocation_failures_are_recognised(exc, oom):
    assert is_out_of_memory(exc) is oom


def test_format_lists_the_post_mortem(tmp_path):
    _running(tmp_path, pid=_dead_pid(), peak_gib=2.95)
    text = format_findings(diagnose(tmp_path))
    assert text.startswith("[critical] Killed, most likely out of memory")


# ---- through a real (tiny) training run: the trainer writes the status and records the failure


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from grpokit.models.tiny import make_tiny_model

    return make_tiny_model(tmp_path_factory.mktemp("tiny") / "model", chat_format="roles", vocab_size=0,
                           hidden_size=64, num_attention_heads=4)


def _tiny_config(tiny, out):
    from grpokit.config.run_config import from_dict

    return from_dict({"name": "tiny", "output_dir": str(out), "model": {"name": str(tiny), "lora": {"r": 4}},
                      "data": {"source": "synthetic:arithmetic", "max_samples": 16, "eval_size": 0},
                      "rewards": [{"name": "regex_format"}],
                      "profile": "cpu",
                      "training": {"max_steps": 2, "num_generations": 4, "per_device_train_batch_size": 4,
                                   "max_completion_length": 8, "save_steps": 2, "learning_rate": 0.01}})


@pytest.mark.slow
def test_a_finished_run_says_finished_with_its_memory(tiny, tmp_path):
    from grpokit.training.trainer import train

    run_dir = train(_tiny_config(tiny, tmp_path / "run"))
    status = read_status(run_dir)
    assert status["state"] == "finished" and status["step"] == 2 and status["estimate_gib"] > 0
    assert status["memory"]["limit_gib"] > status["memory"]["peak_gib"] > 0
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert metrics[0]["memory/limit_gib"] >= metrics[0]["memory/peak_gib"] > 0  # what the out_of_memory rule reads
    assert post_mortem(run_dir) is None


@pytest.mark.slow
def test_a_memory_error_in_training_is_recorded_as_out_of_memory(tiny, tmp_path):
    from transformers import TrainerCallback

    from grpokit.errors import RunError
    from grpokit.training.trainer import train

    class AllocationFails(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            raise MemoryError("simulated: the next allocation did not fit")

    with pytest.raises(RunError):
        train(_tiny_config(tiny, tmp_path / "run"), callbacks=[AllocationFails()])
    status = read_status(tmp_path / "run")
    assert status["state"] == "failed" and status["out_of_memory"] is True and "MemoryError" in status["error"]
    first = diagnose(tmp_path / "run")[0]
    assert first.rule == "out_of_memory" and first.severity == "critical"
