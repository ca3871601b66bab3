"""The `health:` section of a run config: the live health rules' switches and parameters.

    health:
      stop_on_critical: true
      rules:
        truncation: {clipped_ratio: 0.9, patience: 3}
        reward_stuck: {enabled: false}

`rules.<id>` takes that rule's parameters (grpokit.config.health_params, one class per rule, whose
defaults are the measured thresholds); every rule has `enabled` and `patience`. `disable: [ids]` still
switches rules off. The flat keys of earlier releases (`health: {clipped_ratio: 0.9}`) still work and
warn, naming the nested key (config/health_aliases.py). It lives with the config so the config stage
validates a run without importing the health stage; the health table is built over the same classes.
"""
from __future__ import annotations

import difflib
import functools
import math
import warnings
from dataclasses import dataclass, field, fields
from typing import Any

from grpokit.config.health_aliases import FLAT_KEYS, nested_words
from grpokit.config.health_params import PARAMS, RuleParams
from grpokit.errors import ConfigError

RULE_IDS: tuple[str, ...] = tuple(PARAMS)


def _default_rules() -> dict[str, RuleParams]:
    return {rule: cls() for rule, cls in PARAMS.items()}


@dataclass
class HealthConfig:
    """The `health:` section of a run config."""

    enabled: bool = True
    stop_on_critical: bool = False      # save a checkpoint and stop when a critical alert fires
    disable: list[str] = field(default_factory=list)  # rule ids to switch off
    realert_steps: int = 50             # repeat a still-firing alert after this many logged steps
    clear_steps: int = 5                # a rule must stay clear this long before it can alert anew
    max_completion_length: int | None = None  # filled from the trainer's args when left empty
    # Logged steps the run will have (max_steps / logging_steps), filled from the trainer when left empty.
    # A patience longer than a short run would never be met, so every patience is capped at a quarter
    # of the run (at least 2 logged steps, at most the whole run); see `capped`.
    expected_logged_steps: int | None = None
    # Completions scored per logged step (the trainer's generation batch), filled from the trainer when left
    # empty: how much of a step's reward is sampling noise (diverged weighs a fall against it).
    completions_per_step: int | None = None
    rules: dict[str, RuleParams] = field(default_factory=_default_rules)

    def __post_init__(self) -> None:
        unknown = [r for r in self.disable if r not in RULE_IDS]
        if unknown:
            raise ConfigError(f"health.disable: unknown rule(s) {unknown}; the rules are {list(RULE_IDS)}")
        self.rules = {**_default_rules(), **self.rules}
        for name in ("realert_steps", "clear_steps"):
            if int(getattr(self, name)) < 1:
                raise ConfigError(f"health.{name} must be at least 1, got {getattr(self, name)}")
        if self.expected_logged_steps is not None and int(self.expected_logged_steps) < 1:
            raise ConfigError(f"health.expected_logged_steps must be at least 1, got {self.expected_logged_steps}")

    def params(self, rule: str) -> RuleParams:
        """The parameters of `rule` (grpokit.config.health_params)."""
        return self.rules[rule]

    def capped(self, steps: int) -> int:
        """A patience of `steps` as it applies to this run: on a run of N logged steps at most
        max(2, ceil(N / 4)) and at most N, so a 3-step run alerts after 2 steps in a row instead of
        never, and a 200-step run keeps the configured value."""
        steps, total = int(steps), self.expected_logged_steps
        if total:
            steps = min(steps, max(2, math.ceil(total / 4)), int(total))
        return max(1, steps)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "HealthConfig":
        """Build from the config's `health:` dict; an unknown key names the nearest valid one."""
        data = dict(data or {})
        general = [f.name for f in fields(cls) if f.name != "rules"]
        nested = data.pop("rules", None) or {}
        if not isinstance(nested, dict):
            raise ConfigError(f"health.rules must be a mapping of rule id to its parameters, got {nested!r}")
        values: dict[str, dict[str, Any]] = {}
        flat = [key for key in data if key in FLAT_KEYS]
        for key in flat:
            for rule, name in FLAT_KEYS[key]:
                values.setdefault(rule, {})[name] = data[key]
        if flat:
            _warn_flat(flat, stacklevel=3)
        for key in data:
            if key not in general and key not in FLAT_KEYS:
                raise ConfigError(f"health: unknown key {key!r}{_hint(key, [*general, 'rules', *FLAT_KEYS])}")
        for rule, given in nested.items():
            if rule not in PARAMS:
                raise ConfigError(f"health.rules: unknown rule {rule!r}{_hint(rule, RULE_IDS)}")
            if not isinstance(given, dict):
                raise ConfigError(f"health.rules.{rule} must be a mapping of its parameters, got {given!r}")
            values.setdefault(rule, {}).update(given)  # the nested key wins over a flat alias
        general_values = {key: _coerce(f"health.{key}", getattr(cls(), key), value, key)
                          for key, value in data.items() if key in general}
        if isinstance(general_values.get("disable"), str):
            general_values["disable"] = [general_values["disable"]]
        return cls(**general_values, rules={rule: _params(rule, given) for rule, given in values.items()})

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "rules"}
        out["disable"] = list(self.disable)
        out["rules"] = {rule: params.to_dict() for rule, params in self.rules.items()}
        return out


def _warn_flat(flat: list[str], stacklevel: int) -> None:
    warnings.warn("health: the flat key(s) " + "; ".join(f"{k} (now {nested_words(k)})" for k in flat)
                  + " are deprecated; write them under health.rules.<rule>", FutureWarning, stacklevel=stacklevel)


def _accept_flat_keys(cls: type[HealthConfig]) -> type[HealthConfig]:
    """Let the constructor take the flat keys the YAML section takes (`HealthConfig(kl_max=2.0)`), with the
    same warning, so Python callers move to `rules=` on the same schedule as config files."""
    init = cls.__init__
    general = {f.name for f in fields(cls)}

    @functools.wraps(init)
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        unknown = [key for key in kwargs if key not in general and key not in FLAT_KEYS]
        if unknown:
            raise ConfigError(f"HealthConfig: unknown argument {unknown[0]!r}"
                              f"{_hint(unknown[0], [*sorted(general), *FLAT_KEYS])}")
        flat = {key: kwargs.pop(key) for key in list(kwargs) if key in FLAT_KEYS}
        if flat:
            _warn_flat(list(flat), stacklevel=3)
            given = dict(kwargs.get("rules") or {})
            values: dict[str, dict[str, Any]] = {}
            for key, value in flat.items():
                for rule, name in FLAT_KEYS[key]:
                    values.setdefault(rule, {})[name] = value
            # A rule passed whole in `rules=` wins over a flat alias of one of its parameters.
            kwargs["rules"] = {**{rule: _params(rule, v) for rule, v in values.items() if rule not in given},
                               **given}
        init(self, *args, **kwargs)

    cls.__init__ = __init__  # type: ignore[method-assign]
    return cls


_accept_flat_keys(HealthConfig)


def _params(rule: str, given: dict[str, Any]) -> RuleParams:
    cls = PARAMS[rule]
    names = cls.names()
    for key in given:
        if key not in names:
            raise ConfigError(f"health.rules.{rule}: unknown key {key!r}{_hint(key, names)}")
    defaults = cls()
    return cls(**{key: _coerce(cls.key(key), getattr(defaults, key), value, key) for key, value in given.items()})


def _hint(key: str, valid) -> str:
    near = difflib.get_close_matches(key, list(valid), n=1)
    return f"; did you mean {near[0]!r}?" if near else f"; valid keys: {', '.join(valid)}"


RUN_FACT_KEYS = ("max_completion_length", "expected_logged_steps", "completions_per_step")


def _coerce(where: str, default: Any, value: Any, key: str) -> Any:
    # YAML and --set give strings or ints where a float is meant; a wrong type would only surface mid-run
    # as a TypeError inside a rule.
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, got {value!r}")
        return value
    if isinstance(default, (int, float)) or (key in RUN_FACT_KEYS and value is not None):
        kind = float if isinstance(default, float) else int
        try:
            return kind(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{where} must be a number, got {value!r}") from None
    return value
