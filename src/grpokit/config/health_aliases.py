"""The flat `health:` keys of earlier releases (`health: {clipped_ratio: 0.9, no_signal_steps: 8}`), each
the rule parameter(s) it set. They still work, with a warning naming the nested key
(`health: {rules: {truncation: {clipped_ratio: 0.9}}}`); a flat key two rules read sets both, as it did.
"""
from __future__ import annotations

FLAT_KEYS: dict[str, tuple[tuple[str, str], ...]] = {
    "zero_std_frac": (("no_learning_signal", "zero_std_frac"),),
    "min_reward_std": (("no_learning_signal", "min_reward_std"),),
    "no_signal_steps": (("no_learning_signal", "patience"),),
    # diverged and length_drift read truncation's levels and margin; each has its own copy now.
    "clipped_ratio": (("truncation", "clipped_ratio"), ("diverged", "clipped_ratio")),
    "truncation_steps": (("truncation", "patience"),),
    "sustained_clipped_ratio": (("truncation", "sustained_clipped_ratio"), ("length_drift", "cut_clipped_ratio")),
    "sustained_truncation_steps": (("truncation", "sustained_patience"), ("length_drift", "gap_window")),
    "cut_gap": (("truncation", "cut_gap"), ("length_drift", "cut_gap")),
    "entropy_drop": (("collapse", "entropy_drop"),),
    "min_distinct_frac": (("collapse", "min_distinct_frac"),),
    "collapse_zero_std_frac": (("collapse", "zero_std_frac"),),
    "collapse_steps": (("collapse", "patience"),),
    "collapse_shared_frac": (("collapse", "shared_frac"),),
    "diverge_reward_frac": (("diverged", "reward_frac"),),
    "diverge_entropy_rise": (("diverged", "entropy_rise"),),
    "kl_max": (("kl_blowup", "kl_max"),),
    "kl_steps": (("kl_blowup", "patience"),),
    "stuck_window": (("reward_stuck", "window"),),
    "stuck_min_gain": (("reward_stuck", "min_gain"),),
    "stuck_baseline_steps": (("reward_stuck", "baseline_steps"),),
    "length_limit_frac": (("length_drift", "limit_frac"),),
    "length_window": (("length_drift", "window"),),
    "length_min_limit": (("length_drift", "min_limit"),),
    "length_gap_steps": (("length_drift", "gap_steps"),),
    "max_none_frac": (("reward_unscorable", "max_none_frac"),),
    "unscorable_steps": (("reward_unscorable", "patience"),),
    "memory_limit_frac": (("out_of_memory", "memory_frac"),),
    "tool_failure_frac": (("tool_calls_fail", "failure_frac"),),
    "tool_failure_steps": (("tool_calls_fail", "patience"),),
    "min_tool_calls": (("tool_never_called", "min_calls"),),
    "no_tool_steps": (("tool_never_called", "patience"),),
    "turn_limit_frac": (("tool_turn_limit", "limit_frac"),),
    "turn_limit_steps": (("tool_turn_limit", "patience"),),
    "judge_failure_frac": (("judge_failing", "failure_frac"),),
    "judge_failure_steps": (("judge_failing", "patience"),),
    "judge_step_share": (("judge_slow", "step_share"),),
    "judge_max_latency_s": (("judge_slow", "max_latency_s"),),
    "judge_slow_steps": (("judge_slow", "patience"),),
}


def nested_words(flat: str) -> str:
    """Where a flat key now lives, in words for the deprecation message."""
    return " and ".join(f"health.rules.{rule}.{name}" for rule, name in FLAT_KEYS[flat])
