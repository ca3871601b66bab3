"""The `health:` section of a run config: thresholds for the live health rules (grpokit.health.rules).

It lives with the config so the config stage validates a run without importing the health
stage. `RULE_IDS` are the values `health.disable` accepts: the ids of grpokit.health.symptoms'
rows, written here once more because config comes before health; a test
(tests/config/test_health_section.py) fails when the two lists differ.
"""
from __future__ import annotations

import difflib
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from grpokit.config.health_aliases import FLAT_KEYS
from grpokit.config.health_params import PARAMS, RuleParams
from grpokit.errors import ConfigError

RULE_IDS: tuple[str, ...] = (
    "no_learning_signal", "truncation", "collapse", "kl_blowup", "non_finite", "diverged", "reward_stuck",
    "length_drift", "reward_unscorable", "out_of_memory", "tool_calls_fail", "tool_never_called", "tool_turn_limit",
    "judge_failing", "judge_slow",
)


@dataclass
class HealthConfig:
    """Thresholds for the health rules; the `health:` section of a run config."""

    enabled: bool = True
    stop_on_critical: bool = False      # save a checkpoint and stop when a critical alert fires
    disable: list[str] = field(default_factory=list)  # rule ids to switch off
    realert_steps: int = 50             # repeat a still-firing alert after this many logged steps
    clear_steps: int = 5                # a rule must stay clear this long before it can alert anew
    max_completion_length: int | None = None  # filled from the trainer's args when left empty
    # Logged steps the run will have (max_steps / logging_steps), filled from the trainer when left empty.
    # A patience longer than a short run would never be met, so every patience is capped at a quarter
    # of the run (at least 2 logged steps, at most the whole run); see `patience`.
    expected_logged_steps: int | None = None
    # no_learning_signal
    zero_std_frac: float = 0.9          # frac_reward_zero_std at or above this ...
    min_reward_std: float = 0.1         # ... or reward_std below this ...
    no_signal_steps: int = 5            # ... for this many logged steps in a row
    # truncation: most completions cut is confirmed fast; half of them cut must persist
    clipped_ratio: float = 0.95         # completions/clipped_ratio at or above this (nearly every one cut) ...
    truncation_steps: int = 2           # ... for this many logged steps in a row
    sustained_clipped_ratio: float = 0.5  # or at or above this (early steps of a healthy run get here) ...
    sustained_truncation_steps: int = 10  # ... for this many (capped on short runs, which have no time to recover)
    # Either level holds only if the cut costs the answer, where the run logs completions/cut_answer_gap (cut
    # minus finished answer reward within a prompt's group): its mean over the steps of the last
    # sustained_truncation_steps logs with sustained_clipped_ratio cut (truncation_steps of them at least)
    # is at most -cut_gap x their reward_std. At +cut_gap x reward_std or more the reward pays for length:
    # length_drift, not truncation.
    cut_gap: float = 0.5
    # collapse
    entropy_drop: float = 0.3           # entropy below this share of its starting value
    min_distinct_frac: float = 0.3      # or distinct completions per group below this share ...
    collapse_zero_std_frac: float = 0.5  # ... while this share of groups (mean of the last collapse_steps) has one score
    collapse_steps: int = 3
    collapse_shared_frac: float = 0.75  # ... and this share of groups (mean of the last collapse_steps) answer alike
    # diverged: the reward at this share of the first steps' or less (in two logged steps at most) ...
    diverge_reward_frac: float = 0.05
    # ... while entropy is this many times the first steps' or this fraction of it (or every completion is cut)
    diverge_entropy_rise: float = 2.0
    # kl_blowup: kl is a mean over a small batch's tokens, so one step can spike. Measured on the demo with
    # beta 0.04 (a healthy run, held-out accuracy 0.28 -> 0.45): single steps at 0.56-1.27, back under 0.5
    # the next step, never 3 in a row; a learning rate 10x too high stayed above 0.6 for 7 steps.
    kl_max: float = 0.5
    kl_steps: int = 3
    # reward_stuck
    stuck_window: int = 20              # logged steps the trend is fitted over
    stuck_min_gain: float = 0.05        # rise over the window, in units of reward_std, that counts as progress
    stuck_baseline_steps: int = 5       # the first logged steps the window is compared with
    # length_drift
    length_limit_frac: float = 0.85     # mean length at this share of max_completion_length
    length_window: int = 10
    length_min_limit: int = 32          # below this max_completion_length, answers are short by design and
                                        # a token or two of noise is "drift": truncation speaks for such runs
    length_gap_steps: int = 3           # cut completions out-scoring finished ones: the steps the mean gap needs
    # reward_unscorable
    max_none_frac: float = 0.5
    unscorable_steps: int = 2
    # out_of_memory: the process's peak against the limit that binds (grpokit.health.memory)
    memory_limit_frac: float = 0.9
    # tool runs (tools:): TRL's tools/* metrics and the tool_turn_limit diagnostic reward
    tool_failure_frac: float = 0.9      # tools/failure_frequency at or above this ...
    tool_failure_steps: int = 3         # ... for this many logged steps in a row
    min_tool_calls: float = 0.05        # tools/call_frequency (calls per episode) below this ...
    no_tool_steps: int = 5              # ... for this many logged steps in a row
    turn_limit_frac: float = 0.5        # share of episodes that end on a call that never ran ...
    turn_limit_steps: int = 3           # ... for this many logged steps in a row
    # judge rewards (llm_judge): judge/<name>/* metrics
    judge_failure_frac: float = 0.2     # share of completions the judge left unscored above this ...
    judge_failure_steps: int = 1        # ... for this many logged steps in a row
    judge_step_share: float = 0.5       # judging takes this share of the step's wall time or more ...
    judge_max_latency_s: float = 30.0   # ... or a median judge request takes this long ...
    judge_slow_steps: int = 3           # ... for this many logged steps in a row

    def __post_init__(self) -> None:
        unknown = [r for r in self.disable if r not in RULE_IDS]
        if unknown:
            raise ConfigError(f"health.disable: unknown rule(s) {unknown}; the rules are {list(RULE_IDS)}")
        for name in ("zero_std_frac", "clipped_ratio", "sustained_clipped_ratio", "entropy_drop",
                     "min_distinct_frac", "collapse_zero_std_frac", "collapse_shared_frac", "length_limit_frac", "max_none_frac",
                     "tool_failure_frac", "memory_limit_frac", "turn_limit_frac", "diverge_reward_frac"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"health.{name} is a share and must be between 0 and 1, got {value}")
        for name in ("no_signal_steps", "truncation_steps", "sustained_truncation_steps", "collapse_steps",
                     "kl_steps", "stuck_window", "stuck_baseline_steps", "length_window", "length_gap_steps", "length_min_limit", "unscorable_steps", "realert_steps", "clear_steps",
                     "tool_failure_steps", "no_tool_steps", "turn_limit_steps"):
            if int(getattr(self, name)) < 1:
                raise ConfigError(f"health.{name} must be at least 1, got {getattr(self, name)}")
        if not self.cut_gap >= 0.0:
            raise ConfigError(f"health.cut_gap is a margin in units of reward_std and must be 0 or more, "
                              f"got {self.cut_gap}")
        if self.diverge_entropy_rise <= 1.0:
            raise ConfigError(f"health.diverge_entropy_rise is a factor over the first step's entropy and must be "
                              f"above 1, got {self.diverge_entropy_rise}")
        if int(self.stuck_baseline_steps) >= int(self.stuck_window):
            raise ConfigError(f"health.stuck_baseline_steps ({self.stuck_baseline_steps}) are the run's first steps the "
                              f"stuck_window ({self.stuck_window}) is compared with and must be fewer than it")
        if self.sustained_clipped_ratio > self.clipped_ratio:
            raise ConfigError(
                f"health.sustained_clipped_ratio ({self.sustained_clipped_ratio}) is the lower, slower truncation "
                f"level and must not exceed health.clipped_ratio ({self.clipped_ratio}); lower it or raise "
                f"clipped_ratio")
        _check_judge_fields(self)
        if self.expected_logged_steps is not None and int(self.expected_logged_steps) < 1:
            raise ConfigError(f"health.expected_logged_steps must be at least 1, got {self.expected_logged_steps}")

    def params(self, rule: str) -> RuleParams:
        """The parameters of `rule` (grpokit.config.health_params), from this section's keys."""
        values = {name: getattr(self, flat) for flat, targets in FLAT_KEYS.items() for target, name in targets
                  if target == rule}
        return PARAMS[rule](**values)

    def patience(self, key: str) -> int:
        """The patience named `key` (a *_steps field), as it applies to this run.

        On a run of N logged steps it is at most max(2, ceil(N / 4)) and at most N: a 3-step run
        alerts after 2 steps in a row instead of never, a 200-step run keeps the configured value.
        """
        steps = int(getattr(self, key))
        total = self.expected_logged_steps
        if total:
            steps = min(steps, max(2, math.ceil(total / 4)), int(total))
        return max(1, steps)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "HealthConfig":
        """Build from the config's `health:` dict; an unknown key names the nearest valid one."""
        data = dict(data or {})
        valid = [f.name for f in fields(cls)]
        for key in data:
            if key not in valid:
                near = difflib.get_close_matches(key, valid, n=1)
                hint = f"; did you mean {near[0]!r}?" if near else f"; valid keys: {', '.join(valid)}"
                raise ConfigError(f"health: unknown key {key!r}{hint}")
        if isinstance(data.get("disable"), str):
            data["disable"] = [data["disable"]]
        defaults = cls()
        for key, value in data.items():
            default = getattr(defaults, key)
            # YAML and --set give strings or ints where a float is meant; a wrong type would only
            # surface mid-run as a TypeError inside a rule.
            if isinstance(default, bool):
                if not isinstance(value, bool):
                    raise ConfigError(f"health.{key} must be true or false, got {value!r}")
            elif isinstance(default, (int, float)) or (key in ("max_completion_length", "expected_logged_steps")
                                                       and value is not None):
                kind = float if isinstance(default, float) else int
                try:
                    data[key] = kind(value)
                except (TypeError, ValueError):
                    raise ConfigError(f"health.{key} must be a number, got {value!r}") from None
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check_judge_fields(c: HealthConfig) -> None:
    for name in ("judge_failure_frac", "judge_step_share"):
        if not 0.0 <= getattr(c, name) <= 1.0:
            raise ConfigError(f"health.{name} is a share and must be between 0 and 1, got {getattr(c, name)}")
    if not c.judge_max_latency_s > 0:
        raise ConfigError(f"health.judge_max_latency_s must be a positive number of seconds, got {c.judge_max_latency_s}")
    for name in ("judge_failure_steps", "judge_slow_steps"):
        if int(getattr(c, name)) < 1:
            raise ConfigError(f"health.{name} must be at least 1, got {getattr(c, name)}")
