"""The CPU demo as a benchmark: per-step metrics, held-out accuracy during training, before/after.

    python -m benchmarks.demo [--steps N] [--no-eval] [--eval-prompts N]

Writes benchmarks/results/demo.json (every metrics.jsonl record of the run, the
held-out accuracy during training, the before/after evaluation and the alerts) and
demo_curves.png (the run's report curves). benchmarks/learning.py makes the claim
with several seeds and intervals; this is one run, as `make demo` shows it.
"""
from __future__ import annotations

import argparse
import json
import platform
import shutil
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--no-eval", action="store_true")
    parser.add_argument("--eval-prompts", type=int, default=200)
    opts = parser.parse_args()
    from rich.console import Console

    from grpokit.demo import read_metrics, run_demo
    from grpokit.reporting.report import write_report

    out = Path(tempfile.mkdtemp(prefix="grpokit-demo-")) / "run"
    started = time.time()
    summary = run_demo(steps=opts.steps, output_dir=str(out), console=Console(soft_wrap=True),
                       evaluate=not opts.no_eval, eval_prompts=opts.eval_prompts)
    ev = summary.get("eval") or {}
    result = {
        "command": "python -m benchmarks.demo" + (f" --steps {opts.steps}" if opts.steps else "")
        + (" --no-eval" if opts.no_eval else "") + f" --eval-prompts {opts.eval_prompts}",
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "machine": {"cpu": platform.processor() or platform.machine(), "note": "shared 2-core CPU, timings noisy"},
        "wall_seconds": time.time() - started,
        "accuracy_before": (ev.get("before") or {}).get("accuracy"),
        "accuracy_after": (ev.get("after") or {}).get("accuracy"),
        "summary": summary,
        "metrics": read_metrics(out),
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "demo.json").write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
    paths = write_report(out)
    shutil.copy(paths["png"], RESULTS / "demo_curves.png")
    print(f"held-out accuracy {result['accuracy_before']} -> {result['accuracy_after']}")


if __name__ == "__main__":
    main()
