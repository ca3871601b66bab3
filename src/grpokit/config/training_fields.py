"""Checks on the numbers under `training:`, before TRL or a profile reads them.

The type of each field comes from TRL's GRPOConfig dataclass at validation time,
so a field added in a new TRL release is covered (type and finiteness) without
an edit here. RANGES adds what the types cannot say: the values that make
sense, each with the usual setting to suggest. TRL itself accepts many of the
values refused here (a negative batch size fails hours later in a dataloader,
a NaN learning rate trains to garbage), which is why they are checked at all.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from dataclasses import dataclass
from typing import Any

from grpokit.errors import ConfigError


@dataclass(frozen=True)
class Range:
    low: float | None = None  # None: no lower bound
    high: float | None = None
    low_open: bool = False  # True: `low` itself is refused (x > low)
    high_open: bool = False
    also: tuple = ()  # special values allowed outside the range (e.g. -1 for "off")
    usual: str = ""  # what to write instead

    def holds(self, x: float) -> bool:
        if x in self.also:
            return True
        if self.low is not None and (x < self.low or (self.low_open and x == self.low)):
            return False
        return self.high is None or not (x > self.high or (self.high_open and x == self.high))

    def text(self) -> str:
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.low_open else '>='} {self.low:g}")
        if self.high is not None:
            parts.append(f"{'<' if self.high_open else '<='} {self.high:g}")
        allowed = " and ".join(parts) or "any finite number"
        if self.also:
            allowed += " (or " + ", ".join(f"{v:g}" for v in self.also) + ")"
        return allowed


_COUNT = Range(low=1, usual="")  # something counted: at least one
_STEPS = Range(low=0, low_open=True, usual="a step count, or a fraction below 1 of the run's steps")
_SHARE = Range(low=0, high=1)
_NONNEG = Range(low=0)

# Our ranges for GRPOConfig fields. Every TRL default must hold (tests/config/test_bad_input.py checks that).
RANGES: dict[str, Range] = {
    "learning_rate": Range(low=0, high=1, low_open=True, usual="1e-6 for full fine-tuning, 1e-5 to 2e-4 with LoRA"),
    "max_steps": Range(low=1, also=(-1,), usual="the number of optimizer steps, e.g. 200 (-1 trains num_train_epochs)"),
    "num_train_epochs": Range(low=0, low_open=True, usual="e.g. 1"),
    "per_device_train_batch_size": Range(low=1, usual="e.g. 8: completions per device per step"),
    "per_device_eval_batch_size": Range(low=1, usual="e.g. 8"),
    "gradient_accumulation_steps": Range(low=1, usual="e.g. 1 to 8"),
    "num_generations": Range(low=2, usual="GRPO compares completions of the same prompt, so it needs at least 2 (4 to 16 is usual)"),
    "num_generations_eval": Range(low=1),
    "generation_batch_size": _COUNT,
    "steps_per_generation": _COUNT,
    "num_iterations": _COUNT,
    "max_completion_length": Range(low=1, usual="the most tokens a completion may have, e.g. 256"),
    "vllm_max_model_length": _COUNT,
    "save_steps": _STEPS,
    "logging_steps": _STEPS,
    "eval_steps": _STEPS,
    "warmup_steps": _NONNEG,
    "save_total_limit": _COUNT,
    "weight_decay": _NONNEG,
    "max_grad_norm": _NONNEG,
    "adam_beta1": Range(low=0, high=1, high_open=True),
    "adam_beta2": Range(low=0, high=1, high_open=True),
    "adam_epsilon": Range(low=0, low_open=True, usual="e.g. 1e-8"),
    "temperature": Range(low=0, low_open=True, usual="e.g. 1.0 (sampling needs a temperature above 0)"),
    "top_p": Range(low=0, high=1, low_open=True),
    "top_k": _NONNEG,
    "min_p": _SHARE,
    "repetition_penalty": Range(low=0, low_open=True),
    "beta": _NONNEG,
    "epsilon": _NONNEG,
    "epsilon_high": _NONNEG,
    "vllm_gpu_memory_utilization": Range(low=0, high=1, low_open=True, usual="e.g. 0.3 colocated, 0.9 on a server"),
    "vllm_tensor_parallel_size": _COUNT,
    "vllm_server_port": Range(low=1, high=65535),
    "vllm_server_timeout": Range(low=0, low_open=True),
    "dataloader_num_workers": _NONNEG,
    "top_entropy_quantile": _SHARE,
}


@functools.lru_cache(maxsize=1)
def field_kinds() -> dict[str, tuple[tuple[type, ...], bool]]:
    """GRPOConfig field -> (the numeric types it takes, whether null is allowed); non-numeric fields left out."""
    from trl import GRPOConfig

    hints = typing.get_type_hints(GRPOConfig)
    kinds = {}
    for f in dataclasses.fields(GRPOConfig):
        if not f.init:
            continue
        tp = hints.get(f.name)
        args = typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType) else (tp,)
        numeric = tuple(a for a in args if a is not type(None))
        # A union with str (a scheduler name or a number) or a list is not a plain number.
        if numeric and all(a in (int, float) for a in numeric):
            kinds[f.name] = (numeric, len(numeric) < len(args))
    return kinds


def check_value(key: str, value: Any, where: str) -> Any:
    """`value` for GRPOConfig field `key`, checked; a whole float for an int field comes back as an int."""
    if key not in field_kinds():
        return value  # not a number field: TRL checks those
    kind, nullable = field_kinds()[key]
    name = f"{where}.{key}"
    rng = RANGES.get(key, Range())
    hint = f"; {rng.usual}" if rng.usual else ""
    if value is None:
        if nullable:
            return None
        raise ConfigError(f"{name} may not be null: give a number ({rng.text()}) or remove the key for TRL's default{hint}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        want = "a whole number" if kind == (int,) else "a number"
        raise ConfigError(f"{name} must be {want} ({rng.text()}), got {type(value).__name__}: {value!r}{hint}")
    if not math.isfinite(value):
        raise ConfigError(f"{name} is {value!r}: give a finite number ({rng.text()}){hint}")
    if kind == (int,) and isinstance(value, float):
        if not value.is_integer():
            raise ConfigError(f"{name} must be a whole number, got {value!r}{hint}")
        value = int(value)
    if not rng.holds(value):
        raise ConfigError(f"{name} is {value!r}: it must be {rng.text()}{hint}")
    return value


def check_training_values(training: dict, where: str = "training") -> None:
    """Check (and, for whole floats in int fields, normalise) every numeric GRPOConfig value in place."""
    for key in list(training):
        training[key] = check_value(key, training[key], where)
    # TRL reads a save/logging/eval interval above 1 as a step count, so it must be whole.
    for key in ("save_steps", "logging_steps", "eval_steps"):
        value = training.get(key)
        if isinstance(value, float) and value > 1 and not value.is_integer():
            raise ConfigError(f"{where}.{key} is {value!r}: write a whole step count, or a fraction below 1 of the run")
