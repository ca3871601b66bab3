"""Honest scoring throughput of this checkout against another one, in the same run, pass by pass.

    python -m benchmarks.reward_throughput_compare --before OTHER_CHECKOUT [--pairs 15] [--names a,b]
        [--limit 600] [--batch 64] [--out FILE]

Two worker processes load the same GSM8K solutions and build the same rewards with the same
parameters (benchmarks.reward_throughput's data and PARAMS), one with OTHER_CHECKOUT's grpokit
(before), one with this checkout's (after). For each reward the parent asks them, in turn, for
one timing over every row (as many passes as make 0.2 s on before's first pass, the same count
for both), `--pairs` times, the order swapped every pair: the two timings of a pair run about a
second apart, so load on the shared machine hits both alike, and a reward's figure is the median of its pairs' ratios (before's seconds / after's seconds; above 1:
faster now) with the 25th-75th percentile of those ratios beside it. Every functools cache in
grpokit keyed on what a row holds (a gold answer, a word) is cleared before each pass, so a pass
is scored cold, as a step of new prompts is: a cache does not earn its keep by reading the same
rows twice (tables built once, caches of no arguments, are kept).

The aim (issue 34) is a ratio of at least 0.9 for every reward. Writes
benchmarks/results/reward_throughput_round4.json unless --out says otherwise.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "reward_throughput_round4.json"
AIM = 0.9
MIN_TIMED_S = 0.2
NAMES = ("citation,contains_answer,cosine_scaled,exact_match,fuzzy_match,incremental_format,json_format,"
         "json_schema,math_equivalence,multiple_choice,numeric_closeness,numeric_match,regex_format,"
         "repetition_penalty")

# The worker: grpokit from the checkout named in argv[1], imported before this checkout's benchmark
# module, whose own path set-up would otherwise put this checkout's src/ first; the package's
# submodules then resolve from the grpokit already imported.
_WORKER = r"""
import gc, inspect, json, sys
sys.path.insert(0, sys.argv[1])
import grpokit, grpokit.rewards
sys.path.insert(1, sys.argv[2])
from benchmarks import reward_throughput as rt
from grpokit.rewards import get
names, limit, batch = sys.argv[3].split(","), int(sys.argv[4]), int(sys.argv[5])
completions, columns = rt.load(limit)
funcs = {name: get(name, **rt.PARAMS.get(name, {})) for name in names}

def caches():
    # Caches keyed on what a row holds (a gold, a word); a cache of no arguments is a table built once.
    return [obj for mod in list(sys.modules.values()) if (getattr(mod, "__name__", "") or "").startswith("grpokit")
            for obj in list(vars(mod).values()) if callable(getattr(obj, "cache_clear", None))
            and inspect.signature(obj).parameters]

for func in funcs.values():  # warm: imports, worker pools, compiled patterns
    rt.time_pass(func, completions, columns, batch)
print(json.dumps({"ready": grpokit.__file__, "rows": len(completions)}), flush=True)
for line in sys.stdin:
    name, passes = line.split()
    took = 0.0
    for _ in range(int(passes)):
        for cached in caches():
            cached.cache_clear()
        gc.collect()
        took += rt.time_pass(funcs[name], completions, columns, batch)
    print(json.dumps({"s": took}), flush=True)
"""


class _Worker:
    def __init__(self, checkout: Path, names: str, limit: int, batch: int):
        env = {**os.environ, "PYTHONPATH": "", "OMP_NUM_THREADS": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(checkout / "src"), str(ROOT), names, str(limit), str(batch)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT,
        )
        self.ready = json.loads(self.proc.stdout.readline())

    def time(self, name: str, passes: int = 1) -> float:
        self.proc.stdin.write(f"{name} {passes}\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())["s"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def _quartiles(values: list[float]) -> list[float]:
    if len(values) < 2:
        return [values[0], values[0]]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return [q[0], q[2]]


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="checkout of the commit to compare against")
    parser.add_argument("--pairs", type=int, default=15, help="timed before/after pass pairs per reward")
    parser.add_argument("--names", default=NAMES)
    parser.add_argument("--limit", type=int, default=600)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    before_commit = subprocess.run(["git", "-C", str(args.before), "rev-parse", "--short", "HEAD"],
                                   capture_output=True, text=True, check=True).stdout.strip()
    after_commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                  capture_output=True, text=True, check=True).stdout.strip()
    before = _Worker(args.before.resolve(), args.names, args.limit, args.batch)
    after = _Worker(ROOT, args.names, args.limit, args.batch)
    rows = after.ready["rows"]
    rewards = {}
    try:
        for name in args.names.split(","):
            ratios, b_s, a_s = [], [], []
            # A timing of a few milliseconds is mostly scheduler noise: each side runs as many passes
            # as make up MIN_TIMED_S on before's first pass.
            passes = max(1, math.ceil(MIN_TIMED_S / max(before.time(name), 1e-6)))
            for i in range(args.pairs):
                first, second = (before, after) if i % 2 == 0 else (after, before)
                t_first, t_second = first.time(name, passes), second.time(name, passes)
                tb, ta = (t_first, t_second) if first is before else (t_second, t_first)
                ratios.append(tb / ta)
                b_s.append(tb / passes)
                a_s.append(ta / passes)
            low, high = _quartiles(ratios)
            rewards[name] = {
                "passes_per_timing": passes,
                "before_per_s": round(rows / statistics.median(b_s)),
                "after_per_s": round(rows / statistics.median(a_s)),
                "ratio": round(statistics.median(ratios), 2),
                "ratio_quartiles": [round(low, 2), round(high, 2)],
            }
            entry = rewards[name]
            print(f"{name:22s} {entry['ratio']:.2f}  [{low:.2f}, {high:.2f}]  "
                  f"{entry['before_per_s']:>9,}/s -> {entry['after_per_s']:>9,}/s", flush=True)
    finally:
        before.close()
        after.close()
    report = {
        "benchmark": "reward_throughput, round 4 before/after, paired passes",
        "when": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": (f"python -m benchmarks.reward_throughput_compare --before <checkout of {before_commit}> "
                    f"--pairs {args.pairs} --limit {args.limit} --batch {args.batch}"),
        "before": before_commit,
        "after": after_commit,
        "method": ("two worker processes (before's grpokit, after's), the same rows and parameters; per reward "
                   f"{args.pairs} pairs of timings (each as many passes as make {MIN_TIMED_S} s on before), order swapped every pair, caches cleared before "
                   "each pass (those of no arguments kept); ratio = median over pairs of before's seconds / after's seconds, with quartiles"),
        "load_average": list(os.getloadavg()),
        "aim": f"after/before >= {AIM} for every reward (issue 34)",
        "rewards": rewards,
        "not_met": [name for name, entry in rewards.items() if entry["ratio"] < AIM],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}")
    return report


if __name__ == "__main__":
    main()
