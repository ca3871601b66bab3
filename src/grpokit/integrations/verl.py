"""Use grpokit rewards in verl: `make_compute_score(...)` builds verl's custom reward function.

verl scores one response at a time through

    compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=...)

and accepts a float, or a dict with a "score" key whose other keys it logs as
extra metrics. Put this in a file and point verl at it:

    # my_reward.py
    from grpokit.integrations.verl import make_compute_score
    compute_score = make_compute_score([
        {"name": "incremental_format", "weight": 0.5},
        {"name": "numeric_match", "weight": 2.0, "params": {"rel_tol": 0.01}},
    ])

    # verl: custom_reward_function.path=my_reward.py custom_reward_function.name=compute_score

With verl's batch reward manager, use `make_batch_compute_score` instead: one
call per batch, so rewards that compare completions see all of them.

How verl's fields reach grpokit's reward keywords: `solution_str` is the
completion (plain text), `ground_truth` is `answer`, and each key of
`extra_info` (e.g. tests, schema, reference) is passed as the column of that
name. A reward that cannot score a sample (None) adds nothing to the total.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Mapping

from grpokit.rewards import RewardConfigError, canonical, get, preset

RewardSpec = Callable | str | Mapping[str, Any]


def _preset(name: str):
    try:
        return preset(name)
    except (KeyError, ValueError, RewardConfigError):
        return None


def _is_reward(name: str) -> bool:
    try:
        canonical(name)  # registered names and their aliases
    except RewardConfigError:
        return False
    return True


def _resolve_one(spec: RewardSpec) -> list[tuple[Callable, float]]:
    """A spec -> [(reward, weight)]: a preset expands to several."""
    if callable(spec):
        return [(spec, 1.0)]
    if isinstance(spec, str):
        if _is_reward(spec):
            return [(get(spec), 1.0)]
        found = _preset(spec)
        if found is not None:
            funcs, weights = found
            return list(zip(funcs, weights if weights is not None else [1.0] * len(funcs)))
        get(spec)  # raises with the registry's "did you mean" hint
    if isinstance(spec, Mapping) and "name" in spec:
        unknown = set(spec) - {"name", "weight", "params"}
        if unknown:
            raise RewardConfigError(f"reward entry {dict(spec)!r}: unknown keys {sorted(unknown)}; use name, weight, params")
        func = get(spec["name"], **(spec.get("params") or {}))
        return [(func, float(spec.get("weight", 1.0)))]
    raise RewardConfigError(
        f"cannot make a reward from {spec!r}: give a reward function, a registered name, a preset name, or {{name, weight, params}}"
    )


def resolve_rewards(rewards: RewardSpec | Iterable[RewardSpec], weights: Iterable[float] | None = None) -> tuple[list[Callable], list[float]]:
    """Any accepted form of rewards -> (functions, weights)."""
    specs = [rewards] if callable(rewards) or isinstance(rewards, (str, Mapping)) else list(rewards)
    if not specs:
        raise RewardConfigError("no rewards given: pass at least one reward function, name or preset")
    pairs = [pair for spec in specs for pair in _resolve_one(spec)]
    funcs = [f for f, _ in pairs]
    if weights is None:
        return funcs, [w for _, w in pairs]
    weights = [float(w) for w in weights]
    if len(weights) != len(funcs):
        raise RewardConfigError(f"{len(weights)} weights for {len(funcs)} rewards: give one weight per reward (a preset counts as its rewards)")
    if not all(math.isfinite(w) for w in weights):
        raise RewardConfigError(f"weights must be finite numbers, got {weights}")
    return funcs, weights


def _reward_name(func: Callable, taken: set[str]) -> str:
    base = getattr(func, "__name__", type(func).__name__)
    name, i = base, 2
    while name in taken or name == "score":
        name, i = f"{base}_{i}", i + 1
    taken.add(name)
    return name


def make_compute_score(
    rewards: RewardSpec | Iterable[RewardSpec],
    weights: Iterable[float] | None = None,
    *,
    details: bool = False,
) -> Callable[..., float | dict]:
    """verl's `compute_score` from grpokit rewards, with their weights.

    rewards: a reward function, a registered reward name, a preset name, a
        config entry {name, weight, params}, or a list of any of these.
    weights: one per reward (after presets expand); defaults to the entries'
        own weights (1.0 for bare functions and names).
    details: return {"score": total, <reward name>: value, ...} so verl logs
        each reward as its own metric (NaN where a reward could not score);
        otherwise return the weighted total as a float.
    """
    funcs, ws = resolve_rewards(rewards, weights)
    taken: set[str] = set()
    labels = [_reward_name(f, taken) for f in funcs]

    def compute_score(data_source: str | None = None, solution_str: str = "", ground_truth: Any = None, extra_info: Mapping | None = None, **_: Any):
        # `completions` is the positional argument; an extra_info key of that name would clash.
        columns = {key: [value] for key, value in (extra_info or {}).items() if isinstance(key, str) and key != "completions"}
        columns["answer"] = [ground_truth]
        columns.setdefault("data_source", [data_source])
        total = 0.0
        parts: dict[str, float] = {}
        for label, func, weight in zip(labels, funcs, ws):
            values = func([solution_str if isinstance(solution_str, str) else str(solution_str)], **columns)
            value = values[0] if values else None
            if value is None:
                parts[label] = float("nan")
                continue
            parts[label] = float(value)
            total += weight * float(value)
        return {"score": total, **parts} if details else total

    compute_score.__doc__ = f"verl compute_score over grpokit rewards: {', '.join(f'{w:g} x {n}' for n, w in zip(labels, ws))}"
    return compute_score


def make_batch_compute_score(
    rewards: RewardSpec | Iterable[RewardSpec],
    weights: Iterable[float] | None = None,
    *,
    details: bool = False,
) -> Callable[..., list]:
    """verl's batched `compute_score` (reward_model.reward_manager=batch) from grpokit rewards.

    verl calls it as compute_score(data_sources=..., solution_strs=...,
    ground_truths=..., extra_infos=...) and takes one score per response. Each
    reward sees the whole batch at once, so rewards that compare completions
    (e.g. diversity within a group) work as they do under TRL.
    """
    funcs, ws = resolve_rewards(rewards, weights)
    taken: set[str] = set()
    labels = [_reward_name(f, taken) for f in funcs]

    def compute_score(data_sources=None, solution_strs=(), ground_truths=None, extra_infos=None, **_: Any) -> list:
        n = len(solution_strs)
        infos = [info if isinstance(info, Mapping) else {} for info in (list(extra_infos) if extra_infos is not None else [None] * n)]
        keys = {key for info in infos for key in info if isinstance(key, str) and key != "completions"}
        # A key some rows lack arrives as None there, the way a missing column value does under TRL.
        columns = {key: [info.get(key) for info in infos] for key in keys}
        columns["answer"] = list(ground_truths) if ground_truths is not None else [None] * n
        columns.setdefault("data_source", list(data_sources) if data_sources is not None else [None] * n)
        completions = [s if isinstance(s, str) else str(s) for s in solution_strs]
        totals = [0.0] * n
        parts: dict[str, list[float]] = {}
        for label, func, weight in zip(labels, funcs, ws):
            values = func(completions, **columns)
            parts[label] = [float("nan") if v is None else float(v) for v in values]
            for i, v in enumerate(values):
                if v is not None:
                    totals[i] += weight * float(v)
        if not details:
            return totals
        return [{"score": totals[i], **{label: parts[label][i] for label in labels}} for i in range(n)]

    compute_score.__doc__ = f"verl batched compute_score over grpokit rewards: {', '.join(f'{w:g} x {n}' for n, w in zip(labels, ws))}"
    return compute_score
