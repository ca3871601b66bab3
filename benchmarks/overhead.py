"""grpokit's training path against a plain TRL script with the same model, data, rewards and settings.

    python -m benchmarks.overhead [--steps 4] [--rounds 2]

Both train the bundled SmolLM2-135M (LoRA r=16, the base dtype grpokit picks here) on synthetic arithmetic with the
format and correctness rewards, with the GRPOConfig keywords of the cpu profile, alternately,
each in its own process (clean peak memory). Generation is fixed-length so steps do equal work.
grpokit adds: config validation, reward wrappers that record completions.jsonl, metrics.jsonl,
the progress line, checkpoint markers. Writes benchmarks/results/overhead.json with the median
step time of each (first step left out), the ratio grpokit/trl (target <= 1.03) and peak RSS.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from benchmarks import _harness

RESULTS = Path(__file__).resolve().parent / "results"
MODULE = "benchmarks.overhead"


def _config(steps: int):
    from grpokit.config.run_config import from_dict

    training = _harness.fixed_length(_harness.COMMON)
    training.update(max_steps=steps, disable_tqdm=True)
    return from_dict({"name": "overhead", "output_dir": str(Path(tempfile.mkdtemp()) / "run"), "profile": "cpu",
                      "data": {"max_samples": 200, "eval_size": 0},
                      "rewards": [{"name": "incremental_format"}, {"name": "numeric_match"}],
                      "training": training})


def worker(variant: str, steps: int) -> dict:
    import warnings

    warnings.simplefilter("ignore")
    cfg = _config(steps)
    timer = _harness.StepTimer()
    if variant == "grpokit":
        from grpokit.training.trainer import train

        train(cfg, callbacks=[timer])
    else:
        # The plain script a TRL user would write, with the same settings spelled out.
        import torch
        from peft import LoraConfig, get_peft_model
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from trl import GRPOConfig, GRPOTrainer

        from grpokit import rewards
        from grpokit.config import profiles
        from grpokit.data import load_data
        from grpokit.bundled import ensure_bundled

        path = ensure_bundled(cfg.model.name)
        tok = AutoTokenizer.from_pretrained(path, padding_side="left")
        # The dtype and LoRA settings grpokit would pick on this machine (bf16 only where the CPU has
        # it natively), so both sides do the same arithmetic.
        model = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, profiles.model_dtype(cfg)))
        lora = cfg.model.lora
        model = get_peft_model(model, LoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                                                 target_modules=lora.target_modules, task_type="CAUSAL_LM"))
        kwargs = profiles.grpo_kwargs(cfg, output_dir=tempfile.mkdtemp())
        train_set, _ = load_data(cfg.data)
        trainer = GRPOTrainer(model=model, reward_funcs=[rewards.get("incremental_format"), rewards.get("numeric_match")],
                              args=GRPOConfig(**kwargs), train_dataset=train_set, processing_class=tok, callbacks=[timer])
        trainer.train()
    return {"variant": variant, **_harness.summarize(timer.times), "peak_rss_mb": _harness.peak_rss_mb()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    opts = parser.parse_args()
    if opts.worker:
        print(json.dumps(worker(opts.worker, opts.steps)))
        return
    runs = _harness.alternate(MODULE, ("trl", "grpokit"), opts.steps, opts.rounds)

    def med(variant, key="median_s"):
        return statistics.median(r[key] for r in runs if r["variant"] == variant)

    # Per-round ratios (same time window) are less exposed to the shared CPU's load swings.
    round_ratios = _harness.per_round_ratios(runs, "grpokit", "trl")
    result = {
        "command": f"python -m benchmarks.overhead --steps {opts.steps} --rounds {opts.rounds}",
        "settings": {**_harness.COMMON, "fixed_length_generation": True, "profile": "cpu"},
        "median_step_s": {"trl": med("trl"), "grpokit": med("grpokit")},
        "ratio_grpokit_over_trl": med("grpokit") / med("trl"),
        "ratio_per_round": round_ratios,
        "ratio_target": 1.03,
        "peak_rss_mb": {"trl": med("trl", "peak_rss_mb"), "grpokit": med("grpokit", "peak_rss_mb")},
        "runs": runs,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "overhead.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("median_step_s", "ratio_grpokit_over_trl", "ratio_per_round", "peak_rss_mb")}))


if __name__ == "__main__":
    main()
