"""Throughput of every registered reward on real model output: GSM8K solutions by four GPT-3 variants.

    python -m benchmarks.reward_throughput [--repeats 5] [--batch 64] [--limit N] [--names a,b]

Each reward scores all solutions (1319 questions x 4 models) in TRL-sized batches with the
gold answer column; the reported figure is completions per second, the median over
`repeats` passes. Where TRL ships the same reward, TRL's version is timed in alternation
with ours (same pass, same batches) so that load on the shared machine hits both alike.
A second section times hostile completions (unclosed tags, backtick runs, brace runs) of
30 kB against the regexes such code usually uses (and that grpokit's extractors used at
commit 93ee00f), and every reward on the same patterns at 1 MB.
Writes benchmarks/results/reward_throughput.json.
"""
from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from grpokit.rewards import _numbers  # noqa: E402  (the rewards' own number reading)
from grpokit.rewards import RewardConfigError, get, names  # noqa: E402
from grpokit.rewards.registry import family  # noqa: E402

import os  # noqa: E402

# The shared data folder sits next to the project (CI, main checkout); a git worktree one
# level deeper finds it one level up; GRPOKIT_SHARED_DATA overrides both.
_CANDIDATES = [os.environ.get("GRPOKIT_SHARED_DATA"), ROOT.parent / "shared" / "data", ROOT.parent.parent / "shared" / "data"]
DATA = next(
    (Path(c) / "gsm8k_model_solutions.jsonl" for c in _CANDIDATES if c and (Path(c) / "gsm8k_model_solutions.jsonl").exists()),
    ROOT.parent / "shared" / "data" / "gsm8k_model_solutions.jsonl",
)
OUT = ROOT / "benchmarks" / "results" / "reward_throughput.json"
MODELS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")


def _gold_correct(text, answer=None, **row):
    # The number the solution commits to, read as numeric_match reads it.
    gold = _numbers.gold_number(answer)
    if gold is None:
        return None
    found = _numbers.answer_values(text)
    return found is not None and _numbers.close(found, gold, 1e-6, 1e-9)


def _gold_text(solution: str) -> str:
    number = _numbers.answer_values(solution)
    if number is None:
        return ""
    return str(int(number.value)) if number.value.is_integer() else repr(number.value)


# Parameters for rewards that need some; length in words since GSM8K gives no token ids.
PARAMS = {
    "ideal_length": {"target": 100},
    "min_length": {"min_len": 20},
    "max_length_penalty": {"max_len": 200},
    "soft_overlong_punishment": {"max_len": 200, "cache": 50, "unit": "words"},
    "cosine_scaled": {"correct": _gold_correct, "max_len": 200, "unit": "words"},
    # GSM8K solutions are prose, so this times the search for JSON that is not there
    "json_schema": {"schema": {"type": "object", "properties": {"answer": {"type": "number"}}, "required": ["answer"]}},
}


def load(limit: int | None) -> tuple[list[str], dict[str, list]]:
    """The solutions and their columns: answer (gold number), prompts (the question),
    reference (the human-written solution), sources (that solution as the one document)."""
    completions, columns = [], {"answer": [], "prompts": [], "reference": [], "sources": []}
    with DATA.open() as fh:
        for line in fh:
            row = json.loads(line)
            # ground_truth ends with "A: <number>"
            gold = _gold_text(row["ground_truth"])
            for model in MODELS:
                completions.append(row[model]["solution"])
                columns["answer"].append(gold)
                columns["prompts"].append([{"role": "user", "content": row["question"]}])
                columns["reference"].append(row["ground_truth"])
                columns["sources"].append([row["ground_truth"]])
    if limit:
        completions = completions[:limit]
        columns = {k: v[:limit] for k, v in columns.items()}
    return completions, columns


def trl_baselines() -> dict:
    """TRL's versions of rewards we also ship, built to score the same thing."""
    try:
        from trl.rewards import get_soft_overlong_punishment, think_format_reward
    except ImportError:
        return {}
    overlong = get_soft_overlong_punishment(max_completion_len=200, soft_punish_cache=50)

    def trl_overlong(completions, **kwargs):
        # TRL counts completion_ids; feed it word lists so it measures what ours measures
        return overlong(completion_ids=[c.split() for c in completions])

    def trl_think(completions, **kwargs):
        return think_format_reward([[{"role": "assistant", "content": c}] for c in completions])

    return {"soft_overlong_punishment": trl_overlong, "think_format": trl_think}


def time_pass(func, completions, columns, batch) -> float:
    start = time.perf_counter()
    for i in range(0, len(completions), batch):
        func(completions[i : i + batch], **{k: v[i : i + batch] for k, v in columns.items()})
    return time.perf_counter() - start


# Regexes of the usual kind, kept here only as baselines: each is quadratic on some input.
_NAIVE = {
    "soft_xml_regex": (re.compile(r"<reasoning>.*?</reasoning>\s*<answer>.*?</answer>", re.DOTALL), "search"),
    "tag_regex_93ee00f": (re.compile(r"<answer>(.*?)</answer>", re.DOTALL), "findall"),
    "fence_regex_93ee00f": (re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL), "findall"),
}
_HOSTILE = {
    "unclosed_reasoning": ("<reasoning>", "soft_xml_regex", "soft_xml_format"),
    "unclosed_answer": ("<answer>", "tag_regex_93ee00f", "incremental_format"),
    "backticks": ("`", "fence_regex_93ee00f", "code_block_format"),
    "braces": ("{", None, "json_format"),
}


def hostile(rewards: dict, small: int = 30_000, big: int = 1_000_000) -> dict:
    out = {}
    for kind, (unit, naive, ours_name) in _HOSTILE.items():
        small_text = (unit * (small // len(unit) + 1))[:small]
        big_text = (unit * (big // len(unit) + 1))[:big]
        entry = {}
        if naive is not None:
            pattern, how = _NAIVE[naive]
            start = time.perf_counter()
            getattr(pattern, how)(small_text)
            entry[f"{naive}_s_at_{small // 1000}kB"] = round(time.perf_counter() - start, 4)
        if ours_name in rewards:
            start = time.perf_counter()
            rewards[ours_name]([small_text])
            entry[f"{ours_name}_s_at_{small // 1000}kB"] = round(time.perf_counter() - start, 5)
        slowest = (None, 0.0)
        for name, func in rewards.items():
            start = time.perf_counter()
            func([big_text], answer=["5"], prompts=["What is 2 + 3?"], reference=["5"], sources=[["5"]])
            took = time.perf_counter() - start
            if took > slowest[1]:
                slowest = (name, took)
        entry["slowest_reward_at_1MB"] = {"name": slowest[0], "seconds": round(slowest[1], 4)}
        out[kind] = entry
        print(f"hostile {kind:20s} {entry}")
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--limit", type=int, default=None, help="use only the first N completions")
    parser.add_argument("--names", default=None, help="comma-separated reward names (default: all registered)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if not DATA.exists():
        sys.exit(f"data not found: {DATA} (the shared data folder must sit next to the project)")
    completions, columns = load(args.limit)
    baselines = trl_baselines()
    selected = args.names.split(",") if args.names else names()
    results, skipped, built = {}, {}, {}
    for name in selected:
        try:
            func = get(name, **PARAMS.get(name, {}))
        except RewardConfigError as exc:
            skipped[name] = f"needs parameters: {exc}"
            continue
        built[name] = func
        base = baselines.get(name)
        ours_t, base_t = [], []
        scores = func(completions[: args.batch], **{k: v[: args.batch] for k, v in columns.items()})
        for _ in range(args.repeats):
            ours_t.append(time_pass(func, completions, columns, args.batch))
            if base is not None:
                base_t.append(time_pass(base, completions, columns, args.batch))
        entry = {
            "family": family(name),
            "completions_per_s": round(len(completions) / statistics.median(ours_t), 1),
            "seconds_per_pass": [round(t, 4) for t in ours_t],
            "none_share_first_batch": round(sum(s is None for s in scores) / len(scores), 3),
            "mean_score_first_batch": _mean(scores),
        }
        if base_t:
            entry["trl_completions_per_s"] = round(len(completions) / statistics.median(base_t), 1)
            entry["speed_ratio_vs_trl"] = round(statistics.median(base_t) / statistics.median(ours_t), 2)
        results[name] = entry
        print(f"{name:28s} {entry['completions_per_s']:>12,.0f} completions/s" + (f"  (TRL {entry['trl_completions_per_s']:,.0f}/s)" if base_t else ""))
    report = {
        "benchmark": "reward_throughput",
        "data": f"{DATA.name}: {len(completions)} GPT-3 solutions to GSM8K test questions; columns answer, prompts, reference, sources",
        "batch_size": args.batch,
        "repeats": args.repeats,
        "statistic": "median over repeats",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "results": results,
        "skipped": skipped,
        "hostile_inputs": hostile(built),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    return report


def _mean(scores):
    present = [s for s in scores if s is not None]
    return round(sum(present) / len(present), 4) if present else None


if __name__ == "__main__":
    main()
