"""How close `grpokit doctor`'s memory estimate comes to the peak memory training really takes.

    python -m benchmarks.memory_estimate [--rounds 2] [--only NAME]

Each variant of configs/cpu-demo.yaml (batch size, completion length, gradient
checkpointing, LoRA dropout, LoRA or full fine-tuning) trains real steps in a
fresh process; the peak resident memory of that process (VmHWM) is compared with
the estimate doctor prints for the same config and model, and with the formula
doctor used before it was calibrated (`legacy_estimate`). Ratios
estimate/measured and median absolute errors go to
benchmarks/results/memory_estimate.json. Peak RSS moves between identical runs
(by up to ~20% here: where freed tensor memory lands in glibc's per-thread arenas
depends on thread scheduling), so each variant runs `--rounds` times, rounds
interleaved, and the median peak is compared.
On a CPU run the whole process is what runs out of RAM, so the measurement is
the process's peak, imports and data included.
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

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "cpu-demo.yaml"
OUT = ROOT / "benchmarks" / "results" / "memory_estimate.json"

# name -> (overrides, steps). Full fine-tuning takes 2 steps: AdamW allocates its state at the
# first optimizer step, so only the second step's peak holds it alongside the activations.
VARIANTS = {
    "demo": ([], 1),
    "LoRA dropout 0.05": (["model.lora.dropout=0.05"], 1),
    "short completions": (["training.max_completion_length=48"], 1),
    "half batch": (["training.per_device_train_batch_size=4", "training.num_generations=4"], 1),
    "checkpointing": (["training.gradient_checkpointing=true"], 1),
    "full fine-tune": (["model.lora=null", "training.learning_rate=1e-6", "training.max_completion_length=48"], 2),
}

WORKER = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from transformers import TrainerCallback
from grpokit.config.run_config import load_config
from grpokit.training.trainer import train

def hwm():
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmHWM"))

class Peak(TrainerCallback):
    steps = []
    def on_step_end(self, args, state, control, **kw):
        self.steps.append(hwm())

cfg = load_config(sys.argv[2], json.loads(sys.argv[3]))
train(cfg, callbacks=[Peak()])
print("PEAK " + json.dumps({"peak_bytes": hwm(), "per_step": Peak.steps}))
"""


def measure(overrides: list[str], steps: int, out_dir: str) -> dict:
    # A fresh process per variant: its peak resident memory is the variant's alone.
    sets = overrides + [f"training.max_steps={steps}", "training.save_steps=1000", f"output_dir={out_dir}"]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WORKER, str(ROOT / "src"), str(CONFIG), json.dumps(sets)],
                          capture_output=True, text=True, timeout=3600, env=dict(os.environ))
    if done.returncode != 0:
        raise RuntimeError(f"training failed for {overrides}: {done.stderr[-2000:]}")
    line = next(x for x in done.stdout.splitlines() if x.startswith("PEAK "))
    result = json.loads(line[5:])
    result["seconds"] = round(time.perf_counter() - start, 1)
    return result


def legacy_estimate(parts: dict, cfg, shape, prompt_len: int) -> float:
    """doctor's formula before calibration: 16-bit activations at 34 bytes x hidden per token
    and layer, two fp32 copies of the full logits, no runtime, no attention matrices."""
    t = cfg.training
    b = int(t.get("per_device_train_batch_size", 8))
    seq = prompt_len + int(t.get("max_completion_length", 96))
    ckpt = bool(t.get("gradient_checkpointing"))
    activations = b * seq * shape.layers * shape.hidden * (2.0 if ckpt else 34.0)
    logits = b * seq * shape.vocab * 4.0 * 2
    kv = b * seq * shape.layers * 2 * shape.kv_dim * 2.0
    fixed = sum(parts[k] for k in ("weights", "reference model", "gradients", "optimizer"))
    return fixed + activations + logits + kv


def estimate(overrides: list[str]) -> tuple[dict, float]:
    sys.path.insert(0, str(ROOT / "src"))
    from grpokit.config.run_config import load_config
    from grpokit.data import load_data
    from grpokit.health.doctor import _load_model, memory_parts, prompt_lengths

    cfg = load_config(CONFIG, overrides)
    model, tokenizer = _load_model(cfg)  # what doctor loads
    train_set = load_data(cfg.data)[0]
    rows = [dict(train_set[i]) for i in range(min(200, len(train_set)))]
    from grpokit.health.doctor_checks import shape_of

    lengths = prompt_lengths(tokenizer, rows)
    parts = memory_parts(cfg, model, lengths, cuda=False)
    legacy = legacy_estimate(parts, cfg, shape_of(model), max(lengths))
    del model
    return parts, legacy


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="run only this variant (repeatable)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    names = args.only or list(VARIANTS)
    estimates = {name: estimate(VARIANTS[name][0]) for name in names}
    peaks: dict[str, list] = {name: [] for name in names}
    for _ in range(args.rounds):
        for name in names:
            overrides, steps = VARIANTS[name]
            with tempfile.TemporaryDirectory() as tmp:
                peaks[name].append(measure(overrides, steps, tmp))
            print(f"{name}: peak {peaks[name][-1]['peak_bytes'] / 1e9:.3f} GB", flush=True)
    rows = []
    for name in names:
        overrides, steps = VARIANTS[name]
        parts, legacy = estimates[name]
        measured = statistics.median(m["peak_bytes"] for m in peaks[name])
        row = {
            "variant": name, "overrides": overrides, "steps": steps,
            "estimate_gb": round(parts["total"] / 1e9, 3),
            "measured_peak_gb": round(measured / 1e9, 3),
            "measured_each_round_gb": [round(m["peak_bytes"] / 1e9, 3) for m in peaks[name]],
            "ratio": round(parts["total"] / measured, 3),
            "legacy_estimate_gb": round(legacy / 1e9, 3),
            "legacy_ratio": round(legacy / measured, 3),
            "parts_gb": {k: round(v / 1e9, 3) for k, v in parts.items() if k not in ("total", "trainable_params")},
            "seconds": [m["seconds"] for m in peaks[name]],
        }
        rows.append(row)
        print(f"{name}: estimate {row['estimate_gb']} GB, measured (median) {row['measured_peak_gb']} GB, "
              f"ratio {row['ratio']} (legacy {row['legacy_ratio']})", flush=True)
    errors = [abs(r["ratio"] - 1) for r in rows]
    legacy_errors = [abs(r["legacy_ratio"] - 1) for r in rows]
    result = {
        "benchmark": "memory_estimate",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "load_avg": [round(x, 2) for x in os.getloadavg()]},
        "config": str(CONFIG.relative_to(ROOT)),
        "rounds": args.rounds,
        "variants": rows,
        "median_abs_error": round(statistics.median(errors), 3) if errors else None,
        "legacy_median_abs_error": round(statistics.median(legacy_errors), 3) if legacy_errors else None,
        "worst_ratio": max((r["ratio"] for r in rows), key=lambda x: abs(x - 1), default=None),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in ("median_abs_error", "legacy_median_abs_error", "worst_ratio")}))
    return result


if __name__ == "__main__":
    main()
