"""The worst a hostile completion costs each registered reward: seconds per completion.

    python -m benchmarks.reward_worst_case [--quick] [--names a,b] [--repeats 2]

Every registered reward (with plausible parameters and columns) scores each completion of
a battery of hostile inputs (tests/helpers/hostile_completions.py), one completion per call:
1 MB of prose, runs of 20k/40k newlines, 100k spaces, digit runs, nested and unclosed brackets, repeated unclosed tags,
huge numbers written past a math screen, long repeated tokens, deeply nested JSON, bait for
catastrophic backtracking in a schema `pattern`. For each (reward, input) the time is the
best of `repeats` calls (machine load only ever adds), as wall seconds and as CPU seconds of
this process (math checks run in worker processes, so for math_equivalence the wall figure
is the one that counts). The table prints each reward's worst input. Target: no reward over
0.1 s per completion. llm_judge and reward_model need a server or a model and are skipped.
`--quick` runs a reduced battery (the one tests/rewards/test_worst_case.py asserts on).
Writes benchmarks/results/reward_worst_case.json (not with --quick).
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(1, str(ROOT))  # tests.helpers, when run as a script

from grpokit.rewards import get, names  # noqa: E402
from tests.helpers.hostile_completions import PARAMS, battery, columns_for  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "reward_worst_case.json"
TARGET_S = 0.1

SKIPPED = {
    "llm_judge": "needs a judge server (its filter is timed on the judge branch)",
    "reward_model": "needs a reward model checkpoint",
}


def time_call(func, name: str, completion: str, repeats: int) -> tuple[float, float]:
    """(wall, cpu) seconds of one call on one completion: the best of `repeats`."""
    walls, cpus = [], []
    columns = columns_for(1, name)
    for _ in range(repeats):
        cpu, wall = time.thread_time(), time.perf_counter()
        func([completion], **columns)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.thread_time() - cpu)
    return min(walls), min(cpus)


def run(quick: bool = False, only: list[str] | None = None, repeats: int = 2, verbose: bool = True) -> dict:
    inputs = battery(quick)
    results: dict[str, dict] = {}
    skipped: dict[str, str] = {}
    for name in only or names():
        if name in SKIPPED:
            skipped[name] = SKIPPED[name]
            continue
        func = get(name, **PARAMS.get(name, {}))
        func(["warm up: 42"], **columns_for(1, name))  # pools, caches and lazy imports, not charged to an input
        per_input = {}
        for label, text in inputs.items():
            wall, cpu = time_call(func, name, text, repeats)
            per_input[label] = {"wall_s": round(wall, 5), "cpu_s": round(cpu, 5)}
        worst = max(per_input, key=lambda k: per_input[k]["wall_s"])
        results[name] = {"worst_input": worst, **per_input[worst], "inputs": per_input}
        if verbose:
            print(f"{name:26s} {per_input[worst]['wall_s']:9.4f} {per_input[worst]['cpu_s']:9.4f}  {worst}", flush=True)
    return {"results": results, "skipped": skipped}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--names", default="")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    only = [n for n in args.names.split(",") if n] or None
    print(f"{'reward':26s} {'wall s':>9s} {'cpu s':>9s}  worst input (per completion)")
    report = run(args.quick, only, args.repeats)
    over = {n: r for n, r in report["results"].items() if r["wall_s"] > TARGET_S}
    print(f"\nover {TARGET_S} s per completion: " + (", ".join(f"{n} ({r['worst_input']}: {r['wall_s']:.2f} s)"
                                                         for n, r in over.items()) or "none"))
    for name, why in report["skipped"].items():
        print(f"skipped {name}: {why}")
    if not args.quick and not only:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        report.update(target_s=TARGET_S, python=platform.python_version(), machine=platform.machine(),
                      over=sorted(over), measured=time.strftime("%Y-%m-%d %H:%M:%S"))
        OUT.write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
