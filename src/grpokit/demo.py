"""`grpokit demo`: the bundled model learns the reasoning/answer format on a CPU, start to finish.

The recipe is embedded (it equals configs/cpu-demo.yaml, which a test checks) so the
demo runs from an installed package.

A 135M model almost never writes a `<reasoning>` tag on its own (0 of 16 samples with
the default instruction, measured), and a reward that is 0 for every sample gives GRPO
nothing to learn from. The demo therefore shows the model a worked example in the system
prompt and starts each answer with `<reasoning>\n` (a prefill: the chat template's
generation prompt is extended with it, so the completion continues from there). The
model still has to learn to close the reasoning and write the `<answer>` block, which is
what the format reward measures (its maximum is 0.75 here: the opening tag is given). Before/after numbers come from two places:
the training rewards of the first and last five steps (metrics.jsonl), and a sampled
evaluation of the base model and the trained adapter on held-out prompts (eval.json).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import yaml

from grpokit.config import RunConfig, _numbers, from_dict

PREFILL = "<reasoning>\n"
SYSTEM_PROMPT = (
    "Think step by step, then answer. Always reply in exactly this format:\n"
    "<reasoning>\nyour step-by-step thinking\n</reasoning>\n<answer>\nthe final number\n</answer>\n\n"
    "Example:\nQuestion: Tom has 3 apples and buys 4 more. How many apples does Tom have?\n"
    "<reasoning>\n3 + 4 = 7\n</reasoning>\n<answer>\n7\n</answer>"
)

DEMO_YAML = """
name: cpu-demo
model:
  name: bundled:smollm2-135m-instruct
  lora: {r: 16, alpha: 32, target_modules: all-linear}
data:
  source: synthetic:arithmetic
  eval_size: 16
rewards:
  - {name: incremental_format, weight: 1.0}
  - {name: numeric_match, weight: 1.0}
profile: cpu
training:
  num_generations: 4
  per_device_train_batch_size: 8
  max_completion_length: 96
  learning_rate: 2.0e-4
  temperature: 1.0
  max_steps: 30
  save_steps: 15
"""


def demo_config(**changes) -> RunConfig:
    raw = _numbers(yaml.safe_load(DEMO_YAML))
    raw["data"]["system_prompt"] = SYSTEM_PROMPT
    raw.update(changes)
    return from_dict(raw)





def window_means(metrics: list[dict], keys: list[str], n: int = 5) -> dict:
    """Mean of each key over the first n and the last n logged steps."""
    def mean(rows, key):
        vals = [r[key] for r in rows if isinstance(r.get(key), (int, float))]
        return sum(vals) / len(vals) if vals else None

    first, last = metrics[:n], metrics[-n:]
    return {key: {"first": mean(first, key), "last": mean(last, key)} for key in keys}


def read_metrics(run_dir: Path) -> list[dict]:
    path = Path(run_dir) / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run_demo(*, steps: int | None = None, output_dir: str | None = None, console=None, evaluate: bool = True,
             eval_prompts: int = 16, training: dict | None = None) -> dict:
    """Train, evaluate, print the run dir and before/after numbers; returns the summary."""
    from grpokit.train import train

    stamp = time.strftime("%Y%m%d-%H%M%S")
    changes: dict = {"name": f"cpu-demo-{stamp}"}
    if output_dir:
        changes["output_dir"] = output_dir
    cfg = demo_config(**changes)
    cfg.training.update(training or {})
    if steps is not None:
        cfg.training["max_steps"] = steps
    say = console.print if console is not None else print
    say(f"grpokit demo: training {cfg.model.name} on {cfg.data.source} for {cfg.training['max_steps']} steps "
        f"(profile {cfg.profile}); run directory {cfg.run_dir}")
    from grpokit.data import load_data

    train_set, eval_set = load_data(cfg.data)
    started = time.time()
    run_dir = train(cfg, console=console, datasets=(train_set, eval_set), response_prefix=PREFILL)
    train_s = time.time() - started
    metrics = read_metrics(run_dir)
    keys = ["reward", *[f"rewards/{r.name}/mean" for r in cfg.rewards], "completions/mean_length"]
    summary = {"run_dir": str(run_dir), "train_seconds": train_s, "steps": len(metrics),
               "training_window": window_means(metrics, keys)}
    if evaluate:
        summary["eval"] = _before_after(cfg, run_dir, eval_set, eval_prompts)
    (run_dir / "demo_summary.json").write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    _print_summary(say, summary)
    return summary


def _before_after(cfg, run_dir: Path, held_out, n: int) -> dict:
    """Sampled rewards of the base model and the trained adapter on the same held-out prompts."""
    from grpokit.evaluate import compare, evaluate, write_eval
    from grpokit.models import add_response_prefix, load_model
    from grpokit.profiles import model_dtype
    from grpokit.train import build_rewards

    funcs, weights = build_rewards(cfg.rewards)
    settings = dict(k=1, max_new_tokens=int(cfg.training["max_completion_length"]),
                    temperature=float(cfg.training.get("temperature", 1.0)), max_prompts=n, seed=cfg.data.seed)
    results = {}
    for label, adapter in (("before", None), ("after", str(run_dir / "checkpoints" / "final"))):
        model, tok = load_model(cfg.model, dtype=model_dtype(cfg), adapter=adapter, trainable=False)
        model.eval()
        add_response_prefix(tok, PREFILL)
        results[label] = evaluate(model, tok, held_out, funcs, weights, **settings)
        del model
    write_eval(run_dir / "eval.json", results["before"], results["after"], {"name": cfg.name, "prefill": PREFILL})
    return {**results, "delta": compare(results["before"], results["after"])}


def _print_summary(say, summary: dict) -> None:
    say(f"\nrun directory: {summary['run_dir']}  ({summary['steps']} steps, {summary['train_seconds'] / 60:.1f} min)")
    say("training rewards, mean of the first 5 steps -> last 5 steps:")
    for key, v in summary["training_window"].items():
        if v["first"] is not None:
            say(f"  {key:<36} {v['first']:8.3f} -> {v['last']:8.3f}")
    ev = summary.get("eval")
    if ev:
        from grpokit.evaluate import format_table

        say("held-out prompts, base model vs trained adapter:")
        say(format_table(ev.get("before"), ev.get("after")))
