"""One step's view of the run, shared by every rule: the history and the quantities several rules
derive from it, each computed at most once a step (a Signals lives for one step).
"""
from __future__ import annotations

import math
from functools import cached_property
from typing import Any

from grpokit.health.history import History, finite


class Signals:
    # The metrics behind each shared quantity: a rule that names the quantity in its `reads` reads these.
    READS: dict[str, tuple[str, ...]] = {
        "nothing_scores": ("reward", "reward_std"),
        "held_out_rise": ("eval/accuracy", "eval/prompts", "eval/samples_per_prompt"),
    }

    def __init__(self, history: History):
        self.history = history

    def now(self, key: str) -> float | None:
        return self.history.now(key)

    @property
    def latest(self) -> dict[str, Any]:
        return self.history.latest

    @cached_property
    def nothing_scores(self) -> bool:
        """Every reward 0 at this step, with no spread: every group is flat at nothing (the step's total
        reward and reward_std both 0)."""
        reward, std = self.now("reward"), self.now("reward_std")
        return reward is not None and std is not None and abs(reward) < 1e-12 and std < 1e-12

    @cached_property
    def reward_names(self) -> list[str]:
        """The rewards this step logged (rewards/<name>/...), in log order."""
        return _names(self.latest, "rewards/")

    @cached_property
    def judge_names(self) -> list[str]:
        return _names(self.latest, "judge/")

    @cached_property
    def held_out_rise(self) -> tuple[float, float, float] | None:
        """(first held-out accuracy, latest, twice the sampling noise of their difference), or None where
        the run has fewer than two evaluations with an accuracy. The noise is binomial over prompts x samples."""
        scores = []
        for record in self.history.held_out:
            accuracy, prompts = finite(record.get("eval/accuracy")), finite(record.get("eval/prompts"))
            samples = finite(record.get("eval/samples_per_prompt")) or 1.0
            if accuracy is not None and 0.0 <= accuracy <= 1.0 and prompts:
                scores.append((accuracy, prompts * samples))
        if len(scores) < 2:
            return None
        (first, n0), (latest, n1) = scores[0], scores[-1]
        return first, latest, 2 * math.sqrt(first * (1 - first) / n0 + latest * (1 - latest) / n1)


def _names(logs: dict[str, Any], prefix: str) -> list[str]:
    return list(dict.fromkeys(key[len(prefix):key.rindex("/")] for key in logs
                              if key.startswith(prefix) and key.count("/") >= 2))
