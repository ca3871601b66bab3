"""Does the config `grpokit init math` writes learn on CPU? Held-out accuracy before and after, several seeds.

    PYTHONPATH=src python -m benchmarks.init_math_learning [--seeds 0,1,2] [--prompts 150] [--steps 20]

Trains the config `grpokit init math` writes, unchanged (the bundled 135M model, LoRA, 8 generations x
32 tokens after two worked examples in plain text, 20 steps, synthetic:arithmetic), once per seed in its own subprocess; a seed changes
training.seed only, so every run trains on the same 900-row split. Then samples one completion per
held-out prompt (the training temperature and completion length, the same sampling seed for every
model) from the base model and from each run's final adapter, scored as `grpokit eval` scores them
(accuracy "auto" on the run's answer format). The held-out prompts are the config's own data.eval_size
split (100 rows), topped up to --prompts with fresh synthetic:arithmetic questions, none of whose
wordings the training split holds. Per seed and pooled over seeds: accuracy with a Wilson 95%
interval and the change from the base model with a two-proportion z-test. Writes
benchmarks/results/init_math_learning.json after the base evaluation and after every seed.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.stats import one_sided_p, two_proportion_test, wilson

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
EVAL_SEED = 12345
# Where the top-up questions come from: the init source's generator with another seed (same task,
# same digits and operations), so they are new rows of the kind the run trains on.
TOP_UP_SEED = 2026


def init_config(work: Path, overrides: list[str] = ()):
    """The run config `grpokit init math` writes, loaded with `overrides`; and its YAML path."""
    import yaml

    from grpokit.config.run_config import load_config
    from grpokit.config.starter import build_init_config

    path = work / "math-reasoning.yaml"
    if not path.exists():
        path.write_text(yaml.safe_dump(build_init_config("math", None, None, None)), encoding="utf-8")
    return load_config(path, list(overrides)), path


def _question(row: dict) -> str:
    prompt = row["prompt"]
    return prompt if isinstance(prompt, str) else next(m["content"] for m in prompt if m["role"] == "user")


def held_out_rows(cfg, n: int) -> tuple[list[dict], dict]:
    """n prompts training never saw: the config's held-out split first, then fresh questions."""
    import dataclasses

    from grpokit.data import load_data

    train_set, split = load_data(cfg.data)
    trained = {_question(dict(r)) for r in train_set}
    rows = [dict(r) for r in split]
    seen = trained | {_question(r) for r in rows}
    from_split, source = len(rows), None
    if len(rows) < n:
        source = cfg.data.source + ("&" if "?" in cfg.data.source else "?") + f"seed={TOP_UP_SEED}&n={4 * n}"
        extra = load_data(dataclasses.replace(cfg.data, source=source, eval_size=0, max_samples=None))[0]
        for row in map(dict, extra):
            if len(rows) >= n:
                break
            if _question(row) not in seen:
                seen.add(_question(row))
                rows.append(row)
    rows = rows[:n]
    assert not trained & {_question(r) for r in rows}
    return rows, {"from_split": min(from_split, n), "top_up": max(0, len(rows) - from_split),
                  "top_up_source": source, "train_rows": len(train_set)}


def accuracy(cfg, adapter: str | None, rows: list[dict]) -> dict:
    """One sample per prompt from the base model (adapter None) or base + adapter, scored as `grpokit eval` does."""
    from grpokit.config.profiles import resolve_training
    from grpokit.config.run_config import build_reward_set
    from grpokit.evaluate.checkpoint import _free, _load
    from grpokit.evaluate.generation import evaluate

    rewards = build_reward_set(cfg, cfg.final_stage())
    training = resolve_training(cfg, cfg.final_stage())
    model, tok = _load(cfg, Path(adapter) if adapter else None)
    result = evaluate(model, tok, rows, rewards.funcs, rewards.weights, k=1,
                      max_new_tokens=int(training["max_completion_length"]), temperature=float(training["temperature"]),
                      batch_size=50, accuracy="auto", seed=EVAL_SEED, answer_format=cfg.data.answer_format)
    _free(model)
    n = result["prompts"]
    correct = round(result["accuracy"] * n)
    low, high = wilson(correct, n)
    return {"accuracy": correct / n, "correct": correct, "n": n, "ci95": [low, high],
            "format_rate": result.get("format_rate"), "mean_length": result.get("mean_length"),
            "seconds": result["seconds"]}


def change(before: dict, after: dict) -> dict:
    z, p = two_proportion_test(before["correct"], before["n"], after["correct"], after["n"])
    return {"gain": after["accuracy"] - before["accuracy"], "z": z, "p_two_sided": p, "p_one_sided_gain": one_sided_p(z),
            "intervals_overlap": not (after["ci95"][0] > before["ci95"][1] or before["ci95"][0] > after["ci95"][1])}


def pooled(result: dict) -> dict | None:
    """Every seed's samples together against the base model's, once per seed (the same prompts each time)."""
    runs = [r for r in result["runs"] if "after" in r]
    if not runs:
        return None
    base = result["base"]
    after_c, after_n = sum(r["after"]["correct"] for r in runs), sum(r["after"]["n"] for r in runs)
    before = {"correct": base["correct"] * len(runs), "n": base["n"] * len(runs)}
    before.update(accuracy=before["correct"] / before["n"], ci95=list(wilson(before["correct"], before["n"])))
    after = {"correct": after_c, "n": after_n, "accuracy": after_c / after_n, "ci95": list(wilson(after_c, after_n))}
    return {"seeds": [r["seed"] for r in runs], "before": before, "after": after, **change(before, after),
            "note": "the base model's one sample per prompt counted once per seed; the prompts repeat across seeds, "
                    "so the pooled test treats repeated prompts as independent draws"}


def train_one(seed: int, steps: int | None, out: Path) -> dict:
    """The subprocess side: one training of the init config; returns where its final adapter is."""
    from grpokit.evaluate.checkpoint import find_checkpoint
    from grpokit.training.trainer import train

    sets = [f"training.seed={seed}", f"output_dir={out}"] + ([f"training.max_steps={steps}"] if steps else [])
    cfg, _ = init_config(out, sets)
    started = time.time()
    run_dir = train(cfg)
    return {"adapter": str(find_checkpoint(run_dir)), "train_seconds": round(time.time() - started, 1),
            "run_dir": str(run_dir)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--prompts", type=int, default=150, help="held-out prompts (the split's 100, then fresh ones)")
    parser.add_argument("--steps", type=int, default=None, help="default: the init config's max_steps (20)")
    parser.add_argument("--output", default=str(RESULTS / "init_math_learning.json"))
    parser.add_argument("--train-one", nargs=2, metavar=("SEED", "OUT"), help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.train_one:
        seed, out = opts.train_one
        Path(out).mkdir(parents=True, exist_ok=True)
        print("SUMMARY " + json.dumps(train_one(int(seed), opts.steps, Path(out))), flush=True)
        return
    seeds = [int(s) for s in opts.seeds.split(",")]
    work = Path(tempfile.mkdtemp(prefix="grpokit-init-math-"))
    cfg, path = init_config(work)
    rows, origin = held_out_rows(cfg, opts.prompts)
    result = {
        "command": " ".join(["python -m benchmarks.init_math_learning", *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "machine": {"cpu": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
                    "note": "shared 2-core CPU, other jobs running"},
        "config": path.read_text(encoding="utf-8"), "steps": opts.steps or "the config's max_steps",
        "seeds": seeds, "held_out": {"prompts": len(rows), **origin},
        "sampling": "one completion per prompt at the training temperature and completion length, sampling seed "
                    f"{EVAL_SEED} for every model; accuracy 'auto' as `grpokit eval` reads it",
        "runs": [],
    }
    out_path = Path(opts.output)

    def save() -> None:
        result["pooled"] = pooled(result)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")

    def train(seed: int) -> tuple[int, float, subprocess.CompletedProcess]:
        started = time.time()
        proc = subprocess.run([sys.executable, "-m", "benchmarks.init_math_learning",
                               *(["--steps", str(opts.steps)] if opts.steps else []),
                               "--train-one", str(seed), str(work / f"seed-{seed}")],
                              cwd=ROOT, capture_output=True, text=True, env=dict(os.environ))
        return seed, time.time() - started, proc

    # Trainings run one after another in the background; the base model is evaluated while the
    # first one trains, and each adapter as soon as its training ends.
    with ThreadPoolExecutor(max_workers=1) as pool:
        futures = [pool.submit(train, seed) for seed in seeds]
        result["base"] = accuracy(cfg, None, rows)
        print("base:", round(result["base"]["accuracy"], 3), result["base"]["ci95"], flush=True)
        save()
        for future in futures:
            seed, wall, proc = future.result()
            line = next((x for x in proc.stdout.splitlines() if x.startswith("SUMMARY ")), None)
            run = {"seed": seed, "wall_seconds": round(wall, 1)}
            if proc.returncode != 0 or line is None:
                run["error"] = (proc.stderr or proc.stdout)[-3000:]
                result["runs"].append(run)
                save()
                print(f"seed {seed}: training failed", flush=True)
                continue
            run.update(json.loads(line[len("SUMMARY "):]))
            after = accuracy(cfg, run["adapter"], rows)
            run["after"] = {**after, **change(result["base"], after)}
            result["runs"].append(run)
            save()
            print(f"seed {seed}: {after['accuracy']:.3f} {after['ci95']} gain {run['after']['gain']:+.3f} "
                  f"p {run['after']['p_two_sided']:.3g}", flush=True)
    save()
    print(json.dumps(result["pooled"], indent=2))


if __name__ == "__main__":
    main()
