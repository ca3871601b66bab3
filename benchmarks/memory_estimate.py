"""How close `grpokit doctor`'s memory estimate comes to the peak memory training really takes.

    python -m benchmarks.memory_estimate [--rounds 2] [--only NAME] [--merge]

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
# These variants of configs/cpu-demo.yaml (fp32 weights then) are what the CPU constants were fitted on
# (2026-12-02); CHECKS below were not used to fit anything.
VARIANTS = {
    "demo": ([], 1),
    "LoRA dropout 0.05": (["model.lora.dropout=0.05"], 1),
    "short completions": (["training.max_completion_length=48"], 1),
    "half batch": (["training.per_device_train_batch_size=4", "training.num_generations=4"], 1),
    "checkpointing": (["training.gradient_checkpointing=true"], 1),
    "full fine-tune": (["model.lora=null", "training.learning_rate=1e-6", "training.max_completion_length=48"], 2),
}
# Held-out checks (bf16 weights where the CPU has native bf16, as the cpu profile loads them today):
# name -> (config, overrides, steps). "init:math" is the config `grpokit init math` writes, the
# training settings every journey's init writes; the demo recipe is the health zoo's OOM case
# (benchmarks/zoo/cases.py "oom-full-finetune": the demo recipe under a 4 GiB cap), measured uncapped.
CHECKS = {
    "zoo OOM case (demo recipe, uncapped)": ("configs/cpu-demo.yaml", ["eval.every=0"], 2),
    "init math (CPU defaults)": ("init:math", [], 1),
    # The journeys' configs (tests/journeys): what `grpokit init code|json|kb_qa --data FILE` writes for
    # each journey's own data file (the journey's writer makes it), trained on the bundled model as written.
    "journey code (init code --data tasks.jsonl)": ("init:code", [], 1),
    "journey json (init json --data orders.jsonl)": ("init:json", [], 1),
    "journey kb_qa (init kb_qa --data kb.csv)": ("init:kb_qa", [], 1),
}
# init task -> (the journey test module that writes its data, the file name, the writer's name, its extra arguments).
# The checks the CPU constants were tuned on after they were first measured (the rest stay held out).
TUNED_ON = {"zoo OOM case (demo recipe, uncapped)"}
JOURNEY_DATA = {
    "code": ("test_code_journey", "tasks.jsonl", "write_tasks", ()),
    "json": ("test_json_journey", "orders.jsonl", "write_orders", ()),
    "kb_qa": ("test_kb_qa_journey", "kb.csv", "write_kb", (False,)),
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


def measure(overrides: list[str], steps: int, out_dir: str, config: Path = CONFIG) -> dict:
    # A fresh process per variant: its peak resident memory is the variant's alone.
    sets = overrides + [f"training.max_steps={steps}", "training.save_steps=1000", f"output_dir={out_dir}"]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WORKER, str(ROOT / "src"), str(config), json.dumps(sets)],
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


def estimate(overrides: list[str], config: Path = CONFIG) -> tuple[dict, float]:
    sys.path.insert(0, str(ROOT / "src"))
    from grpokit.config.run_config import load_config
    from grpokit.data import load_data
    from grpokit.health.doctor import _load_model, memory_parts, prompt_lengths

    cfg = load_config(config, overrides)
    model, tokenizer = _load_model(cfg)  # what doctor loads
    train_set = load_data(cfg.data)[0]
    rows = [dict(train_set[i]) for i in range(min(200, len(train_set)))]
    from grpokit.health.doctor_checks import shape_of

    lengths = prompt_lengths(tokenizer, rows)
    parts = memory_parts(cfg, model, lengths, cuda=False)
    legacy = legacy_estimate(parts, cfg, shape_of(model), max(lengths))
    del model
    return parts, legacy


def _journey_data(task: str, tmp: Path) -> str:
    """The journey's own data file for `task`, written by the journey test's writer (one copy of the rows)."""
    import importlib

    module, name, writer, args = JOURNEY_DATA[task]
    sys.path.insert(0, str(ROOT / "tests" / "journeys"))
    path = tmp / name
    getattr(importlib.import_module(module), writer)(path, *args)
    return str(path)


def _config_path(source: str, tmp: Path) -> Path:
    if source.startswith("init:"):
        import yaml

        sys.path.insert(0, str(ROOT / "src"))
        from grpokit.config.starter import build_init_config

        task = source.removeprefix("init:")
        data = None if task == "math" else _journey_data(task, tmp)
        path = tmp / f"init-{task}.yaml"
        path.write_text(yaml.safe_dump(build_init_config(task, data, None, None)))
        return path
    return ROOT / source


def gpu_held_out() -> list[dict]:
    """doctor's estimate, replayed here on the models' shapes (meta device), for the three GPU runs of
    benchmarks/results/gpu_check.json (H200, torch.cuda.max_memory_allocated): nothing was fitted to them."""
    from unittest import mock

    import torch
    from transformers import AutoModelForCausalLM

    from benchmarks.gpu_check import SIZES, train_specs
    from benchmarks.gpu_check_worker import run_config
    from benchmarks.model_shapes import model_config
    from benchmarks.tiny_model import make_tokenizer
    from grpokit import optional
    from grpokit.config import profiles
    from grpokit.health.doctor import memory_parts

    measured = json.loads((ROOT / "benchmarks" / "results" / "gpu_check.json").read_text())["train"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "qwen2.5-1.5b").mkdir()
        specs = train_specs(SIZES["full"], Path(tmp))
        tokenizer = make_tokenizer("chatml")
        real_available = optional.available
        # The GPU machine's hardware: CUDA and bitsandbytes present (profile memory picks 8-bit AdamW).
        with mock.patch.object(optional, "cuda_available", lambda: True), \
                mock.patch.object(optional, "available", lambda m: m == "bitsandbytes" or real_available(m)):
            for name in ("memory", "lora_bf16", "none"):
                cfg = run_config(specs[name], str(Path(tmp) / name))
                with torch.device("meta"):
                    model = AutoModelForCausalLM.from_config(model_config("qwen2.5-1.5b", tokenizer),
                                                             dtype=getattr(torch, profiles.model_dtype(cfg)))
                parts = memory_parts(cfg, model, [measured[name]["max_prompt_tokens"]], cuda=True)
                peak = measured[name]["peak_gb"] * 2**30
                rows.append({"run": name, "estimate_gib": round(parts["total"] / 2**30, 3),
                             "measured_gib": measured[name]["peak_gb"],
                             "ratio": round(parts["total"] / peak, 3),
                             "before_ratio": measured[name]["estimate_ratio"],
                             "parts_gib": {k: round(v / 2**30, 3) for k, v in parts.items()
                                           if v and k not in ("total", "trainable_params")}})
    return rows


def _result(rows: list[dict], gpu: list[dict]) -> dict:
    ratios = [r["ratio"] for r in rows] + [r["ratio"] for r in gpu]
    return {
        "benchmark": "memory_estimate",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "load_avg": [round(x, 2) for x in os.getloadavg()]},
        "measure": "CPU: the training process's VmHWM (peak resident set); GPU: torch.cuda.max_memory_allocated",
        "cpu_runs": rows,
        "gpu_held_out": gpu,
        "worst_ratio": max(ratios, key=lambda x: abs(x - 1), default=None),
        "within_15_percent": all(0.85 <= r <= 1.15 for r in ratios),
    }


def _kept_rows(path: Path, names: list[str]) -> list[dict]:
    """--merge: the rows of an earlier results file that this run does not measure again."""
    if not path.is_file():
        return []
    return [r for r in json.loads(path.read_text())["cpu_runs"] if r["run"] not in names]


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="run only this CPU check or variant (repeatable)")
    parser.add_argument("--fit", action="store_true", help="also rerun the variants the constants were fitted on")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--merge", action="store_true",
                        help="keep the --out file's rows for runs not measured now (one slow check at a time)")
    args = parser.parse_args(argv)
    runs = {name: (str(CONFIG.relative_to(ROOT)), o, st, "fit") for name, (o, st) in VARIANTS.items()} if args.fit else {}
    runs.update({name: (src, o, st, "tuned" if name in TUNED_ON else "held out") for name, (src, o, st) in CHECKS.items()})
    names = args.only or list(runs)
    out_path = Path(args.out)
    rows = _kept_rows(out_path, names) if args.merge else []
    earlier_gpu = json.loads(out_path.read_text()).get("gpu_held_out", []) if args.merge and out_path.is_file() else []
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            source, overrides, steps, role = runs[name]
            config = _config_path(source, Path(tmp))
            parts, _ = estimate(overrides, config)
            peaks = []
            for _ in range(args.rounds):
                with tempfile.TemporaryDirectory() as out:
                    peaks.append(measure(overrides, steps, out, config))
            measured = statistics.median(m["peak_bytes"] for m in peaks)
            row = {"run": name, "role": role, "config": source, "overrides": overrides, "steps": steps,
                   "estimate_gib": round(parts["total"] / 2**30, 3),
                   "measured_peak_gib": round(measured / 2**30, 3),
                   "measured_each_round_gib": [round(m["peak_bytes"] / 2**30, 3) for m in peaks],
                   "ratio": round(parts["total"] / measured, 3),
                   "parts_gib": {k: round(v / 2**30, 3) for k, v in parts.items() if v and k not in ("total", "trainable_params")},
                   "seconds": [m["seconds"] for m in peaks]}
            rows.append(row)
            # Written after every check: a check takes minutes to an hour on a loaded machine.
            out_path.write_text(json.dumps(_result(rows, earlier_gpu), indent=2) + "\n")
            print(f"{name}: estimate {row['estimate_gib']} GiB, measured {row['measured_peak_gib']} GiB, "
                  f"ratio {row['ratio']}", flush=True)
    gpu = gpu_held_out()
    for row in gpu:
        print(f"GPU {row['run']}: estimate {row['estimate_gib']} GiB, measured {row['measured_gib']} GiB, "
              f"ratio {row['ratio']} (was {row['before_ratio']})", flush=True)
    result = _result(rows, gpu)
    out_path.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
