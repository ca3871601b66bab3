"""The GPU check (benchmarks/gpu_check.py) runs end to end on this CPU with --tiny (`make bench-check`).

A benchmark's own check, kept out of `make test`: it trains five tiny runs and generates with
every model (about 70 CPU-seconds, the suite's single largest item). Run it before borrowing a GPU.

It runs on a GPU only now and then, in a few minutes of borrowed device time; this keeps
it from rotting in between: every run must succeed and write every field, with finite
numbers, and the peak memory (peak RSS here) must grow with the micro-batch.
"""
from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import gpu_check

ROOT = Path(__file__).resolve().parents[2]

TRAIN_FIELDS = {
    "status", "model", "profile", "optim", "dtype", "bf16", "gradient_checkpointing", "per_device_train_batch_size",
    "gradient_accumulation_steps", "num_generations", "completion_tokens", "steps", "step_times_s", "median_step_s",
    "peak_gb", "peak_reserved_gb", "logged_cuda_peak_gb", "estimate_gb", "estimate_parts_gb", "estimate_ratio",
    "max_prompt_tokens", "health_s_per_step", "health_share_of_step", "train_seconds", "seconds",
}
CUDA_ONLY = {"peak_reserved_gb", "logged_cuda_peak_gb"}  # None without a GPU
GENERATION_FIELDS = {"batch", "new_tokens", "prompt_tokens", "seconds", "tokens_per_s", "params_m"}


def _numbers(value):
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _numbers(v)
    elif isinstance(value, list):
        for v in value:
            yield from _numbers(v)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu_check") / "gpu_check.json"
    done = subprocess.run([sys.executable, "-m", "benchmarks.gpu_check", "--tiny", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.mark.slow
def test_every_run_succeeds_with_every_field_finite(tiny):
    assert tiny["mode"] == "tiny" and tiny["benchmark"] == "gpu_check"
    assert tiny["prepare"]["status"] == "ok"
    assert set(tiny["train"]) == {"memory", "lora_bf16", "none", "lora_bf16_large", "smollm_lora_bf16"}
    for name, run in tiny["train"].items():
        assert run["status"] == "ok", (name, run.get("error"))
        assert set(run) >= TRAIN_FIELDS, (name, TRAIN_FIELDS - set(run))
        for key in CUDA_ONLY:
            assert run[key] is None, (name, key)  # no GPU here: no CUDA numbers, not zeros
        assert all(math.isfinite(x) for x in _numbers(run)), name
        assert len(run["step_times_s"]) == run["steps"] == tiny["sizes"]["steps"]
        assert run["peak_gb"] > 0 and run["median_step_s"] > 0 and run["health_s_per_step"] > 0
        # The doctor's CPU estimate was calibrated to about 10% on real runs; far off means it broke.
        assert 0.5 < run["estimate_ratio"] < 2.0, (name, run["estimate_gb"], run["peak_gb"])
    assert set(tiny["generation"]) == set(gpu_check.MODELS)
    for gen in tiny["generation"].values():
        assert set(gen) >= GENERATION_FIELDS
        assert gen["new_tokens"] == tiny["sizes"]["generation_tokens"] and gen["tokens_per_s"] > 0
        assert all(math.isfinite(x) for x in _numbers(gen))


@pytest.mark.slow
def test_records_date_machine_commit_and_what_it_measured(tiny):
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", tiny["date"])
    if (ROOT / ".git").exists():
        assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", tiny["commit"]), tiny["commit"]
    machine = tiny["machine"]
    assert machine["cuda"] is False and machine["gpu"] is None
    assert all(machine["packages"][p] for p in ("torch", "transformers", "trl", "peft"))
    assert tiny["peak_memory_measure"] == "peak RSS (VmHWM)"
    # No CUDA here, so `memory` measured its fallback, and says so; with LoRA that is plain AdamW.
    assert tiny["memory_profile"] == {"bitsandbytes_present": machine["bitsandbytes_importable"],
                                      "optim_measured": "adamw_torch", "fallback_measured": True}


@pytest.mark.slow
def test_runs_use_their_profiles_settings(tiny):
    train = tiny["train"]
    assert train["memory"]["gradient_checkpointing"] is True
    # The memory profile's 2 x accumulation makes up one group of num_generations completions.
    memory = train["memory"]
    assert memory["per_device_train_batch_size"] * memory["gradient_accumulation_steps"] == memory["num_generations"]
    assert train["none"]["optim"] == "adamw_torch_fused"  # TRL's default, untouched by grpokit
    assert train["lora_bf16"]["gradient_checkpointing"] is False
    assert train["smollm_lora_bf16"]["model"] == "smollm2-135m"


@pytest.mark.slow
def test_peak_memory_grows_with_the_micro_batch(tiny):
    small, large = tiny["train"]["lora_bf16"], tiny["train"]["lora_bf16_large"]
    assert large["per_device_train_batch_size"] > small["per_device_train_batch_size"]
    assert large["peak_gb"] > small["peak_gb"]
    # The estimate grows with it too (activations and attention scale with the batch).
    assert large["estimate_gb"] > small["estimate_gb"]
    assert tiny["batch_growth"]["grows"] is True


def test_full_mode_keeps_bf16_and_tiny_mode_uses_float32(tmp_path):
    # Tiny runs float32 (CPUs emulate bf16); the GPU runs must keep the bf16 they are named for.
    full = gpu_check.train_specs(gpu_check.SIZES["full"], tmp_path)
    tiny = gpu_check.train_specs(gpu_check.SIZES["tiny"], tmp_path)
    assert full["lora_bf16"]["model"]["dtype"] == "bfloat16" and full["lora_bf16"]["training"]["bf16"] is True
    assert "model" not in full["none"] and "training" not in full["none"]  # TRL's defaults, as users get them
    assert all(spec["model"]["dtype"] == "float32" and spec["training"]["bf16"] is False for spec in tiny.values())
    assert list(full) == list(tiny)  # the same runs in the same priority order
    assert full["lora_bf16_large"]["training"]["per_device_train_batch_size"] > \
        full["lora_bf16"]["training"]["per_device_train_batch_size"]


def test_a_budget_too_short_still_writes_the_json(tmp_path):
    # A cut-short device call must still leave what it measured, and say why the rest is missing.
    out = tmp_path / "partial.json"
    result = gpu_check.main(["--tiny", "--budget-s", "1", "--out", str(out)])
    written = json.loads(out.read_text())
    assert written == result
    assert written["prepare"]["status"] == "failed" and "timed out" in written["prepare"]["error"]
    assert {run["status"] for run in written["train"].values()} == {"skipped"}


def test_unknown_run_name_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        gpu_check.main(["--tiny", "--only", "memroy", "--out", str(tmp_path / "x.json")])
    assert exc.value.code == 2
    assert "choose from memory" in capsys.readouterr().err


def test_launcher_without_wheels_says_how_to_get_them(tmp_path):
    done = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_check.sh")], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "WHEELS": str(tmp_path / "none")}, timeout=60)
    assert done.returncode == 2
    assert "gpu_check.sh fetch" in done.stderr
