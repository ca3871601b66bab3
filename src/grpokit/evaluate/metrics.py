"""Scoring sampled completions: accuracy, pass@k, format rate, reward means, length; eval.json and its table."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Callable, Sequence

from grpokit.completions import extract_tag, texts

RewardFunc = Callable[..., list]

# The default system prompt asks for this shape; the format rate counts it.
_FORMAT = re.compile(r"<reasoning>.*?</reasoning>.*?<answer>.*?</answer>", re.DOTALL)


def has_format(text: str) -> bool:
    """`<reasoning>...</reasoning>` followed by `<answer>...</answer>`, anywhere in the text."""
    return _FORMAT.search(text[:200_000]) is not None


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chance that at least one of k samples (drawn from n with c correct) is correct."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples per prompt, got {n}")
    if n - c < k:
        return 1.0
    # 1 - C(n-c, k) / C(n, k), as a product to stay exact for large n.
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))


def _looks_numeric(value: Any) -> bool:
    try:
        float(str(value).replace(",", ""))
        return True
    except ValueError:
        return False


def default_accuracy(answers: Sequence[Any]) -> RewardFunc | None:
    """The registry's accuracy reward that fits these gold answers, or None.

    Numbers -> numeric_match; LaTeX -> math_equivalence; other text -> exact_match.
    """
    from grpokit import rewards

    golds = [a for a in answers if a is not None]
    if not golds:
        return None
    if all(_looks_numeric(a) for a in golds):
        wanted = ["numeric_match", "math_equivalence", "exact_match"]
    elif any(ch in str(a) for a in golds for ch in "\\$^"):
        wanted = ["math_equivalence", "exact_match"]
    else:
        wanted = ["exact_match"]
    for name in wanted:
        try:
            return rewards.get(name)
        except rewards.RewardConfigError:
            continue
    return _tag_exact_match


def _tag_exact_match(completions, answer=None, **kwargs):
    # Fallback when the registry has no accuracy reward: the <answer> tag equals the gold text.
    golds = answer or [None] * len(completions)
    return [None if g is None else float((extract_tag(t, "answer") or "").strip() == str(g).strip()) for t, g in zip(texts(completions), golds)]


def _name(func: Callable, taken: set[str]) -> str:
    base = getattr(func, "__name__", type(func).__name__)
    name, i = base, 2
    while name in taken:
        name, i = f"{base}_{i}", i + 1
    taken.add(name)
    return name


def score_samples(
    samples: Sequence[dict],
    reward_funcs: Sequence[RewardFunc],
    weights: Sequence[float] | None = None,
    *,
    accuracy: RewardFunc | None = None,
    k: int,
    correct_threshold: float = 1.0,
) -> dict:
    """The metrics of already generated samples.

    samples: one dict per prompt with `completions` (k of them, as the rewards
        take them), `lengths` (tokens per completion), `truncated` (bools) and
        `row` (the data set row: prompt, answer and the reward columns).
    """
    weights = list(weights) if weights is not None else [1.0] * len(reward_funcs)
    if len(weights) != len(reward_funcs):
        raise ValueError(f"{len(weights)} weights for {len(reward_funcs)} reward functions")
    taken: set[str] = set()
    names = [_name(f, taken) for f in reward_funcs]
    sums = {n: 0.0 for n in names}
    scored = {n: 0 for n in names}
    total_reward, correct_counts, format_hits, lengths, truncated, n_done = 0.0, [], 0, [], 0, 0
    accuracy_scored = 0
    examples = []
    for sample in samples:
        comps, row = sample["completions"], sample["row"]
        if len(comps) != k:
            raise ValueError(f"expected {k} completions per prompt, got {len(comps)}")
        columns = {key: [value] * k for key, value in row.items() if key != "prompt"}
        columns["prompts"] = [row.get("prompt")] * k
        per_sample_total = [0.0] * k
        per_reward = {}
        for name, func, weight in zip(names, reward_funcs, weights):
            values = func(comps, **columns)
            per_reward[name] = values
            for i, v in enumerate(values):
                if v is not None:
                    sums[name] += float(v)
                    scored[name] += 1
                    per_sample_total[i] += weight * float(v)
        total_reward += sum(per_sample_total)
        if accuracy is not None:
            acc_values = accuracy(comps, **columns)
            if any(v is not None for v in acc_values):
                accuracy_scored += 1
                correct_counts.append(sum(1 for v in acc_values if v is not None and float(v) >= correct_threshold - 1e-9))
        comp_texts = texts(comps)
        format_hits += sum(has_format(t) for t in comp_texts)
        lengths.extend(sample["lengths"])
        truncated += sum(bool(t) for t in sample["truncated"])
        n_done += k
        if len(examples) < 3:
            examples.append({
                "prompt": row.get("prompt"),
                "answer": row.get("answer"),
                "completion": comp_texts[0][:2000],
                "scores": {n: per_reward[n][0] for n in names},
            })
    result: dict[str, Any] = {
        "prompts": len(samples),
        "samples_per_prompt": k,
        "accuracy": None,
        "pass@1": None,
        f"pass@{k}": None,
        "format_rate": format_hits / n_done if n_done else None,
        "mean_length": sum(lengths) / len(lengths) if lengths else None,
        "truncated_rate": truncated / n_done if n_done else None,
        "reward": total_reward / n_done if n_done else None,
        "rewards": {n: (sums[n] / scored[n] if scored[n] else None) for n in names},
        "rewards_unscored": {n: n_done - scored[n] for n in names},
        "weights": dict(zip(names, weights)),
        "accuracy_reward": getattr(accuracy, "__name__", None) if accuracy is not None else None,
        "examples": examples,
    }
    if correct_counts:
        p1 = sum(pass_at_k(k, c, 1) for c in correct_counts) / len(correct_counts)
        result["accuracy"] = result["pass@1"] = p1
        result[f"pass@{k}"] = sum(pass_at_k(k, c, k) for c in correct_counts) / len(correct_counts)
    return result



HEADLINE = ("accuracy", "pass@1", "pass@k", "format_rate", "reward", "mean_length", "truncated_rate")


def _get(result: dict, key: str):
    if key == "pass@k":
        key = f"pass@{result.get('samples_per_prompt', 1)}"
    return result.get(key)


def compare(before: dict, after: dict) -> dict:
    """after - before for every headline metric and every reward both have."""
    delta: dict[str, Any] = {}
    for key in HEADLINE:
        a, b = _get(before, key), _get(after, key)
        delta[key] = None if a is None or b is None else b - a
    delta["rewards"] = {
        name: (None if before["rewards"].get(name) is None or after["rewards"].get(name) is None else after["rewards"][name] - before["rewards"][name])
        for name in after.get("rewards", {})
    }
    return delta


def write_eval(path: str | Path, before: dict | None, after: dict, meta: dict | None = None) -> Path:
    """eval.json: {"before", "after", "delta", ...meta}."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {**(meta or {}), "before": before, "after": after, "delta": compare(before, after) if before else None}
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
    tmp.replace(path)  # a reader never sees half a file
    return path


def format_table(before: dict | None, after: dict) -> str:
    """A plain-text table of the headline metrics and each reward's mean."""
    def fmt(v):
        return "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))

    k = after.get("samples_per_prompt", 1)
    lines = [("metric", "before", "after", "change")]
    for key in HEADLINE:
        label = f"pass@{k}" if key == "pass@k" else key
        a = _get(before, key) if before else None
        b = _get(after, key)
        lines.append((label, fmt(a), fmt(b), fmt(None if a is None or b is None else b - a)))
    for name, b in after.get("rewards", {}).items():
        a = before["rewards"].get(name) if before else None
        lines.append((f"reward {name}", fmt(a), fmt(b), fmt(None if a is None or b is None else b - a)))
    widths = [max(len(row[i]) for row in lines) for i in range(4)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in lines)
