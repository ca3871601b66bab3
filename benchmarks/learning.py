"""Does the CPU demo teach correctness? Several seeds, held-out prompts, 95% intervals.

    python -m benchmarks.learning [--seeds 0,1,2] [--arms staged,single] [--steps 30] [--prompts 200] [--jobs 2]

Trains the demo recipe (`staged`: format, then correctness) and the same rewards in one
stage (`single`), same step budget, each with every seed, one training per subprocess.
Then samples one completion per prompt (temperature 1, as in training) from the base
model and from every trained adapter on held-out sets, none of whose sums were trained on.
Three of them end with the sum restated (`Answer: 47 + 38 =`), the shape the demo trains on,
so they show the skill on that shape only:

- `held_out`: the demo's own wording and shape (two-digit numbers), sums never trained on;
- `reworded`: the same kind of sums asked in other words (word problems, "add",
  "plus", "the sum of"), the sum restated;
- `three_digit`: other wordings and three-digit numbers, the sum restated.

Three do not restate the sum, so a gain there is addition carried to a new shape:

- `open_reworded`: other wordings, the prompt stops at `Answer:`: the model must find
  the numbers in the question (scored on the first line's last number, 16 tokens);
- `chat`: the same kind of question as a chat message through the chat template
  (first line's last number, 16 tokens);
- `bare`: a bare `47 + 38 =` line with no question (first number).

For each set: accuracy with a Wilson 95% interval, and the gain over the base model with
a two-proportion z-test. Writes benchmarks/results/learning.json after every run, so a
stopped benchmark keeps what it measured.
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
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from benchmarks.stats import one_sided_p, two_proportion_test, wilson

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]
# name -> what the set asks, its source (None: the demo's own held-out split), how the answer is
# read, its token budget (None: the recipe's), and whether it is asked as a chat message.
SETS = {
    "held_out": {"about": "restates the sum: the demo's own wording and shape, two-digit sums never trained on",
                 "source": "synthetic:addition?digits=2&n={n}&seed=1000", "take": "first", "tokens": None, "chat": False},
    "reworded": {"about": "restates the sum: two-digit sums in wordings never trained on (word problems, 'add', 'plus')",
                 "source": "synthetic:addition?wording=varied&digits=2&n={n}&seed=1001", "take": "first", "tokens": None,
                 "chat": False},
    "three_digit": {"about": "restates the sum: three-digit sums (a range never trained on) in other wordings",
                    "source": "synthetic:addition?wording=varied&digits=3&n={n}&seed=1002", "take": "first",
                    "tokens": None, "chat": False},
    "open_reworded": {"about": "does not restate the sum: other wordings, the prompt stops at 'Answer:'",
                      "source": "synthetic:addition?wording=varied&digits=2&shape=open&n={n}&seed=1003", "take": "line",
                      "tokens": 16, "chat": False},
    "chat": {"about": "does not restate the sum: other wordings as a chat message, through the chat template",
             "source": "synthetic:addition?wording=varied&digits=2&shape=open&n={n}&seed=1004", "take": "line",
             "tokens": 16, "chat": True},
    "bare": {"about": "does not restate a question: a bare 'a + b =' line",
             "source": "synthetic:addition?digits=2&shape=bare&n={n}&seed=1005", "take": "first", "tokens": None,
             "chat": False},
}
RESTATED = ("held_out", "reworded", "three_digit")


# Arms -> the demo recipe each trains (grpokit.demo_recipes): the restated recipe in one stage,
# format-first, and the recipe that trains on the sum asked in words.
ARM_RECIPES = {"single": "restated", "staged": "restated", "transfer": "words"}


def arm_recipe(arm: str) -> str:
    from grpokit.demo_recipes import RECIPES

    return RECIPES[ARM_RECIPES[arm]]


def train_one(arm: str, seed: int, steps: int | None, out: Path) -> dict:
    """One demo training in this process (the subprocess side); returns its summary."""
    from grpokit.demo import run_demo

    return run_demo(steps=steps, output_dir=str(out), evaluate=False, seed=seed, staged=(arm == "staged"),
                    recipe=arm_recipe(arm))


def held_out_sets(n: int, names: list[str] | None = None, arms: list[str] | None = None) -> dict[str, list[dict]]:
    """The evaluation sets as rows, with every sum that any arm's training split holds removed."""
    import dataclasses

    from grpokit.data import load_data
    from grpokit.demo import demo_config

    cfg = demo_config()
    train_set, eval_set = load_data(cfg.data)
    trained = {_sum_of(row) for row in train_set}
    for arm in {a for a in arms or [] if ARM_RECIPES[a] != "restated"}:  # restated's split is read above
        trained |= {_sum_of(row) for row in load_data(demo_config(recipe=arm_recipe(arm)).data)[0]}
    out = {}
    for name in names or list(SETS):
        spec = SETS[name]
        if spec["source"] is None:
            rows = [dict(r) for r in eval_set]
        else:
            # 2n rows, so n remain after dropping sums that training saw.
            data = dataclasses.replace(cfg.data, source=spec["source"].format(n=2 * n), eval_size=0)
            rows = [dict(r) for r in load_data(data)[0]]
        if spec["chat"]:
            rows = [{**r, "prompt": [{"role": "user", "content": _question_of(r["prompt"])}]} for r in rows]
        kept = [r for r in rows if _sum_of(r) not in trained]
        if len(kept) < n:
            raise SystemExit(f"{name}: only {len(kept)} prompts left after removing trained sums; lower --prompts")
        out[name] = kept[:n]
    return out


def _prompt_text(row: dict) -> str:
    prompt = row["prompt"]
    return prompt if isinstance(prompt, str) else " ".join(m["content"] for m in prompt)


def _sum_of(row: dict) -> tuple[int, int]:
    """The two numbers a prompt adds, in order, whatever its shape or wording ("add 38 to 47" = "47 + 38")."""
    import re

    numbers = [int(x) for x in re.findall(r"\d+", _prompt_text(row))[:2]]
    return tuple(sorted(numbers))


def _question_of(prompt: str) -> str:
    """'Question: What is 47 + 38?\\nAnswer:' -> 'What is 47 + 38?' (the chat message)."""
    return prompt.removeprefix("Question: ").rsplit("\nAnswer:", 1)[0].strip()


def accuracy_on(model, tok, rows: list[dict], seed: int, spec: dict) -> dict:
    from grpokit.config.run_config import build_reward_set
    from grpokit.demo import demo_config
    from grpokit.evaluate import evaluate
    from grpokit.rewards import get

    cfg = demo_config()
    rewards = build_reward_set(cfg)
    # One reading per set, the same for the base model and every adapter.
    accuracy = get("numeric_match", take=spec["take"])
    result = evaluate(model, tok, rows, rewards.funcs, rewards.weights, k=1, accuracy=accuracy,
                      max_new_tokens=int(spec["tokens"] or cfg.training["max_completion_length"]),
                      temperature=float(cfg.training["temperature"]), batch_size=50, seed=seed)
    n = result["prompts"]
    correct = round(result["accuracy"] * n)
    low, high = wilson(correct, n)
    return {"accuracy": correct / n, "correct": correct, "n": n, "ci95": [low, high], "answer_read": spec["take"],
            "format_rate_bare_number": result["rewards"].get("regex_format"), "mean_length": result["mean_length"],
            "seconds": result["seconds"]}


def evaluate_model(adapter: str | None, sets: dict[str, list[dict]], seed: int) -> dict:
    from grpokit.config.profiles import model_dtype
    from grpokit.demo import demo_config
    from grpokit.models.loading import load_model

    cfg = demo_config()
    model, tok = load_model(cfg.model, dtype=model_dtype(cfg), adapter=adapter, trainable=False)
    model.eval()
    return {name: accuracy_on(model, tok, rows, seed, SETS[name]) for name, rows in sets.items()}


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
        for name in runs[0]["after"]:
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
                # Worse than the base model with p < 0.05 (the one-sided test the other way).
                "seeds_worse_p_below_0.05": sum(1 for r in runs if r["after"][name]["gain"] < 0
                                                and 1 - r["after"][name]["p_one_sided"] < 0.05),
            }
        out[arm] = per_set
    arms = list(out)
    if len(arms) == 2:
        a, b = arms
        out["comparison"] = {name: {f"{a}_minus_{b}_mean_gain": out[a][name]["mean_gain"] - out[b][name]["mean_gain"]}
                             for name in out[a]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--arms", default="staged,single")
    parser.add_argument("--steps", type=int, default=None, help="training steps (default: the recipe's max_steps)")
    parser.add_argument("--prompts", type=int, default=200)
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated held-out sets (default: all)")
    parser.add_argument("--output", default=str(RESULTS / "learning.json"))
    parser.add_argument("--jobs", type=int, default=1, help="trainings run at once (each gets cores/jobs threads)")
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
        "steps": opts.steps or "the recipe's max_steps", "seeds": seeds, "arms": arms, "sets": {name: SETS[name]["about"] for name in opts.sets.split(",")}, "prompts_per_set": opts.prompts,
        "sampling": "one completion per prompt, temperature 1 (the training temperature), same seed for every model",
        "runs": [], "jobs": opts.jobs,
    }
    out_path = Path(opts.output)

    def save():
        result["summary"] = summarise(result)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(json.dumps(result, indent=2), encoding="utf-8")

    sets = held_out_sets(opts.prompts, opts.sets.split(","), arms)
    started = time.time()
    result["base"] = evaluate_model(None, sets, eval_seed)
    print("base:", {k: round(v["accuracy"], 3) for k, v in result["base"].items()}, flush=True)
    save()
    def train(arm: str, seed: int) -> tuple[str, int, float, subprocess.CompletedProcess]:
        t0 = time.time()
        # Parallel trainings share the cores: one thread each unless the caller set otherwise.
        env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1)
                                                                                        // opts.jobs)))}
        proc = subprocess.run([sys.executable, "-m", "benchmarks.learning", *(["--steps", str(opts.steps)] if opts.steps else []),
                               "--train-one", arm, str(seed), str(work / f"{arm}-{seed}")],
                              cwd=ROOT, capture_output=True, text=True, env=env)
        return arm, seed, time.time() - t0, proc

    with ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        # Each adapter is evaluated as soon as its training ends, while the others still train.
        for future in as_completed([pool.submit(train, arm, seed) for seed in seeds for arm in arms]):
            arm, seed, wall, proc = future.result()
            line = next((l for l in proc.stdout.splitlines() if l.startswith("SUMMARY ")), None)
            run = {"arm": arm, "seed": seed, "wall_seconds": wall}
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
            result["runs"].sort(key=lambda r: (r["seed"], arms.index(r["arm"])))
            save()
            print(f"{arm} seed {seed}:", {k: (round(v['accuracy'], 3), round(v['gain'], 3)) for k, v in run["after"].items()},
                  flush=True)
    result["wall_seconds"] = time.time() - started
    save()
    print(json.dumps(result["summary"], indent=2))


if __name__ == "__main__":
    main()
