"""A run's checkpoint against its base model on the held-out prompts: what `grpokit eval` runs."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from grpokit.evaluate.generation import evaluate
from grpokit.evaluate.metrics import compare, write_eval


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


def _load(cfg, checkpoint: Path | None):
    """(model, tokenizer): the base model, or the base with `checkpoint` (a LoRA adapter or full weights)."""
    import dataclasses

    from grpokit.models.loading import load_model

    from grpokit.config.profiles import model_dtype

    dtype = model_dtype(cfg)
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

    from grpokit.models.loading import load_tokenizer, resolve_source

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

    from grpokit.config.run_config import build_reward_set
    from grpokit.data import load_data
    from grpokit.config.profiles import resolve_training
    from grpokit.errors import ConfigError

    ckpt = find_checkpoint(checkpoint)
    if eval_source:
        data_cfg = dataclasses.replace(cfg.data, source=eval_source, eval_size=0, max_samples=None)
        held_out = load_data(data_cfg)[0]
    else:
        held_out = load_data(cfg.data)[1]
        if held_out is None:
            raise ConfigError("data.eval_size is 0, so no prompts were held out: set it (e.g. --set data.eval_size=100 before training) or pass --eval-source")
    rewards = build_reward_set(cfg, cfg.final_stage())  # what the finished model was trained on
    training = resolve_training(cfg, cfg.final_stage())
    settings = dict(
        k=k,
        max_new_tokens=int(max_new_tokens or training["max_completion_length"]),
        temperature=float(temperature if temperature is not None else training["temperature"]),
        max_prompts=max_prompts,
        batch_size=batch_size,
        accuracy=accuracy,
        seed=cfg.data.seed,
        answer_format=cfg.data.answer_format,
    )
    results: dict[str, Any] = {}
    for label, source in (("before", None), ("after", ckpt)):
        if label == "before" and not before:
            results[label] = None
            continue
        model, tok = _load(cfg, source)
        report = (lambda done, total, label=label: progress(label, done, total)) if progress else None
        results[label] = evaluate(model, tok, held_out, rewards.funcs, rewards.weights, progress=report, **settings)
        _free(model)
    meta = {
        "name": cfg.name,
        "model": cfg.model.name,
        "checkpoint": str(ckpt),
        "data": eval_source or cfg.data.source,
        # The prompts evaluated (--max-prompts may take fewer than the split holds), and the split's size.
        "held_out_prompts": len(held_out) if max_prompts is None else min(max_prompts, len(held_out)),
        "held_out_available": len(held_out),
    }
    from grpokit.evaluate.intervals import accuracy_note
    from grpokit.run_directory.layout import EVAL

    note = accuracy_note(results["before"], results["after"])  # how far a change on these prompts can be trusted
    if note is not None:
        meta["accuracy_interval"] = note["intervals"]
        meta["accuracy_change_p"] = note["p"]
        meta["accuracy_within_noise"] = note["within_noise"]
    path = Path(output) if output else cfg.run_dir / EVAL
    write_eval(path, results["before"], results["after"], meta)
    return {**meta, "path": str(path), "accuracy_note": note["text"] if note else None,
            "before": results["before"], "after": results["after"],
            "delta": compare(results["before"], results["after"]) if results["before"] else None}
