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
