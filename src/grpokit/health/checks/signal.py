"""The rules on the learning signal itself: no_learning_signal (groups that cannot teach) and collapse
(one answer whatever the question)."""
from __future__ import annotations

from grpokit.config.health_params import Collapse, NoLearningSignal
from grpokit.health.evidence import Evidence, quiet
from grpokit.health.history import finite
from grpokit.health.rule import Rule, RunFacts
from grpokit.health.signals import Signals


def check_no_learning_signal(s: Signals, p: NoLearningSignal, run: RunFacts) -> Evidence:
    zero = s.now("frac_reward_zero_std")
    std = s.now("reward_std")
    if zero is not None and zero >= p.zero_std_frac:
        reading = Evidence(True, zero, p.zero_std_frac,
                           f"{zero:.0%} of groups have zero reward variance (frac_reward_zero_std >= {p.zero_std_frac})")
    elif std is not None and std < p.min_reward_std:
        reading = Evidence(True, std, p.min_reward_std, f"reward_std is {std:.3g}, under {p.min_reward_std}")
    else:
        return quiet()
    if s.nothing_scores:
        # Every reward 0 with no spread: no group can teach anything, whatever else holds. A cut at the length
        # limit may be why, but its alert alone sent a two-stage run that scored 0 on everything to "raise
        # max_completion_length" while this one stayed hidden; here this reading takes the alert, names the
        # cut and hides truncation instead: still one failure and one alert.
        reading.explains = (*RULE_NO_SIGNAL.explains, "truncation")
        reading.not_explained_by = ("truncation",)
        reading.tells = (("truncation", "; every reward scores 0, and "),)
    return reading


def check_collapse(s: Signals, p: Collapse, run: RunFacts) -> Evidence:
    # Low entropy or identical completions alone is also what a model sure of the right answer looks like
    # (one-number answers, a learned format). It is collapse when the groups stop teaching: most of
    # the recent groups scored every completion the same.
    h = s.history
    recent = [v for v in h.last("frac_reward_zero_std", p.patience) if finite(v) is not None]
    if not recent or sum(recent) / len(recent) < p.zero_std_frac:
        return quiet()
    # Sure is not collapsed: on one-number answers (the demo) each group settles on its own answer, and
    # entropy and per-group diversity fall as it learns. Collapse is one answer whatever the question:
    # the groups' usual completions are the same. Logged by the tracker when a step has 2+ groups.
    shared = h.last("completions/shared_answer_frac", p.patience)
    if shared and s.now("completions/shared_answer_frac") is not None and sum(shared) / len(shared) < p.shared_frac:
        reading = _low_entropy_or_alike(s, p)
        if reading is None:
            return quiet()
        return quiet(("each group has its own answer", f"{reading.message}, but only {sum(shared) / len(shared):.0%} "
                      f"of the groups share their usual completion (collapse at >= {p.shared_frac:.0%})"))
    return _low_entropy_or_alike(s, p) or quiet()


def _low_entropy_or_alike(s: Signals, p: Collapse) -> Evidence | None:
    entropy = s.now("entropy")
    start = s.history.first.get("entropy", [])
    if entropy is not None and len(start) >= 3:
        baseline = sorted(start[:3])[1]  # median of the first three: one odd first step does not set it
        if baseline > 0 and entropy < p.entropy_drop * baseline:
            return Evidence(True, entropy, p.entropy_drop * baseline,
                            f"entropy fell to {entropy:.3g} from {baseline:.3g} at the start "
                            f"(below {p.entropy_drop:.0%} of it)")
    distinct = s.now("completions/distinct_frac")
    if distinct is not None and distinct < p.min_distinct_frac:
        return Evidence(True, distinct, p.min_distinct_frac, f"only {distinct:.0%} of completions in a group are distinct")
    return None


RULE_NO_SIGNAL = Rule(
    params=NoLearningSignal, severity="warning", title="No learning signal",
    reads=("frac_reward_zero_std", "reward_std", "nothing_scores"),
    check=check_no_learning_signal,
    explains=("reward_stuck",),
    looks_like="frac_reward_zero_std near 1 or reward_std under 0.1 for several steps; loss near 0.",
    cause=("Every completion in a group gets the same score, so every advantage is 0 and the "
           "gradient is empty: the task is too hard (all 0) or too easy (all 1), or the reward is binary "
           "and coarse."),
    fix=("Give partial credit (add a format reward such as incremental_format), use easier prompts or "
         "a curriculum (stages:), raise training.num_generations, or raise training.temperature."),
    threshold="frac_reward_zero_std >= {zero_std_frac}, or reward_std < {min_reward_std}",
    patience="{patience} logged steps in a row",
)

RULES = (
    RULE_NO_SIGNAL,
    Rule(
        params=Collapse, severity="warning", title="Collapse into one answer",
        reads=("entropy", "completions/distinct_frac", "completions/shared_answer_frac", "frac_reward_zero_std"),
        check=check_collapse,
        # Identical completions give zero reward variance, then a flat reward.
        explains=("no_learning_signal", "reward_stuck"),
        looks_like="entropy falls to a fraction of its start; completions in a group become identical.",
        cause=("The policy has become near-deterministic, often after a reward hack: one answer scores well "
               "and the model stops exploring. With identical completions reward_std goes to 0 as well."),
        fix=("Lower training.learning_rate, raise training.temperature, add a KL penalty "
             "(training.beta: 0.01-0.04), check the reward for a hack in completions.jsonl, and resume from "
             "a checkpoint before the fall."),
        threshold=("entropy < {entropy_drop} x its start (median of the first 3 logs), "
                   "or completions/distinct_frac < {min_distinct_frac}; and at least {zero_std_frac} of "
                   "the groups (mean of the last {patience} logs) scored all their completions the same, and, "
                   "where a step has 2+ groups, at least {shared_frac} of the groups' usual completions are "
                   "one and the same (completions/shared_answer_frac). Without those, low entropy is a model sure of "
                   "its answers, not a collapse"),
        patience="{patience} logged steps in a row",
    ),
)
