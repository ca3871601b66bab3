"""The measurements of benchmarks/gpu_check.py, one per process (so each peak is its own).

    python -m benchmarks.gpu_check_worker prepare '{"models_dir": ..., "tiny": false, ...}'
    python -m benchmarks.gpu_check_worker train   '{"model_dir": ..., "profile": "memory", ...}'

Each prints one line `RESULT {json}` last. `prepare` builds the random stand-in models,
saves them, measures generation tokens/s on them and describes the machine; `train`
trains a few GRPO steps through grpokit.training.trainer.train (profiles, model loading, health
and metrics callbacks as a user run gets them) and reports step times, the peak memory
against the doctor's estimate for the same config, and the health callback's time.
"""
from __future__ import annotations

import json
import math
import statistics
import sys
import time
from pathlib import Path

from benchmarks._harness import StepTimer, fixed_length, peak_rss_mb

# The production recipe (configs/math-qwen-memory.yaml) minus its download: the same LoRA,
# rewards and group size, on generated arithmetic prompts.
LORA = {"r": 16, "alpha": 32, "target_modules": "all-linear"}
REWARDS = [{"name": "incremental_format", "weight": 0.5},
           {"name": "numeric_match", "weight": 2.0, "params": {"rel_tol": 0.0001}}]


def gib(n: float | None) -> float | None:
    return None if n is None else round(n / 2**30, 4)


def describe_machine() -> dict:
    import importlib.metadata as md

    import torch

    from grpokit import optional

    def version(name):
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            return None

    cuda = torch.cuda.is_available()
    props = torch.cuda.get_device_properties(0) if cuda else None
    return {
        "cuda": cuda,
        "gpu": props.name if props else None,
        "gpu_memory_gb": gib(props.total_memory) if props else None,
        "cuda_runtime": torch.version.cuda,
        "python": sys.version.split()[0],
        "packages": {p: version(p) for p in ("torch", "transformers", "trl", "peft", "accelerate", "datasets",
                                             "bitsandbytes")},
        "bitsandbytes_importable": optional.available("bitsandbytes") and _imports("bitsandbytes"),
    }


def _imports(module: str) -> bool:
    try:
        __import__(module)
        return True
    except Exception:  # noqa: BLE001 - a broken install (missing CUDA library) is what we want to know
        return False


def generation_speed(model, tokenizer, *, batch: int, new_tokens: int) -> dict:
    """Sampled tokens per second at a fixed length (min_new_tokens), after one short warm-up."""
    import torch

    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "What is 12 + 30?"}],
                                           add_generation_prompt=True, tokenize=False)
    enc = tokenizer([prompt] * batch, return_tensors="pt", add_special_tokens=False).to(model.device)
    model.eval()

    def run(n: int) -> float:
        sync = torch.cuda.synchronize if model.device.type == "cuda" else (lambda: None)
        sync()
        start = time.perf_counter()
        with torch.no_grad():
            out = model.generate(**enc, do_sample=True, max_new_tokens=n, min_new_tokens=n,
                                 pad_token_id=tokenizer.pad_token_id)
        sync()
        assert out.shape[1] - enc["input_ids"].shape[1] == n, "generation stopped early"
        return time.perf_counter() - start

    run(4)  # kernel selection and caches
    seconds = run(new_tokens)
    return {"batch": batch, "new_tokens": new_tokens, "prompt_tokens": int(enc["input_ids"].shape[1]),
            "seconds": round(seconds, 4), "tokens_per_s": round(batch * new_tokens / seconds, 2)}


def prepare(spec: dict) -> dict:
    """Save every stand-in model under spec['models_dir'] and time generation on each."""
    import torch

    from benchmarks.model_shapes import save_random_model

    device = "cuda" if torch.cuda.is_available() else "cpu"
    generation = {}
    for name in spec["models"]:
        model, tokenizer = save_random_model(name, Path(spec["models_dir"]) / name, tiny=spec["tiny"], device=device)
        generation[name] = generation_speed(model, tokenizer, batch=spec["generation_batch"],
                                            new_tokens=spec["generation_tokens"])
        generation[name]["params_m"] = round(sum(p.numel() for p in model.parameters()) / 1e6, 2)
        del model
        if device == "cuda":
            torch.cuda.empty_cache()
    return {"machine": describe_machine(), "generation": generation}


def run_config(spec: dict, output_dir: str):
    from grpokit.config.run_config import from_dict

    training = fixed_length({"num_generations": spec["num_generations"], "max_steps": spec["steps"],
                             "max_completion_length": spec["completion_tokens"], "learning_rate": 1e-5,
                             "save_steps": 100000, **spec.get("training", {})})
    return from_dict({
        "name": spec["name"],
        "model": {"name": spec["model_dir"], "lora": LORA, **spec.get("model", {})},
        "data": {"source": "synthetic:arithmetic", "eval_size": 8, "max_samples": 200},
        "rewards": REWARDS,
        "profile": spec["profile"],
        "training": training,
        "output_dir": output_dir,
    })


def doctor_estimate(cfg, cuda: bool) -> dict:
    """What `grpokit doctor` estimates for cfg: its memory_parts on the model's shape (meta device, no weights)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from grpokit.config import profiles
    from grpokit.data import load_data
    from grpokit.health.doctor import memory_parts, prompt_lengths
    from grpokit.models.loading import load_tokenizer

    dtype = getattr(torch, profiles.model_dtype(cfg))
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(cfg.model.name), dtype=dtype)
    train_set = load_data(cfg.data)[0]
    rows = [dict(train_set[i]) for i in range(min(200, len(train_set)))]
    lengths = prompt_lengths(load_tokenizer(cfg.model.name), rows)
    parts = memory_parts(cfg, model, lengths, cuda=cuda)
    return {"estimate_gb": gib(parts["total"]), "max_prompt_tokens": max(lengths),
            "estimate_parts_gb": {k: gib(v) for k, v in parts.items() if k not in ("total", "trainable_params") and v}}


def _record_health_callbacks() -> list:
    """Keep each HealthCallback train() builds, to read the time it spent (its `seconds`)."""
    from grpokit.health.callback import HealthCallback

    made: list = []
    build = HealthCallback.from_config

    def recording(*args, **kwargs):
        callback = build(*args, **kwargs)
        made.append(callback)
        return callback

    HealthCallback.from_config = recording
    return made


def last_logged(metrics: Path, key: str):
    values = [r[key] for r in map(json.loads, metrics.read_text().splitlines()) if key in r]
    return values[-1] if values else None


def train_run(spec: dict) -> dict:
    import tempfile

    import torch

    from grpokit.config import profiles
    from grpokit.training.trainer import train

    cuda = torch.cuda.is_available()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = run_config(spec, tmp)
        estimate = doctor_estimate(cfg, cuda)
        args = profiles.build_grpo_config(cfg)
        healths = _record_health_callbacks()
        timer = StepTimer()
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        started = time.perf_counter()
        train(cfg, callbacks=[timer])
        seconds = time.perf_counter() - started
        measured = torch.cuda.max_memory_allocated() if cuda else peak_rss_mb() * 2**20
        logged_cuda_peak = last_logged(cfg.run_dir / "metrics.jsonl", "memory/cuda_peak_gb")
    body = timer.times[1:]  # the first step includes warm-up
    median = statistics.median(body)
    health_s = healths[0].seconds / len(timer.times) if healths else None
    out = {
        "model": Path(spec["model_dir"]).name, "profile": spec["profile"],
        "optim": str(getattr(args.optim, "value", args.optim)),
        "dtype": profiles.model_dtype(cfg), "bf16": bool(args.bf16),
        "gradient_checkpointing": bool(args.gradient_checkpointing),
        "per_device_train_batch_size": args.per_device_train_batch_size,
        "gradient_accumulation_steps": args.gradient_accumulation_steps,
        "num_generations": args.num_generations, "completion_tokens": args.max_completion_length,
        "steps": len(timer.times), "step_times_s": [round(t, 4) for t in timer.times],
        "median_step_s": round(median, 4),
        "peak_gb": gib(measured),
        "peak_reserved_gb": gib(torch.cuda.max_memory_reserved()) if cuda else None,
        "logged_cuda_peak_gb": logged_cuda_peak,
        **estimate,
        "estimate_ratio": round(estimate["estimate_gb"] / gib(measured), 3),
        "health_s_per_step": None if health_s is None else round(health_s, 6),
        "health_share_of_step": None if health_s is None else round(health_s / median, 6),
        "train_seconds": round(seconds, 2),
    }
    bad = [k for k, v in out.items() if isinstance(v, float) and not math.isfinite(v)]
    if bad:
        raise RuntimeError(f"non-finite measurements: {bad}")
    return out


def main(argv: list[str]) -> None:
    kind, spec = argv[0], json.loads(argv[1])
    result = {"prepare": prepare, "train": train_run}[kind](spec)
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
