"""Shared pieces of the step-time benchmarks: one training run per subprocess (clean peak
memory), fixed-length generation (every step generates the same number of tokens, so
step times compare compute, not how long the sampled answers happened to be)."""
from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Same model, data, rewards and sizes for every variant.
COMMON = {
    "num_generations": 4,
    "per_device_train_batch_size": 8,
    "max_completion_length": 32,  # short: a step is minutes on the shared 2-core CPU
    "learning_rate": 2.0e-4,
    "save_steps": 1000,
    "logging_steps": 1,
    "report_to": "none",
    "seed": 0,
}


def fixed_length(training: dict) -> dict:
    out = dict(training)
    out["generation_kwargs"] = {"min_new_tokens": out["max_completion_length"]}
    return out


class StepTimer:
    """A TrainerCallback collecting wall time per optimizer step."""

    def __new__(cls):
        from transformers import TrainerCallback

        class _Timer(TrainerCallback):
            def __init__(self):
                self.times, self.logs, self._t = [], [], None

            def on_step_begin(self, args, state, control, **kw):
                self._t = time.perf_counter()

            def on_step_end(self, args, state, control, **kw):
                self.times.append(time.perf_counter() - self._t)

            def on_log(self, args, state, control, logs=None, **kw):
                if logs and "reward" in logs:
                    self.logs.append(dict(logs))

        return _Timer()


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def spawn(module: str, variant: str, steps: int, timeout: int = 1800) -> dict:
    """Run `python -m module --worker variant --steps N` and parse its last JSON line."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    started = time.time()
    proc = subprocess.run([sys.executable, "-m", module, "--worker", variant, "--steps", str(steps)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=timeout)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{variant} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    out = json.loads(lines[-1])
    out["process_seconds"] = time.time() - started
    return out


def run_variant(module: str, variant: str, steps: int) -> dict:
    """spawn() one variant and print its median step time."""
    res = spawn(module, variant, steps)
    print(variant, f"median {res['median_s']:.2f}s/step", flush=True)
    return res


def alternate(module: str, pair: tuple[str, str], steps: int, rounds: int) -> list[dict]:
    """Both variants once per round, the order swapped each round, so load swings hit both alike."""
    runs = []
    for r in range(rounds):
        for variant in (pair if r % 2 == 0 else pair[::-1]):
            runs.append(run_variant(module, variant, steps))
    return runs


def per_round_ratios(runs: list[dict], numerator: str, denominator: str) -> list[float]:
    """median_s of `numerator` / `denominator` within each round of alternate()'s runs."""
    ratios = []
    for i in range(0, len(runs) - 1, 2):
        pair = {r["variant"]: r["median_s"] for r in runs[i:i + 2]}
        ratios.append(pair[numerator] / pair[denominator])
    return ratios


def summarize(times: list[float]) -> dict:
    # The first step includes one-time warm-up (allocations, kernel selection): leave it out.
    body = times[1:] if len(times) > 1 else times
    return {"median_s": statistics.median(body), "steps_s": times}
