"""Which log records the health rules read: per-step training logs, held-out evaluation records, and
how many training logs a run writes."""
from __future__ import annotations

import math
from typing import Any

from grpokit.health.history import finite


def is_train_log(logs: dict[str, Any]) -> bool:
    """True for a per-step training log; False for eval logs and the end-of-training summary."""
    if any(key.startswith("eval_") for key in logs):
        return False
    if "train_runtime" in logs:
        return False
    return any(key in logs for key in ("loss", "reward", "reward_std", "grad_norm"))


def is_held_out_log(logs: dict[str, Any]) -> bool:
    """True for a held-out evaluation record (grpokit.evaluate.during: `eval/` keys only)."""
    return any(key.startswith("eval/") for key in logs) and not is_train_log(logs)


def expected_logged_steps(max_steps: Any, logging_steps: Any) -> int | None:
    """How many training logs a run of `max_steps` writes (None when its length is not known yet)."""
    total, every = finite(max_steps), finite(logging_steps)
    if not total or total <= 0:
        return None
    if not every or every <= 0:
        every = 1.0
    if every < 1:  # transformers reads a value under 1 as a share of max_steps
        every = max(1.0, math.ceil(total * every))
    return max(1, int(total // every))
