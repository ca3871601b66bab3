"""The judge's settings: one frozen dataclass, checked when the reward is built.

Everything here pickles (plain values only): the API key is never stored, only
the name of the environment variable that holds it, read when a request is sent.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from grpokit.answer_format import AnswerFormat
from grpokit.rewards.judge.rubrics import RUBRICS
from grpokit.rewards.registry import RewardConfigError

DEFAULT_URL = "http://127.0.0.1:8090/v1"  # where `grpokit judge serve` listens
MODES = ("pointwise", "group")


@dataclass(frozen=True)
class JudgeSettings:
    base_url: str = DEFAULT_URL
    model: str = "judge"
    rubric: str = "general"
    mode: str = "pointwise"
    scale: int = 10
    api_key_env: str | None = None
    concurrency: int = 8
    retries: int = 2
    backoff_s: float = 0.5
    timeout_s: float = 30.0
    budget_s: float | None = 120.0
    cache_size: int = 10_000
    max_chars: int = 4_000
    max_group: int = 16
    structured: bool = True
    use_reference: bool = True
    answer_check: bool = True
    answer_format: Any = None  # an AnswerFormat once built (a mapping or None is accepted)

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "answer_format", AnswerFormat.of(self.answer_format))
        except RewardConfigError as exc:
            raise RewardConfigError(f"llm_judge: answer_format {exc}") from None
        if not isinstance(self.answer_check, bool):
            raise RewardConfigError(f"llm_judge: answer_check must be true or false, got {self.answer_check!r}")
        url = urlparse(self.base_url)
        if url.scheme not in ("http", "https") or not url.netloc:
            raise RewardConfigError(f"llm_judge: base_url must be an http(s) address such as {DEFAULT_URL}, "
                                    f"got {self.base_url!r}")
        if self.mode not in MODES:
            raise RewardConfigError(f"llm_judge: mode must be one of {list(MODES)}, got {self.mode!r}")
        if not isinstance(self.rubric, str) or not self.rubric.strip():
            raise RewardConfigError(f"llm_judge: rubric must be a built-in name ({', '.join(RUBRICS)}) or "
                                    f"the rubric text itself")
        for name, low, high in (("scale", 1, 100), ("concurrency", 1, 256), ("retries", 0, 10),
                                ("cache_size", 0, 10_000_000), ("max_chars", 100, 1_000_000),
                                ("max_group", 2, 64)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise RewardConfigError(f"llm_judge: {name} must be an integer from {low} to {high}, got {value!r}")
        for name in ("backoff_s", "timeout_s", "budget_s"):
            value = getattr(self, name)
            if value is None and name == "budget_s":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or value < 0 or (value == 0 and name != "backoff_s"):
                raise RewardConfigError(f"llm_judge: {name} must be a positive number of seconds, got {value!r}")
        if self.api_key_env is not None:
            if not isinstance(self.api_key_env, str) or not self.api_key_env.strip() or "=" in self.api_key_env:
                raise RewardConfigError("llm_judge: api_key_env is the NAME of an environment variable "
                                        "(e.g. OPENAI_API_KEY), never the key itself")
            if not os.environ.get(self.api_key_env):
                raise RewardConfigError(f"llm_judge: the environment variable {self.api_key_env} (api_key_env) is "
                                        f"not set; export it before training (the key never goes in the config)")

    def api_key(self) -> str | None:
        """The key, read from the environment at request time (never stored, never pickled)."""
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def rubric_text(self) -> str:
        return RUBRICS.get(self.rubric, self.rubric)
