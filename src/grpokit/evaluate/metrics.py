"""Scoring sampled completions: accuracy, pass@k, format rate, reward means, length; eval.json and its table."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, Sequence

from grpokit.completions import texts
from grpokit.answer_format import AnswerFormat
from grpokit.rewards.correctness import gold_json_object
from grpokit.rewards.reward_set import RewardSet
from grpokit.rewards import registry

RewardFunc = Callable[..., list]


def has_format(text: str, answer_format: AnswerFormat | dict | None = None) -> bool:
    """The answer format's reasoning block, then its answer block (`<reasoning>`, `<answer>` by default).

    What the format rate counts: the run's answer format decides, as it does
    for the format rewards and the default system prompt.
    """
    return AnswerFormat.of(answer_format).has_format(text)


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


def default_accuracy(answers: Sequence[Any], answer_format: AnswerFormat | dict | None = None) -> RewardFunc | None:
    """The registry's accuracy reward that fits these gold answers, or None.

    JSON objects -> json_object_match; numbers -> numeric_match;
    LaTeX -> math_equivalence; other text -> exact_match. Each reads the
    answer where `answer_format` puts it (`<answer>` by default).
    """
    from grpokit import rewards

    golds = [a for a in answers if a is not None]
    if not golds:
        return None
    if all(gold_json_object(a) is not None for a in golds):
        name = "json_object_match"  # e.g. synthetic:json
    elif all(_looks_numeric(a) for a in golds):
        name = "numeric_match"
    elif any(ch in str(a) for a in golds for ch in "\\$^"):
        name = "math_equivalence"
    else:
        name = "exact_match"
    return rewards.get(name, answer_format=AnswerFormat.of(answer_format))


def score_samples(
    samples: Sequence[dict],
    reward_funcs: Sequence[RewardFunc],
    weights: Sequence[float] | None = None,
    *,
    accuracy: RewardFunc | None = None,
    k: int,
    correct_threshold: float = 1.0,
    answer_format: AnswerFormat | dict | None = None,
    group_of: Callable[[dict], str] | None = None,
) -> dict:
    """The metrics of already generated samples.

    group_of: names each row's group (a prompt shape, a source); the result then also
    has `by_group`: prompts and accuracy of each group, since one mean can hide a
    shape the model never learned.

    answer_format: the run's answer format; the format rate counts its shape
        (`<reasoning>` then `<answer>` by default).

    samples: one dict per prompt with `completions` (k of them, as the rewards
        take them), `lengths` (tokens per completion), `truncated` (bools) and
        `row` (the data set row: prompt, answer and the reward columns).
    """
    rewards = RewardSet(reward_funcs, weights)  # a ValueError when the weights do not match
    fmt = AnswerFormat.of(answer_format)
    count_format = checks_tags(rewards.funcs)
    names, weights = rewards.names, rewards.weights
    errors: dict[str, str] = {}
    sums = {n: 0.0 for n in names}
    scored = {n: 0 for n in names}
    total_reward, correct_counts, format_hits, lengths, truncated, n_done = 0.0, [], 0, [], 0, 0
    accuracy_scored = 0
    groups: dict[str, list[int]] = {}
    examples = []
    for sample in samples:
        comps, row = sample["completions"], sample["row"]
        if len(comps) != k:
            raise ValueError(f"expected {k} completions per prompt, got {len(comps)}")
        columns = {key: [value] * k for key, value in row.items() if key != "prompt"}
        columns["prompts"] = [row.get("prompt")] * k
        batch = rewards.score(comps, **columns)
        per_reward = batch.scores
        for name, values in per_reward.items():
            for v in values:
                if v is not None and math.isfinite(v):
                    sums[name] += v
                    scored[name] += 1
        for name, error in batch.errors.items():
            errors.setdefault(name, error)
        total_reward += sum(t for t in batch.totals if t is not None)
        if accuracy is not None:
            acc_values = accuracy(comps, **columns)
            if any(v is not None for v in acc_values):
                accuracy_scored += 1
                correct_counts.append(sum(1 for v in acc_values if v is not None and float(v) >= correct_threshold - 1e-9))
                if group_of is not None:
                    groups.setdefault(group_of(row), []).append(correct_counts[-1])
        comp_texts = texts(comps)
        if count_format:
            format_hits += sum(fmt.has_format(t) for t in comp_texts)
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
        "format_rate": format_hits / n_done if n_done and count_format else None,
        "mean_length": sum(lengths) / len(lengths) if lengths else None,
        "truncated_rate": truncated / n_done if n_done else None,
        "reward": total_reward / n_done if n_done else None,
        "rewards": {n: (sums[n] / scored[n] if scored[n] else None) for n in names},
        "rewards_unscored": {n: n_done - scored[n] for n in names},
        "rewards_errors": errors,  # reward name -> its first error; those batches count as unscored
        "weights": dict(zip(names, weights)),
        "accuracy_reward": getattr(accuracy, "__name__", None) if accuracy is not None else None,
        "examples": examples,
    }
    if correct_counts:
        p1 = _mean_pass(correct_counts, k, 1)
        result["accuracy"] = result["pass@1"] = p1
        result[f"pass@{k}"] = _mean_pass(correct_counts, k, k)
    if group_of is not None:
        result["by_group"] = {name: {"prompts": len(counts), "accuracy": _mean_pass(counts, k, 1)}
                              for name, counts in groups.items()}
    return result



def _mean_pass(correct_counts: list[int], k: int, at: int) -> float:
    """pass@at averaged over prompts, each with `k` samples of which the count were correct."""
    return sum(pass_at_k(k, c, at) for c in correct_counts) / len(correct_counts)


def checks_tags(funcs) -> bool:
    """Whether the run may ask for the answer format's tags, so that a format rate means something.

    False only when every reward is a built-in and none of them checks tags (the demo pays a bare
    number: a 0% rate for a format it never asked for would read as a failure). A custom reward
    may check tags under any name, so its presence keeps the rate.
    """
    for func in funcs:
        name = getattr(func, "__name__", "")
        try:
            if registry.takes(name, "tags"):
                return True
        except registry.RewardConfigError:
            return True
    return False


# "pass@k" stands for pass@<samples per prompt>; see headline_keys.
HEADLINE = ("accuracy", "pass@1", "pass@k", "format_rate", "reward", "mean_length", "truncated_rate")


def headline_keys(*results: dict | None) -> list[str]:
    """The headline metric names of these results, each once, in HEADLINE order.

    pass@k is named by its k; with one sample per prompt (k=1, or greedy) it is
    pass@1, which is already listed, so it must not appear a second time.
    """
    keys: list[str] = []
    for key in HEADLINE:
        names = [f"pass@{r.get('samples_per_prompt', 1)}" for r in results if r] if key == "pass@k" else [key]
        for name in names:
            if name not in keys:
                keys.append(name)
    return keys


def compare(before: dict, after: dict) -> dict:
    """after - before for every headline metric and every reward both have."""
    delta: dict[str, Any] = {}
    for key in headline_keys(before, after):
        a, b = before.get(key), after.get(key)
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

    lines = [("metric", "before", "after", "change")]
    for key in headline_keys(before, after):
        a = before.get(key) if before else None
        b = after.get(key)
        lines.append((key, fmt(a), fmt(b), fmt(None if a is None or b is None else b - a)))
    for name, b in after.get("rewards", {}).items():
        a = before["rewards"].get(name) if before else None
        lines.append((f"reward {name}", fmt(a), fmt(b), fmt(None if a is None or b is None else b - a)))
    widths = [max(len(row[i]) for row in lines) for i in range(4)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in lines)
