"""doctor's planned peak against measured peaks: the settings it reads, and the GPU check's runs (held out)."""
import pytest

from grpokit.health.doctor import checkpointing


# Table: resolved training settings -> does training recompute activations?
CASES = [
    ({}, True),                                           # unset: GRPOConfig's default (True) -- was read as off
    ({"gradient_checkpointing": False}, False),           # the cpu profile turns it off
    ({"gradient_checkpointing": True}, True),
    ({"activation_checkpointing": False, "gradient_checkpointing": True}, False),  # the new name wins
    ({"activation_checkpointing": None, "gradient_checkpointing": True}, True),    # a None is not a setting
]


@pytest.mark.parametrize("training,expected", CASES)
def test_checkpointing_reads_trls_default_when_unset(training, expected):
    assert checkpointing(training) is expected


def test_gpu_check_runs_are_within_15_percent():
    # H200, Qwen2.5-1.5B LoRA, 8 x 256 tokens (benchmarks/results/gpu_check.json): doctor planned 1.42x,
    # 1.09x and 3.96x the measured peak; TRL's defaults were read as no checkpointing and fp32 activations.
    from benchmarks.memory_estimate import gpu_held_out

    rows = {r["run"]: r["ratio"] for r in gpu_held_out()}
    assert set(rows) == {"memory", "lora_bf16", "none"}
    for run, ratio in rows.items():
        assert 0.85 <= ratio <= 1.15, (run, ratio)


def test_bf16_base_with_fp32_adapters_counts_the_adapters_float32_inputs():
    # The cpu profile on a bf16 CPU: bf16 weights, fp32 LoRA, no autocast. PEFT casts each adapted layer's
    # input to float32 and autograd keeps it: the zoo's OOM case peaked at 2.37 GiB against 1.39 planned.
    from grpokit.health.doctor_checks import ModelShape, estimate_memory

    linears = [(f"layers.{i}.{n}", 64, 64) for i in range(2) for n in ("q_proj", "k_proj", "v_proj", "o_proj")]
    shape = ModelShape(n_params=100_000, hidden=64, layers=2, vocab=100, kv_dim=64, linears=linears)
    common = dict(lora_r=4, per_device_batch=4, prompt_len=16, completion_len=16)
    plain = estimate_memory(shape, weight_bytes=2.0, autocast=True, **common)["activations"]
    cast = estimate_memory(shape, weight_bytes=2.0, autocast=False, **common)["activations"]
    tokens = 4 * 32 * 2
    assert cast - plain == pytest.approx(tokens * 4 * 64 * 4.0 * 1.4)
    # float32 weights: the adapters' inputs are already float32, no copy.
    assert estimate_memory(shape, weight_bytes=4.0, autocast=False, **common)["activations"] == \
        estimate_memory(shape, weight_bytes=4.0, autocast=True, act_bytes=2.0, **common)["activations"] * 1
