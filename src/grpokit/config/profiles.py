"""Profiles: sets of GRPOConfig defaults layered under the user's `training:` keys.

    cpu      the fastest setting measured to still learn on a CPU (benchmarks/cpu_profile.py):
             base weights held in bfloat16 where the CPU has native bf16 (AVX512-BF16 / AMX)
             with LoRA adapters kept in float32; no gradient checkpointing (RAM is rarely the
             limit on a CPU, recomputation is pure cost). Full fine-tuning keeps float32
             weights with bf16 autocast, because 1e-6 updates vanish in bf16 rounding.
             Measured (benchmarks/results/cpu_profile.json, SmolLM2-135M + LoRA, 2-core
             AVX512-BF16 CPU): 13.3 s/step against 22.4 s/step for TRL's defaults (bf16
             autocast, checkpointing, float32 weights) in the same quiet window, 1.7x; it
             trades memory for it (peak RSS 4.0 GB against 2.1 GB under `memory`).
    memory   8-bit AdamW (bitsandbytes, CUDA only; otherwise a warning and the nearest
             fallback), gradient checkpointing with use_reentrant=False (LoRA input gradients
             enabled by grpokit.training.trainer), small per-device batch plus gradient accumulation.
    vllm     generation through vLLM, colocated on the training GPU or on a server.
    unsloth  Unsloth's patched model (4-bit base + LoRA) and 8-bit AdamW.
    none     TRL's own defaults (plus grpokit's logging and checkpoint cadence).

Under every profile, LoRA through transformers sets ddp_find_unused_parameters=False
(see profile_defaults); the user's `training:` key wins, as for every default here.

GPU-only profiles build their GRPOConfig anywhere (so `--dry-run` and tests work on a
laptop) and fail with a clear error from `check_runtime` when a run actually starts.
"""
from __future__ import annotations

import dataclasses
import warnings
from typing import TYPE_CHECKING, Any

from grpokit import optional
from grpokit.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from grpokit.config.run_config import RunConfig, StageConfig

# grpokit's own defaults, under every profile: log each step (metrics.jsonl is per
# step), checkpoint every 100 steps, no external trackers, our own progress line.
BASE_DEFAULTS: dict[str, Any] = {
    "logging_steps": 1,
    "save_strategy": "steps",
    "save_steps": 100,
    "report_to": "none",
    "disable_tqdm": True,
}


class ProfileWarning(UserWarning):
    """A profile had to fall back from what it would use on better hardware."""


def cpu_has_bf16() -> bool:
    """True where bf16 matmuls run natively (AVX512-BF16 or AMX); elsewhere bf16 is emulated and slow."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            flags = fh.read()
    except OSError:
        import platform

        return platform.machine() == "arm64"  # Apple silicon has native bf16
    return "avx512_bf16" in flags or "amx_bf16" in flags


def _group_batch(n: int, per_device: int) -> int:
    """Gradient accumulation that makes per_device * accumulation a multiple of n."""
    import math

    return n // math.gcd(n, per_device)


def profile_defaults(cfg: RunConfig, user: dict, *, cuda: bool | None = None, bnb: bool | None = None,
                     bf16_cpu: bool | None = None) -> dict:
    """GRPOConfig defaults for cfg.profile, given the user's keys over TRL's defaults (some depend on them).

    `cuda`, `bnb` and `bf16_cpu` describe the hardware; None means detect it here.
    """
    cuda = optional.cuda_available() if cuda is None else cuda
    bf16_cpu = cpu_has_bf16() if bf16_cpu is None else bf16_cpu
    out = dict(BASE_DEFAULTS)
    lora = cfg.model.lora is not None
    if cfg.profile == "cpu":
        dtype = model_dtype(cfg, bf16_cpu=bf16_cpu, cuda=False)
        out.update(
            use_cpu=True,
            # Autocast only helps where the weights stay float32 (full fine-tuning on a bf16 CPU).
            bf16=bf16_cpu and dtype == "float32",
            gradient_checkpointing=False,
            max_completion_length=256,
            dataloader_num_workers=0,
            dataloader_pin_memory=False,
        )
    elif cfg.profile == "memory":
        bnb = optional.available("bitsandbytes") if bnb is None else bnb
        if cuda and bnb:
            optim = "adamw_bnb_8bit"
        else:
            # With LoRA the optimizer state is tiny, so plain AdamW is the nearest match; a full
            # fine-tune needs Adafactor's factored state to stay near 8-bit AdamW's memory.
            optim = "adamw_torch" if lora else "adafactor"
            why = "no CUDA GPU" if not cuda else "bitsandbytes is not installed"
            warnings.warn(f"memory profile: 8-bit AdamW needs a CUDA GPU and bitsandbytes ({why}); using {optim}",
                          ProfileWarning, stacklevel=2)
        n = int(user["num_generations"])
        per_device = int(user.get("per_device_train_batch_size", 2 if n % 2 == 0 else 1))
        out.update(
            optim=optim,
            gradient_checkpointing=True,
            gradient_checkpointing_kwargs={"use_reentrant": False},
            per_device_train_batch_size=per_device,
            gradient_accumulation_steps=_group_batch(n, per_device),
            bf16=cuda or bf16_cpu,
        )
        if not cuda:
            out["use_cpu"] = True
    elif cfg.profile == "vllm":
        out.update(
            use_vllm=True,
            vllm_mode="colocate",
            vllm_gpu_memory_utilization=0.3,
            vllm_server_host="127.0.0.1",
            vllm_server_port=8000,
            bf16=True,
            gradient_checkpointing=True,
            gradient_checkpointing_kwargs={"use_reentrant": False},
        )
    elif cfg.profile == "unsloth":
        out.update(
            bf16=True,
            optim="adamw_8bit",
            # Unsloth applies its own offloaded checkpointing inside get_peft_model.
            gradient_checkpointing=False,
        )
    elif not cuda:
        # TRL's defaults ask for bf16 on a GPU; without one, transformers refuses to start
        # unless told to use the CPU (bf16 then means CPU autocast).
        out["use_cpu"] = True
    if lora and backend(cfg) == "transformers":
        # Under DDP, transformers asks torch to look for parameters without a gradient after
        # every backward whenever the model is a PEFT wrapper. LoRA on a text model puts every
        # adapter in the forward pass, so the search costs a graph traversal per step, finds
        # nothing and prints a warning on each rank. Full fine-tuning keeps transformers' rule
        # (search unless checkpointing): every weight trains there, including weights a step can
        # skip (unrouted MoE experts, a vision tower). Unsloth patches model and trainer itself.
        # Where an adapter does sit on such a module, DDP fails and UNUSED_PARAMETERS_FIX says why.
        out["ddp_find_unused_parameters"] = False
    return out


UNUSED_PARAMETERS_FIX = (
    "some trainable parameters got no gradient in a step (LoRA adapters on MoE experts a batch did not route "
    "to, or on a vision tower text prompts never reach); set training.ddp_find_unused_parameters: true, or "
    "narrow model.lora.target_modules to the language model's layers"
)


def unused_parameters_fix(exc: BaseException) -> str | None:
    """The fix for DDP's error about parameters that produced no loss; None for any other error."""
    return UNUSED_PARAMETERS_FIX if "not used in producing loss" in str(exc) else None


def model_dtype(cfg: RunConfig, *, bf16_cpu: bool | None = None, cuda: bool | None = None) -> str:
    """The dtype to load the base weights in, resolving `model.dtype: auto` by profile."""
    if cfg.model.dtype != "auto":
        return cfg.model.dtype
    if cfg.profile in ("vllm", "unsloth"):
        return "bfloat16"
    cuda = optional.cuda_available() if cuda is None else cuda
    if cfg.profile == "cpu" or (cfg.profile == "memory" and not cuda):
        bf16_cpu = cpu_has_bf16() if bf16_cpu is None else bf16_cpu
        # Frozen base weights lose nothing in bf16; trained full weights would lose small updates.
        return "bfloat16" if bf16_cpu and cfg.model.lora is not None else "float32"
    if cfg.profile == "memory":
        return "bfloat16" if cfg.model.lora is not None else "float32"
    return "float32"


def backend(cfg: RunConfig) -> str:
    if cfg.model.backend != "auto":
        return cfg.model.backend
    return "unsloth" if cfg.profile == "unsloth" else "transformers"


def check_runtime(cfg: RunConfig) -> None:
    """Fail before loading anything when the profile cannot run on this machine."""
    gpu = optional.cuda_available()
    needs = {"vllm": "vllm", "unsloth": "unsloth"}.get(cfg.profile) or ("unsloth" if backend(cfg) == "unsloth" else None)
    if needs and not gpu:
        raise ConfigError(
            f"profile {cfg.profile!r} needs a CUDA GPU and none is visible; use `profile: cpu` on this machine "
            f"(or `profile: memory` on a GPU without {needs})"
        )
    if needs and not optional.available(needs):
        raise ConfigError(f"profile {cfg.profile!r} needs {needs}: {optional._HINTS[needs]}")
    if cfg.model.load_in_4bit and not gpu:
        raise ConfigError("model.load_in_4bit needs a CUDA GPU (bitsandbytes); set it to false on this machine")


# The GRPOConfig fields grpokit itself reads (batch checks, doctor, eval); their defaults are TRL's own,
# read from GRPOConfig, so none of them is written down a second time here.
TRL_READ = ("num_generations", "per_device_train_batch_size", "gradient_accumulation_steps",
            "max_completion_length", "temperature", "beta")


def trl_defaults() -> dict:
    """TRL's GRPOConfig defaults for the fields in TRL_READ."""
    from trl import GRPOConfig

    fields = {f.name: f for f in dataclasses.fields(GRPOConfig)}
    return {name: fields[name].default for name in TRL_READ if name in fields}


def resolve_training(cfg: RunConfig, stage: StageConfig | None = None, **hardware) -> dict:
    """Every training setting a run (stage) uses, in one place and one order:
    TRL's defaults, the profile's, the user's `training:`, the stage's overrides, the data seed.

    `hardware` (cuda=, bnb=, bf16_cpu=) describes a machine other than this one; unset parts are detected.
    """
    user = dict(cfg.training)
    if stage is not None:
        user.update(stage.training)
        if stage.max_steps is not None:
            user["max_steps"] = stage.max_steps
    base = trl_defaults()
    # The profile sizes batches around the group size, so it sees TRL's when the user set none;
    # every other key it reads is the user's alone (its own defaults differ from TRL's).
    profile = profile_defaults(cfg, {"num_generations": base["num_generations"], **user}, **hardware)
    out = {**base, **profile, **user}
    out.setdefault("seed", cfg.data.seed)
    return out


def resolved_config(cfg: RunConfig) -> RunConfig:
    """`cfg` with every training setting it runs with written out (resolve_training):
    the run's under `training:`, and under each stage the settings where that stage differs.
    It loads back and resolves to the same settings."""
    run = resolve_training(cfg)
    stages = []
    for stage in cfg.stages:
        own = resolve_training(cfg, stage)
        stages.append(dataclasses.replace(stage, training={k: v for k, v in own.items() if k not in run or run[k] != v}))
    return dataclasses.replace(cfg, training=run, stages=stages)


def grpo_kwargs(cfg: RunConfig, stage: StageConfig | None = None, *, output_dir: str | None = None, **hardware) -> dict:
    """Every GRPOConfig keyword this run (stage) passes, and nothing is set on the GRPOConfig
    afterwards: resolve_training, each reward's weight (in the order TRL gets the rewards),
    the tool turn limit, and where checkpoints go, under grpokit's names (trl_kwargs: under TRL's)."""
    from grpokit.config.run_config import trained_reward_specs
    from grpokit.tools.config import grpo_fields

    return {
        **resolve_training(cfg, stage, **hardware),
        "reward_weights": [float(spec.weight) for spec in trained_reward_specs(cfg, stage)],
        **grpo_fields(cfg.tools, cfg.environment),
        "output_dir": output_dir or str(checkpoint_root(cfg, stage)),
    }


def trl_kwargs(cfg: RunConfig, stage: StageConfig | None = None, *, output_dir: str | None = None,
               **hardware) -> dict:
    """The keywords GRPOConfig is built with, exactly: grpo_kwargs with the settings transformers renamed
    under their new names (grpokit.models.checkpointing_names). `grpokit train --dry-run` prints this."""
    from trl import GRPOConfig

    from grpokit.models.checkpointing_names import new_names

    return new_names(grpo_kwargs(cfg, stage, output_dir=output_dir, **hardware), GRPOConfig)


def checkpoint_root(cfg: RunConfig, stage: StageConfig | None = None):
    from grpokit.run_directory.layout import CHECKPOINTS

    root = cfg.run_dir / CHECKPOINTS
    return root / stage.name if stage is not None and cfg.stages else root


def build_grpo_config(cfg: RunConfig, stage: StageConfig | None = None, *, output_dir: str | None = None,
                      check_hardware: bool = True, **hardware):
    """The TRL GRPOConfig for a run (or one of its stages).

    With check_hardware=False it builds on any machine: where transformers refuses a GPU
    setting here (bf16/fp16 without a GPU), the config is built without it and the field
    set back afterwards, so --dry-run and tests show exactly what a GPU run would get.
    """
    from trl import GRPOConfig

    kwargs = trl_kwargs(cfg, stage, output_dir=output_dir, **hardware)
    try:
        return GRPOConfig(**kwargs)
    except (TypeError, ValueError) as exc:
        if check_hardware or not (kwargs.get("bf16") or kwargs.get("fp16")):
            raise ConfigError(f"TRL rejected the training settings: {exc}") from exc
    try:
        args = GRPOConfig(**{**kwargs, "bf16": False, "fp16": False})
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"TRL rejected the training settings: {exc}") from exc
    args.bf16, args.fp16 = bool(kwargs.get("bf16")), bool(kwargs.get("fp16"))
    return args
