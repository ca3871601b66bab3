"""Healthy reference values from a real run's metrics, by phase of training.

    python -m benchmarks.healthy_values [RUN_DIR_OR_DEMO_JSON]

Reads benchmarks/results/demo.json (or a run directory's metrics.jsonl) and
writes benchmarks/results/healthy_values.json: min / median / max of the
metrics a person watches, over the early, middle and late thirds of the run.
skill/healthy-values.md quotes the result.
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
WATCHED = ("reward", "reward_std", "frac_reward_zero_std", "completions/mean_length",
           "completions/clipped_ratio", "kl", "entropy", "grad_norm", "step_time")


def load(source: Path) -> list[dict]:
    if source.is_dir():
        lines = (source / "metrics.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]
    return json.loads(source.read_text())["metrics"]


def phases(records: list[dict]) -> dict[str, list[dict]]:
    n = len(records)
    third = max(1, n // 3)
    return {
        f"steps {records[0]['step']}-{records[third - 1]['step']}": records[:third],
        f"steps {records[third]['step']}-{records[2 * third - 1]['step']}": records[third:2 * third],
        f"steps {records[2 * third]['step']}-{records[-1]['step']}": records[2 * third:],
    }


def summarise(records: list[dict]) -> dict:
    out = {}
    for key in WATCHED:
        values = [r[key] for r in records if isinstance(r.get(key), (int, float))]
        if values:
            out[key] = {"min": round(min(values), 4), "median": round(statistics.median(values), 4),
                        "max": round(max(values), 4)}
    return out


def main(argv: list[str]) -> None:
    source = Path(argv[0]) if argv else RESULTS / "demo.json"
    records = [r for r in load(source) if "reward" in r]
    if len(records) < 3:
        raise SystemExit(f"{source}: need at least 3 logged steps, found {len(records)}")
    result = {"source": str(source), "steps": len(records),
              "phases": {name: summarise(part) for name, part in phases(records).items()}}
    (RESULTS / "healthy_values.json").write_text(json.dumps(result, indent=2))
    for name, values in result["phases"].items():
        print(name)
        for key, v in values.items():
            print(f"  {key:28s} {v['min']:>9} {v['median']:>9} {v['max']:>9}")


if __name__ == "__main__":
    main(sys.argv[1:])
