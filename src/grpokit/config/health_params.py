"""Each health rule's parameters, one small dataclass per rule: the config half of the rule table.

The rule table (grpokit.health.table) pairs each of these with its check and its words. The
parameters live here, with the config, because config comes before health: the `health:` section
is validated without importing the rules. A class's RULE is the rule's id, written once: the ids
`health.disable` and `health.rules` accept are the keys of PARAMS, and the health table is built
over the same classes.

Every rule has `enabled` and `patience` (logged steps in a row before it alerts; capped on short
runs, see HealthConfig.capped). Defaults are the thresholds measured on the health zoo's runs.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from grpokit.errors import ConfigError


@dataclass
class RuleParams:
    RULE: ClassVar[str] = ""
    SHARES: ClassVar[tuple[str, ...]] = ()   # fields that are shares: 0 to 1
    COUNTS: ClassVar[tuple[str, ...]] = ()   # fields that count logged steps: at least 1

    enabled: bool = True
    patience: int = 1

    def __post_init__(self) -> None:
        for name in self.SHARES:
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{self.key(name)} is a share and must be between 0 and 1, got {getattr(self, name)}")
        for name in ("patience", *self.COUNTS):
            if int(getattr(self, name)) < 1:
                raise ConfigError(f"{self.key(name)} must be at least 1, got {getattr(self, name)}")
        self.validate()

    def validate(self) -> None:
        """Checks across this rule's own fields."""

    @classmethod
    def key(cls, name: str) -> str:
        return f"health.rules.{cls.RULE}.{name}"

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    def history_steps(self) -> int:
        """Logged steps of raw history this rule looks back over."""
        return 1

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.names()}


@dataclass
class NoLearningSignal(RuleParams):
    RULE = "no_learning_signal"
    SHARES = ("zero_std_frac",)
    zero_std_frac: float = 0.9          # frac_reward_zero_std at or above this ...
    min_reward_std: float = 0.1         # ... or reward_std below this
    patience: int = 5


@dataclass
class Truncation(RuleParams):
    """Most completions cut is confirmed fast; half of them cut must persist. Either level holds only if
    the cut costs the answer, where the run logs completions/cut_answer_gap: its mean over the half-cut
    steps of the last sustained_patience logs (patience of them at least) is at most -cut_gap x their
    reward_std."""
    RULE = "truncation"
    SHARES = ("clipped_ratio", "sustained_clipped_ratio")
    COUNTS = ("sustained_patience",)
    clipped_ratio: float = 0.95         # nearly every completion cut, for `patience` logs in a row ...
    patience: int = 2
    sustained_clipped_ratio: float = 0.5  # ... or half of them (a healthy run's first steps), for longer
    sustained_patience: int = 10
    cut_gap: float = 0.5                # in units of reward_std
    # A reward no completion earned names the limit when the completions fill it on average: then the
    # finished ones are near the limit too, and no answer had room for what that reward pays.
    silent_fill: float = 0.9            # completions/mean_length >= this x max_completion_length

    def validate(self) -> None:
        if not self.cut_gap >= 0.0:
            raise ConfigError(f"{self.key('cut_gap')} is a margin in units of reward_std and must be 0 or more, "
                              f"got {self.cut_gap}")
        if self.sustained_clipped_ratio > self.clipped_ratio:
            raise ConfigError(f"{self.key('sustained_clipped_ratio')} ({self.sustained_clipped_ratio}) is the lower, "
                              f"slower truncation level and must not exceed {self.key('clipped_ratio')} "
                              f"({self.clipped_ratio}); lower it or raise clipped_ratio")

    def history_steps(self) -> int:
        return max(int(self.patience), int(self.sustained_patience))


@dataclass
class Collapse(RuleParams):
    RULE = "collapse"
    SHARES = ("entropy_drop", "min_distinct_frac", "zero_std_frac", "shared_frac")
    entropy_drop: float = 0.3           # entropy below this share of its start ...
    min_distinct_frac: float = 0.3      # ... or distinct completions per group below this share ...
    zero_std_frac: float = 0.5          # ... while this share of groups (mean of the last `patience`) has one score
    shared_frac: float = 0.75           # ... and this share of groups answers alike
    patience: int = 3


@dataclass
class KlBlowup(RuleParams):
    """kl is a mean over a small batch's tokens, so one step can spike: on the demo with beta 0.04 (a
    healthy run) single steps reached 0.56-1.27 and fell back under 0.5 the next step, never 3 in a row;
    a learning rate 10x too high stayed above 0.6 for 7 steps."""
    RULE = "kl_blowup"
    kl_max: float = 0.5
    patience: int = 3


@dataclass
class NonFinite(RuleParams):
    RULE = "non_finite"


@dataclass
class Diverged(RuleParams):
    """The reward at reward_frac of the first steps' or less (in two logged steps at most), a fall of
    noise_z standard errors or more where the run's completions per step are known, while entropy is
    entropy_rise times the first steps' or 1/entropy_rise of it, or clipped_ratio of completions cut where
    the first steps had fewer."""
    RULE = "diverged"
    SHARES = ("reward_frac", "clipped_ratio")
    reward_frac: float = 0.05
    entropy_rise: float = 2.0
    clipped_ratio: float = 0.95
    # The fall must be this many standard errors of the two means (each step's reward_std over the
    # completions it scored): 1.5 is about a 7% chance one-sided that sampling alone fell that far.
    noise_z: float = 1.5

    def validate(self) -> None:
        if self.entropy_rise <= 1.0:
            raise ConfigError(f"{self.key('entropy_rise')} is a factor over the first step's entropy and must be "
                              f"above 1, got {self.entropy_rise}")


@dataclass
class RewardStuck(RuleParams):
    RULE = "reward_stuck"
    COUNTS = ("window", "baseline_steps")
    window: int = 20                    # logged steps the trend is fitted over (not capped: a trend needs them)
    min_gain: float = 0.05              # rise over the window, in units of reward_std, that counts as progress
    baseline_steps: int = 5             # the first logged steps the window is compared with

    def validate(self) -> None:
        if int(self.baseline_steps) >= int(self.window):
            raise ConfigError(f"{self.key('baseline_steps')} ({self.baseline_steps}) are the run's first steps the "
                              f"window ({self.window}) is compared with and must be fewer than it")

    def history_steps(self) -> int:
        return int(self.window)


@dataclass
class LengthDrift(RuleParams):
    """Mean length near the limit and rising over `window`; or cut completions out-scoring the finished
    ones of their prompt (the reward pays for length): the mean completions/cut_answer_gap over the steps
    of the last gap_window logs with cut_clipped_ratio cut (gap_steps of them at least) >= cut_gap x their
    reward_std."""
    RULE = "length_drift"
    SHARES = ("limit_frac", "cut_clipped_ratio")
    COUNTS = ("window", "min_limit", "gap_steps", "gap_window")
    limit_frac: float = 0.85            # mean length at this share of max_completion_length
    window: int = 10
    min_limit: int = 32                 # below this limit answers are short by design: truncation speaks for them
    gap_steps: int = 3
    gap_window: int = 10
    cut_clipped_ratio: float = 0.5
    cut_gap: float = 0.5

    def validate(self) -> None:
        if not self.cut_gap >= 0.0:
            raise ConfigError(f"{self.key('cut_gap')} is a margin in units of reward_std and must be 0 or more, "
                              f"got {self.cut_gap}")

    def history_steps(self) -> int:
        return max(int(self.window), int(self.gap_window))


@dataclass
class RewardUnscorable(RuleParams):
    RULE = "reward_unscorable"
    SHARES = ("max_none_frac",)
    max_none_frac: float = 0.5
    patience: int = 2


@dataclass
class RewardHung(RuleParams):
    """A reward's watchdog gave up on it (rewards/<name>/timeouts): certain, not a noisy share, so at once."""
    RULE = "reward_hung"


@dataclass
class OutOfMemory(RuleParams):
    RULE = "out_of_memory"
    SHARES = ("memory_frac",)
    memory_frac: float = 0.9            # the process's peak against the limit that binds (grpokit.health.memory)


@dataclass
class ToolCallsFail(RuleParams):
    RULE = "tool_calls_fail"
    SHARES = ("failure_frac",)
    failure_frac: float = 0.9
    patience: int = 3


@dataclass
class ToolNeverCalled(RuleParams):
    RULE = "tool_never_called"
    min_calls: float = 0.05             # calls per episode
    patience: int = 5


@dataclass
class ToolTurnLimit(RuleParams):
    RULE = "tool_turn_limit"
    SHARES = ("limit_frac",)
    limit_frac: float = 0.5             # share of episodes that end on a call that never ran
    patience: int = 3


@dataclass
class JudgeFailing(RuleParams):
    RULE = "judge_failing"
    SHARES = ("failure_frac",)
    failure_frac: float = 0.2           # share of completions the judge left unscored, above this


@dataclass
class JudgeSlow(RuleParams):
    RULE = "judge_slow"
    SHARES = ("step_share",)
    step_share: float = 0.5             # judging takes this share of the step's wall time or more ...
    max_latency_s: float = 30.0         # ... or a median judge request takes this long
    patience: int = 3

    def validate(self) -> None:
        if not self.max_latency_s > 0:
            raise ConfigError(f"{self.key('max_latency_s')} must be a positive number of seconds, got {self.max_latency_s}")


@dataclass
class RewardConstant(RuleParams):
    """After the run: a reward that gave every completion the same score at every logged step."""
    RULE = "reward_constant"
    COUNTS = ("min_steps",)
    min_steps: int = 5                  # logged steps of a reward before its flatness means anything


@dataclass
class LossZero(RuleParams):
    RULE = "loss_zero"
    COUNTS = ("min_steps",)
    min_steps: int = 5


@dataclass
class LossRising(RuleParams):
    RULE = "loss_rising"
    COUNTS = ("min_steps",)
    min_steps: int = 5


@dataclass
class NoMetrics(RuleParams):
    RULE = "no_metrics"


@dataclass
class RunInterrupted(RuleParams):
    RULE = "run_interrupted"


@dataclass
class RunFailed(RuleParams):
    RULE = "run_failed"


@dataclass
class RunStatusUnknown(RuleParams):
    RULE = "run_status_unknown"


@dataclass
class RunKilled(RuleParams):
    RULE = "run_killed"


PARAMS: dict[str, type[RuleParams]] = {cls.RULE: cls for cls in (
    NoLearningSignal, Truncation, Collapse, KlBlowup, NonFinite, Diverged, RewardStuck, LengthDrift,
    RewardUnscorable, RewardHung, OutOfMemory, ToolCallsFail, ToolNeverCalled, ToolTurnLimit, JudgeFailing, JudgeSlow,
    # Read after the run, over its whole history and run_status.json (grpokit.health.checks.after_run, run_end).
    RewardConstant, LossZero, LossRising, NoMetrics, RunInterrupted, RunFailed, RunStatusUnknown, RunKilled)}
