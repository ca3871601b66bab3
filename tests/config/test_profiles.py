"""Profiles map to GRPOConfig fields as documented, on any machine (GPU checks wait for run time)."""
from __future__ import annotations

import warnings

import pytest

from grpokit.config import profiles
from grpokit.config.run_config import ModelConfig, RewardSpec, RunConfig
from grpokit.errors import ConfigError


def cfg(profile, lora=True, **training):
    model = ModelConfig() if lora else ModelConfig(lora=None)
    return RunConfig(name="p", model=model, profile=profile, rewards=[RewardSpec("x")], training=training)


# Hardware is passed explicitly so the mapping is tested the same everywhere.
CPU_BF16 = dict(cuda=False, bnb=False, bf16_cpu=True)
CPU_OLD = dict(cuda=False, bnb=False, bf16_cpu=False)
GPU_BNB = dict(cuda=True, bnb=True, bf16_cpu=False)


@pytest.mark.parametrize(
    "run, hw, expected",
    [
        # cpu + LoRA on a bf16 CPU: bf16 weights, no autocast, no recomputation.
        (cfg("cpu"), CPU_BF16, dict(use_cpu=True, bf16=False, gradient_checkpointing=False, max_completion_length=256)),
        # cpu full fine-tune: float32 weights with bf16 autocast (small updates survive).
        (cfg("cpu", lora=False), CPU_BF16, dict(use_cpu=True, bf16=True, gradient_checkpointing=False)),
        # cpu without native bf16: plain float32, emulated bf16 would be slower.
        (cfg("cpu"), CPU_OLD, dict(use_cpu=True, bf16=False)),
        # memory on a GPU with bitsandbytes: 8-bit AdamW, non-reentrant checkpointing, 2 x 4 accumulation.
        (cfg("memory"), GPU_BNB, dict(optim="adamw_bnb_8bit", gradient_checkpointing=True,
                                      gradient_checkpointing_kwargs={"use_reentrant": False},
                                      per_device_train_batch_size=2, gradient_accumulation_steps=4, bf16=True)),
        # memory with 6 generations: accumulation adapts so whole groups still fit (2 x 3).
        (cfg("memory", num_generations=6), GPU_BNB, dict(per_device_train_batch_size=2, gradient_accumulation_steps=3)),
        # memory with an odd group size: per-device batch 1, accumulation = group size.
        (cfg("memory", num_generations=5), GPU_BNB, dict(per_device_train_batch_size=1, gradient_accumulation_steps=5)),
        # vllm: colocated generation, loopback server address for server mode.
        (cfg("vllm"), GPU_BNB, dict(use_vllm=True, vllm_mode="colocate", vllm_gpu_memory_utilization=0.3,
                                    vllm_server_host="127.0.0.1", vllm_server_port=8000, bf16=True)),
        # unsloth: 8-bit AdamW, Unsloth does its own checkpointing.
        (cfg("unsloth"), GPU_BNB, dict(optim="adamw_8bit", gradient_checkpointing=False, bf16=True)),
        # every profile: per-step logs, checkpoints every 100 steps, no trackers.
        (cfg("none"), CPU_OLD, dict(logging_steps=1, save_steps=100, report_to="none")),
        # the user's keys win over the profile's.
        (cfg("cpu", gradient_checkpointing=True, max_completion_length=64), CPU_BF16,
         dict(gradient_checkpointing=True, max_completion_length=64)),
    ],
)
def test_profile_mapping(run, hw, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", profiles.ProfileWarning)
        kwargs = profiles.grpo_kwargs(run, **hw)
    for key, value in expected.items():
        assert kwargs[key] == value, key
    assert kwargs["output_dir"] == "runs/p/checkpoints"


@pytest.mark.parametrize(
    "lora, optim",
    [
        (True, "adamw_torch"),  # LoRA state is tiny: plain AdamW is the nearest behaviour
        (False, "adafactor"),  # full fine-tune: factored state stays near 8-bit AdamW's memory
    ],
)
def test_memory_profile_falls_back_with_a_warning(lora, optim):
    with pytest.warns(profiles.ProfileWarning, match="8-bit AdamW needs a CUDA GPU"):
        kwargs = profiles.grpo_kwargs(cfg("memory", lora=lora), **CPU_BF16)
    assert kwargs["optim"] == optim


@pytest.mark.parametrize(
    "profile, lora, bf16_cpu, dtype",
    [
        ("cpu", True, True, "bfloat16"),  # frozen base in bf16: 2x faster matmuls on AVX512-BF16/AMX
        ("cpu", False, True, "float32"),  # trained weights stay float32
        ("cpu", True, False, "float32"),  # no native bf16: emulation is slower than float32
        ("vllm", True, False, "bfloat16"),  # GPU profiles load bf16
        ("none", True, True, "float32"),  # TRL/transformers default
    ],
)
def test_model_dtype(profile, lora, bf16_cpu, dtype):
    assert profiles.model_dtype(cfg(profile, lora=lora), bf16_cpu=bf16_cpu, cuda=False) == dtype


@pytest.mark.parametrize("profile", ["vllm", "unsloth", "memory", "cpu", "none"])
def test_grpo_config_builds_on_this_machine(profile):
    # --dry-run must work anywhere, GPU profiles included.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        args = profiles.build_grpo_config(cfg(profile, num_generations=4, per_device_train_batch_size=4),
                                          check_hardware=False, cuda=False, bnb=False, bf16_cpu=True)
    assert args.num_generations == 4 and args.logging_steps == 1


@pytest.mark.parametrize("profile", ["vllm", "unsloth"])
def test_gpu_profiles_fail_at_run_time_without_gpu(profile, monkeypatch):
    monkeypatch.setattr(profiles.optional, "cuda_available", lambda: False)
    with pytest.raises(ConfigError, match="needs a CUDA GPU.*profile: cpu"):
        profiles.check_runtime(cfg(profile))


def test_gpu_profile_without_package(monkeypatch):
    monkeypatch.setattr(profiles.optional, "cuda_available", lambda: True)
    monkeypatch.setattr(profiles.optional, "available", lambda name: False)
    with pytest.raises(ConfigError, match="pip install 'grpokit\\[vllm\\]'"):
        profiles.check_runtime(cfg("vllm"))


def test_stage_overrides_layer_last():
    from grpokit.config.run_config import StageConfig

    run = cfg("cpu", max_completion_length=64)
    stage = StageConfig(name="s", max_steps=7, training={"max_completion_length": 32})
    run.stages = [stage]
    kwargs = profiles.grpo_kwargs(run, stage, **CPU_BF16)
    assert kwargs["max_steps"] == 7 and kwargs["max_completion_length"] == 32
    assert kwargs["output_dir"] == "runs/p/checkpoints/s"


def _backend(run, backend):
    run.model.backend = backend
    return run


@pytest.mark.parametrize(
    "run, expected",
    [
        # LoRA through transformers, under every profile: every adapter gets a gradient, so no search.
        (cfg("cpu"), False),
        (cfg("memory"), False),
        (cfg("vllm"), False),
        (cfg("none"), False),
        # Full fine-tuning: transformers decides (search unless checkpointing); unrouted experts stay safe.
        (cfg("cpu", lora=False), None),
        (cfg("memory", lora=False), None),
        # Unsloth's model, under its profile or picked by hand: left to Unsloth.
        (cfg("unsloth"), None),
        (_backend(cfg("memory"), "unsloth"), None),
        # The user's key wins either way.
        (cfg("cpu", ddp_find_unused_parameters=True), True),
        (cfg("cpu", lora=False, ddp_find_unused_parameters=False), False),
    ],
)
def test_ddp_find_unused_parameters(run, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", profiles.ProfileWarning)
        kwargs = profiles.grpo_kwargs(run, **CPU_BF16)
        args = profiles.build_grpo_config(run, check_hardware=False, **CPU_BF16)
    assert kwargs.get("ddp_find_unused_parameters") is expected
    assert args.ddp_find_unused_parameters is expected  # what the Trainer hands to DDP


def test_unused_parameters_error_names_the_key():
    # torch's DDP error when a trainable parameter produced no loss (the default above, on an MoE model).
    ddp = RuntimeError("Expected to have finished reduction in the prior iteration before starting a new one. "
                       "This error indicates that your module has parameters that were not used in producing loss.")
    assert "training.ddp_find_unused_parameters: true" in profiles.unused_parameters_fix(ddp)
    assert profiles.unused_parameters_fix(RuntimeError("CUDA out of memory")) is None


def test_resolve_training_layers_trl_profile_user_stage_seed():
    from grpokit.config.run_config import StageConfig

    run = cfg("memory", num_generations=6)
    run.data.seed = 11
    stage = StageConfig(name="s", max_steps=3, training={"temperature": 0.7})
    run.stages = [stage]
    out = profiles.resolve_training(run, stage, **GPU_BNB)
    # TRL's default where nobody set one; the profile's reading the user's group size; stage and seed last.
    assert out["beta"] == profiles.trl_defaults()["beta"]
    assert out["gradient_accumulation_steps"] == 3 and out["num_generations"] == 6
    assert out["temperature"] == 0.7 and out["max_steps"] == 3 and out["seed"] == 11
    # num_generations has one default, TRL's, read from GRPOConfig.
    assert profiles.resolve_training(cfg("none"), **CPU_OLD)["num_generations"] == profiles.trl_defaults()["num_generations"]


def test_run_directory_config_records_resolved_settings_and_loads_back():
    # config.yaml holds every setting used; loading it back resolves to the same settings, stage by stage.
    from grpokit.config.run_config import StageConfig, dump_yaml, from_dict
    import yaml

    from grpokit.config.profiles import resolved_config

    run = cfg("cpu", max_completion_length=64)
    run.stages = [StageConfig(name="a", max_steps=2), StageConfig(name="b", training={"temperature": 0.5})]
    written = from_dict(yaml.safe_load(dump_yaml(resolved_config(run))), validate=False)
    assert written.training["use_cpu"] is True and "num_generations" in written.training
    assert written.stages[1].training == {"temperature": 0.5}
    for before, after in zip(run.stages, written.stages):
        assert profiles.resolve_training(written, after) == profiles.resolve_training(run, before)
