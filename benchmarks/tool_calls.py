"""Tool calls per second: the python tool (grpokit.sandbox) vs a plain `python -c` subprocess per call.

    python -m benchmarks.tool_calls [--rounds 3] [--calls 30]

TRL's tool loop runs the calls of a batch one after another, so both methods run
sequentially. "tool_fresh" is the first call of an episode; "tool_third" is the
third call of one episode, which replays the two earlier cells (the cost of
keeping state). "subprocess" starts a new interpreter per call with no isolation
at all: the cheapest thing a hand-written tool would do. Methods alternate round
by round so machine load hits them alike; medians are reported.
Results: benchmarks/results/tool_calls.json.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from grpokit.sandbox import SandboxPool  # noqa: E402
from grpokit.sandbox import pool as pool_module  # noqa: E402
from grpokit.tools import ToolSpec, trainer_kwargs  # noqa: E402
from grpokit.tools.config import EnvironmentConfig  # noqa: E402

CELLS = ["x = 6 * 7", "y = x + 1", "print(x * y)"]


def rate_tool(factory, calls: int, depth: int) -> float:
    env = factory()
    start = time.perf_counter()
    for _ in range(calls):
        env.reset()
        # The episode's earlier calls, as if they had run: this call replays them before its own cell.
        env._tools["python"].cells.extend(CELLS[:depth - 1])
        env.python(code=CELLS[depth - 1] if depth > 1 else "print(6 * 7)")
    return calls / (time.perf_counter() - start)


def rate_subprocess(calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        out = subprocess.run([sys.executable, "-I", "-c", "print(6 * 7)"], capture_output=True, text=True)
        assert out.stdout.strip() == "42"
    return calls / (time.perf_counter() - start)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "tool_calls.json"))
    args = parser.parse_args(argv)

    pool = SandboxPool(workers=2)
    isolation = pool.isolation.get("level")
    pool_module._shared = pool  # the python tool uses the shared pool
    factory = trainer_kwargs([ToolSpec("python")], EnvironmentConfig())["environment_factory"]
    rate_tool(factory, 5, 1)  # warm-up
    methods = {"tool_fresh": lambda: rate_tool(factory, args.calls, 1),
               "tool_third": lambda: rate_tool(factory, args.calls, 3),
               "subprocess": lambda: rate_subprocess(args.calls)}
    rates: dict[str, list[float]] = {name: [] for name in methods}
    load_before = os.getloadavg()
    for r in range(args.rounds):
        for name, run in methods.items():
            rates[name].append(run())
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.1f}/s" for k, v in rates.items()), flush=True)
    pool.close()
    median = {k: statistics.median(v) for k, v in rates.items()}
    result = {
        "benchmark": "tool_calls",
        "command": "python -m benchmarks.tool_calls " + " ".join(argv or sys.argv[1:]),
        "calls_per_round": args.calls, "rounds": args.rounds, "isolation": isolation,
        "calls_per_second_median": {k: round(v, 2) for k, v in median.items()},
        "ms_per_call_median": {k: round(1000 / v, 1) for k, v in median.items()},
        "tool_fresh_vs_subprocess": round(median["tool_fresh"] / median["subprocess"], 2),
        "rates": {k: [round(x, 2) for x in v] for k, v in rates.items()},
        "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
        "cpus": os.cpu_count(), "python": platform.python_version(),
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["calls_per_second_median"]), "ratio", result["tool_fresh_vs_subprocess"])
    return result


if __name__ == "__main__":
    main()
