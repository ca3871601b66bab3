"""Difficulty calibration: how often the base model already solves each prompt, before training.

K completions per prompt are sampled and scored with the config's rewards. From
them: each prompt's pass rate (the accuracy reward at >= 1), and the chance that
a GRPO group of `num_generations` completions has zero reward variance -- the
unbiased estimate sum_v C(n_v, G) / C(K, G) over the distinct total rewards v
(n_v samples each). Prompts are then too easy (always solved), too hard (never)
or in range.

The verdict on the data is the correctness reward's (the accuracy reward's pass rates), never the
total's: format, length and style rewards vary between completions that all miss the answer, which
makes the total's groups look anything but flat while GRPO has nothing about the task to learn from
them. The total's zero-variance share is reported beside it, and the words say when the two disagree.
"""
from __future__ import annotations

import json
import statistics
from collections import Counter
from dataclasses import asdict, dataclass
from math import comb
from pathlib import Path
from typing import Callable, Sequence

from grpokit.evaluate.generation import generate_samples


@dataclass
class PromptDifficulty:
    index: int
    pass_rate: float | None       # None: no accuracy reward could score this prompt
    zero_variance: float          # P(a group of num_generations has one reward value)
    mean_reward: float | None
    verdict: str                  # too_easy | too_hard | in_range
    prompt: str = ""              # the question (its last message), so a reader need not look the index up
    example: str = ""             # the first sampled completion, to see what the pass rate was made of
    correct_zero_variance: float | None = None  # the same chance on the accuracy reward alone (None: no such reward)


def zero_variance_chance(totals: Sequence[float | None], group: int, decimals: int = 6) -> float:
    """P(all `group` completions drawn without replacement from these K score the same)."""
    values = [round(t, decimals) for t in totals if t is not None]
    if len(values) < 2:
        return 1.0
    if group > len(values):  # fewer samples than a group: plug-in estimate
        return sum((n / len(values)) ** group for n in Counter(values).values())
    return sum(comb(n, group) for n in Counter(values).values()) / comb(len(values), group)


def _verdict(pass_rate: float | None, zero: float, easy: float, hard: float) -> str:
    if pass_rate is not None:
        if pass_rate >= easy:
            return "too_easy"
        if pass_rate <= hard:
            return "too_hard"
    return "in_range" if zero < 1.0 else ("too_hard" if pass_rate is None else "in_range")


def calibrate(model, tokenizer, rows: Sequence[dict], reward_funcs: Sequence[Callable], weights: Sequence[float],
              *, samples: int, num_generations: int, accuracy: Callable | None = None, max_new_tokens: int = 256,
              temperature: float = 1.0, top_p: float = 1.0, batch_size: int = 4, seed: int = 0,
              easy: float = 1.0, hard: float = 0.0, progress: Callable[[int, int], None] | None = None) -> dict:
    """Sample `samples` completions per row, score them, and summarise difficulty (see the module doc)."""
    from grpokit.health.doctor import ProbeGroup, score_groups
    from grpokit.rewards.reward_set import RewardSet

    if samples < 2:
        raise ValueError("samples must be at least 2: one completion per prompt says nothing about variance")
    if num_generations < 2:
        raise ValueError("num_generations must be at least 2 (a GRPO group of one has no variance)")
    if not rows:
        raise ValueError("no prompts to calibrate on")
    generated = generate_samples(model, tokenizer, list(rows), k=samples, max_new_tokens=max_new_tokens,
                                 temperature=temperature, top_p=top_p, batch_size=batch_size, seed=seed,
                                 progress=progress)
    from grpokit.completions import prompt_text, to_text

    groups = [ProbeGroup(prompt=prompt_text(s["row"]["prompt"]), completions=[to_text(c) for c in s["completions"]],
                         lengths=s["lengths"], truncated=s["truncated"]) for s in generated]
    conversational = any(isinstance(r["prompt"], list) for r in rows)
    funcs = list(reward_funcs) + ([accuracy] if accuracy is not None else [])
    # The accuracy reward rides along at weight 0: it decides pass/fail, not the group's total.
    rewards = RewardSet(funcs, list(weights) + ([0.0] if accuracy is not None else []))
    score_groups(groups, rewards, rows, [r["prompt"] for r in rows], conversational)
    # Its column: the set's last name, suffixed where a training reward has the same __name__.
    acc_name = rewards.names[-1] if accuracy is not None else None
    prompts = []
    for index, group in enumerate(groups):
        acc = [v for v in group.scores.get(acc_name, [])] if acc_name else []
        scored = [v for v in acc if v is not None]
        pass_rate = sum(v >= 1.0 for v in scored) / len(scored) if scored else None
        zero = zero_variance_chance(group.totals, num_generations)
        finite = [t for t in group.totals if t is not None]
        prompts.append(PromptDifficulty(index, pass_rate, zero, statistics.fmean(finite) if finite else None,
                                        _verdict(pass_rate, zero, easy, hard), _question(rows[index]["prompt"]),
                                        group.completions[0] if group.completions else "",
                                        zero_variance_chance(scored, num_generations) if scored else None))
    counts = Counter(p.verdict for p in prompts)
    result = {
        "prompts": len(prompts), "samples": samples, "num_generations": num_generations,
        "predicted_zero_variance_share": statistics.fmean(p.zero_variance for p in prompts),
        "correct_zero_variance_share": _mean([p.correct_zero_variance for p in prompts]),
        "mean_pass_rate": _mean([p.pass_rate for p in prompts]),
        "too_easy": counts["too_easy"], "too_hard": counts["too_hard"], "in_range": counts["in_range"],
        "accuracy_reward": getattr(accuracy, "__name__", None) if accuracy is not None else None,
        "per_prompt": [asdict(p) for p in prompts],
    }
    result["verdict"] = data_verdict(result)
    return result


def data_verdict(result: dict) -> str:
    """The data as a whole, by the per-prompt verdicts (the correctness reward's pass rates where one scored):
    too_hard or too_easy when fewer than half the prompts are in range (the larger side names it), else in_range."""
    n = result["prompts"]
    if 2 * result["in_range"] >= n and result["in_range"]:
        return "in_range"
    return "too_hard" if result["too_hard"] >= result["too_easy"] else "too_easy"


def _question(prompt) -> str:
    """The user's question: the last message of a chat prompt, or the text."""
    from grpokit.completions import prompt_text

    if isinstance(prompt, list) and prompt and isinstance(prompt[-1], dict):
        return str(prompt[-1].get("content", ""))
    return prompt_text(prompt)


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return statistics.fmean(kept) if kept else None


def suggestion(result: dict) -> str:
    """What to do with the data, in words: the verdict first, by the correctness reward."""
    n = result["prompts"]
    share = result["predicted_zero_variance_share"]
    correct_share = result.get("correct_zero_variance_share")
    verdict = result.get("verdict") or data_verdict(result)
    acc = result.get("accuracy_reward")
    counts = (f"{result['too_easy']} of {n} prompts are too easy, {result['too_hard']} too hard, "
              f"{result['in_range']} in range")
    by = f" by the correctness reward ({acc})" if acc else " (no correctness reward scored: by the total reward)"
    text = f"{counts}{by}; {share:.0%} of groups are predicted to have zero total-reward variance at " \
           f"num_generations={result['num_generations']}"
    if correct_share is not None:
        text += f", {correct_share:.0%} zero variance on correctness alone"
    text += "."
    if verdict != "in_range":
        hard = verdict == "too_hard"
        text += (f" The data is too {'hard' if hard else 'easy'} for GRPO with this model: "
                 f"{result['too_hard' if hard else 'too_easy']} of {n} prompts "
                 f"{'never' if hard else 'always'} pass.")
        if acc and share < 0.5 <= (correct_share or 0.0):
            text += (" The other rewards vary between completions, but they reward form, not the task: "
                     "they cannot make these prompts learnable.")
        if result["in_range"] == 0:
            text += " No prompt is in range:"
        else:
            text += f" Train on the {result['in_range']} in-range prompts (--write FILE), or"
        return text + (" make the task easier (or the model stronger) before training; partial credit on the "
                       "answer (e.g. numeric_closeness) gives GRPO a gradient a format reward does not."
                       if hard else " use harder prompts before training.")
    zero = correct_share if correct_share is not None else share
    if zero >= 0.5:
        return text + (" Train on the in-range prompts (--write FILE), easy first (--curriculum) with "
                       "training.shuffle_dataset: false, or raise training.num_generations.")
    return text + " The data is in range for GRPO."


def write_rows(path: str | Path, rows: Sequence[dict], result: dict, *, curriculum: bool = False) -> int:
    """Write the in-range rows as JSONL (easiest first when `curriculum`); returns the count written."""
    kept = [(p, rows[p["index"]]) for p in result["per_prompt"] if p["verdict"] == "in_range"]
    if curriculum:
        kept.sort(key=lambda pr: -(pr[0]["pass_rate"] or 0.0))
    with open(path, "w", encoding="utf-8") as handle:
        for _, row in kept:
            handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    return len(kept)
