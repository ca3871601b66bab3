"""The run config: dataclasses that the YAML file mirrors field by field.

`load_config(path, overrides)` reads YAML, applies `--set a.b=c` overrides (values
parsed as YAML scalars), builds the dataclasses and validates everything that can
be checked before a model loads. Every problem raises `ConfigError` with a
message that says what to change, so `grpokit train` exits 2 instead of failing
an hour into a run.
"""
from __future__ import annotations

import dataclasses
import difflib
import math
import os
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from grpokit.config import safe_yaml
from grpokit.data import DataConfig
from grpokit.errors import ConfigError
from grpokit.config.eval_section import EvalConfig, check_eval
from grpokit.config.plugins import load_imports, resolve_paths
from grpokit.config.profiles import resolve_training
from grpokit.tools.config import EnvironmentConfig, ToolSpec, check_tools
from grpokit.config.training_fields import check_training_values

# LoRA ranks above this exceed the hidden size of any model grpokit can train on one node.
MAX_LORA_RANK = 4096

PROFILES = ("cpu", "memory", "vllm", "unsloth", "none")
BACKENDS = ("auto", "transformers", "unsloth")
DTYPES = ("auto", "float32", "bfloat16", "float16")


@dataclass
class LoraConfig:
    """LoRA adapter settings (see grpokit.models.loading for rank guidance)."""

    r: int = 16
    alpha: int | None = None  # None means 2 * r, the usual scaling
    # 0, unlike PEFT's examples: with dropout every adapted layer keeps its own masked copy of
    # its input for backward (measured: peak 9.2 GB vs 7.6 GB for the CPU demo, +21%), and the
    # completions are sampled from a randomly thinned policy rather than the one being trained.
    dropout: float = 0.0
    target_modules: str | list[str] = "all-linear"

    def __post_init__(self) -> None:
        if self.alpha is None:
            self.alpha = 2 * self.r


@dataclass
class ModelConfig:
    name: str = "bundled:smollm2-135m-instruct"
    lora: LoraConfig | None = field(default_factory=LoraConfig)
    dtype: str = "auto"  # auto lets the profile choose (cpu: bfloat16 where the CPU has it)
    backend: str = "auto"  # auto: unsloth under the unsloth profile, else transformers
    load_in_4bit: bool = False  # Unsloth / bitsandbytes 4-bit base weights (GPU only)
    max_seq_length: int = 2048  # Unsloth's context budget
    trust_remote_code: bool = False


@dataclass
class RewardSpec:
    name: str = ""
    weight: float = 1.0
    params: dict[str, Any] = field(default_factory=dict)
    timeout: float | None = None  # seconds per batch before the watchdog gives up (None: grpokit.rewards.watchdog's default)
    isolate: bool = False  # run it in a process of its own, killed at its timeout (grpokit.rewards.watchdog)


@dataclass
class StageConfig:
    """One stage of a multi-stage run; starts from the previous stage's weights."""

    name: str = ""
    max_steps: int | None = None
    rewards: list[RewardSpec] | None = None  # None keeps the run's rewards
    training: dict[str, Any] = field(default_factory=dict)  # GRPOConfig overrides for this stage


@dataclass
class RunConfig:
    name: str = "run"
    description: str = ""  # what the run trains for; `grpokit recipes` shows it
    imports: list[str] = field(default_factory=list)  # modules / .py files that register custom rewards
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    rewards: list[RewardSpec] = field(default_factory=list)
    profile: str = "none"
    training: dict[str, Any] = field(default_factory=dict)
    stages: list[StageConfig] = field(default_factory=list)
    health: dict[str, Any] = field(default_factory=dict)
    eval: EvalConfig = field(default_factory=EvalConfig)  # held-out accuracy during training
    tools: list[ToolSpec] = field(default_factory=list)  # tools the model may call (grpokit.tools)
    environment: EnvironmentConfig = field(default_factory=EnvironmentConfig)  # turn limit, chat template
    output_dir: str | None = None  # None means runs/<name>

    @property
    def run_dir(self) -> Path:
        return Path(self.output_dir or os.path.join("runs", self.name))

    def rewards_for(self, stage: StageConfig | None = None) -> list[RewardSpec]:
        """The rewards a stage trains with: its own `rewards:`, else the run's.

        The one rule for which rewards apply; evaluation asks for the last stage's
        (`final_stage()`), since that is what the finished model was trained on.
        """
        return list(stage.rewards) if stage is not None and stage.rewards is not None else list(self.rewards)

    def final_stage(self) -> StageConfig | None:
        return self.stages[-1] if self.stages else None


# --------------------------------------------------------------------------- YAML -> dataclasses


def _unknown_key(key: str, valid: list[str], where: str, listed: int = 30) -> ConfigError:
    """Names the nearest key; lists the valid ones only where that helps: all of a short list, or, of a
    long one (TRL's ~200 GRPOConfig fields), those that start as the key does. A did-you-mean followed by
    200 names on one line buried the answer."""
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.5)
    if close:
        return ConfigError(f"unknown key {key!r} in {where}: did you mean {close[0]!r}?")
    if len(valid) <= listed:
        return ConfigError(f"unknown key {key!r} in {where}: valid keys: {', '.join(sorted(valid))}")
    alike = sorted(v for v in valid if v[:2] == key[:2])[:12]
    some = f"; those starting {key[:2]!r}: {', '.join(alike)}" if alike else ""
    return ConfigError(f"unknown key {key!r} in {where}: none of its {len(valid)} keys is close{some}")


def _strip_optional(tp):
    """For `X | None` return (X, True); otherwise (tp, False)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) < len(typing.get_args(tp)):
            return (args[0] if len(args) == 1 else typing.Union[tuple(args)]), True
    return tp, False


def _convert(value: Any, tp: Any, where: str) -> Any:
    tp, optional = _strip_optional(tp)
    if value is None:
        if optional:
            return None
        if dataclasses.is_dataclass(tp):
            return tp()
        raise ConfigError(f"{where} may not be empty (null); give a value or remove the key for the default")
    if dataclasses.is_dataclass(tp):
        return _build(tp, value, where)
    origin = typing.get_origin(tp)
    if origin is list:
        (item_tp,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise ConfigError(f"{where} must be a list, got {type(value).__name__}: {value!r}")
        return [_convert(v, item_tp, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be a mapping (key: value), got {type(value).__name__}: {value!r}")
        return dict(value)
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if tp is float and isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{where} is {value!r}: give a finite number")
    if tp in (int, float, bool, str) and not isinstance(value, tp) or (tp is int and isinstance(value, bool)):
        raise ConfigError(f"{where} must be {tp.__name__}, got {type(value).__name__}: {value!r}")
    return value  # unions such as `float | int` or `str | list[str]` pass through


def _build(cls, raw: Any, where: str):
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a mapping (key: value), got {type(raw).__name__}: {raw!r}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    kwargs = {}
    for key, value in raw.items():
        if key not in names:
            raise _unknown_key(str(key), names, where)
        kwargs[key] = _convert(value, hints[key], f"{where}.{key}" if where != "config" else key)
    try:
        return cls(**kwargs)
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from exc


# --------------------------------------------------------------------------- overrides


def _parse_override(text: str) -> tuple[list[str], Any]:
    if "=" not in text:
        raise ConfigError(f"--set expects key=value (for example training.max_steps=10), got {text!r}")
    key, raw = text.split("=", 1)
    path = [p for p in key.strip().split(".")]
    if not all(path):
        raise ConfigError(f"--set key {key!r} has an empty part; write it like model.lora.r=8")
    value = safe_yaml.load(raw, f"--set {text!r}") if raw.strip() else ""
    return path, _numbers(value)


def apply_overrides(raw: dict, overrides: list[str]) -> dict:
    """Apply `a.b=c` overrides to a raw YAML mapping; list items by index (rewards.0.weight=2)."""
    for text in overrides or []:
        path, value = _parse_override(text)
        node: Any = raw
        for depth, part in enumerate(path[:-1]):
            if isinstance(node, list):
                node = node[_index(part, node, path)]
                continue
            if node.get(part) is None:
                node[part] = {}
            node = node[part]
            if not isinstance(node, (dict, list)):
                where = ".".join(path[: depth + 1])
                raise ConfigError(f"--set {text!r}: {where} is a value, not a mapping")
        last = path[-1]
        if isinstance(node, list):
            node[_index(last, node, path)] = value
        else:
            node[last] = value
    return raw


def _index(part: str, node: list, path: list[str]) -> int:
    if not part.lstrip("-").isdigit() or not -len(node) <= int(part) < len(node):
        raise ConfigError(f"--set {'.'.join(path)}: {part!r} is not an index of a list with {len(node)} items")
    return int(part)


# --------------------------------------------------------------------------- loading


_SCI = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+$")


def _numbers(value: Any) -> Any:
    """YAML 1.1 reads `1e-5` (no dot) as a string; every learning rate deserves a float."""
    if isinstance(value, str) and _SCI.match(value.strip()):
        return float(value)
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return value


def read_yaml(path: str | os.PathLike) -> dict:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file {str(p)!r} not found; give the path to a YAML recipe (see configs/)")
    if p.stat().st_size > safe_yaml.MAX_BYTES:
        raise ConfigError(f"{p} is {p.stat().st_size} bytes; a config is at most {safe_yaml.MAX_BYTES} (is this the right file?)")
    raw = safe_yaml.load(p.read_bytes(), str(p))
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{p} must hold a mapping at the top level (name:, model:, data: ...), got {type(raw).__name__}")
    return _numbers(raw)


def from_dict(raw: dict, *, validate: bool = True, check_data: bool = True) -> RunConfig:
    cfg = _build(RunConfig, raw, "config")
    if validate:
        validate_config(cfg, check_data=check_data)
    return cfg


def load_config(path: str | os.PathLike, overrides: list[str] | None = None, *, validate: bool = True,
                check_data: bool = True) -> RunConfig:
    """Read, override, build and validate a run config. Raises ConfigError."""
    raw = apply_overrides(read_yaml(path), list(overrides or []))
    _resolve_relative_data(raw, Path(path).resolve().parent)
    if isinstance(raw.get("imports"), list):
        raw["imports"] = resolve_paths(raw["imports"], Path(path).resolve().parent)
    return from_dict(raw, validate=validate, check_data=check_data)


def _resolve_relative_data(raw: dict, config_dir: Path) -> None:
    """A relative data file that is not under the working directory is looked up beside the config."""
    data = raw.get("data")
    source = data.get("source") if isinstance(data, dict) else None
    if not isinstance(source, str) or ":" in source.split("/")[0] or Path(source).is_absolute():
        return  # synthetic:..., hf:..., file:... and absolute paths are left alone
    if not Path(source).exists():
        for base in (config_dir, config_dir.parent):
            if (base / source).exists():
                data["source"] = str(base / source)
                return


def to_dict(cfg: RunConfig) -> dict:
    """The fully resolved config (every default filled), as plain YAML-able data."""
    out = dataclasses.asdict(cfg)
    out["output_dir"] = str(cfg.run_dir)
    return out


def dump_yaml(cfg: RunConfig) -> str:
    return yaml.safe_dump(to_dict(cfg), sort_keys=False, allow_unicode=True)


# --------------------------------------------------------------------------- validation


def grpo_field_names() -> list[str]:
    from trl import GRPOConfig

    return [f.name for f in dataclasses.fields(GRPOConfig) if f.init]


def world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1") or 1)


def _check_training_keys(training: dict, where: str) -> None:
    valid = grpo_field_names()
    for key in training:
        if key not in valid:
            raise _unknown_key(str(key), valid, where + " (keys are TRL GRPOConfig fields)")
    if "output_dir" in training:
        raise ConfigError(f"{where}.output_dir: set the top-level `output_dir:` instead; checkpoints go under it")
    if "reward_weights" in training:
        raise ConfigError(f"{where}.reward_weights: give each reward its `weight:` under rewards: instead; "
                          "the GRPOConfig's reward_weights are built from them")
    check_training_values(training, where)


def check_batch(training: dict, where: str = "training") -> None:
    """GRPO needs whole prompt groups in every generation batch. `training`: resolve_training's settings."""
    check_training_values(training, where)
    n = training["num_generations"]
    if not isinstance(n, int) or n < 2:
        raise ConfigError(
            f"{where}.num_generations is {n!r}: GRPO compares completions of the same prompt, so it needs at least 2 "
            "(4 to 16 is usual)"
        )
    per_device = int(training["per_device_train_batch_size"])
    ws = world_size()
    if training.get("generation_batch_size") is not None:
        gen = int(training["generation_batch_size"])
        what = f"generation_batch_size ({gen})"
    else:
        steps = int(training.get("steps_per_generation") or training["gradient_accumulation_steps"])
        gen = per_device * ws * steps
        label = "steps_per_generation" if training.get("steps_per_generation") else "gradient_accumulation_steps"
        what = f"the generation batch per_device_train_batch_size ({per_device}) x {label} ({steps}) x processes ({ws}) = {gen}"
    if gen % n:
        divisors = [d for d in range(2, gen + 1) if gen % d == 0]
        step = n // math.gcd(n, ws * int(training["gradient_accumulation_steps"]))
        batches = [step * k for k in range(1, 5)]
        raise ConfigError(
            f"{where}: {what} is not divisible by num_generations ({n}); every prompt needs all its completions in "
            f"one batch. Set num_generations to one of {divisors or '[none: raise the batch]'}, or "
            f"per_device_train_batch_size to one of {batches}"
        )


def _check_rewards(specs: list[RewardSpec], where: str, answer_format=None) -> None:
    from grpokit.rewards.reward_set import check_specs

    try:
        check_specs(specs, where, answer_format)  # names and parameters only: nothing is built, no worker starts
    except ValueError as exc:  # RewardConfigError is a ValueError
        raise ConfigError(str(exc)) from exc


def trained_reward_specs(cfg: RunConfig, stage: StageConfig | None = None) -> list[RewardSpec]:
    """What a stage trains with, in the order TRL gets it: `cfg.rewards_for(stage)`, and in a run with
    tools the tool diagnostics at weight 0. The one list both the RewardSet and GRPOConfig's
    reward_weights are built from."""
    specs = list(cfg.rewards_for(stage))
    if cfg.tools:
        # Tool runs log the tool diagnostics always (weight 0), for the health rules and the report.
        from grpokit.tools.config import DIAGNOSTIC_REWARDS

        specs += [RewardSpec(name=n, weight=0.0) for n in DIAGNOSTIC_REWARDS if n not in {s.name for s in specs}]
    return specs


def build_reward_set(cfg: RunConfig, stage: StageConfig | None = None):
    """The stage's RewardSet (`trained_reward_specs`), built; a bad parameter value is a ConfigError."""
    from grpokit.rewards.reward_set import RewardSet

    where = "rewards" if stage is None or stage.rewards is None else f"stages[{stage.name}].rewards"
    specs = trained_reward_specs(cfg, stage)
    try:
        rewards = RewardSet.from_specs(specs, where, answer_format=cfg.data.answer_format)
    except ValueError as exc:  # RewardConfigError is a ValueError
        raise ConfigError(str(exc)) from exc
    if cfg.tools:
        # Completions are trajectories: rewards that do not read the trajectory score the final answer only.
        from grpokit.rewards.tool_use import final_answer_only

        rewards = rewards.replace_funcs([final_answer_only(f) for f in rewards.funcs])
    return rewards


def _check_model(model: ModelConfig) -> None:
    if model.backend not in BACKENDS:
        raise _unknown_value("model.backend", model.backend, BACKENDS)
    if model.dtype not in DTYPES:
        raise _unknown_value("model.dtype", model.dtype, DTYPES)
    name = model.name
    # An HF id is owner/name; anything with more parts, a leading ./ / ~, or .gguf is a local path.
    looks_local = name.startswith((".", "/", "~")) or name.endswith(".gguf") or name.count("/") >= 2
    if name.startswith("bundled:"):
        from grpokit.bundled import BUNDLED

        if name not in BUNDLED:
            raise _unknown_value("model.name", name, tuple(BUNDLED))
    elif looks_local and not Path(name).expanduser().exists():
        raise ConfigError(
            f"model.name {name!r} looks like a local path but does not exist; give an existing directory or .gguf "
            "file, a Hugging Face id such as Qwen/Qwen2.5-1.5B-Instruct, or bundled:smollm2-135m-instruct"
        )
    if not 1 <= model.max_seq_length <= 10_000_000:
        raise ConfigError(f"model.max_seq_length must be a positive token count (e.g. 2048), got {model.max_seq_length}")
    if model.lora is not None:
        if not 1 <= model.lora.r <= MAX_LORA_RANK:
            raise ConfigError(f"model.lora.r must be a rank from 1 to {MAX_LORA_RANK} (8-64 is usual), got {model.lora.r}")
        alpha = model.lora.alpha
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha <= 1e6:
            raise ConfigError(f"model.lora.alpha must be a positive number (2 x r is usual), got {alpha!r}")
        if not 0 <= model.lora.dropout < 1:
            raise ConfigError(f"model.lora.dropout must be in [0, 1), got {model.lora.dropout}")


def _unknown_value(where: str, value: Any, valid: tuple) -> ConfigError:
    close = difflib.get_close_matches(str(value), [str(v) for v in valid], n=1, cutoff=0.5)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return ConfigError(f"{where} is {value!r}: {hint}choose one of {', '.join(map(str, valid))}")


def _check_health(health: dict) -> None:
    """`health:` (grpokit.config.health_section): the thresholds of the live health rules."""
    from grpokit.config.health_section import HealthConfig

    try:
        HealthConfig.from_dict(health)
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"health: {exc}") from exc


def validate_config(cfg: RunConfig, *, check_data: bool = True) -> None:
    """Everything that can be checked without loading a model; raises ConfigError."""
    if not cfg.name or "/" in cfg.name or cfg.name in (".", ".."):
        raise ConfigError(f"name {cfg.name!r} must be a plain run name (it names runs/<name>/)")
    if cfg.profile not in PROFILES:
        raise _unknown_value("profile", cfg.profile, PROFILES)
    _check_model(cfg.model)
    _check_training_keys(cfg.training, "training")
    load_imports(cfg.imports)  # custom rewards register themselves before their names are checked
    if not cfg.rewards and not all(s.rewards for s in cfg.stages or [StageConfig()]):
        raise ConfigError("rewards: is empty; list at least one, e.g. rewards: [{name: numeric_match}] "
                          "(`grpokit rewards list` shows them)")
    _check_rewards(cfg.rewards, "rewards", cfg.data.answer_format)
    seen = set()
    for i, stage in enumerate(cfg.stages):
        where = f"stages[{i}]"
        if not stage.name or "/" in stage.name:
            raise ConfigError(f"{where} needs a plain name (it names the stage's checkpoint folder)")
        if stage.name in seen:
            raise ConfigError(f"{where}: stage name {stage.name!r} is used twice; give each stage its own name")
        seen.add(stage.name)
        if stage.max_steps is not None and stage.max_steps < 1:
            raise ConfigError(f"{where}.max_steps must be at least 1, got {stage.max_steps}")
        _check_training_keys(stage.training, f"{where}.training")
        if stage.rewards is not None:
            _check_rewards(stage.rewards, f"{where}.rewards", cfg.data.answer_format)
    for stage in cfg.stages or [None]:
        where = "training" if stage is None else f"stages[{stage.name}] training"
        check_batch(resolve_training(cfg, stage), where)
    _check_health(cfg.health)
    check_tools(cfg.tools, cfg.environment, resolve_training(cfg, None), cfg.data.conversational)
    check_eval(cfg.eval, cfg.data.eval_size)
    if check_data:
        from grpokit.config.reward_columns import check_reward_columns
        from grpokit.data import validate_data

        validate_data(cfg.data)
        for stage in cfg.stages or [None]:
            where = "rewards" if stage is None or stage.rewards is None else f"stages[{stage.name}].rewards"
            check_reward_columns(cfg.rewards_for(stage), where, cfg.data)
