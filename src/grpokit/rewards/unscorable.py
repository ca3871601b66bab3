"""What a completion a reward cannot score earns: never more than a wrong one.

A reward's None means one of two things, and they must not be paid alike:

- no reading exists for the row (no gold answer, no schema, no reference, no way
  to measure length in this run): every completion of the row is None, the policy
  cannot choose it, and TRL leaves the reward out for the whole group. None is right.
- this completion could not be read (a 400-digit answer the math check screens
  out, text a tokenizer chokes on, a score that is NaN): the policy chose it, and
  TRL adds None as 0. For a reward that pays below 0 (cosine_scaled's -1 for a
  wrong answer, a length penalty) that is a raise: unscorable beats wrong.

The rule, one place for every reward that uses it: a None on a completion whose
row-mates (the other completions of the batch with the same prompt and the same
row columns) did get a score is *unscorable*, and earns the reward's floor -- the
lowest score it pays (`floor_of`: declared per registered reward in `FLOORS`), or,
for a reward that declares none (a custom one, a reward model), the lowest score
its row-mates got. A None that every completion of the row shares stays None.

`combine` applies it to each part, TrainerRewards and RewardSet.score to every reward they
call, and the probe scores a None among scored row-mates as plain TRL pays it (0).

The round-4 audit: the rewards that pay below 0 are cosine_scaled, max_length_penalty,
soft_overlong_punishment, incremental_format, repetition_penalty, malformed_tool_call and a
reward model's raw logit. Of these, cosine_scaled, the two length penalties and reward_model
can return None, and settle it themselves (their docstrings say so); the other three always
return a number. Every other shipped reward pays nothing below 0, so TRL's 0 for its None is
its floor already; combine and the trainer settle their None all the same.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

# Columns TRL passes that are not the row's data: they do not tell rows apart.
_NOT_ROW = frozenset({"completion_ids", "trainer_state", "log_metric", "log_extra", "environments"})


def _setting(reward: Any, key: str, default: Any = None) -> Any:
    return (getattr(reward, "settings", None) or {}).get(key, default)


def _cosine_floor(reward: Any) -> float | None:
    ends = [*(_setting(reward, "wrong_range") or ()), *(_setting(reward, "correct_range") or ())]
    penalty = _setting(reward, "exceed_penalty")
    if penalty is not None:
        ends.append(penalty)
    return min(ends) if ends else None


def _style_floor(key: str) -> Callable[[Any], float]:
    # Penalties given by size ("max_penalty: 1.0" or "-1.0" mean the same -1 floor).
    return lambda reward: -abs(float(_setting(reward, key, 1.0)))


def _tool_success_floor(reward: Any) -> float:
    no_call = _setting(reward, "no_call_score", 0.0)
    return min(0.0, float(no_call)) if no_call is not None else 0.0


# The lowest score each registered reward pays, by registry name: a number, a function of the
# built reward (for floors its parameters set), or None where scores are unbounded (a reward
# model's logit). tests/rewards/test_unscorable.py checks that every registered name is here
# (a new reward must add its line) and that no reward scores below its floor on a battery of completions.
FLOORS: dict[str, float | Callable[[Any], float | None] | None] = {
    "citation": 0.0,
    "code_block_format": 0.0,
    "code_execution": 0.0,
    "code_syntax_valid": 0.0,
    "contains_answer": 0.0,
    "cosine_scaled": _cosine_floor,
    "exact_match": 0.0,
    "fuzzy_match": 0.0,
    "group_diversity": 0.0,
    "ideal_length": 0.0,
    "incremental_format": _style_floor("max_penalty"),
    "json_field_match": 0.0,  # its own floor: a field share
    "json_format": 0.0,
    "json_object_match": 0.0,
    "json_schema": 0.0,
    "language_consistency": 0.0,
    "llm_judge": 0.0,
    "malformed_tool_call": lambda reward: float(_setting(reward, "penalty", -1.0)),
    "math_equivalence": 0.0,
    "max_length_penalty": -1.0,
    "min_length": 0.0,
    "multiple_choice": 0.0,
    "numeric_closeness": 0.0,
    "numeric_match": 0.0,
    "reasoning_quality": 0.0,
    "reference_overlap": 0.0,
    "regex_format": 0.0,
    "repetition_penalty": _style_floor("size"),
    "restated_expression": 0.0,
    "reward_model": None,
    "soft_overlong_punishment": -1.0,
    "soft_xml_format": 0.0,
    "strict_xml_format": 0.0,
    "tag_count": 0.0,
    "think_format": 0.0,
    "tool_call_success": _tool_success_floor,
    "tool_calls": 0.0,
    "tool_turn_limit": 0.0,
}


def attach(name: str, reward: Any) -> Any:
    """Give a reward built from the registry its `floor` (see FLOORS); returns the reward."""
    if name not in FLOORS or getattr(reward, "floor", None) is not None:
        return reward
    declared = FLOORS[name]
    value = declared(reward) if callable(declared) else declared
    if value is not None:
        try:
            reward.floor = float(value)
        except (AttributeError, TypeError):  # an object that takes no attributes: floor unknown
            pass
    return reward


def floor_of(reward: Any) -> float | None:
    """The lowest score `reward` pays, where it is known (declared, or a wrapper's reward's); else None."""
    seen = 0
    while reward is not None and seen < 8:
        value = getattr(reward, "floor", None)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
        reward = getattr(reward, "reward", None) or getattr(reward, "func", None)  # FinalAnswerOnly, partial
        seen += 1
    return None


def _key(value: Any) -> str:
    try:
        return repr(value)[:10_000]
    except Exception:  # noqa: BLE001 - an odd column value: it still names its row
        return str(id(value))


def row_groups(n: int, columns: Mapping[str, Any]) -> list[int]:
    """A row id per completion: completions with the same prompt and the same row columns share one
    (the GRPO group of one prompt, or one row of a direct call)."""
    aligned = [(k, v) for k, v in columns.items()
               if k not in _NOT_ROW and isinstance(v, (list, tuple)) and len(v) == n and not callable(v)]
    ids: dict[tuple, int] = {}
    out = []
    for i in range(n):
        key = tuple((k, _key(v[i])) for k, v in aligned)
        out.append(ids.setdefault(key, len(ids)))
    return out


def settle(scores: Sequence[float | None], groups: Sequence[int], floor: float | None) -> list[float | None]:
    """Each None whose row-mates scored becomes `floor` (or, with no floor, the row-mates' lowest score);
    a None every completion of the row shares stays None."""
    lowest: dict[int, float] = {}
    for score, group in zip(scores, groups):
        if score is not None:
            lowest[group] = min(score, lowest.get(group, score))
    out: list[float | None] = []
    for score, group in zip(scores, groups):
        if score is None and group in lowest:
            score = floor if floor is not None else lowest[group]
        out.append(score)
    return out


def settled(scores: Sequence[float | None], columns: Mapping[str, Any], floor: float | None) -> list[float | None]:
    """`settle` over the row groups of a batch's columns (what a reward's kwargs hold)."""
    scores = list(scores)
    if None not in scores:
        return scores  # the common case costs one scan: nothing to settle, no rows to group
    return settle(scores, row_groups(len(scores), columns), floor)
