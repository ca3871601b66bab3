"""combine(): several rewards as one, with weights that may change over training.

    from grpokit.rewards import combine
    reward = combine(["numeric_match", "incremental_format"], weights=[2.0, 0.5])
    reward = combine(["incremental_format", "numeric_match"],
                     weights=[(0, [1.0, 0.0]), (100, [0.2, 1.0])])   # format first, then correctness
    reward = combine([{"name": "ideal_length", "params": {"target": 200}}],
                     gate="strict_xml_format")                      # length counts only when formatted

Modes
  "sum"     - sum_i w_i * s_i
  "product" - prod_i s_i ** w_i  (weights act as exponents; all 1 -> plain product; every s_i >= 0)
  "gated"   - the weighted sum, but only where `gate` scores >= gate_threshold; elsewhere `gate_fail`.
              Passing `gate` with mode "sum" or "product" gates that mode the same way.

None (a component could not score a sample) comes in two kinds (grpokit.rewards.unscorable):
  unscorable - the part scored other completions of the same row (same prompt and columns)
               but not this one (a 400-digit answer the math check screens out): the part
               counts at its floor, the lowest score it pays (`floor` of a registered reward;
               for a part that declares none, the lowest score it gave the row), whatever the
               `missing` policy. A part made unscorable never pays more than a wrong answer,
               so neither skipping nor renormalizing can lift a total above a wrong one's.
  missing    - no completion of the row has the part (the row has no gold answer): the
               `missing` policy decides, the same way for the whole row (GRPO compares
               completions of a row with each other, so this cannot favour one of them):
  "skip" (default) - leave that component out of that sample's sum/product; the combined
                     score is None only when every component is None. This is what TRL does
                     with several reward functions (a NaN-aware sum), so combining does not
                     change the training signal.
  "renormalize"    - as skip, then scale the sum by sum|w| / sum|w of present components|
                     (keeps the scale across rows when a component is often missing).
  "propagate"      - any None makes the combined score None.
A gate that returns None makes the sample None (its pass/fail is unknown); one unscorable
among judged row-mates fails the gate.

Product and negative scores: two negative parts multiply to a positive, so a product cannot
rank scores below zero. mode="product" refuses, when combine() builds it, a part that declares
a floor below 0 (cosine_scaled, the length penalties, repetition_penalty...), and raises on the
first batch where a part without a declared floor scores below 0: use mode="sum" for such
parts, or give the product only parts that score >= 0.

Schedules: `weights` may be a list of floats, a callable step -> list, or breakpoints
[(step, [w...]), ...] interpolated linearly (held constant outside the range). The step is
`trainer_state.global_step`, which TRL passes to reward functions; 0 without it.

Logging: under TRL each part's batch mean is logged as `rewards/<combined>/<part>/mean`
through the `log_metric` hook TRL passes to reward functions. The combined reward also
keeps `.last_components` (part name -> that batch's scores) and `.last_weights`, calls
`log_fn(components, weights, step)` after each batch when given, and `.components()` (or
`components(reward)`) returns the parts as standalone rewards:
give them to TRL with weight 0 to log each as its own metric.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from grpokit.rewards.registry import RewardConfigError, get
from grpokit.rewards.reward_set import unique_names
from grpokit.rewards.unscorable import floor_of, row_groups, settle

_MODES = ("sum", "product", "gated")
_MISSING = ("skip", "renormalize", "propagate")


def _resolve(item: Any, what: str) -> Callable:
    if isinstance(item, str):
        return get(item)
    if isinstance(item, dict) and "name" in item:  # the YAML form {name: ..., params: {...}}
        return get(item["name"], **(item.get("params") or {}))
    if callable(item):
        return item
    raise RewardConfigError(f"{what} must be a reward name, {{name, params}} or a reward function, got {item!r}")


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RewardConfigError(f"{what} must be a finite number, got {value!r}")
    return float(value)


def _weight_list(values: Any, n: int, what: str) -> list[float]:
    if not isinstance(values, (list, tuple)) or len(values) != n:
        raise RewardConfigError(f"{what} must list {n} weights, one per reward, got {values!r}")
    return [_number(v, what) for v in values]


class _Schedule:
    """weights (any accepted form) -> step -> list of n floats; checked at construction.

    A class rather than closures so that a combined reward pickles.
    """

    def __init__(self, weights: Any, n: int):
        self.n = n
        self.fixed: list[float] | None = None
        self.func: Callable[[int], Any] | None = None
        self.points: list[tuple[float, list[float]]] | None = None
        if weights is None:
            self.fixed = [1.0] * n
        elif callable(weights):
            self.func = weights
            self(0)  # fail at construction, not at step 0 of training
        elif isinstance(weights, (list, tuple)) and weights and all(isinstance(w, (list, tuple)) and len(w) == 2 for w in weights):
            points = sorted((_number(step, "a breakpoint step"), _weight_list(ws, n, f"weights at step {step}")) for step, ws in weights)
            if len({step for step, _ in points}) != len(points):
                raise RewardConfigError("weights breakpoints repeat a step; give each step once")
            self.points = points
        else:
            self.fixed = _weight_list(weights, n, "weights")

    def __call__(self, step: int) -> list[float]:
        if self.fixed is not None:
            return list(self.fixed)
        if self.func is not None:
            return _weight_list(self.func(step), self.n, f"weights({step})")
        points = self.points
        if step <= points[0][0]:
            return list(points[0][1])
        for (s0, w0), (s1, w1) in zip(points, points[1:]):
            if step <= s1:
                t = (step - s0) / (s1 - s0)
                return [a + t * (b - a) for a, b in zip(w0, w1)]
        return list(points[-1][1])


def _step(kwargs: dict) -> int:
    state = kwargs.get("trainer_state")
    step = getattr(state, "global_step", None)
    if step is None and isinstance(state, dict):
        step = state.get("global_step")
    return int(step) if isinstance(step, (int, float)) and math.isfinite(step) else 0


def _finite(value: Any) -> float | None:
    if value is None:
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _scores(func: Callable, name: str, completions: Any, kwargs: dict) -> list[float | None]:
    scores = func(completions, **kwargs)
    if scores is None or len(scores) != len(completions):
        got = "None" if scores is None else f"{len(scores)} scores"
        raise ValueError(f"reward {name!r} returned {got} for {len(completions)} completions; it must return one per completion")
    return [_finite(s) for s in scores]


def _sum(scores: list[float | None], weights: list[float], missing: str) -> float | None:
    present = [(s, w) for s, w in zip(scores, weights) if s is not None]
    if not present or (missing == "propagate" and len(present) < len(scores)):
        return None
    total = sum(w * s for s, w in present)
    if missing == "renormalize":
        kept = sum(abs(w) for _, w in present)
        total = total * sum(abs(w) for w in weights) / kept if kept else 0.0
    return total


def _product(scores: list[float | None], weights: list[float], missing: str) -> float | None:
    present = [(s, w) for s, w in zip(scores, weights) if s is not None]
    if not present or (missing == "propagate" and len(present) < len(scores)):
        return None
    total = 1.0
    for s, w in present:
        if s == 0.0:
            return 0.0  # also avoids 0 ** negative
        try:
            total *= s ** w
        except OverflowError:
            return None
    return total if math.isfinite(total) else None


def _refuse_negative_product(names: list[str], parts: list[Callable]) -> None:
    for name, part in zip(names, parts):
        floor = floor_of(part)
        if floor is not None and floor < 0:
            raise RewardConfigError(
                f"combine(mode='product'): part {name!r} pays down to {floor:g}, and two negative parts multiply "
                f"to a positive (a product cannot rank scores below 0); use mode='sum' (weights as multipliers), "
                f"or leave {name!r} out of the product and add it to the run as its own reward")


def _check_product_scores(columns: dict[str, list[float | None]]) -> None:
    for name, scores in columns.items():
        low = min((s for s in scores if s is not None), default=0.0)
        if low < 0:
            raise ValueError(
                f"combine(mode='product'): part {name!r} scored {low:g}; a product is defined for scores >= 0 "
                f"only (two negatives multiply to a positive). Use mode='sum', or a part that scores >= 0")


def _combined_floor(parts: list[Callable], schedule: "_Schedule", product: bool, missing: str,
                    gate: bool, gate_fail: float) -> float | None:
    """The lowest the combined reward pays, where its parts' floors and fixed weights make it known."""
    floors = [floor_of(p) for p in parts]
    weights = schedule.fixed
    if any(f is None for f in floors) or weights is None or any(w < 0 for w in weights):
        return None
    if product:
        low = 0.0 if all(f >= 0 for f in floors) else None
    else:
        low = sum(w * f for w, f in zip(weights, floors))
        if missing == "renormalize":  # a weighted mean of floors, scaled to every weight, is no lower than this
            low = min(low, sum(weights) * min(floors))
    if low is None:
        return None
    return min(low, gate_fail) if gate else low


def combine(
    funcs: Sequence[Any],
    weights: Any = None,
    gate: Any = None,
    mode: str = "sum",
    name: str | None = None,
    gate_threshold: float = 1.0,
    gate_fail: float = 0.0,
    missing: str = "skip",
    log_fn: Callable[[dict, list, int], None] | None = None,
    trl_logging: bool = True,
):
    """One reward function made of several: weighted sum, product, or gated by another reward.

    funcs: reward names, {name, params} dicts, or reward functions.
    weights: floats (default all 1), a callable step -> floats, or breakpoints
      [(step, [floats]), ...] interpolated linearly over trainer_state.global_step.
    gate: a reward (name/dict/function); samples where it scores below
      gate_threshold (default 1.0) get gate_fail (default 0.0).
    mode: "sum" | "product" | "gated" (see the module docstring; "gated" needs gate).
    missing: None policy, "skip" | "renormalize" | "propagate" (module docstring).
    name: the combined reward's __name__ (TRL's metric name); default joins the parts.
    log_fn: called as log_fn({name: scores}, weights, step) after every batch.
    trl_logging: when TRL passes its `log_metric` / `log_extra` hooks (TRL >= 1.x), log
      each part's batch mean as `rewards/<combined>/<part>/mean` and its per-sample
      scores as a completions-table column `<combined>/<part>` (default True).

    Bad arguments raise RewardConfigError here, not during training.
    """
    if mode not in _MODES:
        raise RewardConfigError(f"mode must be one of {list(_MODES)}, got {mode!r}")
    if missing not in _MISSING:
        raise RewardConfigError(f"missing must be one of {list(_MISSING)}, got {missing!r}")
    if isinstance(funcs, (str, dict)) or callable(funcs):
        funcs = [funcs]
    if not funcs:
        raise RewardConfigError("combine needs at least one reward")
    parts = [_resolve(f, "each reward") for f in funcs]
    part_names = unique_names(parts)
    schedule = _Schedule(weights, len(parts))
    if mode == "gated" and gate is None:
        raise RewardConfigError("mode='gated' needs gate= (the reward that must pass, e.g. 'strict_xml_format')")
    if mode == "product":
        _refuse_negative_product(part_names, parts)
    gate_func = _resolve(gate, "gate") if gate is not None else None
    gate_name = getattr(gate_func, "__name__", "gate") if gate_func is not None else None
    gate_threshold = _number(gate_threshold, "gate_threshold")
    gate_fail = _number(gate_fail, "gate_fail")
    if log_fn is not None and not callable(log_fn):
        raise RewardConfigError(f"log_fn must be a function, got {log_fn!r}")
    joiner = "*" if mode == "product" else "+"
    default_name = joiner.join(part_names) + (f"|{gate_name}" if gate_name else "")
    if name is not None and (not isinstance(name, str) or not name):
        raise RewardConfigError(f"name must be a non-empty string, got {name!r}")
    return CombinedReward(
        name or default_name,
        parts=dict(zip(part_names, parts)),
        schedule=schedule,
        gate=(gate_name, gate_func) if gate_func is not None else None,
        gate_threshold=gate_threshold,
        gate_fail=gate_fail,
        product=mode == "product",
        missing=missing,
        log_fn=log_fn,
        trl_logging=bool(trl_logging),
    )


class CombinedReward:
    """The reward `combine()` returns: call it like any reward; see the module docstring.

    Attributes: `last_components` (part name -> last batch's scores, the gate as
    'gate:<name>'), `last_weights` (part name -> weight used), `components()`.
    """

    def __init__(self, name, *, parts, schedule, gate, gate_threshold, gate_fail, product, missing, log_fn, trl_logging):
        self.__name__ = self.__qualname__ = name
        self.parts = parts
        self.schedule = schedule
        self.gate = gate
        self.gate_threshold = gate_threshold
        self.gate_fail = gate_fail
        self.product = product
        self.missing = missing
        self.log_fn = log_fn
        self.trl_logging = trl_logging
        self.last_components: dict[str, list] = {}
        self.last_weights = dict(zip(parts, schedule(0)))
        # The lowest it pays: what unscorable earns where it is a part of something else.
        self.floor = _combined_floor(list(parts.values()), schedule, product, missing, gate is not None, gate_fail)

    def __call__(self, completions, **kwargs):
        step = _step(kwargs)
        weights_now = self.schedule(step)
        # The logs keep the parts' own scores (None where they could not score).
        columns = {n: _scores(f, n, completions, kwargs) for n, f in self.parts.items()}
        gate_scores = _scores(self.gate[1], self.gate[0], completions, kwargs) if self.gate else None
        # A part that scored a completion's row-mates but not it counts at its floor (module docstring).
        holes = any(None in c for c in columns.values()) or (gate_scores is not None and None in gate_scores)
        groups = row_groups(len(completions), kwargs) if holes else [0] * len(completions)
        counted = {n: settle(columns[n], groups, floor_of(f)) for n, f in self.parts.items()}
        if self.product:
            _check_product_scores(counted)
        gate_counted = settle(gate_scores, groups, floor_of(self.gate[1])) if gate_scores is not None else None
        fold = _product if self.product else _sum
        combined: list[float | None] = []
        for i in range(len(completions)):
            if gate_counted is not None:
                g = gate_counted[i]
                if g is None:
                    combined.append(None)  # the gate cannot judge, so neither can we
                    continue
                if g < self.gate_threshold - 1e-9:
                    combined.append(self.gate_fail)
                    continue
            combined.append(fold([counted[n][i] for n in self.parts], weights_now, self.missing))
        if gate_scores is not None:
            columns[f"gate:{self.gate[0]}"] = gate_scores
        self.last_components = columns
        self.last_weights = dict(zip(self.parts, weights_now))
        if self.log_fn is not None:
            self.log_fn(columns, weights_now, step)
        if self.trl_logging:
            _trl_log(self.__name__, columns, kwargs)
        return combined

    def components(self) -> dict[str, Callable]:
        """Part name -> reward function (the gate as 'gate:<name>'), to log each on its own."""
        out = dict(self.parts)
        if self.gate:
            out[f"gate:{self.gate[0]}"] = self.gate[1]
        return out

    def __repr__(self) -> str:
        return f"<combined reward {self.__name__}>"


def _trl_log(combined_name: str, columns: dict, kwargs: dict) -> None:
    # TRL hands reward functions these hooks; other callers do not, and that is fine.
    log_metric, log_extra = kwargs.get("log_metric"), kwargs.get("log_extra")
    for part, scores in columns.items():
        present = [s for s in scores if s is not None]
        if callable(log_metric) and present:
            log_metric(f"rewards/{combined_name}/{part}/mean", sum(present) / len(present))
        if callable(log_extra):
            log_extra(f"{combined_name}/{part}", list(scores))


def components(reward: Callable) -> dict[str, Callable]:
    """The parts of a combined reward (name -> reward function), gate included as 'gate:<name>'.

    Give them to TRL alongside the combined reward with weight 0 so each is
    logged as its own metric. A reward that is not combined returns itself.
    """
    parts = getattr(reward, "components", None)
    if callable(parts):
        return parts()
    return {getattr(reward, "__name__", "reward"): reward}
