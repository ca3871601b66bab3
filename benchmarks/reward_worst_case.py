"""The worst a hostile completion costs each registered reward: seconds per completion.

    python -m benchmarks.reward_worst_case [--quick] [--names a,b] [--repeats 2]

Every registered reward (with plausible parameters and columns) scores each completion of
a battery of hostile inputs, one completion per call: 1 MB of prose, runs of 20k/40k
newlines, 100k spaces, digit runs, nested and unclosed brackets, repeated unclosed tags,
huge numbers written past a math screen, long repeated tokens, deeply nested JSON, bait for
catastrophic backtracking in a schema `pattern`. For each (reward, input) the time is the
best of `repeats` calls (machine load only ever adds), as wall seconds and as CPU seconds of
this process (math checks run in worker processes, so for math_equivalence the wall figure
is the one that counts). The table prints each reward's worst input. Target: no reward over
0.1 s per completion. llm_judge and reward_model need a server or a model and are skipped.
`--quick` runs a reduced battery (the one tests/rewards/test_worst_case.py asserts on).
Writes benchmarks/results/reward_worst_case.json (not with --quick).
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from grpokit.rewards import get, names  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "reward_worst_case.json"
TARGET_S = 0.1

# A common e-mail regex: catastrophic backtracking on 26 characters under Python's `re`.
EMAIL = r"^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$"
SCHEMA = {"type": "object", "properties": {"email": {"type": "string", "pattern": EMAIL}, "answer": {"type": "number"}},
          "required": ["email"], "patternProperties": {"^x_([a-z]+)*$": {"type": "string"}}}

SKIPPED = {
    "llm_judge": "needs a judge server (its filter is timed on the judge branch)",
    "reward_model": "needs a reward model checkpoint",
}

PARAMS = {
    "ideal_length": {"target": 100},
    "min_length": {"min_len": 20},
    "max_length_penalty": {"max_len": 200},
    "soft_overlong_punishment": {"max_len": 200, "cache": 50, "unit": "words"},
    "cosine_scaled": {"max_len": 200, "unit": "words"},
    "json_schema": {"schema": SCHEMA},
    "regex_format": {"pattern": r"(a|aa)+$"},
    "restated_expression": {},
}

# Columns a reward reads differently from the rest (a letter gold, a JSON gold).
COLUMNS = {
    "multiple_choice": {"answer": "C"},
    "json_object_match": {"answer": json.dumps({"answer": 42, "email": "bob@example.com"})},
}

HUGE = [r"9^{\left(9^{9}\right)}", r"{1000000}!", r"\Gamma(10^{7})", r"10^{10^{10}}", r"\binom{10^{7}}{5000000}",
        r"e^{10^{9}}", r"\left(2^{3}\right)^{100000000}", r"(10!)!"]


def battery(quick: bool) -> dict[str, str]:
    """name -> hostile completion. Quick: the same kinds, smaller (tests time them on a loaded machine)."""
    k = 10 if quick else 1
    mb = 1_000_000 // k
    out = {
        "prose_1mb": ("The quick brown fox jumps over the lazy dog. " * (mb // 45 + 1))[:mb],
        "newlines_20k": "\n" * (20_000 // k),
        "newlines_40k": "\n" * (40_000 // k),
        "newlines_then_answer": "\n" * (20_000 // k) + "The answer is 42.",
        "spaces_100k": " " * (100_000 // k) + "x",
        "answer_then_spaces": "answer" + " " * (100_000 // k) + "!",
        "digits_100k": "7" * (100_000 // k),
        "digit_tokens": "1 " * (50_000 // k),
        "digits_dots": "1." * (50_000 // k),
        "parens_nested": "(" * (50_000 // k) + ")" * (50_000 // k),
        "braces_open": "{" * (50_000 // k),
        "brackets_open": "[" * (50_000 // k),
        "boxed_open": "\\boxed{" * (10_000 // k),
        "answer_tag_open": "<answer>" * (20_000 // k),
        "think_tag_open": "<think>" * (20_000 // k),
        "tool_call_open": "<tool_call>" * (20_000 // k),
        "backticks": "`" * (100_000 // k),
        "fence_open": "```python\n" * (10_000 // k),
        "repeated_token": "hmm " * (100_000 // k),
        "counter_loop": " ".join(f"hmm {i}" for i in range(20_000 // k)),
        "a_dot": "a." * (50_000 // k),
        "dollars": "$" * (100_000 // k),
        "json_nested_obj": '{"a":' * (10_000 // k) + "1" + "}" * (10_000 // k),
        "json_nested_arr": "[" * (20_000 // k) + "]" * (20_000 // k),
        "json_many_objects": '{"answer": 1} ' * (20_000 // k),
        "regex_bait": "a" * 30 + "b",  # for regex_format's pattern (a|aa)+$: exponential under `re`
        "schema_bait": json.dumps({"email": "a" * 26 + "!", "answer": 42, "x_" + "a" * 30 + "1": "x"}),
        "equals_spaces": "x" + " " * (50_000 // k) + "=",
        "citation_brackets": "[1, 2, 3] " * (20_000 // k),
        "quote_open": '"' * (50_000 // k),
    }
    for i, expr in enumerate(HUGE):
        out[f"huge_boxed_{i}"] = f"The answer is $\\boxed{{{expr}}}$."
        out[f"huge_bare_{i}"] = f"So it is ${expr}$. " + "That is the end of it. " * 40
    return out


def columns_for(n: int, name: str = "") -> dict[str, list]:
    row = {
        "answer": "42",
        "prompts": [{"role": "user", "content": "What is 6 times 7? Answer in <answer></answer> tags."}],
        "reference": "Six times seven is 42. The answer is 42.",
        "sources": ["Six sevens are forty-two."],
        "tests": ["assert f(1) == 1"],
        "entry_point": "f",
        "expression": "6*7",
        "schema": json.dumps(SCHEMA),
    }
    row.update(COLUMNS.get(name, {}))
    return {key: [value] * n for key, value in row.items()}


def time_call(func, name: str, completion: str, repeats: int) -> tuple[float, float]:
    """(wall, cpu) seconds of one call on one completion: the best of `repeats`."""
    walls, cpus = [], []
    columns = columns_for(1, name)
    for _ in range(repeats):
        cpu, wall = time.thread_time(), time.perf_counter()
        func([completion], **columns)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.thread_time() - cpu)
    return min(walls), min(cpus)


def run(quick: bool = False, only: list[str] | None = None, repeats: int = 2, verbose: bool = True) -> dict:
    inputs = battery(quick)
    results: dict[str, dict] = {}
    skipped: dict[str, str] = {}
    for name in only or names():
        if name in SKIPPED:
            skipped[name] = SKIPPED[name]
            continue
        func = get(name, **PARAMS.get(name, {}))
        func(["warm up: 42"], **columns_for(1, name))  # pools, caches and lazy imports, not charged to an input
        per_input = {}
        for label, text in inputs.items():
            wall, cpu = time_call(func, name, text, repeats)
            per_input[label] = {"wall_s": round(wall, 5), "cpu_s": round(cpu, 5)}
        worst = max(per_input, key=lambda k: per_input[k]["wall_s"])
        results[name] = {"worst_input": worst, **per_input[worst], "inputs": per_input}
        if verbose:
            print(f"{name:26s} {per_input[worst]['wall_s']:9.4f} {per_input[worst]['cpu_s']:9.4f}  {worst}", flush=True)
    return {"results": results, "skipped": skipped}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--names", default="")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    only = [n for n in args.names.split(",") if n] or None
    print(f"{'reward':26s} {'wall s':>9s} {'cpu s':>9s}  worst input (per completion)")
    report = run(args.quick, only, args.repeats)
    over = {n: r for n, r in report["results"].items() if r["wall_s"] > TARGET_S}
    print(f"\nover {TARGET_S} s per completion: " + (", ".join(f"{n} ({r['worst_input']}: {r['wall_s']:.2f} s)"
                                                         for n, r in over.items()) or "none"))
    for name, why in report["skipped"].items():
        print(f"skipped {name}: {why}")
    if not args.quick and not only:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        report.update(target_s=TARGET_S, python=platform.python_version(), machine=platform.machine(),
                      over=sorted(over), measured=time.strftime("%Y-%m-%d %H:%M:%S"))
        OUT.write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
