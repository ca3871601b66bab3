"""Calibration against a real run: predicted vs measured share of zero-variance groups.

    python -m benchmarks.calibration [--prompts 8] [--samples 8] [--max-completion-length 96]

The bundled SmolLM2-135M-Instruct on configs/cpu-demo.yaml's data and rewards.
`grpokit calibrate`'s estimate (K samples per prompt from the base model) predicts
the share of groups of num_generations completions whose total reward has zero
variance; then a short GRPO run trains on exactly those prompts, in order
(shuffle off, each prompt once), and its metrics.jsonl `frac_reward_zero_std`
is the measured share. Both sample at the config's temperature with top_k off and no
response prefill. The run's LoRA learns as it goes, so late steps drift from the base
model the prediction describes; the per-step table shows where.

Writes benchmarks/results/calibration.json. Default size: a few minutes on a laptop CPU.
"""
from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results"
CONFIG = ROOT / "configs" / "cpu-demo.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=8, help="prompts calibrated and trained on (once each)")
    parser.add_argument("--samples", type=int, default=8, help="calibration samples per prompt (K)")
    parser.add_argument("--max-completion-length", type=int, default=None, help="default: the config's")
    parser.add_argument("--out", default=str(RESULTS / "calibration.json"))
    opts = parser.parse_args()

    from grpokit.config.run_config import build_reward_set, load_config
    from grpokit.config.profiles import resolve_training
    from grpokit.data import load_data
    from grpokit.health.doctor import _load_model
    from grpokit.evaluate import default_accuracy
    from grpokit.evaluate.calibrate import calibrate

    overrides = [f"training.max_completion_length={opts.max_completion_length}"] if opts.max_completion_length else []
    cfg = load_config(CONFIG, overrides)
    training = resolve_training(cfg)
    group = int(training["num_generations"])
    per_step = int(training["per_device_train_batch_size"]) * int(training.get("gradient_accumulation_steps", 1) or 1)
    prompts_per_step = per_step // group
    if opts.prompts % prompts_per_step:
        parser.error(f"--prompts must be a multiple of {prompts_per_step} (prompts per training step)")
    train_set, _ = load_data(cfg.data)
    subset = train_set.select(range(opts.prompts))
    rows = [dict(r) for r in subset]
    rewards = build_reward_set(cfg)
    limit = int(training["max_completion_length"])
    temperature = float(training.get("temperature", 1.0) or 1.0)

    started = time.time()
    model, tokenizer = _load_model(cfg)
    predicted = calibrate(model, tokenizer, rows, rewards.funcs, rewards.weights, samples=opts.samples, num_generations=group,
                          accuracy=default_accuracy([r.get("answer") for r in rows]), max_new_tokens=limit,
                          temperature=temperature)
    calibrate_s = time.time() - started
    del model

    measured, train_s = _train_on(cfg, subset, steps=opts.prompts // prompts_per_step)
    per_prompt = [p["zero_variance"] for p in predicted["per_prompt"]]
    steps = []
    for i, record in enumerate(measured):
        chunk = per_prompt[i * prompts_per_step:(i + 1) * prompts_per_step]
        steps.append({"step": record.get("step"), "predicted": statistics.fmean(chunk),
                      "measured": record.get("frac_reward_zero_std"), "reward": record.get("reward")})
    share = statistics.fmean(s["measured"] for s in steps if s["measured"] is not None)
    groups = len(steps) * prompts_per_step
    result = {
        "command": "python -m benchmarks.calibration" + f" --prompts {opts.prompts} --samples {opts.samples}"
        + (f" --max-completion-length {opts.max_completion_length}" if opts.max_completion_length else ""),
        "machine": {"cpu": platform.processor() or platform.machine(), "note": "shared 2-core CPU, timings noisy"},
        "config": str(CONFIG.relative_to(ROOT)), "model": cfg.model.name,
        "prompts": opts.prompts, "samples": opts.samples, "num_generations": group,
        "max_completion_length": limit, "temperature": temperature,
        "predicted_zero_variance_share": predicted["predicted_zero_variance_share"],
        "measured_zero_variance_share": share,
        # A measured share over n groups is itself a sample: its binomial standard error.
        "measured_standard_error": math.sqrt(max(share * (1 - share), 0.0) / groups) if groups else None,
        "difference": share - predicted["predicted_zero_variance_share"],
        "mean_pass_rate": predicted["mean_pass_rate"],
        "verdicts": {k: predicted[k] for k in ("too_easy", "too_hard", "in_range")},
        "per_step": steps, "per_prompt": predicted["per_prompt"],
        "calibrate_seconds": calibrate_s, "train_seconds": train_s,
    }
    Path(opts.out).parent.mkdir(parents=True, exist_ok=True)
    Path(opts.out).write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
    print(f"predicted zero-variance share {result['predicted_zero_variance_share']:.3f}, measured {share:.3f} "
          f"(+- {result['measured_standard_error']:.3f}) over {groups} groups; wrote {opts.out}")


def _train_on(cfg, subset, *, steps: int) -> tuple[list[dict], float]:
    """Train on `subset` in order, each prompt once; returns the metrics.jsonl records and seconds."""
    from grpokit.training.trainer import train

    out = Path(tempfile.mkdtemp(prefix="grpokit-calibration-")) / "run"
    cfg.output_dir = str(out)
    cfg.training.update({"max_steps": steps, "shuffle_dataset": False, "save_steps": 10_000, "logging_steps": 1})
    started = time.time()
    run_dir = train(cfg, datasets=(subset, None))
    lines = (Path(run_dir) / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    return [r for r in records if "frac_reward_zero_std" in r], time.time() - started


if __name__ == "__main__":
    main()
