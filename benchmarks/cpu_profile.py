"""The cpu profile against TRL's default settings, on this CPU, run alternately.

    python -m benchmarks.cpu_profile [--steps 4] [--rounds 2]

Each variant trains the bundled SmolLM2-135M (LoRA r=16) on synthetic arithmetic with the
format and correctness rewards through a plain GRPOTrainer, in its own process:
  trl_default  GRPOConfig defaults (+ use_cpu=True, which TRL needs to start without a GPU:
               bf16 autocast, gradient checkpointing) with float32 weights, as transformers loads them
  trl_fp32     the same with bf16=False (pure float32)
  cpu          grpokit's cpu profile: bf16 base weights, float32 LoRA, no checkpointing
  memory       grpokit's memory profile (for peak memory)
Generation is fixed-length (min_new_tokens = max_completion_length) so every step does
the same work. Writes benchmarks/results/cpu_profile.json: median step time per variant
(first step left out), the speed-up (target >= 1.5x), peak RSS, and the format reward trend
of the earlier format-task demo run (benchmarks/results/demo_format_task.json, which uses the cpu profile).
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from benchmarks import _harness

RESULTS = Path(__file__).resolve().parent / "results"
MODULE = "benchmarks.cpu_profile"


def worker(variant: str, steps: int) -> dict:
    import warnings

    from trl import GRPOConfig, GRPOTrainer

    from grpokit import rewards
    from grpokit.config import profiles
    from grpokit.config.run_config import RewardSpec, RunConfig
    from grpokit.data import DataConfig, load_data
    from grpokit.models.loading import load_model

    profile = {"trl_default": "none", "trl_fp32": "none", "cpu": "cpu", "memory": "memory"}[variant]
    cfg = RunConfig(name="bench", profile=profile, data=DataConfig(max_samples=200, eval_size=0),
                    rewards=[RewardSpec("incremental_format"), RewardSpec("numeric_match")],
                    training=_harness.fixed_length(_harness.COMMON))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kwargs = profiles.grpo_kwargs(cfg, output_dir=tempfile.mkdtemp())
    if variant.startswith("trl_"):
        # TRL's own defaults: only what every variant shares, plus use_cpu (required here).
        kwargs = {k: kwargs[k] for k in (*_harness.COMMON, "generation_kwargs", "output_dir")}
        kwargs.update(use_cpu=True, max_steps=steps, disable_tqdm=True)
        if variant == "trl_fp32":
            kwargs["bf16"] = False
        dtype = "float32"
    else:
        kwargs["max_steps"] = steps
        dtype = profiles.model_dtype(cfg)
    args = GRPOConfig(**kwargs)
    model, tok = load_model(cfg.model, dtype=dtype)
    train, _ = load_data(cfg.data)
    timer = _harness.StepTimer()
    trainer = GRPOTrainer(model=model, reward_funcs=[rewards.get(r.name) for r in cfg.rewards], args=args,
                          train_dataset=train, processing_class=tok, callbacks=[timer])
    trainer.train()
    return {"variant": variant, "dtype": dtype, "bf16_autocast": bool(args.bf16),
            "gradient_checkpointing": bool(args.gradient_checkpointing),
            "per_device_train_batch_size": args.per_device_train_batch_size,
            "gradient_accumulation_steps": args.gradient_accumulation_steps,
            **_harness.summarize(timer.times), "peak_rss_mb": _harness.peak_rss_mb(),
            "format_reward": [l.get("rewards/incremental_format/mean") for l in timer.logs]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--extra", default="memory,trl_fp32", help="variants run once after the rounds")
    opts = parser.parse_args()
    if opts.worker:
        print(json.dumps(worker(opts.worker, opts.steps)))
        return
    runs = _harness.alternate(MODULE, ("trl_default", "cpu"), opts.steps, opts.rounds)
    per_round = _harness.per_round_ratios(runs, "trl_default", "cpu")
    for variant in [v for v in opts.extra.split(",") if v]:
        runs.append(_harness.run_variant(MODULE, variant, opts.steps))

    def med(variant, key="median_s"):
        vals = [r[key] for r in runs if r["variant"] == variant]
        return statistics.median(vals) if vals else None

    result = {
        "speedup_per_round": per_round,  # same time window: less exposed to the shared CPU's load swings
        "command": f"python -m benchmarks.cpu_profile --steps {opts.steps} --rounds {opts.rounds}",
        "settings": {**_harness.COMMON, "fixed_length_generation": True, "model": "bundled:smollm2-135m-instruct",
                     "lora_r": 16},
        "median_step_s": {v: med(v) for v in ("trl_default", "trl_fp32", "cpu", "memory")},
        "speedup_cpu_vs_trl_default": med("trl_default") / med("cpu"),
        "speedup_target": 1.5,
        "peak_rss_mb": {v: med(v, "peak_rss_mb") for v in ("trl_default", "trl_fp32", "cpu", "memory")},
        "runs": runs,
    }
    if med("trl_fp32"):
        result["speedup_cpu_vs_trl_fp32"] = med("trl_fp32") / med("cpu")
    demo = RESULTS / "demo_format_task.json"
    if demo.is_file():
        d = json.loads(demo.read_text())
        result["format_reward_cpu_profile_demo"] = {"first5": d.get("format_first5"), "last5": d.get("format_last5"),
                                                    "per_step": [m.get("rewards/incremental_format/mean")
                                                                 for m in d.get("metrics", [])]}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "cpu_profile.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("median_step_s", "speedup_cpu_vs_trl_default", "peak_rss_mb")}))


if __name__ == "__main__":
    main()
