"""What the reward watchdog costs per reward call, and what a hang costs a step.

    python -m benchmarks.reward_watchdog [--calls 300]

Every reward call runs on a fresh daemon thread the caller waits on (grpokit.rewards.watchdog).
Measured in one run, interleaved call by call so machine load hits every variant alike, on a
batch of 64 completions (8 prompts x 8 generations, ~300 characters each):
  direct     the reward function called as is
  no_thread  call_reward with timeout=None (the checks of the scores, no thread)
  watchdog   call_reward with the default timeout (one thread per call)
  wrapper    TrainerRewards' function, what TRL calls in a run (watchdog + bookkeeping)
for a trivial reward (the worst case for the overhead share) and for numeric_match (a real one).
Then a plugin reward that sleeps forever on one row, with timeout 2 s: the wall time of a
"step" that scores it beside numeric_match, and what the wrapper reported.
Writes benchmarks/results/reward_watchdog.json.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from grpokit.rewards import get  # noqa: E402
from grpokit.rewards.reward_set import RewardSet, call_reward  # noqa: E402
from grpokit.rewards.trainer_rewards import TrainerRewards  # noqa: E402
from grpokit.rewards.watchdog import DEFAULT_TIMEOUT  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "reward_watchdog.json"
NEVER = threading.Event()


def trivial(completions, **kwargs):
    return [0.0] * len(completions)


def sleeps_forever_on_one_row(completions, **kwargs):
    if any("FOREVER" in c for c in completions):
        NEVER.wait()
    return [1.0] * len(completions)


def batch():
    completions = [("step by step " * 22) + f"<answer>{i % 5}</answer>" for i in range(64)]
    return completions, {"prompts": [f"prompt {i // 8}" for i in range(64)], "answer": [str(i % 5) for i in range(64)]}


def time_variants(func, calls: int) -> dict:
    completions, columns = batch()
    wrapped = TrainerRewards(RewardSet([func])).funcs[0]
    variants = {
        "direct": lambda: func(completions, **columns),
        "no_thread": lambda: call_reward(func, completions, columns, timeout=None),
        "watchdog": lambda: call_reward(func, completions, columns, timeout=DEFAULT_TIMEOUT),
        "wrapper": lambda: wrapped(completions, **columns),
    }
    times = {name: [] for name in variants}
    for _ in range(calls):
        for name, run in variants.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    out = {name: {"median_us": round(statistics.median(t) * 1e6, 1)} for name, t in times.items()}
    direct = statistics.median(times["direct"])
    for name in ("no_thread", "watchdog", "wrapper"):
        out[name]["added_us"] = round((statistics.median(times[name]) - direct) * 1e6, 1)
        out[name]["ratio_to_direct"] = round(statistics.median(times[name]) / direct, 3)
    out["thread_cost_us"] = round((statistics.median(times["watchdog"]) - statistics.median(times["no_thread"])) * 1e6, 1)
    return out


def hang_demo(timeout: float = 2.0) -> dict:
    completions, columns = batch()
    completions[13] = "FOREVER " + completions[13]
    calls = TrainerRewards(RewardSet([sleeps_forever_on_one_row, get("numeric_match")], timeouts=[timeout, None]))
    start = time.perf_counter()
    scores = [func(completions, **columns) for func in calls.funcs]  # what TRL does in one step
    seconds = time.perf_counter() - start
    window = calls.window()
    return {
        "timeout_s": timeout,
        "step_scoring_seconds": round(seconds, 3),
        "hung_reward_scores_none": all(s is None for s in scores[0]),
        "other_reward_scored": sum(s is not None for s in scores[1]),
        "counted": {k: v for k, v in window.items() if "sleeps_forever" in k},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    result = {
        "batch": "64 completions (8 prompts x 8), ~300 characters each",
        "calls_per_variant": args.calls,
        "trivial_reward": time_variants(trivial, args.calls),
        "numeric_match": time_variants(get("numeric_match"), max(100, args.calls // 3)),
        "hang": hang_demo(),
    }
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
