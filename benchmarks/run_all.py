"""`make bench`: every benchmark in turn, each writing benchmarks/results/<name>.json.

    python -m benchmarks.run_all          # the library benchmarks (minutes)
    python -m benchmarks.run_all --train  # also the training ones (demo, cpu_profile, overhead: an hour or more on a CPU)

Each runs in its own process so one failure does not hide the others; the exit
code is 1 when any failed.
"""
from __future__ import annotations

import argparse
import subprocess
import sys

LIBRARY = ["reward_throughput", "math_timeouts", "sandbox_throughput", "health_overhead"]
TRAINING = ["demo", "healthy_values", "cpu_profile", "overhead", "vllm_step_time"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", action="store_true", help="also run the training benchmarks")
    opts = parser.parse_args()
    failed = []
    for name in LIBRARY + (TRAINING if opts.train else []):
        print(f"== benchmarks.{name}", flush=True)
        if subprocess.run([sys.executable, "-m", f"benchmarks.{name}"]).returncode != 0:
            failed.append(name)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
