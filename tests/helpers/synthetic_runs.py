"""Synthetic metric histories: a healthy GRPO run and one per failure mode.

They use TRL's metric names and shapes so they can stand in for a real run in
tests, the report screenshot and the docs ("this is what collapse looks like").
Deterministic: a seeded RNG, no numpy needed.
"""
from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any, Callable

from grpokit.run_directory import layout

MAX_COMPLETION_LENGTH = 128
REWARD_NAMES = ("incremental_format", "numeric_match")


def _clamp(x: float, lo: float, hi: float) -> float:
    return max(lo, min(hi, x))


def _healthy_step(step: int, steps: int, rng: random.Random) -> dict[str, Any]:
    t = step / steps
    fmt = _clamp(0.3 + 0.6 * t + rng.gauss(0, 0.03), 0, 1)
    acc = _clamp(0.1 + 0.5 * t + rng.gauss(0, 0.04), 0, 1)
    reward = 0.5 * fmt + 2.0 * acc
    length = 70 - 15 * t + rng.gauss(0, 3)
    return {
        "loss": rng.gauss(0.0, 0.02),
        "grad_norm": abs(rng.gauss(0.4, 0.1)),
        "learning_rate": 1e-5,
        "num_tokens": step * 4096.0,
        "completions/mean_length": length,
        "completions/min_length": length * 0.4,
        "completions/max_length": min(MAX_COMPLETION_LENGTH, length * 1.6),
        "completions/clipped_ratio": _clamp(0.03 + rng.gauss(0, 0.01), 0, 1),
        "completions/mean_terminated_length": length * 0.95,
        f"rewards/{REWARD_NAMES[0]}/mean": fmt,
        f"rewards/{REWARD_NAMES[0]}/std": 0.25,
        f"rewards/{REWARD_NAMES[1]}/mean": acc,
        f"rewards/{REWARD_NAMES[1]}/std": 0.45,
        "reward": reward,
        "reward_std": 0.6 + rng.gauss(0, 0.05),
        "frac_reward_zero_std": _clamp(0.2 + rng.gauss(0, 0.05), 0, 1),
        "kl": 0.002 + 0.08 * t + abs(rng.gauss(0, 0.005)),
        "entropy": 1.2 - 0.35 * t + rng.gauss(0, 0.03),
        "clip_ratio/region_mean": 0.0,
        "completions/distinct_frac": _clamp(0.95 - 0.1 * t, 0, 1),
    }


def _set_rewards(record: dict[str, Any], fmt: float, acc: float, std: float) -> None:
    record[f"rewards/{REWARD_NAMES[0]}/mean"] = fmt
    record[f"rewards/{REWARD_NAMES[1]}/mean"] = acc
    record["reward"] = 0.5 * fmt + 2.0 * acc
    record["reward_std"] = std


def _collapse(step, steps, rng, r):
    # Healthy for the first half, then entropy crashes (a hack found), groups go identical.
    if step > steps // 2:
        k = min(1.0, (step - steps // 2) / 8)
        r["entropy"] = max(0.02, r["entropy"] * (1 - 0.97 * k))
        r["completions/distinct_frac"] = max(1 / 8, 0.9 * (1 - k))
        r["reward_std"] = max(0.0, r["reward_std"] * (1 - k) ** 2)
        r["frac_reward_zero_std"] = min(1.0, 0.2 + 0.8 * k)
        _set_rewards(r, 0.9, 0.375, r["reward_std"])  # stuck on the hacked answer
    return r


def _all_truncated(step, steps, rng, r):
    # The limit is far too short: every completion is cut, the answer never arrives.
    r["completions/mean_length"] = float(MAX_COMPLETION_LENGTH)
    r["completions/min_length"] = float(MAX_COMPLETION_LENGTH)
    r["completions/max_length"] = float(MAX_COMPLETION_LENGTH)
    r["completions/clipped_ratio"] = 1.0
    r["completions/mean_terminated_length"] = 0.0
    _set_rewards(r, 0.05 + rng.gauss(0, 0.01), 0.0, 0.02)
    r["frac_reward_zero_std"] = 0.95
    r["loss"] = 0.0
    return r


def _zero_std(step, steps, rng, r):
    # Too hard: every completion scores 0, nothing to compare within a group.
    _set_rewards(r, 0.0, 0.0, 0.0)
    r[f"rewards/{REWARD_NAMES[0]}/std"] = 0.0
    r[f"rewards/{REWARD_NAMES[1]}/std"] = 0.0
    r["frac_reward_zero_std"] = 1.0
    r["loss"] = 0.0
    r["grad_norm"] = 0.0
    return r


def _kl_blowup(step, steps, rng, r):
    # Learning rate too high with beta > 0: kl climbs past 0.5 after the first third.
    if step > steps // 3:
        r["kl"] = 0.1 * math.exp((step - steps // 3) / 6)
    return r


def _nan(step, steps, rng, r):
    # fp16 overflow at 60%: loss, grad_norm and entropy turn NaN and stay NaN.
    if step >= int(steps * 0.6):
        r["loss"] = float("nan")
        r["grad_norm"] = float("nan")
        r["entropy"] = float("nan")
    return r


def _diverged(step, steps, rng, r):
    # Learning rate far too high: from the middle on the model writes noise, entropy 3x, reward near 0.
    if step >= steps // 2:
        r["entropy"] = 3.6 + rng.gauss(0, 0.1)
        _set_rewards(r, 0.02, 0.0, 0.05)
    return r


def _stuck(step, steps, rng, r):
    # Signal is there (std healthy) but the reward does not move: learning rate too low.
    fmt = _clamp(0.45 + rng.gauss(0, 0.03), 0, 1)
    acc = _clamp(0.25 + rng.gauss(0, 0.03), 0, 1)
    _set_rewards(r, fmt, acc, 0.6 + rng.gauss(0, 0.05))
    r["entropy"] = 1.2 + rng.gauss(0, 0.03)
    return r


def _length_drift(step, steps, rng, r):
    # Longer answers score better: length climbs toward the limit, not yet cut.
    t = step / steps
    length = 40 + 75 * t
    r["completions/mean_length"] = length
    r["completions/max_length"] = min(MAX_COMPLETION_LENGTH, length * 1.1)
    r["completions/clipped_ratio"] = _clamp(0.4 * max(0.0, t - 0.7) / 0.3, 0, 1)
    return r


def _unscorable(step, steps, rng, r):
    # numeric_match reads an `answer` column the data set does not have: None for every sample.
    r[f"rewards/{REWARD_NAMES[1]}/mean"] = None
    r[f"rewards/{REWARD_NAMES[1]}/std"] = None
    r[f"rewards/{REWARD_NAMES[1]}/none_frac"] = 1.0
    r["reward"] = 0.5 * r[f"rewards/{REWARD_NAMES[0]}/mean"]
    r["reward_std"] = 0.15
    return r


def _hung(step, steps, rng, r):
    # A reward calling a service that stops answering halfway: its watchdog gives up on one batch a step
    # (of four), whose rows score None; the rest of the run learns as before.
    if step > steps // 2:
        r[f"rewards/{REWARD_NAMES[1]}/timeouts"] = 1
        r[f"rewards/{REWARD_NAMES[1]}/error_frac"] = 0.25
    return r


def _memory_climb(step, steps, rng, r):
    # Activations grow with the completions: the process's peak climbs past 90% of its 16 GiB limit.
    r["memory/limit_gib"] = 16.0
    r["memory/peak_gib"] = 8.0 + 7.5 * step / steps
    r["memory/used_gib"] = r["memory/peak_gib"] - abs(rng.gauss(0.3, 0.1))
    return r


def _tools(calls: float, failing: float, unanswered: float):
    def transform(step, steps, rng, r):
        r["tools/call_frequency"] = calls
        r["tools/failure_frequency"] = failing
        r["rewards/tool_turn_limit/mean"] = unanswered
        return r

    return transform


def _judge(down_from: float, share: float, latency: float):
    # An llm_judge reward beside the others: healthy judge numbers, or the judge down from a point of the run on.
    def transform(step, steps, rng, r):
        down = step >= down_from * steps
        r["judge/llm_judge/failure_frac"] = 1.0 if down else 0.0
        r["judge/llm_judge/step_share"] = share
        r["judge/llm_judge/latency_s"] = None if down else latency * (0.9 + 0.2 * rng.random())
        r["judge/llm_judge/cache_hit_frac"] = 0.1
        return r

    return transform


SCENARIOS: dict[str, tuple[str | None, Callable | None]] = {
    # name: (the one alert it must raise, transform)
    "healthy": (None, None),
    "collapse": ("collapse", _collapse),
    "all_truncated": ("truncation", _all_truncated),
    "zero_std": ("no_learning_signal", _zero_std),
    "kl_blowup": ("kl_blowup", _kl_blowup),
    "nan": ("non_finite", _nan),
    "diverged": ("diverged", _diverged),
    "stuck_reward": ("reward_stuck", _stuck),
    "length_drift": ("length_drift", _length_drift),
    "reward_unscorable": ("reward_unscorable", _unscorable),
    "reward_hung": ("reward_hung", _hung),
    "memory_climb": ("out_of_memory", _memory_climb),
    # Tool runs: every call errors / no call is ever made / episodes run out of turns.
    "tool_calls_fail": ("tool_calls_fail", _tools(calls=1.5, failing=1.0, unanswered=0.0)),
    "tool_never_called": ("tool_never_called", _tools(calls=0.0, failing=0.0, unanswered=0.0)),
    "tool_turn_limit": ("tool_turn_limit", _tools(calls=4.0, failing=0.1, unanswered=0.8)),
    # Judge rewards: the judge server dies halfway / every step waits on the judge.
    "judge_failing": ("judge_failing", _judge(down_from=0.5, share=0.2, latency=0.5)),
    "judge_slow": ("judge_slow", _judge(down_from=2.0, share=0.85, latency=4.0)),
}


def history(scenario: str, steps: int = 60, seed: int = 0) -> list[dict[str, Any]]:
    """A list of log dicts (TRL names plus `step`), like metrics.jsonl."""
    if scenario not in SCENARIOS:
        raise KeyError(f"unknown scenario {scenario!r}; choose from {sorted(SCENARIOS)}")
    rng = random.Random(seed)
    transform = SCENARIOS[scenario][1]
    out = []
    for step in range(1, steps + 1):
        record = _healthy_step(step, steps, rng)
        if transform is not None:
            record = transform(step, steps, rng, record)
        record["step"] = step
        record["epoch"] = step / steps
        out.append(record)
    return out


def write_run(run_dir: str | Path, scenario: str = "healthy", steps: int = 60, seed: int = 0,
              partial_last_line: bool = False) -> Path:
    """Write a synthetic run directory (config.yaml, metrics.jsonl, completions.jsonl, eval.json).

    partial_last_line: a run caught mid-write -- half a line at the end, and max_steps
    beyond the last logged step.
    """
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / layout.CONFIG).write_text(
        "name: synthetic-" + scenario + "\n"
        "model:\n  name: bundled:smollm2-135m-instruct\n"
        "data:\n  source: synthetic:arithmetic\n"
        "rewards:\n  - {name: incremental_format, weight: 0.5}\n  - {name: numeric_match, weight: 2.0}\n"
        f"training:\n  max_completion_length: {MAX_COMPLETION_LENGTH}\n  num_generations: 8\n"
        f"  max_steps: {steps * 2 if partial_last_line else steps}\n  beta: 0.04\n",
        encoding="utf-8",
    )
    records = history(scenario, steps, seed)
    lines = [json.dumps(r) for r in records]
    text = "\n".join(lines) + "\n"
    if partial_last_line:
        text += lines[-1][: len(lines[-1]) // 2]  # a writer caught mid-line
    (run_dir / layout.METRICS).write_text(text, encoding="utf-8")
    rng = random.Random(seed)
    samples = []
    for step in (10, steps // 2, steps):
        for i in range(2):
            a, b = rng.randint(10, 99), rng.randint(10, 99)
            good = rng.random() < step / steps
            answer = a + b if good else a + b + rng.randint(1, 9)
            samples.append({
                "step": step,
                "prompt": f"What is {a} + {b}?",
                "completion": f"<think>{a} plus {b}: add tens, then ones.</think>\n<answer>{answer}</answer>",
                "answer": str(a + b),
                "rewards": {"incremental_format": 1.0, "numeric_match": 1.0 if good else 0.0},
                "reward": 0.5 + (2.0 if good else 0.0),
            })
    (run_dir / layout.COMPLETIONS).write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    (run_dir / layout.EVAL).write_text(json.dumps({
        "before": {"reward": 0.61, "rewards/numeric_match/mean": 0.18, "accuracy": 0.18},
        "after": {"reward": 1.52, "rewards/numeric_match/mean": 0.57, "accuracy": 0.57},
        "num_prompts": 50,
    }, indent=2), encoding="utf-8")
    return run_dir
