"""What a cut at the length limit costs: the cut completions' answer rewards against the finished ones
of their prompt (completions/cut_answer_gap), or with every completion cut, what the cut ones still earn
(completions/cut_answer_score). Read by truncation (a cut that costs the answer) and length_drift (a cut
that pays), each with its own window and margin.
"""
from __future__ import annotations

from grpokit.health.history import History, finite


def mean_against_spread(h: History, key: str, window: int, min_steps: int, margin: float,
                        half_cut: float | None) -> tuple[float, float] | None:
    """(mean of `key`, margin x the same steps' mean reward_std) over the last `window` logs (with `half_cut`,
    only those with that share cut or more: one rambling wrong answer on a step with few cut says nothing about
    the limit) that logged both; None where fewer than min_steps did. One step is not enough either: a base
    model's first step gave +0.23 (one group) on runs whose answers then never fit. The margin is in reward
    units: a group's spread is what its advantages are measured against."""
    pairs = [(finite(logs.get(key)), finite(logs.get("reward_std")))
             for logs in h.recent(int(window))
             if half_cut is None or (finite(logs.get("completions/clipped_ratio")) or 0.0) >= half_cut]
    pairs = [(value, std) for value, std in pairs if value is not None and std is not None]
    if len(pairs) < max(1, int(min_steps)):
        return None
    return (sum(value for value, _ in pairs) / len(pairs), margin * sum(std for _, std in pairs) / len(pairs))


def cut_costs_answer(mean: float, margin: float) -> bool:
    return mean < 0 and mean <= -margin


def cut_pays(mean: float, margin: float) -> bool:
    return mean > 0 and mean >= margin
