"""Honest scoring throughput of this checkout against another one, in the same run.

    python -m benchmarks.reward_throughput_compare --before OTHER_CHECKOUT [--rounds 3] [--names a,b]
        [--limit 600] [--repeats 3] [--out FILE]

Each round runs `benchmarks.reward_throughput --limit N --repeats R --names ...` once from
OTHER_CHECKOUT (before) and once from this checkout (after), alternating, each in its own
process with its own `src/` first on the path, so that load on a shared machine hits both
alike. A reward's figure for a round is that run's median pass; its ratio is after/before
per round, and the reported figures are medians over rounds. The aim (issue 34) is a ratio
of at least 0.9 for every reward. Writes benchmarks/results/reward_throughput_round4.json
unless --out says otherwise.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "reward_throughput_round4.json"
AIM = 0.9
NAMES = ("citation,contains_answer,cosine_scaled,exact_match,fuzzy_match,incremental_format,json_format,"
         "json_schema,math_equivalence,multiple_choice,numeric_closeness,numeric_match,regex_format,"
         "repetition_penalty")


def _run(checkout: Path, names: str, limit: int, repeats: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "throughput.json"
        env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
        subprocess.run(
            [sys.executable, "-m", "benchmarks.reward_throughput", "--limit", str(limit), "--repeats", str(repeats),
             "--names", names, "--out", str(out)],
            cwd=checkout, env=env, check=True, stdout=subprocess.DEVNULL,
        )
        results = json.loads(out.read_text())["results"]
    return {name: entry["completions_per_s"] for name, entry in results.items()}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="checkout of the commit to compare against")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--names", default=NAMES)
    parser.add_argument("--limit", type=int, default=600)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    before_commit = subprocess.run(["git", "-C", str(args.before), "rev-parse", "--short", "HEAD"],
                                   capture_output=True, text=True, check=True).stdout.strip()
    before, after = [], []
    for i in range(args.rounds):
        before.append(_run(args.before.resolve(), args.names, args.limit, args.repeats))
        after.append(_run(ROOT, args.names, args.limit, args.repeats))
        print(f"round {i + 1}: " + ", ".join(f"{n} {after[-1][n] / before[-1][n]:.2f}" for n in sorted(after[-1])))
    rewards = {}
    for name in sorted(after[0]):
        rounds = [a[name] / b[name] for a, b in zip(after, before)]
        rewards[name] = {
            "before_per_s": round(statistics.median(b[name] for b in before)),
            "after_per_s": round(statistics.median(a[name] for a in after)),
            "ratio": round(statistics.median(rounds), 2),
            "ratio_each_round": [round(r, 2) for r in rounds],
        }
    report = {
        "benchmark": "reward_throughput, round 4 before/after",
        "when": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": (f"python -m benchmarks.reward_throughput_compare --before <checkout of {before_commit}> "
                    f"--rounds {args.rounds} --limit {args.limit} --repeats {args.repeats}: "
                    f"benchmarks.reward_throughput --limit {args.limit} --repeats {args.repeats} --names <these>, "
                    f"run from a checkout of {before_commit} (before) and from this tree (after), alternating, "
                    f"{args.rounds} rounds; median over rounds of each round's median pass"),
        "aim": f"after/before >= {AIM} for every reward (issue 34)",
        "rewards": rewards,
        "not_met": [name for name, entry in rewards.items() if entry["ratio"] < AIM],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    for name, entry in rewards.items():
        print(f"{name:22s} {entry['ratio']:.2f}  {entry['ratio_each_round']}")
    print(f"wrote {args.out}")
    return report


if __name__ == "__main__":
    main()
