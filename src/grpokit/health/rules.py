"""The health rule engine: thresholds, rules, and a monitor fed one log at a time.

Pure Python (no torch, no transformers) so it is cheap on every step and can be
replayed over a finished run's metrics.jsonl by diagnose.py. The callback that
feeds it from a live Trainer is in health.py.

Each rule looks at the history and says "this condition holds now" with a
measured value. The monitor adds patience (k steps in a row), suppression (a
cause hides the symptoms it explains, so one failure raises one alert) and
de-duplication (an alert fires when a condition starts, not every step).
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import asdict, dataclass
from itertools import dropwhile, islice
from typing import Any, Callable, Iterator

from grpokit.config.health_section import HealthConfig  # the `health:` section lives with the run config
from grpokit.health.fixes import fix_for
from grpokit.health.symptoms import BY_RULE, RULES


@dataclass
class Alert:
    step: int
    rule: str
    severity: str
    message: str          # what was measured, with numbers
    fix: str              # what to change (from the symptoms table)
    value: float | None = None
    threshold: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def finite(value: Any) -> float | None:
    """A log value as a finite float, or None (missing, None, NaN, inf, a string)."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _slope(values: list[float]) -> float:
    # Least-squares slope per step; robust enough to noise for a trend test.
    n = len(values)
    mean_x = (n - 1) / 2
    mean_y = sum(values) / n
    num = sum((i - mean_x) * (v - mean_y) for i, v in enumerate(values))
    den = sum((i - mean_x) ** 2 for i in range(n))
    return num / den if den else 0.0


class History:
    """Per-metric recent values (finite ones only), the first few of each, the latest raw log, and the
    run's held-out evaluation records (kept apart: no train-log rule reads them by accident)."""

    def __init__(self, maxlen: int, first: int = 3, whole: tuple[str, ...] = ("reward",)):
        self._values: dict[str, deque] = {}
        self._maxlen = maxlen
        # Keys kept for the whole run (one float a step): diverged looks back to where a fall began.
        self._whole = set(whole)
        self._first_n = max(3, int(first))
        self.first: dict[str, list[float]] = {}  # the first few values, for baselines
        self.latest: dict[str, Any] = {}
        self._logs: deque = deque(maxlen=maxlen)
        self.count = 0  # training logs added so far
        self._fresh: set[str] = set()  # keys whose first-values list took this step's value
        self.held_out: list[dict[str, Any]] = []

    def add(self, logs: dict[str, Any]) -> None:
        self.latest = logs
        self._logs.append(logs)
        self.count += 1
        self._fresh = set()
        for key, raw in logs.items():
            value = finite(raw)
            if value is None:
                continue
            self._values.setdefault(key, deque(maxlen=None if key in self._whole else self._maxlen)).append(value)
            head = self.first.setdefault(key, [])
            if len(head) < self._first_n:
                head.append(value)
                self._fresh.add(key)

    def add_held_out(self, record: dict[str, Any]) -> None:
        self.held_out.append(record)

    def last(self, key: str, n: int) -> list[float]:
        return list(islice(self.newest_first(key), n))[::-1]

    def newest_first(self, key: str) -> Iterator[float]:
        return reversed(self._values.get(key, ()))

    def before_now(self, key: str, n: int = 3) -> list[float]:
        """The first n values of `key`, leaving out this step's: a baseline the step is not part of."""
        head = self.first.get(key, [])
        if key in self._fresh:
            head = head[:-1]
        return head[:n]

    def recent(self, n: int) -> list[dict[str, Any]]:
        """The last n logged steps' raw logs, oldest first."""
        return list(self._logs)[-n:]

    def now(self, key: str) -> float | None:
        """This step's value, only if it was logged this step and is finite."""
        return finite(self.latest.get(key))

    def state(self) -> dict[str, Any]:
        """Everything the rules read, as JSON-able data (a checkpoint keeps it; see HealthMonitor.state)."""
        return {"values": {k: list(v) for k, v in self._values.items()}, "first": self.first, "latest": self.latest,
                "logs": list(self._logs), "count": self.count, "fresh": sorted(self._fresh),
                "held_out": self.held_out}

    def restore(self, state: dict[str, Any]) -> None:
        self._values = {k: deque(v, maxlen=None if k in self._whole else self._maxlen)
                        for k, v in state["values"].items()}
        self.first = {k: list(v) for k, v in state["first"].items()}
        self.latest = dict(state["latest"])
        self._logs = deque(state["logs"], maxlen=self._maxlen)
        self.count = int(state["count"])
        self._fresh = set(state["fresh"])
        self.held_out = list(state["held_out"])


# A rule returns (holds_now, value, threshold, message) given history and config, and may add a
# fifth item: the HealthConfig key of the patience this reading needs (default: PATIENCE[rule]).
Reading = tuple
Rule = Callable[[History, HealthConfig], Reading]

NOT_NOW: Reading = (False, None, None, "")


def rule_no_learning_signal(h: History, c: HealthConfig) -> Reading:
    zero = h.now("frac_reward_zero_std")
    std = h.now("reward_std")
    if zero is not None and zero >= c.zero_std_frac:
        return (True, zero, c.zero_std_frac,
                f"{zero:.0%} of groups have zero reward variance (frac_reward_zero_std >= {c.zero_std_frac})")
    if std is not None and std < c.min_reward_std:
        return (True, std, c.min_reward_std, f"reward_std is {std:.3g}, under {c.min_reward_std}")
    return NOT_NOW


def rule_truncation(h: History, c: HealthConfig) -> Reading:
    # Two levels share one streak of steps at or above the lower one: most completions cut
    # (clipped_ratio) is confirmed after truncation_steps; half of them cut, which the first steps
    # of a healthy run also show before the model learns to stop, must last sustained_truncation_steps.
    clipped = h.now("completions/clipped_ratio")
    if clipped is None or clipped < c.sustained_clipped_ratio:
        return NOT_NOW
    # Where the run logs what the cut costs, a cut that leaves the answer (the model talks on after it)
    # is no harm, and one that earns more is a reward paying for length (length_drift says so): raising
    # the limit would feed it. With every completion cut there is no gap, but what the cut ones still earn
    # tells the same; runs from before both metrics keep the levels.
    gap = cut_gap(h, c)
    if gap is not None and not cut_costs_answer(*gap):
        return NOT_NOW
    earned = cut_answer_score(h, c) if gap is None else None
    if earned is not None and earned[0] > earned[1]:
        return NOT_NOW
    length = h.now("completions/mean_length")
    limit = f" of max_completion_length={c.max_completion_length}" if c.max_completion_length else ""
    extra = f", mean length {length:.0f}{limit}" if length is not None else ""
    message = f"{clipped:.0%} of completions hit the length limit{extra}"
    if gap is not None:
        message += f"; cut completions score {gap[0]:+.2f} on the answer rewards against finished ones"
    recent = h.last("completions/clipped_ratio", c.patience("truncation_steps"))
    if all(value >= c.clipped_ratio for value in recent):
        return (True, clipped, c.clipped_ratio, message, "truncation_steps")
    return (True, clipped, c.sustained_clipped_ratio, message, "sustained_truncation_steps")


def cut_gap(h: History, c: HealthConfig, min_steps: int | None = None) -> tuple[float, float] | None:
    """(mean completions/cut_answer_gap, the margin it must pass) over the steps of the last
    sustained_truncation_steps logs that had half their completions cut or more; None where fewer than
    truncation_steps of them logged it (every completion cut, or a run from before the metric). Steps with a
    few cut completions are left out: one rambling wrong answer there says nothing about the limit. One step
    is not enough either: a base model's first step gave +0.23 (one group) on runs whose answers then never
    fit. The margin is cut_gap x those steps' mean reward_std: the gap is in reward units, and a group's
    spread is what its advantages are measured against."""
    return _mean_against_spread(h, c, "completions/cut_answer_gap", min_steps, half_cut_only=True)


def cut_answer_score(h: History, c: HealthConfig) -> tuple[float, float] | None:
    """(mean completions/cut_answer_score, the margin it must pass) over the last sustained_truncation_steps
    logs; None where fewer than truncation_steps of them logged it. With every completion cut there is no
    finished one to compare with, but a cut that hides the answer leaves the answer rewards at about 0 (a
    2-token limit: 0.00), while a model that writes its answer line and talks on keeps earning them (the
    words demo, seed 2: 100% cut from step 10 at 0.67 held-out accuracy)."""
    return _mean_against_spread(h, c, "completions/cut_answer_score", None, half_cut_only=False)


def _mean_against_spread(h: History, c: HealthConfig, key: str, min_steps: int | None,
                         half_cut_only: bool) -> tuple[float, float] | None:
    """(mean of `key`, cut_gap x the same steps' mean reward_std) over the last sustained_truncation_steps logs
    (with `half_cut_only`, those with sustained_clipped_ratio cut or more) that logged both; None where fewer
    than min_steps (default truncation_steps) did. The margin is in reward units: a group's spread is what
    its advantages are measured against."""
    pairs = [(finite(logs.get(key)), finite(logs.get("reward_std")))
             for logs in h.recent(int(c.sustained_truncation_steps))
             if not half_cut_only
             or (finite(logs.get("completions/clipped_ratio")) or 0.0) >= c.sustained_clipped_ratio]
    pairs = [(value, std) for value, std in pairs if value is not None and std is not None]
    if len(pairs) < max(1, int(c.truncation_steps if min_steps is None else min_steps)):
        return None
    return (sum(value for value, _ in pairs) / len(pairs), c.cut_gap * sum(std for _, std in pairs) / len(pairs))


def cut_costs_answer(mean: float, margin: float) -> bool:
    return mean < 0 and mean <= -margin


def cut_pays(mean: float, margin: float) -> bool:
    return mean > 0 and mean >= margin


def rule_collapse(h: History, c: HealthConfig) -> Reading:
    # Low entropy or identical completions alone is also what a model sure of the right answer looks like
    # (one-number answers, a learned format). It is collapse when the groups stop teaching: most of
    # the recent groups scored every completion the same.
    recent = [v for v in h.last("frac_reward_zero_std", c.collapse_steps) if finite(v) is not None]
    if not recent or sum(recent) / len(recent) < c.collapse_zero_std_frac:
        return NOT_NOW
    # Sure is not collapsed: on one-number answers (the demo) each group settles on its own answer, and
    # entropy and per-group diversity fall as it learns. Collapse is one answer whatever the question:
    # the groups' usual completions are the same. Logged by the tracker when a step has 2+ groups.
    shared = h.last("completions/shared_answer_frac", c.collapse_steps)
    if shared and h.now("completions/shared_answer_frac") is not None \
            and sum(shared) / len(shared) < c.collapse_shared_frac:
        return NOT_NOW
    entropy = h.now("entropy")
    start = h.first.get("entropy", [])
    if entropy is not None and len(start) >= 3:
        baseline = sorted(start[:3])[1]  # median of the first three: one odd first step does not set it
        if baseline > 0 and entropy < c.entropy_drop * baseline:
            return (True, entropy, c.entropy_drop * baseline,
                    f"entropy fell to {entropy:.3g} from {baseline:.3g} at the start "
                    f"(below {c.entropy_drop:.0%} of it)")
    distinct = h.now("completions/distinct_frac")
    if distinct is not None and distinct < c.min_distinct_frac:
        return (True, distinct, c.min_distinct_frac,
                f"only {distinct:.0%} of completions in a group are distinct")
    return NOT_NOW


def rule_diverged(h: History, c: HealthConfig) -> Reading:
    # A learning rate that blows the weights up need not give NaN: the model writes noise, and every
    # reward drops to nothing at once. Its entropy is no guide by itself: on the demo at learning rate 1.0
    # the step after the jump measured 0.0 to 4.0 in 15 runs against 1.53-1.55 at the first step (word salad,
    # one token repeated, both). What those runs shared: the reward fell from its start to 0 in one step
    # and no completion ended any more (clipped_ratio 0.5 -> 1.0). So the rule asks for a reward at
    # diverge_reward_frac of the first steps' or less, reached within two logged steps of half that start
    # or more (a slide over many steps is some other failure), and a policy moved far from the base model:
    # entropy diverge_entropy_rise times the start's or 1/diverge_entropy_rise of it, or nearly every
    # completion cut where the first steps were not. Runs that are not diverging stay well above that
    # share: 0.20 of their start at the lowest in the healthy fixtures, 0.16 where the fixed-answer
    # collapse dipped (entropy 0.38x there), 0.28 on the kl blow-up (every completion cut).
    reward, start = h.now("reward"), h.before_now("reward")
    if reward is None or not start:
        return NOT_NOW
    base = sum(start) / len(start)
    floor = c.diverge_reward_frac * base
    if base <= 0 or reward > floor:
        return NOT_NOW
    # Back to where the reward fell (History keeps the whole run's: a diverged run stays diverged).
    before = list(islice(dropwhile(lambda v: v <= floor, h.newest_first("reward")), 2))
    if not before or max(before) < 0.5 * base:
        return NOT_NOW
    moved = _moved_from_start(h, c)
    if moved is None:
        return NOT_NOW
    return (True, reward, floor,
            f"the reward fell to {reward:.3g} from {base:.3g} over the first steps while {moved}")


def _moved_from_start(h: History, c: HealthConfig) -> str | None:
    """How this step's samples show a policy far from the first steps' (the base model's), or None."""
    entropy, start = h.now("entropy"), h.before_now("entropy")
    if entropy is not None and start and sum(start) > 0:
        base = sum(start) / len(start)
        ratio = entropy / base
        if ratio >= c.diverge_entropy_rise or ratio <= 1 / c.diverge_entropy_rise:
            return f"entropy went to {entropy:.3g} from {base:.3g} ({ratio:.2g}x)"
    clipped, start = h.now("completions/clipped_ratio"), h.before_now("completions/clipped_ratio")
    if clipped is not None and start and clipped >= c.clipped_ratio and sum(start) / len(start) < c.clipped_ratio:
        return f"{clipped:.0%} of completions ran to the length limit ({sum(start) / len(start):.0%} at the start)"
    return None


def rule_kl_blowup(h: History, c: HealthConfig) -> Reading:
    kl = h.now("kl")
    if kl is not None and kl > c.kl_max:
        return (True, kl, c.kl_max, f"kl is {kl:.3g}, above {c.kl_max}")
    return NOT_NOW


def rule_non_finite(h: History, c: HealthConfig) -> Reading:
    for key in ("loss", "grad_norm"):
        if key not in h.latest:
            continue
        raw = h.latest[key]
        # TRL writes None for a metric whose every value was NaN; the Trainer's own loss is a float.
        try:
            bad = raw is None or not math.isfinite(float(raw))
        except (TypeError, ValueError):
            bad = True
        if bad:
            return (True, None, None, f"{key} is {raw!r}")
    return NOT_NOW


@dataclass
class Progress:
    gain: float          # fitted rise across the window
    gain_se: float       # its standard error
    rise: float          # the window's mean (its steps after the baseline) minus the first steps' mean
    rise_noise: float    # twice the standard error of that difference
    mean: float
    baseline: float


def progress(h: History, key: str, c: HealthConfig) -> Progress | None:
    """How `key` moved over the last stuck_window logs and since the first stuck_baseline_steps; None
    before the window is full."""
    values = h.last(key, c.stuck_window)
    start = h.first.get(key, [])[:int(c.stuck_baseline_steps)]
    n = len(values)
    if n < c.stuck_window or not start:
        return None
    # Early in a run the window holds the baseline steps too: compare the steps after them only.
    later = values[max(0, len(start) - (h.count - n)):]
    if not later:
        return None
    slope = _slope(values)
    mean = sum(values) / n
    residual = math.sqrt(sum((v - (mean + slope * (i - (n - 1) / 2))) ** 2 for i, v in enumerate(values)) / max(1, n - 2))
    gain_se = residual * (n - 1) / math.sqrt(sum((i - (n - 1) / 2) ** 2 for i in range(n)))
    baseline = sum(start) / len(start)
    return Progress(gain=slope * (n - 1), gain_se=gain_se, rise=sum(later) / len(later) - baseline,
                    rise_noise=2 * residual * math.sqrt(1 / len(start) + 1 / len(later)), mean=mean,
                    baseline=baseline)


def held_out_rise(h: History) -> tuple[float, float, float] | None:
    """(first held-out accuracy, latest, twice the sampling noise of their difference), or None where the
    run has fewer than two evaluations with an accuracy. The noise is binomial over prompts x samples."""
    scores = []
    for record in h.held_out:
        accuracy, prompts = finite(record.get("eval/accuracy")), finite(record.get("eval/prompts"))
        samples = finite(record.get("eval/samples_per_prompt")) or 1.0
        if accuracy is not None and 0.0 <= accuracy <= 1.0 and prompts:
            scores.append((accuracy, prompts * samples))
    if len(scores) < 2:
        return None
    (first, n0), (latest, n1) = scores[0], scores[-1]
    return first, latest, 2 * math.sqrt(first * (1 - first) / n0 + latest * (1 - latest) / n1)


def rule_reward_stuck(h: History, c: HealthConfig) -> Reading:
    # A flat window alone is also what a run that learned early and plateaued looks like, and with a
    # small batch (2 prompts a step) the per-step reward is mostly which prompts came up: a healthy demo
    # seed whose adapter went 0.18 -> 0.48 held-out had a training reward no higher after 20 steps than in
    # its first 5 (1.13; it drew easy prompts first). So the reward is stuck when it has not risen over the
    # window AND its mean after the first stuck_baseline_steps is no higher than theirs (beyond noise); or
    # when it fell by more than the noise allows. Not when the run shows it learns where the noise is
    # smaller: a held-out accuracy up beyond its sampling noise since the first evaluation, or one reward
    # up beyond its own noise while none fell (the format reward the demo learns in a few steps, which
    # the correctness rewards' prompt-to-prompt swing hides in the total).
    p = progress(h, "reward", c)
    stds = h.last("reward_std", c.stuck_window)
    if p is None or not stds:
        return NOT_NOW
    held = held_out_rise(h)
    if held is not None and held[1] - held[0] > held[2]:
        return NOT_NOW
    spread = sum(stds) / len(stds)
    needed = c.stuck_min_gain * spread
    if held is not None:
        seen = f"; held-out accuracy {held[0]:.2f} -> {held[1]:.2f}, within its noise {held[2]:.2f}"
    else:
        seen = ""
    if p.gain < -(needed + 2 * p.gain_se):
        return (True, p.gain, -(needed + 2 * p.gain_se),
                f"reward fell over the last {c.stuck_window} logged steps (fitted change {p.gain:+.3g}, "
                f"more than twice its noise {p.gain_se:.2g}; reward_std {spread:.3g}){seen}")
    if p.gain < needed and p.rise < needed + p.rise_noise and not _a_reward_rose(h, c):
        return (True, p.gain, needed,
                f"reward did not rise over the last {c.stuck_window} logged steps (fitted change {p.gain:+.3g}, "
                f"reward_std {spread:.3g}) and is no higher than over the first {c.stuck_baseline_steps} "
                f"({p.mean:.3g} vs {p.baseline:.3g}){seen}")
    return NOT_NOW


def _a_reward_rose(h: History, c: HealthConfig) -> bool:
    """One of the run's rewards rose beyond its own noise since the first steps, and none fell beyond it."""
    rose = False
    for name in _reward_names(h.latest):
        p = progress(h, f"rewards/{name}/mean", c)
        if p is None:
            continue
        stds = h.last(f"rewards/{name}/std", c.stuck_window)
        margin = c.stuck_min_gain * (sum(stds) / len(stds) if stds else 0.0) + p.rise_noise
        if p.rise <= -margin:
            return False  # rewards pulling against each other: the total staying flat is the problem
        rose = rose or p.rise >= margin
    return rose


def rule_length_drift(h: History, c: HealthConfig) -> Reading:
    # Cut completions, the longest, out-earning the finished ones of their own prompt is the reward
    # paying for length, seen as soon as they hit the limit: no need to wait out the length window. The
    # gap rests on length_gap_steps steps, which is this reading's patience: on the untrained demo model
    # (learning rate 1e-7, 24 steps, mean gap about 0) the first two steps gave +0.23 and +0.45 against a
    # margin of 0.28, the first three +0.22 against 0.30. The length hack's first three: +0.33, +0.36, +0.04.
    clipped = h.now("completions/clipped_ratio")
    gap = cut_gap(h, c, max(int(c.truncation_steps), int(c.length_gap_steps)))
    if clipped is not None and clipped >= c.sustained_clipped_ratio and gap is not None and cut_pays(*gap):
        return (True, gap[0], gap[1],
                f"completions cut at the length limit ({clipped:.0%} of them) score {gap[0]:+.2f} more than the "
                f"finished ones of the same prompt: the reward pays for length")
    limit = c.max_completion_length
    lengths = h.last("completions/mean_length", c.length_window)
    length = h.now("completions/mean_length")
    if not limit or limit < c.length_min_limit or length is None or len(lengths) < c.length_window:
        return NOT_NOW
    if length >= c.length_limit_frac * limit and _slope(lengths) > 0:
        return (True, length, c.length_limit_frac * limit,
                f"mean completion length rose to {length:.0f} of the {limit}-token limit")
    return NOT_NOW


def _reward_names(logs: dict[str, Any]) -> list[str]:
    names = []
    for key in logs:
        if key.startswith("rewards/") and key.count("/") >= 2:
            name = key[len("rewards/"):key.rindex("/")]
            if name not in names:
                names.append(name)
    return names


def rule_reward_unscorable(h: History, c: HealthConfig) -> Reading:
    worst: Reading = NOT_NOW
    for name in _reward_names(h.latest):
        mean_key = f"rewards/{name}/mean"
        if mean_key in h.latest and finite(h.latest[mean_key]) is None:
            return (True, 1.0, c.max_none_frac, f"reward {name!r} returned None for every sample this step")
        for kind, verb in (("error_frac", "raised an error on"), ("none_frac", "returned None for")):
            share = h.now(f"rewards/{name}/{kind}")
            # At the threshold counts: a reward that cannot score half its rows (every other) is broken.
            if share is not None and share >= c.max_none_frac and (worst[1] or 0) < share:
                error = h.latest.get(f"rewards/{name}/first_error")
                detail = f" (first error: {error})" if error else ""
                worst = (True, share, c.max_none_frac, f"reward {name!r} {verb} {share:.0%} of samples{detail}")
    return worst


def rule_out_of_memory(h: History, c: HealthConfig) -> Reading:
    peak, limit = h.now("memory/peak_gib"), h.now("memory/limit_gib")
    if peak is not None and limit and peak >= c.memory_limit_frac * limit:
        return (True, peak, c.memory_limit_frac * limit,
                f"memory peaked at {peak:.2f} GiB of its {limit:.2f} GiB limit ({peak / limit:.0%}): "
                f"the next larger batch or longer completion may not fit")
    return NOT_NOW


def rule_tool_calls_fail(h: History, c: HealthConfig) -> Reading:
    failing = h.now("tools/failure_frequency")
    calls = h.now("tools/call_frequency")
    if failing is not None and calls and failing >= c.tool_failure_frac:
        return (True, failing, c.tool_failure_frac, f"{failing:.0%} of tool calls fail ({calls:.2g} calls per episode)")
    return NOT_NOW


def rule_tool_never_called(h: History, c: HealthConfig) -> Reading:
    calls = h.now("tools/call_frequency")
    if calls is not None and calls < c.min_tool_calls:
        return (True, calls, c.min_tool_calls, f"{calls:.2g} tool calls per episode")
    return NOT_NOW


def rule_tool_turn_limit(h: History, c: HealthConfig) -> Reading:
    share = h.now("rewards/tool_turn_limit/mean")
    if share is not None and share >= c.turn_limit_frac:
        return (True, share, c.turn_limit_frac, f"{share:.0%} of episodes end on a tool call that never ran")
    return NOT_NOW


def _judge_names(logs: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys(key[len("judge/"):key.rindex("/")] for key in logs
                              if key.startswith("judge/") and key.count("/") >= 2))


def rule_judge_failing(h: History, c: HealthConfig) -> Reading:
    worst: Reading = NOT_NOW
    for name in _judge_names(h.latest):
        share = h.now(f"judge/{name}/failure_frac")
        if share is not None and share > c.judge_failure_frac and (worst[1] or 0) < share:
            error = h.latest.get(f"judge/{name}/first_error")
            detail = f" (first error: {error})" if error else ""
            worst = (True, share, c.judge_failure_frac,
                     f"judge {name!r} left {share:.0%} of completions unscored (None){detail}")
    return worst


def rule_judge_slow(h: History, c: HealthConfig) -> Reading:
    for name in _judge_names(h.latest):
        share = h.now(f"judge/{name}/step_share")
        latency = h.now(f"judge/{name}/latency_s")
        if share is not None and share >= c.judge_step_share:
            timing = f", median request {latency:.2g}s" if latency is not None else ""
            return (True, share, c.judge_step_share, f"judge {name!r} takes {share:.0%} of each step{timing}")
        if latency is not None and latency >= c.judge_max_latency_s:
            return (True, latency, c.judge_max_latency_s, f"judge {name!r} answers in {latency:.2g}s (median)")
    return NOT_NOW


RULE_FUNCS: dict[str, Rule] = {
    "no_learning_signal": rule_no_learning_signal,
    "truncation": rule_truncation,
    "collapse": rule_collapse,
    "kl_blowup": rule_kl_blowup,
    "non_finite": rule_non_finite,
    "diverged": rule_diverged,
    "reward_stuck": rule_reward_stuck,
    "length_drift": rule_length_drift,
    "reward_unscorable": rule_reward_unscorable,
    "out_of_memory": rule_out_of_memory,
    "tool_calls_fail": rule_tool_calls_fail,
    "tool_never_called": rule_tool_never_called,
    "tool_turn_limit": rule_tool_turn_limit,
    "judge_failing": rule_judge_failing,
    "judge_slow": rule_judge_slow,
}
assert set(RULE_FUNCS) == set(RULES), "every symptom row needs a rule and every rule a row"

PATIENCE: dict[str, str] = {
    "no_learning_signal": "no_signal_steps",
    "truncation": "truncation_steps",
    "collapse": "collapse_steps",
    "kl_blowup": "kl_steps",
    "reward_unscorable": "unscorable_steps",
    "tool_calls_fail": "tool_failure_steps",
    "tool_never_called": "no_tool_steps",
    "tool_turn_limit": "turn_limit_steps",
    "judge_failing": "judge_failure_steps",
    "judge_slow": "judge_slow_steps",
}


def nothing_scores(h: History) -> bool:
    """Every reward 0 at this step, with no spread: every group is flat at nothing (the step's total reward
    and reward_std both 0)."""
    reward, std = h.now("reward"), h.now("reward_std")
    return reward is not None and std is not None and abs(reward) < 1e-12 and std < 1e-12


# A cause hides the symptoms it explains: identical completions (collapse) or
# completions cut before the answer (truncation) also give zero reward variance,
# and then a flat reward. One failure, one alert, naming the cause. Two exceptions, in observe():
# truncation hides only at its most-cut level, and a step where every reward is 0 (nothing_scores)
# lets no_learning_signal through, which then hides truncation and names the cut.
SUPPRESSED_BY: dict[str, tuple[str, ...]] = {
    "no_learning_signal": ("collapse", "truncation", "non_finite", "reward_unscorable", "diverged"),
    "truncation": ("diverged",),  # noise runs to the length limit
    "reward_stuck": ("no_learning_signal", "collapse", "truncation", "non_finite", "reward_unscorable",
                     "kl_blowup", "diverged"),
    "length_drift": ("truncation", "non_finite"),
    "collapse": ("non_finite", "diverged"),  # a blown-up model repeating one token is no collapse to fix
    "kl_blowup": ("non_finite",),
    # With beta > 0 the KL measures how far the policy moved; diverged is its stand-in for runs that do not
    # log it. Both fired at step 3 of the kl-blowup zoo case (reward 0 and entropy 0.28x for one step, kl 7.9).
    "diverged": ("kl_blowup", "non_finite"),
    # A judge that is down explains the judge reward's None scores.
    "reward_unscorable": ("judge_failing",),
}


class HealthMonitor:
    """Feed it each logged step; it returns the alerts that start (or repeat) at that step."""

    def __init__(self, config: HealthConfig | None = None):
        self.config = config or HealthConfig()
        c = self.config
        self.history = History(maxlen=max(c.stuck_window, c.length_window, c.truncation_steps,
                                           c.sustained_truncation_steps, 8), first=c.stuck_baseline_steps)
        self._streak: dict[str, int] = {r: 0 for r in RULES}
        self._firing_since: dict[str, int] = {}   # rule -> logged-step index of its last alert
        self._clear: dict[str, int] = {r: 0 for r in RULES}  # logged steps in a row a rule has been clear
        self._index = 0
        self.alerts: list[Alert] = []
        # rule -> (logged-step index, step) of every step its alert held (confirmed, repeated or not):
        # the diagnosis lists each range, not only the step the alert first fired.
        self.firing: dict[str, list[tuple[int, int]]] = {}
        self._rules = {r: f for r, f in RULE_FUNCS.items() if r not in c.disable}

    def state(self) -> dict[str, Any]:
        """The monitor as JSON-able data: its history (baselines, recent values), each rule's streak
        (patience), hysteresis and de-duplication counters, the alerts raised. `restore` of it, then the same
        logs, raises the same alerts as one monitor fed every log: a resumed run is watched as a straight one."""
        return {"history": self.history.state(), "streak": self._streak, "firing_since": self._firing_since,
                "clear": self._clear, "index": self._index, "alerts": [a.to_dict() for a in self.alerts],
                "firing": {rule: [list(p) for p in pairs] for rule, pairs in self.firing.items()}}

    def restore(self, state: dict[str, Any]) -> None:
        self.history.restore(state["history"])
        # Rules added since the state was saved start clear; rules since removed are dropped.
        self._streak.update({r: int(n) for r, n in state["streak"].items() if r in self._streak})
        self._clear.update({r: int(n) for r, n in state["clear"].items() if r in self._clear})
        self._firing_since = {r: int(n) for r, n in state["firing_since"].items() if r in RULE_FUNCS}
        self._index = int(state["index"])
        self.alerts = [Alert(**a) for a in state["alerts"] if a.get("rule") in RULE_FUNCS]
        self.firing = {r: [(int(i), int(s)) for i, s in pairs] for r, pairs in state["firing"].items() if r in RULE_FUNCS}

    def observe(self, step: int, logs: dict[str, Any]) -> list[Alert]:
        """Add one log record (TRL metric names); return new alerts. A held-out evaluation record
        (grpokit.evaluate.during) is kept for the rules that weigh it and raises nothing itself; other
        eval and summary logs are skipped."""
        if not self.config.enabled:
            return []
        if is_held_out_log(logs):
            self.history.add_held_out(dict(logs))
            return []
        if not is_train_log(logs):
            return []
        self._index += 1
        self.history.add(logs)
        checks = {rule: func(self.history, self.config) for rule, func in self._rules.items()}
        # Half the completions cut does not explain zero variance (the other half could still differ):
        # truncation hides other symptoms only at its most-cut level. (Seen in the health zoo: a constant
        # reward on the demo, 56-81% cut, was named truncation and its no-signal alert was hidden.)
        holding = {rule for rule, check in checks.items()
                   if check[0] and not (rule == "truncation" and check[4:5] == ("sustained_truncation_steps",))}
        # Every reward 0 with no spread: no group can teach anything, whatever else holds. A cut at the length
        # limit may be why, but its alert alone sent a two-stage run that scored 0 on everything to "raise
        # max_completion_length" while no_learning_signal stayed hidden; here no_learning_signal takes the
        # alert, names the cut and hides truncation instead, still one failure and one alert.
        silent = nothing_scores(self.history) and checks.get("no_learning_signal", NOT_NOW)[0]
        cut = checks.get("truncation", NOT_NOW)
        new: list[Alert] = []
        for rule, (holds, value, threshold, message, *patience_key) in checks.items():
            # Suppression looks at raw conditions, not patience, so a slow-to-confirm
            # cause still hides a fast-to-confirm symptom.
            causes = SUPPRESSED_BY.get(rule, ())
            if silent and rule == "no_learning_signal":
                causes = tuple(cause for cause in causes if cause != "truncation")
            if holds and any(cause in holding for cause in causes):
                holds = False
            if silent and rule == "truncation":
                holds = False
            if silent and rule == "no_learning_signal" and cut[0]:
                message = f"{message}; every reward scores 0, and {cut[3]}"
            self._streak[rule] = self._streak[rule] + 1 if holds else 0
            self._clear[rule] = 0 if holds else self._clear[rule] + 1
            if self._clear[rule] >= self.config.clear_steps:
                # Hysteresis: a noisy metric hovering at a threshold raises one alert, not one per crossing.
                self._firing_since.pop(rule, None)
            key = patience_key[0] if patience_key else PATIENCE.get(rule)
            need = self.config.patience(key) if key else 1
            if self._streak[rule] < need:
                continue
            self.firing.setdefault(rule, []).append((self._index, int(step)))
            since = self._firing_since.get(rule)
            if since is not None and self._index - since < self.config.realert_steps:
                continue
            self._firing_since[rule] = self._index
            symptom = BY_RULE[rule]
            if need > 1:
                message = f"{message}, {self._streak[rule]} logged steps in a row"
            new.append(Alert(step=int(step), rule=rule, severity=symptom.severity,
                             message=f"{symptom.title}: {message}", fix=fix_for(rule, logs=logs),
                             value=value, threshold=threshold))
        self.alerts.extend(new)
        return new


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


def replay_monitor(records: list[dict[str, Any]], config: HealthConfig | None = None) -> HealthMonitor:
    """The monitor after running the rules over a whole metric history (log dicts with a `step`), held-out
    evaluation records included where they were written."""
    monitor = HealthMonitor(config)
    for i, record in enumerate(records, start=1):
        step = finite(record.get("step"))
        monitor.observe(int(step) if step is not None else i, record)
    return monitor


def replay(records: list[dict[str, Any]], config: HealthConfig | None = None) -> list[Alert]:
    """Run the rules over a whole metric history (a list of log dicts with a `step`)."""
    return replay_monitor(records, config).alerts


def step_ranges(firing: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(first step, last step) of each run of consecutive logged steps in `firing` ((index, step) pairs)."""
    ranges: list[tuple[int, int]] = []
    last_index = None
    for index, step in firing:
        if ranges and last_index is not None and index == last_index + 1:
            ranges[-1] = (ranges[-1][0], step)
        else:
            ranges.append((step, step))
        last_index = index
    return ranges
