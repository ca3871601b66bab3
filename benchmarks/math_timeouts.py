"""math_equivalence with hard timeouts vs plain in-process math-verify; hanging inputs; label agreement.

    python -m benchmarks.math_timeouts [--rounds 5] [--step 64] [--data ../shared/data]

1. Throughput on the 800 labelled MATH responses (math_cot100_labeled.jsonl):
   plain `math_verify.parse` + `verify` in this process (its own signal
   timeouts, main thread) vs the `math_equivalence` reward (fast path, screen,
   warm worker pool with a hard wall-clock limit), called one GRPO step
   (`--step` completions) at a time, and the same with the fast path off
   (every pair through a worker). Rounds alternate which goes first; medians
   and the ratio ours/plain are reported. Target: ratio >= 0.5.
2. Inputs that hang sympy: wall time of each through math_equivalence with a
   2 s limit, and of plain math-verify in a fresh process (capped at
   `--plain-cap` seconds); what plain math-verify does when called from a thread.
3. Agreement with real labels: numeric_match vs gsm8k_model_solutions.jsonl
   `is_correct`, math_equivalence (and plain math-verify) vs math_cot100 `score`.

Writes benchmarks/results/math_timeouts.json and benchmarks/results/agreement.json.
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
sys.path.insert(0, str(ROOT / "src"))  # measure this checkout

from grpokit.rewards import get  # noqa: E402
from grpokit.sandbox.mathcheck import MathChecker, gold_text  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
GSM8K_MODELS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")

HANGING = [
    # (completion, why it hangs)
    ("So the value is $\\left(2^{3}\\right)^{100000000}$", "8^(10^8): passes the screen, sympy computes it exactly"),
    ("$\\boxed{9^{9^{9^{9}}}}$", "power tower"),
    ("$\\boxed{100000!}$", "huge factorial"),
    ("$\\boxed{(10^{8})!}$", "factorial of a power"),
    ("$\\boxed{2^{2^{2^{2^{2^{2}}}}}}$", "tall tower"),
    ("The answer is $" + "9" * 300 + "^{" + "9" * 300 + "}$", "huge power of a huge literal"),
]

_PLAIN_HANG = """
import sys, time
from math_verify import parse, verify
t = time.monotonic()
verify(parse(sys.argv[1]), parse(sys.argv[2]))
print(time.monotonic() - t)
"""


def _rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_math(data: Path):
    golds, preds, labels, keys = [], [], [], []
    for row in _rows(data / "math_cot100_labeled.jsonl"):
        for j, (response, label) in enumerate(zip(row["code"], row["score"])):
            golds.append(row["answer"])
            preds.append(response)
            labels.append(bool(label))
            keys.append([row["idx"], j])
    return golds, preds, labels, keys


def plain_verify(golds, preds) -> list[bool]:
    from math_verify import parse, verify

    return [bool(verify(parse(gold_text(g)), parse(p))) for g, p in zip(golds, preds)]


def in_steps(reward, golds, preds, step: int) -> list:
    out = []
    for start in range(0, len(preds), step):
        out += reward(preds[start : start + step], answer=golds[start : start + step])
    return out


def throughput(golds, preds, rounds: int, step: int) -> dict:
    ours = get("math_equivalence")
    workers_only_checker = MathChecker(fast_path=False)

    def workers_only(completions, answer):
        verdicts = workers_only_checker.check_many(list(zip(answer, completions)))
        return [None if v is None else float(v) for v in verdicts]

    # Warm both pools (and math-verify's caches in this process) outside the clock.
    plain_verify(golds[:8], preds[:8])
    in_steps(ours, golds[:16], preds[:16], step)
    in_steps(workers_only, golds[:16], preds[:16], step)

    runs = {"plain": plain_verify, "ours": lambda g, p: in_steps(ours, g, p, step),
            "ours_workers_only": lambda g, p: in_steps(workers_only, g, p, step)}
    times: dict[str, list[float]] = {name: [] for name in runs}
    order = list(runs)
    for r in range(rounds):
        for name in order if r % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            runs[name](golds, preds)
            times[name].append(time.perf_counter() - start)
    n = len(preds)
    med = {name: statistics.median(ts) for name, ts in times.items()}
    result = {
        "pairs": n,
        "step": step,
        "rounds": rounds,
        "seconds": times,
        "median_seconds": med,
        "pairs_per_second": {name: n / t for name, t in med.items()},
        "ratio_ours_to_plain": med["plain"] / med["ours"],
        "ratio_workers_only_to_plain": med["plain"] / med["ours_workers_only"],
        "target_ratio": 0.5,
        "stats_ours": ours.stats(),
        "stats_workers_only": workers_only_checker.stats(),
    }
    workers_only_checker.close()
    return result


def hanging(limit: float, plain_cap: float) -> dict:
    reward = get("math_equivalence", timeout=limit)
    reward(["$\\boxed{1}$"], answer=["1"])
    cases = []
    for completion, why in HANGING:
        before = reward.stats()
        start = time.perf_counter()
        score = reward([completion], answer=["5"])[0]
        wall = time.perf_counter() - start
        after = reward.stats()
        how = "timeout" if after["timeouts"] > before["timeouts"] else (
            "screened" if after["screened"] > before["screened"] else "checked")
        cases.append({"input": completion[:80], "why": why, "score": score, "wall_seconds": wall,
                      "settled_by": how, "within_limit": wall <= limit + 0.5,
                      "plain_math_verify": _plain_in_subprocess(completion, plain_cap)})
    return {"limit_seconds": limit, "cases": cases, "plain_from_a_thread": _plain_from_thread()}


def _plain_in_subprocess(completion: str, cap: float) -> dict:
    # Plain math-verify in the main thread of a fresh process (its 5 s signal
    # timeouts active); the wall time excludes nothing, import included (~1-2 s).
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", _PLAIN_HANG, "$5$", completion],
                              capture_output=True, text=True, timeout=cap)
        inner = proc.stdout.strip().splitlines()[-1:] or ["?"]
        return {"finished": True, "wall_seconds": time.perf_counter() - start, "verify_seconds": inner[0]}
    except subprocess.TimeoutExpired:
        return {"finished": False, "wall_seconds": time.perf_counter() - start, "note": f"killed at the {cap:.0f} s cap"}


def _plain_from_thread() -> str:
    # What TRL-style callers that score in a worker thread get from plain math-verify.
    import threading

    from math_verify import parse

    out = []

    def run():
        try:
            parse("$1$")
            out.append("ok")
        except Exception as exc:  # noqa: BLE001 - recorded
            out.append(f"{type(exc).__name__}: {str(exc)[:120]}")

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return out[0]


def agreement(data: Path) -> dict:
    out = {}
    rows = _rows(data / "gsm8k_model_solutions.jsonl")
    completions, golds, labels, keys = [], [], [], []
    for i, row in enumerate(rows):
        for model in GSM8K_MODELS:
            completions.append(row[model]["solution"])
            golds.append(row["ground_truth"])
            labels.append(bool(row[model]["is_correct"]))
            keys.append([i, model])
    scores = get("numeric_match")(completions, answer=golds)
    out["numeric_match_vs_gsm8k_model_solutions"] = _agree(scores, labels, keys)

    golds, preds, labels, keys = load_math(data)
    scores = get("math_equivalence", timeout=10.0)(preds, answer=golds)
    out["math_equivalence_vs_math_cot100"] = _agree(scores, labels, keys)
    plain = plain_verify(golds, preds)
    out["plain_math_verify_vs_math_cot100"] = _agree([float(v) for v in plain], labels, keys)
    out["label_noise_notes"] = {
        "[72, 7]": "gold 10{,}000, response boxes 10000: the same number; the original label says wrong",
    }
    return out


def _agree(scores, labels, keys) -> dict:
    disagree = [k for k, s, label in zip(keys, scores, labels) if (s == 1.0) != label]
    return {"rows": len(labels), "agreement": 1 - len(disagree) / len(labels),
            "unscored": sum(s is None for s in scores), "disagreements": disagree}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--step", type=int, default=64, help="completions per reward call (one GRPO step)")
    parser.add_argument("--limit", type=float, default=2.0, help="hard limit for the hanging inputs (s)")
    parser.add_argument("--plain-cap", type=float, default=20.0)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    if not (args.data / "math_cot100_labeled.jsonl").exists():
        sys.exit(f"data not found under {args.data}; pass --data DIR (the shared/data folder)")

    golds, preds, _, _ = load_math(args.data)
    meta = {"python": platform.python_version(), "cpus": os.cpu_count(),
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "load_average": os.getloadavg(), "command": "python -m benchmarks.math_timeouts"}
    result = {"meta": meta, "throughput": throughput(golds, preds, args.rounds, args.step),
              "hanging": hanging(args.limit, args.plain_cap)}
    agree = {"meta": meta, **agreement(args.data)}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "math_timeouts.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "agreement.json").write_text(json.dumps(agree, indent=2) + "\n")
    t = result["throughput"]
    print(f"pairs/s plain {t['pairs_per_second']['plain']:.0f}  ours {t['pairs_per_second']['ours']:.0f}  "
          f"workers-only {t['pairs_per_second']['ours_workers_only']:.0f}  "
          f"ratio ours/plain {t['ratio_ours_to_plain']:.2f} (workers-only {t['ratio_workers_only_to_plain']:.2f})")
    for case in result["hanging"]["cases"]:
        print(f"  {case['wall_seconds']:.2f}s {case['settled_by']:8s} {case['why']}")
        print(f"      plain math-verify (fresh process): {case['plain_math_verify']}")
    print(f"  plain math-verify from a thread: {result['hanging']['plain_from_a_thread']}")
    for key in ("numeric_match_vs_gsm8k_model_solutions", "math_equivalence_vs_math_cot100",
                "plain_math_verify_vs_math_cot100"):
        print(f"agreement {key}: {agree[key]['agreement']:.5f} ({len(agree[key]['disagreements'])} disagreements)")


if __name__ == "__main__":
    main()
