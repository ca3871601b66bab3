"""RewardSet: a run's rewards and weights, built once, scored the way TRL scores them.

    rs = RewardSet.from_specs(cfg.rewards_for(stage), answer_format=cfg.data.answer_format)
    scored = rs.score(completions, answer=answers, prompts=prompts)
    scored.scores["numeric_match"], scored.totals, scored.none, scored.errors

TRL calls each reward on the batch, turns None into NaN, and sums weight * score
over the rewards that scored (a NaN-aware sum). Training lets TRL do the calling;
everything that scores outside a trainer (doctor, eval, calibration, the held-out
callback) does it here, so they all see what training sees: a reward that raises
is a counted error and None for that batch, never a crash and never a silent 0. A None
among scored row-mates (same prompt and row columns) is counted in `none`, and scored at
the reward's floor (grpokit.rewards.unscorable): unscorable is never worth more than wrong.
Every call goes through the watchdog (grpokit.rewards.watchdog): a reward that hangs
is given up on after its timeout (killed, with `isolate: true`), and that is an error
like any other. Inside a trainer,
`TrainerRewards` (grpokit.rewards.trainer_rewards) hands TRL these same calls.

`check_specs` validates names and parameters without building a reward, so config
validation constructs nothing (and starts no worker process). Both take the run's
answer format (grpokit.answer_format): every reward that reads the answer
or checks the tags is built with it, unless its own params say otherwise.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from grpokit.rewards.format_params import check_agrees, with_answer_format
from grpokit.rewards.registry import RewardConfigError, check, get
from grpokit.rewards.unscorable import floor_of, settled
from grpokit.rewards.watchdog import DEFAULT_TIMEOUT, call_with_timeout

RewardFunc = Callable[..., list]


def _field(spec: Any, key: str, default: Any = None) -> Any:
    # Specs are config dataclasses (RewardSpec) or the same thing as a plain mapping.
    return spec.get(key, default) if isinstance(spec, Mapping) else getattr(spec, key, default)


def check_specs(specs: Sequence[Any], where: str = "rewards", answer_format: Any = None) -> None:
    """Every spec names a registered reward with acceptable parameters and a numeric weight.

    Raises RewardConfigError naming the entry (`rewards[1]: ...`); builds nothing.
    A format reward whose own `tags` disagree with the answer format the other
    rewards read is an error too (see answer_format.check_agrees).
    """
    for i, spec in enumerate(specs):
        name, weight = _field(spec, "name"), _field(spec, "weight", 1.0)
        if not name:
            raise RewardConfigError(f"{where}[{i}] has no name; write it like {{name: numeric_match, weight: 1.0}}")
        try:
            check(name, **(_field(spec, "params") or {}))
        except RewardConfigError as exc:
            raise RewardConfigError(f"{where}[{i}]: {exc}") from exc
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
            raise RewardConfigError(f"{where}[{i}].weight must be a finite number, got {weight!r}")
        check_timeout(_field(spec, "timeout"), f"{where}[{i}].timeout")
        isolate = _field(spec, "isolate", False)
        if not isinstance(isolate, bool):
            raise RewardConfigError(f"{where}[{i}].isolate must be true or false, got {isolate!r}")
    check_agrees([(_field(s, "name"), _field(s, "params") or {}) for s in specs], answer_format, where)


def check_timeout(timeout: Any, where: str = "timeout") -> None:
    """A reward's watchdog timeout: unset (the default) or a positive number of seconds."""
    if timeout is None:
        return
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
        raise RewardConfigError(f"{where} must be a positive number of seconds (e.g. 60), got {timeout!r}; "
                                f"leave it unset for the default {DEFAULT_TIMEOUT:g} s")


def unique_names(funcs: Sequence[Callable]) -> list[str]:
    """Each reward's `__name__` (what TRL logs it under; a functools.partial's function's); a repeated
    name gets _2, _3. The one naming rule: training, evaluation, debug_reward and the probe use it."""
    seen: dict[str, int] = {}
    out = []
    for func in funcs:
        base = (getattr(func, "__name__", None) or getattr(getattr(func, "func", None), "__name__", None)
                or type(func).__name__)
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}_{seen[base]}")
    return out


def as_score(value: Any) -> float | None:
    """A reward's value as TRL uses it: None stays None, numbers become floats; raises TypeError otherwise."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)):
        raise TypeError(f"a string ({value[:40]!r})")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"a {type(value).__name__}") from None


def call_reward(func: RewardFunc, completions: Sequence[Any], columns: Mapping[str, Any] | None = None,
                timeout: float | None = DEFAULT_TIMEOUT, isolate: bool = False) -> tuple[list[float | None], str | None]:
    """(scores, error): one call as TRL makes it, under the watchdog. A call that takes longer than
    `timeout` seconds, a raise, a wrong length or a non-number is the error (first 300 characters)
    and every score None. `isolate`: run it in a process killed at the timeout (watchdog.py)."""
    n = len(completions)
    try:
        out = list(call_with_timeout(func, completions, dict(columns or {}), timeout, isolate=isolate))
        if len(out) != n:
            raise ValueError(f"returned {len(out)} scores for {n} completions")
        return [as_score(v) for v in out], None
    except Exception as exc:  # a broken reward is reported, not allowed to stop the caller
        return [None] * n, f"{type(exc).__name__}: {exc}"[:300]


def weighted_totals(scores: Mapping[str, Sequence[float | None]], weights: Sequence[float],
                    n: int) -> list[float | None]:
    """TRL's combination: the sum of weight * score over the rewards that scored; None where none did."""
    totals: list[float | None] = []
    columns = list(scores.values())
    for i in range(n):
        parts = [(w, col[i]) for col, w in zip(columns, weights)
                 if col[i] is not None and math.isfinite(col[i])]
        totals.append(sum(w * s for w, s in parts) if parts else None)
    return totals


@dataclass
class SetScores:
    """One batch scored by every reward of a set."""

    scores: dict[str, list[float | None]]          # reward name -> one score per completion
    totals: list[float | None]                     # weighted, as TRL sums them
    none: dict[str, int] = field(default_factory=dict)    # reward name -> completions it could not score
    errors: dict[str, str] = field(default_factory=dict)  # reward name -> the error, where it failed


class RewardSet:
    """Reward functions with their weights and the names TRL logs them under."""

    def __init__(self, funcs: Sequence[RewardFunc], weights: Sequence[float] | None = None,
                 timeouts: Sequence[float | None] | None = None, isolate: Sequence[bool] | None = None):
        self.funcs = list(funcs)
        self.weights = [float(w) for w in weights] if weights is not None else [1.0] * len(self.funcs)
        if len(self.weights) != len(self.funcs):
            raise RewardConfigError(f"{len(self.weights)} weights for {len(self.funcs)} reward functions")
        # Seconds each reward may take on one batch before the watchdog gives up on it.
        self.timeouts = [DEFAULT_TIMEOUT if t is None else float(t) for t in (timeouts or [None] * len(self.funcs))]
        if len(self.timeouts) != len(self.funcs):
            raise RewardConfigError(f"{len(self.timeouts)} timeouts for {len(self.funcs)} reward functions")
        # Which rewards run in a process of their own, killed at their timeout (watchdog.py).
        self.isolate = [bool(i) for i in (isolate or [False] * len(self.funcs))]
        if len(self.isolate) != len(self.funcs):
            raise RewardConfigError(f"{len(self.isolate)} isolate flags for {len(self.funcs)} reward functions")
        self.names = unique_names(self.funcs)

    @classmethod
    def from_specs(cls, specs: Sequence[Any], where: str = "rewards", answer_format: Any = None) -> "RewardSet":
        """Build each `{name, weight, params}` entry through the registry (errors name the entry).

        `answer_format` (the run's `data.answer_format`) reaches every reward that takes one.
        """
        check_specs(specs, where, answer_format)
        funcs = []
        for i, spec in enumerate(specs):
            name = _field(spec, "name")
            try:
                funcs.append(get(name, **with_answer_format(name, _field(spec, "params"), answer_format)))
            except RewardConfigError as exc:
                raise RewardConfigError(f"{where}[{i}]: {exc}") from exc
        return cls(funcs, [_field(spec, "weight", 1.0) for spec in specs], [_field(spec, "timeout") for spec in specs],
                   [_field(spec, "isolate", False) for spec in specs])

    def replace_funcs(self, funcs: Sequence[RewardFunc]) -> "RewardSet":
        """The same weights and timeouts over other functions (each wrapping the one at its place)."""
        return RewardSet(funcs, self.weights, self.timeouts, self.isolate)

    def __len__(self) -> int:
        return len(self.funcs)

    def describe(self) -> str:
        """`numeric_match x2, incremental_format x0.5`: what the set scores, for messages."""
        return ", ".join(f"{n} x{w:g}" for n, w in zip(self.names, self.weights))

    def score(self, completions: Sequence[Any], **columns) -> SetScores:
        """Score one batch; columns are the data set's, one list per column, aligned with completions."""
        n = len(completions)
        result = SetScores(scores={}, totals=[])
        for name, func, timeout, isolate in zip(self.names, self.funcs, self.timeouts, self.isolate):
            values, error = call_reward(func, completions, columns, timeout, isolate)
            if error is not None:
                result.errors[name] = error
            result.none[name] = 0 if error is not None else sum(v is None for v in values)
            # As TrainerRewards hands TRL: a None among scored row-mates counts at the reward's floor.
            result.scores[name] = settled(values, columns, floor_of(func))
        result.totals = weighted_totals(result.scores, self.weights, n)
        return result
