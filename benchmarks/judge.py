"""The judge: judged completions per second at concurrency 1 vs 8 against the real local judge,
group mode and cache hits beside them, and the share of a training step the judge takes.

    python -m benchmarks.judge                       # ~10 min on a 2-core CPU
    python -m benchmarks.judge --rounds 3 --train-steps 3
    python -m benchmarks.judge --train-steps 0 --continuous-batching   # the server batching requests

Part 1 starts `transformers serve` on the bundled SmolLM2-135M (127.0.0.1, a
free port; --continuous-batching turns on its batching of concurrent requests) and judges the same unique completions (cache off) at concurrency 1 and 8,
alternating which goes first each round; rates are medians over rounds, and the ratio
is taken within each round. Part 2 trains configs/summarization-judge-cpu.yaml for a
few steps and, in the same run, its baseline without the judge (the same config with
llm_judge removed), then reads judge/llm_judge/step_share and step_time from metrics.jsonl.
Writes benchmarks/results/judge.json, keeping the parts of it this run did not measure.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "summarization-judge-cpu.yaml"
DATA = ROOT / "configs" / "data" / "summaries_sample.jsonl"
OUT = ROOT / "benchmarks" / "results" / "judge.json"


def completions(n: int) -> tuple[list[str], list[str]]:
    """n unique (completion, prompt) pairs: reference summaries, first sentences and cut summaries."""
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    texts, prompts = [], []
    i = 0
    while len(texts) < n:
        row = rows[i % len(rows)]
        variant = i // len(rows)
        text = [row["summary"], row["document"].split(". ")[0] + ".", " ".join(row["summary"].split()[:6])][variant % 3]
        texts.append(text if variant < 3 else f"{text} ({variant})")
        prompts.append(f"Summarize: {row['document']}")
        i += 1
    return texts, prompts


def judge_rates(url: str, texts: list[str], prompts: list[str], rounds: int) -> dict:
    from grpokit.rewards import get
    from grpokit.rewards.judge import stats

    def timed(**params) -> tuple[float, int, list[float]]:
        judge = get("llm_judge", base_url=url, rubric="summary", cache_size=0, **params)
        stats.drain()
        start = time.perf_counter()
        scores = judge(texts, prompts=prompts)
        seconds = time.perf_counter() - start
        return len(texts) / seconds, scores.count(None), [seconds]

    get("llm_judge", base_url=url, cache_size=0)(texts[:2], prompts=prompts[:2])  # warm-up
    by: dict[str, list[float]] = {"concurrency_1": [], "concurrency_8": [], "group_concurrency_8": []}
    ratios, failures = [], 0
    for r in range(rounds):
        order = ["concurrency_1", "concurrency_8"] if r % 2 == 0 else ["concurrency_8", "concurrency_1"]
        rate = {}
        for key in order:
            rate[key], failed, _ = timed(concurrency=int(key.rsplit("_", 1)[1]))
            by[key].append(rate[key])
            failures += failed
        ratios.append(rate["concurrency_8"] / rate["concurrency_1"])
        group_rate, failed, _ = timed(concurrency=8, mode="group")
        by["group_concurrency_8"].append(group_rate)
        failures += failed
    cached = get("llm_judge", base_url=url, rubric="summary")
    cached(texts, prompts=prompts)
    start = time.perf_counter()
    cached(texts, prompts=prompts)
    cached_rate = len(texts) / (time.perf_counter() - start)
    return {
        "completions_per_round": len(texts),
        "rates_per_s": {k: [round(v, 3) for v in vs] for k, vs in by.items()},
        "median_rate_per_s": {k: round(statistics.median(vs), 3) for k, vs in by.items()},
        "ratio_8_vs_1_per_round": [round(x, 3) for x in ratios],
        "median_ratio_8_vs_1": round(statistics.median(ratios), 3),
        "group_vs_pointwise_8_median": round(statistics.median(by["group_concurrency_8"])
                                             / statistics.median(by["concurrency_8"]), 3),
        "cache_hit_rate_per_s": round(cached_rate, 1),
        "unscored": failures,
    }


def train(config: dict, steps: int, url: str, workdir: Path, label: str) -> dict:
    config = json.loads(json.dumps(config))
    config["name"] = f"bench-judge-{label}"
    config["training"].update({"max_steps": steps, "save_steps": 1000, "logging_steps": 1, "seed": 0})
    config["data"]["source"] = str(DATA)
    for reward in config["rewards"]:
        if reward["name"] == "llm_judge":
            reward.setdefault("params", {})["base_url"] = url
    path = workdir / f"{label}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    run_dir = workdir / "runs" / config["name"]  # runs/<name> under the working directory
    cmd = [sys.executable, "-m", "grpokit", "train", str(path)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{label} run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
    steps_logged = [r for r in records if "step_time" in r and "reward" in r]
    out = {"steps": len(steps_logged), "wall_s": round(wall, 1),
           "step_time_s": [round(r["step_time"], 2) for r in steps_logged],
           "median_step_time_s": round(statistics.median(r["step_time"] for r in steps_logged), 2)}
    shares = [r["judge/llm_judge/step_share"] for r in steps_logged if "judge/llm_judge/step_share" in r]
    if shares:
        out["judge_step_share"] = [round(s, 3) for s in shares]
        out["median_judge_step_share"] = round(statistics.median(shares), 3)
        out["median_judge_latency_s"] = round(statistics.median(
            r["judge/llm_judge/latency_s"] for r in steps_logged if "judge/llm_judge/latency_s" in r), 3)
        out["judge_failure_frac"] = [r.get("judge/llm_judge/failure_frac") for r in steps_logged]
        out["reward_judge_mean"] = [r.get("rewards/llm_judge/mean") for r in steps_logged]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--completions", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--train-steps", type=int, default=3, help="0 skips the training part")
    parser.add_argument("--training-only", action="store_true",
                        help="keep the throughput part of an earlier judge.json, run only the training part")
    parser.add_argument("--continuous-batching", action="store_true",
                        help="start the server with continuous batching; results go under throughput_continuous_batching")
    opts = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from grpokit.integrations.judge_server import JudgeServer

    texts, prompts = completions(opts.completions)
    result: dict = json.loads(OUT.read_text()) if OUT.is_file() else {}
    part = "throughput_continuous_batching" if opts.continuous_batching else "throughput"
    if not opts.training_only:
        result.update(machine=f"{platform.machine()} {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at start",
                      judge="transformers serve, bundled SmolLM2-135M-Instruct (the GGUF converted to a float32 "
                            "checkpoint), pointwise unless noted",
                      command=" ".join(["python -m benchmarks.judge", *sys.argv[1:]]))
    with JudgeServer.for_model(port=0, continuous_batching=opts.continuous_batching) as server:
        if not opts.training_only:
            result[part] = judge_rates(server.url, texts, prompts, opts.rounds)
            print(json.dumps(result[part], indent=2), flush=True)
        if opts.train_steps:
            config = yaml.safe_load(CONFIG.read_text())
            baseline = json.loads(json.dumps(config))
            baseline["rewards"] = [r for r in baseline["rewards"] if r["name"] != "llm_judge"]
            with tempfile.TemporaryDirectory(prefix="grpokit-bench-judge-") as tmp:
                result["training"] = {
                    "config": str(CONFIG.relative_to(ROOT)),
                    "with_judge": train(config, opts.train_steps, server.url, Path(tmp), "judge"),
                    "baseline_without_judge": train(baseline, opts.train_steps, server.url, Path(tmp), "baseline"),
                }
            t = result["training"]
            t["step_time_ratio_judge_vs_baseline"] = round(
                t["with_judge"]["median_step_time_s"] / t["baseline_without_judge"]["median_step_time_s"], 3)
            print(json.dumps(result["training"], indent=2), flush=True)
    result["load_at_end"] = round(os.getloadavg()[0], 1)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
