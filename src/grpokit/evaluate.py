"""Before/after evaluation on held-out prompts, scored with the training rewards.

A training reward can saturate while real accuracy falls, so `evaluate` samples
k completions per held-out prompt and reports, besides the mean of every
reward: the task accuracy (the share of samples the accuracy reward counts as
correct), pass@1 and pass@k (the unbiased estimator of Chen et al. 2021), the
format rate (`<reasoning>` then `<answer>` present), the mean completion
length in tokens and the share cut off at max_new_tokens.

    from grpokit.evaluate import evaluate, compare, write_eval
    before = evaluate(base, tok, held_out, [fmt, acc], [0.5, 2.0], k=4)
    after = evaluate(tuned, tok, held_out, [fmt, acc], [0.5, 2.0], k=4)
    write_eval("runs/x/eval.json", before, after)

Sampling is seeded, so the base and the trained model see the same prompts
with the same random stream.
"""
from __future__ import annotations

import json
import math
import re
import time
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


def _prompt_texts(tokenizer, prompts: Sequence[Any]) -> list[str]:
    out = []
    for prompt in prompts:
        if isinstance(prompt, str):
            out.append(prompt)
        else:
            out.append(tokenizer.apply_chat_template(list(prompt), tokenize=False, add_generation_prompt=True))
    return out


def _eos_ids(model, tokenizer) -> set[int]:
    ids = {tokenizer.eos_token_id}
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids |= set(configured) if isinstance(configured, (list, tuple)) else {configured}
    ids.discard(None)
    return ids


def generate_samples(model, tokenizer, rows: Sequence[dict], *, k: int, max_new_tokens: int, temperature: float, top_p: float, batch_size: int, seed: int, progress: Callable[[int, int], None] | None = None) -> list[dict]:
    """k sampled completions for each row's prompt, in the format the rewards take."""
    import torch

    tokenizer.padding_side = "left"  # every prompt must end where generation starts
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    eos_ids = _eos_ids(model, tokenizer)
    greedy = temperature <= 0
    gen_kwargs = dict(
        max_new_tokens=max_new_tokens,
        do_sample=not greedy,
        num_return_sequences=k,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=sorted(eos_ids) or None,
    )
    if not greedy:
        gen_kwargs.update(temperature=temperature, top_p=top_p, top_k=0)
    torch.manual_seed(seed)
    samples: list[dict] = []
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    try:
        for start in range(0, len(rows), batch_size):
            batch = rows[start : start + batch_size]
            plain = isinstance(batch[0]["prompt"], str)
            enc = tokenizer(_prompt_texts(tokenizer, [r["prompt"] for r in batch]), return_tensors="pt", padding=True, add_special_tokens=plain).to(device)
            with torch.no_grad():
                out = model.generate(**enc, **gen_kwargs)
            new = out[:, enc["input_ids"].shape[1] :].tolist()
            for i, row in enumerate(batch):
                comps, lengths, cut = [], [], []
                for ids in new[i * k : (i + 1) * k]:
                    end = next((j + 1 for j, t in enumerate(ids) if t in eos_ids), None)
                    lengths.append(end if end is not None else len(ids))
                    cut.append(end is None and len(ids) >= max_new_tokens)
                    text = tokenizer.decode(ids[: end or len(ids)], skip_special_tokens=True)
                    comps.append(text if plain else [{"role": "assistant", "content": text}])
                samples.append({"row": row, "completions": comps, "lengths": lengths, "truncated": cut})
            if progress is not None:
                progress(len(samples), len(rows))
    finally:
        model.train(was_training)
    return samples


def evaluate(
    model,
    tokenizer,
    dataset,
    reward_funcs: Sequence[RewardFunc],
    weights: Sequence[float] | None = None,
    *,
    k: int = 4,
    max_new_tokens: int = 256,
    temperature: float = 1.0,
    top_p: float = 1.0,
    batch_size: int = 8,
    max_prompts: int | None = None,
    accuracy: RewardFunc | str | None = "auto",
    correct_threshold: float = 1.0,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Sample k completions per prompt of `dataset` and score them.

    dataset: rows with `prompt` (chat messages or text), `answer` and the reward
        columns, as grpokit.data.load_data returns them.
    accuracy: the reward that decides correctness (a sample is correct when it
        scores >= correct_threshold): a function, a registered name, "auto"
        (numeric_match, math_equivalence or exact_match to fit the gold
        answers) or None for no accuracy.
    temperature: 0 decodes greedily (then k is 1).
    Returns a dict of metrics (see score_samples) plus the settings used.
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    if temperature <= 0:
        k = 1  # greedy decoding gives k identical samples
    if max_prompts is not None and hasattr(dataset, "select"):
        dataset = dataset.select(range(min(max_prompts, len(dataset))))
    rows = [dict(r) for r in dataset]
    if max_prompts is not None:
        rows = rows[:max_prompts]
    if not rows:
        raise ValueError("no prompts to evaluate")
    if isinstance(accuracy, str):
        if accuracy == "auto":
            accuracy = default_accuracy([r.get("answer") for r in rows])
        else:
            from grpokit import rewards

            accuracy = rewards.get(accuracy)
    started = time.perf_counter()
    samples = generate_samples(model, tokenizer, rows, k=k, max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, batch_size=batch_size, seed=seed, progress=progress)
    result = score_samples(samples, reward_funcs, weights, accuracy=accuracy, k=k, correct_threshold=correct_threshold)
    result["settings"] = {"k": k, "max_new_tokens": max_new_tokens, "temperature": temperature, "top_p": top_p, "seed": seed}
    result["seconds"] = round(time.perf_counter() - started, 2)
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


# --- a run's checkpoint against its base model (what `grpokit eval` runs) ---------------------

def _is_model_dir(p: Path) -> bool:
    if (p / "adapter_config.json").is_file():
        return True
    return (p / "config.json").is_file() and (any(p.glob("*.safetensors")) or any(p.glob("*.bin")))


def find_checkpoint(path: str | Path) -> Path:
    """A checkpoint directory; given a run directory (or its checkpoints/), the newest one inside it."""
    from grpokit.errors import ConfigError

    p = Path(path)
    if not p.exists():
        raise ConfigError(f"checkpoint {p} not found; give a checkpoint directory (runs/<name>/checkpoints/checkpoint-<step>) or a run directory")
    if _is_model_dir(p):
        return p
    found = [d for pattern in ("*", "*/*", "*/*/*") for d in p.glob(pattern) if d.is_dir() and _is_model_dir(d)]
    if not found:
        raise ConfigError(f"{p} holds no checkpoint (no adapter_config.json, or config.json with weights, at most 3 levels down)")
    # The most recently written one is the end of the run, also across the stages of a multi-stage run.
    return max(found, key=lambda d: max(f.stat().st_mtime for f in d.iterdir()))


def _rewards_of(cfg) -> tuple[list, list[float]]:
    from grpokit import rewards

    specs = cfg.rewards or (cfg.stages[-1].rewards if cfg.stages and cfg.stages[-1].rewards else [])
    return [rewards.get(s.name, **(s.params or {})) for s in specs], [float(s.weight) for s in specs]


def _training_value(cfg, key: str, default):
    try:
        from grpokit.config import effective_training

        return effective_training(cfg).get(key, default) or default
    except ImportError:
        return (cfg.training or {}).get(key, default) or default


def _load(cfg, checkpoint: Path | None):
    """(model, tokenizer): the base model, or the base with `checkpoint` (a LoRA adapter or full weights)."""
    import dataclasses

    from grpokit.models import load_model

    try:
        from grpokit.profiles import model_dtype

        dtype = model_dtype(cfg)
    except ImportError:
        dtype = "float32"
    if checkpoint is None:
        return load_model(cfg.model, dtype=dtype, trainable=False)
    if (checkpoint / "adapter_config.json").is_file():
        model, tok = load_model(cfg.model, dtype=dtype, adapter=str(checkpoint), trainable=False)
        # Folding the adapter in makes generation as fast as the base model's.
        return (model.merge_and_unload() if hasattr(model, "merge_and_unload") else model), tok
    full = dataclasses.replace(cfg.model, name=str(checkpoint), lora=None)
    if (checkpoint / "tokenizer_config.json").is_file():
        return load_model(full, dtype=dtype, trainable=False)
    # Full weights saved without a tokenizer: the base model's tokenizer is the one it was trained with.
    import torch
    from transformers import AutoModelForCausalLM

    from grpokit.models import load_tokenizer, resolve_source

    source, extra = resolve_source(cfg.model.name)
    tok = load_tokenizer(source, extra, cfg.model.trust_remote_code)
    torch_dtype = getattr(torch, dtype) if dtype in ("float32", "bfloat16", "float16") else "auto"
    model = AutoModelForCausalLM.from_pretrained(str(checkpoint), dtype=torch_dtype, trust_remote_code=cfg.model.trust_remote_code)
    return model, tok


def _free(model) -> None:
    import gc

    del model
    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:  # pragma: no cover
        pass


def evaluate_checkpoint(
    cfg,
    checkpoint: str | Path,
    *,
    k: int = 4,
    max_new_tokens: int | None = None,
    temperature: float | None = None,
    max_prompts: int | None = None,
    batch_size: int = 8,
    accuracy: str | None = "auto",
    eval_source: str | None = None,
    before: bool = True,
    output: str | Path | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict:
    """Evaluate the base model and `checkpoint` on the run's held-out prompts; write eval.json.

    The held-out prompts are data.eval_size's split of the training data (the
    same rows training never saw), or all of `eval_source` (a data source
    string, read with the run's column settings). Sampling settings default to
    the run's: training.max_completion_length and training.temperature.
    Returns what eval.json holds.
    """
    import dataclasses

    from grpokit.data import load_data
    from grpokit.errors import ConfigError

    ckpt = find_checkpoint(checkpoint)
    if eval_source:
        data_cfg = dataclasses.replace(cfg.data, source=eval_source, eval_size=0, max_samples=None)
        held_out = load_data(data_cfg)[0]
    else:
        held_out = load_data(cfg.data)[1]
        if held_out is None:
            raise ConfigError("data.eval_size is 0, so no prompts were held out: set it (e.g. --set data.eval_size=100 before training) or pass --eval-source")
    funcs, weights = _rewards_of(cfg)
    settings = dict(
        k=k,
        max_new_tokens=int(max_new_tokens or _training_value(cfg, "max_completion_length", 256)),
        temperature=float(temperature if temperature is not None else _training_value(cfg, "temperature", 1.0)),
        max_prompts=max_prompts,
        batch_size=batch_size,
        accuracy=accuracy,
        seed=cfg.data.seed,
    )
    results: dict[str, Any] = {}
    for label, source in (("before", None), ("after", ckpt)):
        if label == "before" and not before:
            results[label] = None
            continue
        model, tok = _load(cfg, source)
        report = (lambda done, total, label=label: progress(label, done, total)) if progress else None
        results[label] = evaluate(model, tok, held_out, funcs, weights, progress=report, **settings)
        _free(model)
    meta = {
        "name": cfg.name,
        "model": cfg.model.name,
        "checkpoint": str(ckpt),
        "data": eval_source or cfg.data.source,
        "held_out_prompts": len(held_out),
    }
    path = Path(output) if output else cfg.run_dir / "eval.json"
    write_eval(path, results["before"], results["after"], meta)
    return {**meta, "path": str(path), "before": results["before"], "after": results["after"],
            "delta": compare(results["before"], results["after"]) if results["before"] else None}
