"""How close doctor's predicted seconds per step (grpokit.health.step_time) come to real steps.

    python -m benchmarks.step_time_estimate [--steps 3] [--only NAME]

For each config, in one fresh process and back to back (this machine is shared: the load
moves by minutes, so the prediction and the run it predicts are measured in the same
conditions): the model is loaded as doctor loads it, the probe measures and predicts, the
model is dropped, then the config trains `--steps` real steps. The measured figure is the
median step time after the first (the first pays for lazy initialisation); the ratio is
predicted / measured. Results: benchmarks/results/step_time_estimate.json, with the load
average before and after each config.

The aim: the prediction within a factor of 1.5 of the measured step at a steady load. On 2 idle
cores (2026-12-04): 0.89 (demo recipe), 0.81 (init math), 0.85 (demo, 64-token completions). An
earlier run at load 8-10, with the probe's decode rate taken from a 6-token difference, was 2.4x
and 6.8x high on the last two.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "step_time_estimate.json"
NO_EVAL = ["eval.every=0"]


def init_math(tmp: Path) -> Path:
    """The config `grpokit init math` writes (CPU defaults)."""
    sys.path.insert(0, str(ROOT / "src"))
    from grpokit.config.starter import build_init_config

    path = tmp / "math.yaml"
    path.write_text(yaml.safe_dump(build_init_config("math", None, None, None)))
    return path


# name -> (config, overrides)
CONFIGS = {
    "demo recipe": ("configs/cpu-demo.yaml", NO_EVAL),
    "init math (CPU defaults)": ("init:math", []),
    "demo, 64-token completions": ("configs/cpu-demo.yaml", NO_EVAL + ["training.max_completion_length=64"]),
}

WORKER = r"""
import json, statistics, sys, time, gc
sys.path.insert(0, sys.argv[1])
from transformers import TrainerCallback
from grpokit.config.run_config import load_config
from grpokit.data import load_data
from grpokit.health.doctor import _load_model, prompt_lengths
from grpokit.health.step_time import step_seconds
from grpokit.training.trainer import train

cfg = load_config(sys.argv[2], json.loads(sys.argv[3]))
model, tokenizer = _load_model(cfg)
rows = [dict(r) for r in load_data(cfg.data)[0].select(range(100))]
lens = prompt_lengths(tokenizer, rows)
seconds, plan, rates = step_seconds(cfg, model, tokenizer, int(statistics.median(lens)))
del model
gc.collect()

class Timer(TrainerCallback):
    times = []
    def on_step_begin(self, args, state, control, **kw):
        self.t0 = time.perf_counter()
    def on_step_end(self, args, state, control, **kw):
        self.times.append(time.perf_counter() - self.t0)

train(cfg, callbacks=[Timer()])
print("RESULT " + json.dumps({"predicted": seconds, "plan": plan.__dict__, "rates": rates.__dict__,
                              "step_times": Timer.times}))
"""


def run(config: Path, overrides: list[str], steps: int, out_dir: str) -> dict:
    sets = overrides + [f"training.max_steps={steps}", "training.save_steps=1000", f"output_dir={out_dir}"]
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WORKER, str(ROOT / "src"), str(config), json.dumps(sets)],
                          capture_output=True, text=True, timeout=7200)
    if done.returncode != 0:
        raise RuntimeError(f"{config} {overrides} failed: {done.stderr[-3000:]}")
    result = json.loads(next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))[7:])
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["load_avg_before_after"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    return result


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="run only this config (repeatable)")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only or list(CONFIGS):
            config, overrides = CONFIGS[name]
            path = init_math(Path(tmp)) if config == "init:math" else ROOT / config
            got = run(path, overrides, args.steps, str(Path(tmp) / name.replace(" ", "-")))
            later = got["step_times"][1:] or got["step_times"]
            measured = statistics.median(later)
            row = {"config": name, "source": config, "overrides": overrides,
                   "predicted_s": {k: round(v, 2) for k, v in got["predicted"].items()},
                   "measured_step_s": [round(t, 2) for t in got["step_times"]],
                   "measured_median_after_first_s": round(measured, 2),
                   "ratio": round(got["predicted"]["total"] / measured, 3),
                   "plan": got["plan"], "rates": {k: round(v, 5) for k, v in got["rates"].items()},
                   "load_avg_before_after": got["load_avg_before_after"], "seconds": got["seconds"]}
            rows.append(row)
            Path(args.out).with_suffix(".partial.json").write_text(json.dumps(rows, indent=2) + "\n")
            print(f"{name}: predicted {row['predicted_s']['total']} s/step, measured {measured:.1f} "
                  f"(steps {row['measured_step_s']}), ratio {row['ratio']}", flush=True)
    ratios = [r["ratio"] for r in rows]
    result = {
        "benchmark": "step_time_estimate",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count()},
        "steps": args.steps,
        "promise": "prediction within a factor of 1.5 of the measured median step (after the first)",
        "configs": rows,
        "worst_ratio": max(ratios, key=lambda x: abs(x - 1), default=None),
        "within_factor_1_5": all(1 / 1.5 <= r <= 1.5 for r in ratios),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
