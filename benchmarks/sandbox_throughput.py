"""Sandbox throughput: our pool vs a fresh `python -c` per sample vs in-process exec.

    python -m benchmarks.sandbox_throughput [--rounds 3] [--pool-n 300] [--subprocess-n 60]

The three methods grade the same trivial correct program (a function plus one
assert) and are measured alternately, round by round, in one run, so machine
load (other jobs on a shared box) hits them alike; medians and ratios are
reported. The pool runs with every isolation it can set up (the level is
recorded). The subprocess baseline gets the same parallelism as the pool.
Then the 164 HumanEval canonical solutions go through the `code_execution`
reward end to end. Results: benchmarks/results/sandbox_throughput.json.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from grpokit.rewards import get  # noqa: E402
from grpokit.sandbox import Job, SandboxPool  # noqa: E402
from grpokit.sandbox import pool as pool_module  # noqa: E402

PROGRAM = "def add(a, b):\n    return a + b\n"
TEST = "assert add(1, 2) == 3"
DATA = ROOT.parent / "shared" / "data"


def rate_pool(pool: SandboxPool, n: int) -> float:
    start = time.perf_counter()
    results = pool.run([Job(PROGRAM, tests=[TEST])] * n)
    elapsed = time.perf_counter() - start
    assert all(r.status == "passed" for r in results), {r.status for r in results}
    return n / elapsed


def rate_subprocess(n: int, workers: int) -> float:
    source = PROGRAM + TEST + "\n"

    def one(_):
        done = subprocess.run([sys.executable, "-c", source], capture_output=True, timeout=60)
        return done.returncode == 0

    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as ex:
        ok = list(ex.map(one, range(n)))
    elapsed = time.perf_counter() - start
    assert all(ok)
    return n / elapsed


def rate_exec(n: int) -> float:
    # No isolation at all: compile and exec each sample in this process (what many reward scripts do).
    source = PROGRAM + TEST + "\n"
    start = time.perf_counter()
    for _ in range(n):
        exec(compile(source, "<program>", "exec"), {"__name__": "__main__"})
    return n / (time.perf_counter() - start)


def humaneval_end_to_end(path: Path) -> dict:
    if not path.exists():
        return {"skipped": f"{path} not found (pass --data DIR)"}
    with gzip.open(path, "rt") as fh:
        rows = [json.loads(line) for line in fh]
    reward = get("code_execution", timeout=10.0)
    completions = [f"```python\n{r['prompt']}{r['canonical_solution']}```" for r in rows]
    start = time.perf_counter()
    scores = reward(completions, tests=[r["test"] for r in rows], entry_point=[r["entry_point"] for r in rows])
    elapsed = time.perf_counter() - start
    return {
        "problems": len(rows),
        "full_reward": sum(s == 1.0 for s in scores),
        "seconds": round(elapsed, 3),
        "problems_per_second": round(len(rows) / elapsed, 2),
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pool-n", type=int, default=300)
    parser.add_argument("--subprocess-n", type=int, default=60)
    parser.add_argument("--exec-n", type=int, default=3000)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--data", default=str(DATA), help="folder holding humaneval.jsonl.gz")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "sandbox_throughput.json"))
    args = parser.parse_args(argv)

    pool = SandboxPool(workers=args.workers)
    isolation = pool.isolation
    load_before = os.getloadavg()
    rates = {"pool": [], "subprocess": [], "exec": []}
    rate_pool(pool, 20)  # warm-up
    for r in range(args.rounds):
        rates["pool"].append(rate_pool(pool, args.pool_n))
        rates["subprocess"].append(rate_subprocess(args.subprocess_n, pool.workers))
        rates["exec"].append(rate_exec(args.exec_n))
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.1f}/s" for k, v in rates.items()), flush=True)
    medians = {k: statistics.median(v) for k, v in rates.items()}
    pool_module._shared = pool  # the reward uses the same warm pool
    he = humaneval_end_to_end(Path(args.data) / "humaneval.jsonl.gz")
    pool.close()
    result = {
        "benchmark": "sandbox_throughput",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_avg_before": [round(x, 2) for x in load_before],
                    "load_avg_after": [round(x, 2) for x in os.getloadavg()]},
        "isolation": isolation,
        "workers": pool.workers,
        "program": PROGRAM + TEST,
        "programs_per_second": {k: [round(x, 1) for x in v] for k, v in rates.items()},
        "median_programs_per_second": {k: round(v, 1) for k, v in medians.items()},
        "pool_vs_subprocess": round(medians["pool"] / medians["subprocess"], 2),
        "exec_vs_pool": round(medians["exec"] / medians["pool"], 1),
        "targets": {"pool_at_least_per_second": 100, "pool_vs_subprocess_at_least": 10},
        "humaneval": he,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in ("median_programs_per_second", "pool_vs_subprocess", "humaneval")}, indent=2))
    return result


if __name__ == "__main__":
    main()
