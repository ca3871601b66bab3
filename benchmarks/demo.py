"""The CPU demo as a benchmark: per-step metrics, before/after, and the format-learning check.

    python -m benchmarks.demo [--steps N] [--no-eval]

Writes benchmarks/results/demo.json: every metrics.jsonl record of the demo run, the
first-5 vs last-5 step means of each reward, the held-out before/after evaluation, and
`format_ratio` = (format reward, last 5 steps) / (first 5 steps); the target is >= 3.
"""
from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

from benchmarks import _rewards

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--no-eval", action="store_true")
    parser.add_argument("--eval-prompts", type=int, default=16)
    parser.add_argument("--max-completion-length", type=int, default=None)
    opts = parser.parse_args()
    _rewards.ensure()  # stand-ins only where the real reward library is not merged
    from rich.console import Console

    from grpokit.demo import read_metrics, run_demo
    from grpokit.rewards import names

    out = Path(tempfile.mkdtemp(prefix="grpokit-demo-")) / "run"
    started = time.time()
    summary = run_demo(steps=opts.steps, output_dir=str(out), console=Console(soft_wrap=True),
                       evaluate=not opts.no_eval, eval_prompts=opts.eval_prompts,
                       training={"max_completion_length": opts.max_completion_length} if opts.max_completion_length else None)
    window = summary["training_window"]["rewards/incremental_format/mean"]
    ratio = (window["last"] / window["first"]) if window["first"] else None
    result = {
        "command": "python -m benchmarks.demo" + (f" --steps {opts.steps}" if opts.steps else "")
        + (f" --max-completion-length {opts.max_completion_length}" if opts.max_completion_length else "")
        + (" --no-eval" if opts.no_eval else ""),
        "machine": {"cpu": platform.processor() or platform.machine(), "note": "shared 2-core CPU, timings noisy"},
        "wall_seconds": time.time() - started,
        "stand_in_rewards": [n for n in ("incremental_format", "numeric_match") if getattr(_rewards, "STAND_INS", {}).get(n)],
        "format_first5": window["first"],
        "format_last5": window["last"],
        "format_ratio": ratio,
        "format_ratio_target": 3.0,
        "summary": summary,
        "metrics": read_metrics(out),
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "demo.json").write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
    print(f"format reward first 5 steps {window['first']}, last 5 {window['last']}, ratio {ratio}")


if __name__ == "__main__":
    main()
