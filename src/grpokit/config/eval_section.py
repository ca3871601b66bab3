"""`eval:` in the run config: held-out evaluation during training (see grpokit.evaluate.during)."""
from __future__ import annotations

from dataclasses import dataclass

from grpokit.errors import ConfigError


@dataclass
class EvalConfig:
    """`eval:` in the run config: held-out evaluation during training (off when every is 0)."""

    every: int = 0  # steps between evaluations; 0 = none during training
    prompts: int = 32  # held-out prompts per evaluation (from data.eval_size's split)
    samples: int = 2  # completions per prompt
    temperature: float | None = None  # None: the training temperature
    max_new_tokens: int | None = None  # None: training.max_completion_length


def check_eval(cfg: EvalConfig, eval_size: float | int) -> None:
    """Bad `eval:` values fail before any model loads, each with the fix."""
    for key, low in (("every", 0), ("prompts", 1), ("samples", 1)):
        value = getattr(cfg, key)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ConfigError(f"eval.{key} must be a whole number >= {low}, got {value!r}")
    if cfg.temperature is not None and (isinstance(cfg.temperature, bool) or not isinstance(cfg.temperature, (int, float))
                                        or not 0 <= cfg.temperature <= 10):
        raise ConfigError(f"eval.temperature must be a number from 0 (greedy) to 10, or null for the training temperature; got {cfg.temperature!r}")
    if cfg.max_new_tokens is not None and (isinstance(cfg.max_new_tokens, bool) or not isinstance(cfg.max_new_tokens, int)
                                           or cfg.max_new_tokens < 1):
        raise ConfigError(f"eval.max_new_tokens must be a whole number >= 1, or null for training.max_completion_length; got {cfg.max_new_tokens!r}")
    if cfg.every and not eval_size:
        raise ConfigError("eval.every is set but data.eval_size is 0, so there are no held-out prompts: "
                          "set data.eval_size (e.g. 200), or eval.every: 0")
