"""Sampling k completions per held-out prompt with transformers' generate, then scoring them."""
from __future__ import annotations

import time
from typing import Any, Callable, Sequence

from grpokit.evaluate.metrics import RewardFunc, default_accuracy, score_samples


def _prompt_texts(tokenizer, prompts: Sequence[Any]) -> list[str]:
    out = []
    for prompt in prompts:
        if isinstance(prompt, str):
            out.append(prompt)
        else:
            messages = list(prompt)
            # A trailing assistant message is the start of the answer (a per-row prefill): the model
            # continues it, as TRL does for the same prompts during training.
            prefilled = bool(messages) and messages[-1].get("role") == "assistant"
            out.append(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=not prefilled,
                                                     continue_final_message=prefilled))
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
    answer_format: Any = None,
    group_of: Callable[[dict], str] | None = None,
) -> dict:
    """Sample k completions per prompt of `dataset` and score them.

    dataset: rows with `prompt` (chat messages or text), `answer` and the reward
        columns, as grpokit.data.load_data returns them.
    accuracy: the reward that decides correctness (a sample is correct when it
        scores >= correct_threshold): a function, a registered name, "auto"
        (numeric_match, math_equivalence or exact_match to fit the gold
        answers) or None for no accuracy.
    temperature: 0 decodes greedily (then k is 1).
    answer_format: the run's answer format (grpokit.answer_format; a
        mapping like {answer_tag: final} works too): where the "auto" accuracy
        reward reads the answer and what the format rate counts.
    group_of: a row -> group name function; adds accuracy per group (`by_group`).
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
            accuracy = default_accuracy([r.get("answer") for r in rows], answer_format)
        else:
            from grpokit import rewards

            from grpokit.rewards.format_params import with_answer_format

            accuracy = rewards.get(accuracy, **with_answer_format(accuracy, {}, answer_format))
    started = time.perf_counter()
    samples = generate_samples(model, tokenizer, rows, k=k, max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, batch_size=batch_size, seed=seed, progress=progress)
    result = score_samples(samples, reward_funcs, weights, accuracy=accuracy, k=k, correct_threshold=correct_threshold,
                           answer_format=answer_format, group_of=group_of)
    result["settings"] = {"k": k, "max_new_tokens": max_new_tokens, "temperature": temperature, "top_p": top_p, "seed": seed}
    result["seconds"] = round(time.perf_counter() - started, 2)
    return result
