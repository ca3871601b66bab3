"""Does the CPU demo teach correctness? Several seeds, held-out prompts, 95% intervals.

    python -m benchmarks.learning [--seeds 0,1,2] [--arms staged,single] [--steps 30] [--prompts 200]

Trains the demo recipe (`staged`: format, then correctness) and the same rewards in one
stage (`single`), same step budget, each with every seed, one training per subprocess.
Then samples one completion per prompt (temperature 1, as in training) from the base
model and from every trained adapter on three held-out sets, none of whose sums were
trained on:

- `held_out`: the demo's own held-out split (same wording, two-digit numbers);
- `reworded`: the same kind of sums asked in other words (word problems, "add",
  "plus", "the sum of"), never seen in training;
- `three_digit`: other wordings and three-digit numbers, a range never trained on.

For each set: accuracy with a Wilson 95% interval, and the gain over the base model with
a two-proportion z-test. Writes benchmarks/results/learning.json after every run, so a
stopped benchmark keeps what it measured.
"""
from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.stats import one_sided_p, two_proportion_test, wilson

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]
SETS = {
    "held_out": "the demo's held-out split: same wording as training, two-digit numbers",
    "reworded": "two-digit sums in wordings never trained on (word problems, 'add', 'plus', 'the sum of')",
    "three_digit": "three-digit sums (a range never trained on) in wordings never trained on",
}
SET_SOURCES = {
    "reworded": "synthetic:addition?wording=varied&digits=2&n={n}&seed=1001",
    "three_digit": "synthetic:addition?wording=varied&digits=3&n={n}&seed=1002",
}


def train_one(arm: str, seed: int, steps: int, out: Path) -> dict:
    """One demo training in this process (the subprocess side); returns its summary."""
    from grpokit.demo import run_demo

    return run_demo(steps=steps, output_dir=str(out), evaluate=False, seed=seed, staged=(arm == "staged"))


def held_out_sets(n: int) -> dict[str, list[dict]]:
    """The three evaluation sets as training rows, with every sum seen in training removed."""
    import dataclasses

    from grpokit.data import load_data
    from grpokit.demo import demo_config

    cfg = demo_config()
    train_set, eval_set = load_data(cfg.data)
    trained = {_sum_of(row) for row in train_set}
    sets = {"held_out": [dict(r) for r in eval_set]}
    for name, source in SET_SOURCES.items():
        # 2n rows, so n remain after dropping sums that training saw.
        data = dataclasses.replace(cfg.data, source=source.format(n=2 * n), eval_size=0)
        sets[name] = [dict(r) for r in load_data(data)[0]]
    out = {}
    for name, rows in sets.items():
        kept = [r for r in rows if _sum_of(r) not in trained]
        if len(kept) < n:
            raise SystemExit(f"{name}: only {len(kept)} prompts left after removing trained sums; lower --prompts")
        out[name] = kept[:n]
    return out


def _sum_of(row: dict) -> str:
    """The sum a prompt asks for ("47 + 38"): every prompt ends with "Answer: 47 + 38 =", whatever its wording."""
    return row["prompt"].rsplit("Answer:", 1)[1].strip().rstrip("=").strip()


def accuracy_on(model, tok, rows: list[dict], seed: int) -> dict:
    from grpokit.demo import demo_config
    from grpokit.evaluate import evaluate
    from grpokit.evaluate.during import accuracy_reward
    from grpokit.config.run_config import build_reward_set

    cfg = demo_config()
    rewards = build_reward_set(cfg)
    result = evaluate(model, tok, rows, rewards.funcs, rewards.weights, k=1, accuracy=accuracy_reward(cfg.rewards),
                      max_new_tokens=int(cfg.training["max_completion_length"]),
                      temperature=float(cfg.training["temperature"]), batch_size=50, seed=seed)
    n = result["prompts"]
    correct = round(result["accuracy"] * n)
    low, high = wilson(correct, n)
    return {"accuracy": correct / n, "correct": correct, "n": n, "ci95": [low, high],
            "format_rate_bare_number": result["rewards"].get("regex_format"), "mean_length": result["mean_length"],
            "seconds": result["seconds"]}


def evaluate_model(adapter: str | None, sets: dict[str, list[dict]], seed: int) -> dict:
    from grpokit.demo import demo_config
    from grpokit.models.loading import load_model
    from grpokit.config.profiles import model_dtype

    cfg = demo_config()
    model, tok = load_model(cfg.model, dtype=model_dtype(cfg), adapter=adapter, trainable=False)
    model.eval()
    return {name: accuracy_on(model, tok, rows, seed) for name, rows in sets.items()}


def gain(before: dict, after: dict) -> dict:
    z, p = two_proportion_test(before["correct"], before["n"], after["correct"], after["n"])
    return {"gain": after["accuracy"] - before["accuracy"], "z": z, "p_two_sided": p, "p_one_sided": one_sided_p(z),
            "intervals_overlap": not (after["ci95"][0] > before["ci95"][1] or before["ci95"][0] > after["ci95"][1])}


def summarise(result: dict) -> dict:
    out = {}
    for arm in result["arms"]:
        runs = [r for r in result["runs"] if r["arm"] == arm and "after" in r]
        if not runs:
            continue
        per_set = {}
        for name in SETS:
            gains = [r["after"][name]["gain"] for r in runs]
            per_set[name] = {
                "seeds": len(runs),
                "gains": gains,
                "mean_gain": sum(gains) / len(gains),
                "min_gain": min(gains),
                "every_seed_15_points_no_overlap": all(g >= 0.15 and not r["after"][name]["intervals_overlap"]
                                                        for g, r in zip(gains, runs)),
                "every_seed_gain_p_below_0.05": all(r["after"][name]["gain"] > 0 and r["after"][name]["p_one_sided"] < 0.05
                                                    for r in runs),
            }
        out[arm] = per_set
    arms = list(out)
    if len(arms) == 2:
        a, b = arms
        out["comparison"] = {name: {f"{a}_minus_{b}_mean_gain": out[a][name]["mean_gain"] - out[b][name]["mean_gain"]}
                             for name in SETS}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--arms", default="staged,single")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--prompts", type=int, default=200)
    parser.add_argument("--output", default=str(RESULTS / "learning.json"))
    parser.add_argument("--train-one", nargs=3, metavar=("ARM", "SEED", "OUT"), help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.train_one:
        arm, seed, out = opts.train_one
        summary = train_one(arm, int(seed), opts.steps, Path(out))
        print("SUMMARY " + json.dumps({k: summary[k] for k in ("adapter", "train_seconds", "held_out_during", "alerts")},
                                      default=str))
        return
    seeds = [int(s) for s in opts.seeds.split(",")]
    arms = opts.arms.split(",")
    work = Path(tempfile.mkdtemp(prefix="grpokit-learning-"))
    eval_seed = 12345
    result = {
        "command": " ".join(["python -m benchmarks.learning", *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "machine": {"cpu": platform.processor() or platform.machine(), "note": "shared 2-core CPU"},
        "steps": opts.steps, "seeds": seeds, "arms": arms, "sets": SETS, "prompts_per_set": opts.prompts,
        "sampling": "one completion per prompt, temperature 1 (the training temperature), same seed for every model",
        "runs": [],
    }
    out_path = Path(opts.output)

    def save():
        result["summary"] = summarise(result)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(json.dumps(result, indent=2), encoding="utf-8")

    sets = held_out_sets(opts.prompts)
    started = time.time()
    result["base"] = evaluate_model(None, sets, eval_seed)
    print("base:", {k: round(v["accuracy"], 3) for k, v in result["base"].items()}, flush=True)
    save()
    for seed in seeds:
        for arm in arms:
            run_dir = work / f"{arm}-{seed}"
            t0 = time.time()
            proc = subprocess.run([sys.executable, "-m", "benchmarks.learning", "--steps", str(opts.steps),
                                   "--train-one", arm, str(seed), str(run_dir)],
                                  cwd=ROOT, capture_output=True, text=True)
            line = next((l for l in proc.stdout.splitlines() if l.startswith("SUMMARY ")), None)
            run = {"arm": arm, "seed": seed, "wall_seconds": time.time() - t0}
            if proc.returncode != 0 or line is None:
                run["error"] = (proc.stderr or proc.stdout)[-3000:]
                result["runs"].append(run)
                save()
                print(f"{arm} seed {seed}: training failed", flush=True)
                continue
            run.update(json.loads(line[len("SUMMARY "):]))
            after = evaluate_model(run["adapter"], sets, eval_seed)
            run["after"] = {name: {**after[name], **gain(result["base"][name], after[name])} for name in sets}
            result["runs"].append(run)
            save()
            print(f"{arm} seed {seed}:", {k: (round(v['accuracy'], 3), round(v['gain'], 3)) for k, v in run["after"].items()},
                  flush=True)
    result["wall_seconds"] = time.time() - started
    save()
    print(json.dumps(result["summary"], indent=2))


if __name__ == "__main__":
    main()
