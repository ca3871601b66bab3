"""A real tool-use run on CPU, and what tools cost it: one run, both numbers.

    nice -n 10 python -m benchmarks.tool_run [--config configs/tool-math-cpu.yaml] [--set k=v ...]
        [--rounds 3] [--calls 20]

1. Trains the config (default: the bundled SmolLM2-135M-Instruct with the python
   tool and the calculator, configs/tool-math-cpu.yaml) through grpokit.training.trainer, in
   this process. Every tool call is timed (grpokit.tools.timing), so each step's
   metrics.jsonl line has `tools/seconds` and `tools/time_share` next to TRL's
   `tools/call_frequency` and `tools/failure_frequency`.
2. Right after, in the same process and on the same sandbox pool, measures tool
   calls per second: the python tool through grpokit.sandbox against a plain
   `python -c` subprocess per call (benchmarks.tool_calls' methods, alternated
   round by round so machine load hits them alike).
Reports medians over steps: seconds per step, seconds inside tool calls per step,
their share of the step; tool calls per episode; the share of calls that failed;
the sandbox's calls per second seen inside the run; and the final-answer success
rate (numeric_match). Results: benchmarks/results/tool_run.json (run directory:
runs/tool-run-bench/ unless --set output_dir=...).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def median(values):
    values = [v for v in values if isinstance(v, (int, float))]
    return round(statistics.median(values), 4) if values else None


def mean(values):
    values = [v for v in values if isinstance(v, (int, float))]
    return round(sum(values) / len(values), 4) if values else None


def summarize(metrics: list[dict], samples: list[dict]) -> dict:
    steps = [m for m in metrics if "tools/call_frequency" in m]
    with_call = [s for s in samples if "[call " in (s.get("completion") or "")]
    return {
        "steps": len(steps),
        "seconds_per_step_median": median([m.get("step_time") for m in steps]),
        "tool_seconds_per_step_median": median([m.get("tools/seconds") for m in steps]),
        "tool_time_share_median": median([m.get("tools/time_share") for m in steps]),
        "tool_time_share_max": max((m.get("tools/time_share", 0) for m in steps), default=None),
        "tool_calls_per_episode_mean": mean([m.get("tools/call_frequency") for m in steps]),
        "tool_calls_per_episode_by_step": [round(m.get("tools/call_frequency", 0), 3) for m in steps],
        "tool_call_failure_share_mean": mean([m.get("tools/failure_frequency") for m in steps
                                              if m.get("tools/call_frequency")]),
        "steps_with_a_tool_call": sum(1 for m in steps if m.get("tools/call_frequency", 0) > 0),
        "tool_call_success_reward_mean": mean([m.get("rewards/tool_call_success/mean") for m in steps]),
        "success_rate_mean": mean([m.get("rewards/numeric_match/mean") for m in steps]),
        "success_rate_first_last": [steps[0].get("rewards/numeric_match/mean"),
                                    steps[-1].get("rewards/numeric_match/mean")] if steps else None,
        "malformed_call_share_mean": mean([-m.get("rewards/malformed_tool_call/mean", 0) for m in steps]),
        "turn_limit_share_mean": mean([m.get("rewards/tool_turn_limit/mean") for m in steps]),
        "sampled_episodes": len(samples),
        "sampled_episodes_with_a_call": len(with_call),
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "tool-math-cpu.yaml"))
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "tool_run.json"))
    args = parser.parse_args(argv)

    from benchmarks.tool_calls import rate_subprocess, rate_tool
    from grpokit.config.run_config import load_config
    from grpokit.tools import ToolSpec, trainer_kwargs
    from grpokit.tools.config import EnvironmentConfig
    from grpokit.tools.timing import tool_calls_made, tool_seconds
    from grpokit.training.trainer import train

    overrides = ["output_dir=runs/tool-run-bench", *args.overrides]
    cfg = load_config(args.config, overrides)
    load_before = os.getloadavg()
    start = time.perf_counter()
    from rich.console import Console

    run_dir = Path(train(cfg, console=Console()))
    train_seconds = time.perf_counter() - start
    calls, seconds = tool_calls_made(), tool_seconds()
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
    samples = [json.loads(line) for line in (run_dir / "completions.jsonl").read_text().splitlines() if line.strip()]
    run = summarize(metrics, samples)
    run.update(train_seconds=round(train_seconds, 1), tool_calls_total=calls, tool_seconds_total=round(seconds, 2),
               calls_per_second_in_run=round(calls / seconds, 2) if seconds else None)
    print(json.dumps(run, indent=2), flush=True)

    # Same process, same pool the run's python tool used.
    factory = trainer_kwargs([ToolSpec("python")], EnvironmentConfig())["environment_factory"]
    rate_tool(factory, 5, 1)  # warm-up
    rates: dict[str, list[float]] = {"sandbox_tool": [], "subprocess": []}
    for r in range(args.rounds):
        rates["sandbox_tool"].append(rate_tool(factory, args.calls, 1))
        rates["subprocess"].append(rate_subprocess(args.calls))
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.1f}/s" for k, v in rates.items()), flush=True)
    rate = {k: round(statistics.median(v), 2) for k, v in rates.items()}

    steps = run["steps"] or 1
    share = run["tool_time_share_median"]
    result = {
        "benchmark": "tool_run",
        "command": "nice -n 10 python -m benchmarks.tool_run " + " ".join(argv if argv is not None else sys.argv[1:]),
        "config": os.path.relpath(args.config, ROOT), "overrides": overrides, "run_dir": str(run_dir),
        "model": cfg.model.name, "tools": [t.name for t in cfg.tools], "max_turns": cfg.environment.max_turns,
        "run": run,
        "tool_cost": {
            "tool_time_share_of_step_median": share,
            "tool_seconds_per_step_median": run["tool_seconds_per_step_median"],
            "seconds_per_step_median": run["seconds_per_step_median"],
            "tool_calls_per_step_mean": round(calls / steps, 2),
        },
        "calls_per_second": {
            "sandbox_tool_median": rate["sandbox_tool"], "subprocess_per_call_median": rate["subprocess"],
            "sandbox_vs_subprocess": round(rate["sandbox_tool"] / rate["subprocess"], 2),
            "sandbox_in_run": run["calls_per_second_in_run"],
            "rates": {k: [round(x, 2) for x in v] for k, v in rates.items()},
            "calls_per_round": args.calls, "rounds": args.rounds,
        },
        "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
        "cpus": os.cpu_count(), "python": platform.python_version(),
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({"tool_cost": result["tool_cost"], "calls_per_second": rate}), flush=True)
    return result


if __name__ == "__main__":
    main()
