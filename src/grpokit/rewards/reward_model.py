"""reward_model: a trained reward model (a sequence-classification checkpoint) scores each completion.

torch and transformers are imported only when the model is first used (the reward
library itself needs neither): building the reward, pickling it and shipping it to a
worker load nothing; each process loads the model once, on its first batch, and
shares it between rewards that name the same checkpoint and device.
"""
from __future__ import annotations

import math
import threading
from typing import Any

from grpokit.completions import prompt_text, texts
from grpokit.rewards._bound import BatchReward, Lazy
from grpokit.rewards.registry import RewardConfigError, register
from grpokit.rewards.unscorable import settled

_LOADED: dict[tuple, tuple[Any, Any, str]] = {}
_LOAD_LOCK = threading.Lock()
_DTYPES = ("float32", "bfloat16", "float16")


@register("reward_model", aliases=("rm",), family="model", examples={"path": "bundled:smollm2-135m-instruct"})
def reward_model(path: str, batch_size: int = 8, device: str = "auto", max_length: int = 1024,
                 squash: bool = False, dtype: str = "float32"):
    """A reward model scores each (prompt, completion): its sequence-classification output.

    `path` is a local checkpoint directory or hub id of an
    AutoModelForSequenceClassification reward model (e.g. a Skywork or OpenAssistant
    reward model). A causal LM checkpoint, or "bundled:smollm2-135m-instruct", loads
    with a fresh, seeded value head: scores are repeatable but mean nothing, which is
    what tests and plumbing checks need. The text scored is the prompt and completion
    through the tokenizer's chat template when the prompt is a message list, else the
    prompt and completion joined by a newline (the completion alone without `prompts`).

    Score: the single logit of a one-label model (through a sigmoid into (0, 1) when
    squash), or the probability of the last label of a multi-label one. Unscorable: a
    completion whose score is not finite earns the floor (0 for a probability; for a raw
    logit, the lowest score of the other completions of its row), never None's 0. Rows are
    scored in batches of batch_size, cut to max_length tokens (from the left, so the
    completion is kept). device: "auto" (the training process's GPU when there is one,
    else the CPU), "cpu", "cuda", "cuda:1"...; dtype: float32, bfloat16 or float16.

    Parameters: path (required), batch_size (8), device ("auto"), max_length (1024),
    squash (False), dtype ("float32"). Columns read: prompts (optional).
    """
    if not isinstance(path, str) or not path.strip():
        raise RewardConfigError("reward_model: path must name a checkpoint directory or hub id")
    for name, value, low, high in (("batch_size", batch_size, 1, 4096), ("max_length", max_length, 8, 1_000_000)):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise RewardConfigError(f"reward_model: {name} must be an integer from {low} to {high}, got {value!r}")
    if dtype not in _DTYPES:
        raise RewardConfigError(f"reward_model: dtype must be one of {list(_DTYPES)}, got {dtype!r}")
    if not isinstance(device, str) or not (device in ("auto", "cpu", "cuda") or device.startswith("cuda:")):
        raise RewardConfigError(f"reward_model: device must be auto, cpu, cuda or cuda:N, got {device!r}")
    return BatchReward("reward_model", _score_batch, model=Lazy(load, path=path, device=device, dtype=dtype),
                       batch_size=batch_size, max_length=max_length, squash=bool(squash))


def _resolve_device(device: str) -> str:
    import os

    import torch

    if device != "auto":
        return device
    if torch.cuda.is_available():
        return f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}"
    return "cpu"


def load(path: str, device: str, dtype: str) -> tuple[Any, Any, str]:
    """(model, tokenizer, device), loaded once per process for each (path, device, dtype)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    where = _resolve_device(device)
    key = (path, where, dtype)
    with _LOAD_LOCK:
        if key in _LOADED:
            return _LOADED[key]
        source = path
        if path.startswith("bundled:"):
            from grpokit.bundled import ensure_bundled

            source = str(ensure_bundled(path))
        tokenizer = AutoTokenizer.from_pretrained(source)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        tokenizer.padding_side = "right"
        tokenizer.truncation_side = "left"  # keep the completion, drop the start of a long prompt
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)  # a checkpoint without a trained head gets the same fresh one everywhere
            model = AutoModelForSequenceClassification.from_pretrained(
                source, dtype=getattr(torch, dtype), **({} if _has_head(source) else {"num_labels": 1}))
        if model.config.pad_token_id is None:
            model.config.pad_token_id = tokenizer.pad_token_id
        model.to(where).eval()
        _LOADED[key] = (model, tokenizer, where)
        return _LOADED[key]


def _has_head(source: str) -> bool:
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(source)
    return any(arch.endswith("ForSequenceClassification") for arch in (config.architectures or []))


def _text(tokenizer: Any, prompt: Any, completion: str) -> str:
    if isinstance(prompt, list) and getattr(tokenizer, "chat_template", None):
        try:
            return tokenizer.apply_chat_template([*prompt, {"role": "assistant", "content": completion}],
                                                 tokenize=False)
        except Exception:  # a template that rejects this conversation: fall back to plain text
            pass
    return f"{prompt_text(prompt)}\n{completion}" if prompt is not None else completion


def _score_batch(completions, kwargs: dict, model: Lazy, batch_size: int, max_length: int,
                 squash: bool) -> list[float | None]:
    import torch

    net, tokenizer, where = model.get()
    items = texts(completions)
    prompts = kwargs.get("prompts")
    prompts = list(prompts) if prompts is not None else [None] * len(items)
    if len(prompts) != len(items):
        raise ValueError(f"column 'prompts' has {len(prompts)} rows for {len(items)} completions; align it")
    # An empty completion without a prompt is still an answer (a bad one): the model reads one special token.
    empty = tokenizer.bos_token or tokenizer.eos_token or " "
    inputs = [_text(tokenizer, p, c) or empty for p, c in zip(prompts, items)]
    scores: list[float | None] = []
    floor = 0.0 if squash else None  # a sigmoid's or a softmax's floor; a raw logit has none
    with torch.no_grad():
        for start in range(0, len(inputs), batch_size):
            enc = tokenizer(inputs[start:start + batch_size], return_tensors="pt", padding=True, truncation=True,
                            max_length=max_length).to(where)
            logits = net(**enc).logits.float()
            if logits.shape[-1] == 1:
                values = logits[:, 0]
                values = torch.sigmoid(values) if squash else values
            else:
                values = torch.softmax(logits, dim=-1)[:, -1]
                floor = 0.0
            scores.extend(float(v) if math.isfinite(float(v)) else None for v in values.cpu())
    # A logit has no floor: a completion that drives it to NaN earns its row-mates' lowest, not None's 0.
    return settled(scores, kwargs, floor)
