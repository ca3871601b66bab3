"""GPU only: GRPO step time with vLLM generation (colocate) against plain transformers generation.

    python -m benchmarks.vllm_step_time [--config configs/demo.yaml] [--steps 6] [--rounds 2]

Runs the same config twice per round, alternating: the `vllm` profile as is,
then the `vllm` profile with `training.use_vllm=false` (identical settings,
generation through transformers' generate). Step time is the gap between
consecutive steps' `time` in metrics.jsonl, without the first step (vLLM's
start-up and CUDA warm-up). Writes benchmarks/results/vllm_step_time.json with
the median step time of each and their ratio. Without a CUDA GPU or without
vLLM it writes the reason and exits 0 (nothing to measure).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "vllm_step_time.json"


def _step_times(run_dir: Path) -> list[float]:
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
    stamps = [r["time"] for r in rows if "time" in r]
    return [b - a for a, b in zip(stamps[1:], stamps[2:])]  # drop the first step: start-up


def _run(config: str, steps: int, run_dir: Path, use_vllm: bool) -> dict:
    cmd = [sys.executable, "-m", "grpokit", "train", config, "--set", "profile=vllm",
           "--set", f"training.max_steps={steps}", "--set", f"training.use_vllm={str(use_vllm).lower()}",
           "--set", "training.save_steps=100000", "--set", f"output_dir={run_dir}"]
    started = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if out.returncode != 0:
        return {"error": (out.stdout[-2000:] + out.stderr[-4000:]), "command": cmd}
    times = _step_times(run_dir)
    return {"step_times_s": times, "median_step_s": statistics.median(times) if times else None, "wall_s": wall}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/demo.yaml")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)

    from grpokit import optional

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    reason = None if optional.cuda_available() else "no CUDA GPU"
    reason = reason or (None if optional.available("vllm") else "vLLM is not installed")
    if reason:
        RESULTS.write_text(json.dumps({"skipped": reason}, indent=2))
        print(f"skipped: {reason}")
        return 0
    import torch

    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            rounds.append({
                label: _run(args.config, args.steps, Path(tmp) / f"{label}-{i}", use_vllm)
                for label, use_vllm in (("vllm", True), ("transformers", False))
            })
    medians = {label: [r[label]["median_step_s"] for r in rounds if r[label].get("median_step_s")] for label in ("vllm", "transformers")}
    summary = {label: statistics.median(v) if v else None for label, v in medians.items()}
    result = {
        "config": args.config,
        "steps": args.steps,
        "gpu": torch.cuda.get_device_name(0),
        "median_step_s": summary,
        "speedup_vllm_over_transformers": (summary["transformers"] / summary["vllm"]) if all(summary.values()) else None,
        "rounds": rounds,
    }
    RESULTS.write_text(json.dumps(result, indent=2))
    print(json.dumps({k: v for k, v in result.items() if k != "rounds"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
