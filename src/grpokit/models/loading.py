"""Model and tokenizer loading: HF hub id, local dir, .gguf file, the bundled default, Unsloth; LoRA.

LoRA rank guidance (model.lora.r; alpha defaults to 2 * r):
  * 8-16   the default range: GRPO moves a model a small distance (format, answer style,
           a skill it half has), and r=16 on every linear layer holds that comfortably.
  * 32-64  when the task needs new knowledge or long multi-step behaviour, or the reward
           plateaus while the full fine-tune of a small model keeps improving.
  * <8     memory-starved GPUs; expect slower learning rather than failure.
  Target "all-linear" (attention and MLP) beats attention-only at equal parameter count.
  Raising r does not need a smaller learning rate when alpha scales with it (alpha = 2r).

The bundled default (`bundled:smollm2-135m-instruct`) is found and converted once by
grpokit.bundled.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from grpokit import optional
from grpokit.bundled import ensure_bundled
from grpokit.errors import ConfigError, RunError
from grpokit.models.checkpointing_names import quiet_model_alias

def _torch_dtype(dtype: str):
    import torch

    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}.get(dtype, "auto")


def resolve_source(name: str) -> tuple[str, dict[str, Any]]:
    """(path or hub id, extra from_pretrained kwargs) for a model name."""
    if name.startswith("bundled:"):
        return str(ensure_bundled(name)), {}
    path = Path(name).expanduser()
    if name.endswith(".gguf"):
        if not path.is_file():
            raise ConfigError(f"GGUF file {name!r} not found")
        return str(path.parent), {"gguf_file": path.name}
    return (str(path) if path.exists() else name), {}


def load_tokenizer(source: str, extra: dict | None = None, trust_remote_code: bool = False):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(source, trust_remote_code=trust_remote_code, **(extra or {}))
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    # Decoder-only generation pads on the left so every prompt ends where generation starts.
    tok.padding_side = "left"
    return tok


def load_model(mcfg, *, dtype: str = "float32", backend: str = "transformers", adapter: str | None = None,
               trainable: bool = True):
    """(model, tokenizer) ready for GRPOTrainer.

    `adapter`: a LoRA adapter directory to continue from (the previous stage's), loaded
    trainable on top of the base instead of a fresh adapter.
    """
    if backend == "unsloth":
        return _load_unsloth(mcfg, adapter)
    from transformers import AutoModelForCausalLM

    source, extra = resolve_source(mcfg.name)
    try:
        model = AutoModelForCausalLM.from_pretrained(
            source, dtype=_torch_dtype(dtype), trust_remote_code=mcfg.trust_remote_code, **extra
        )
        tokenizer = load_tokenizer(source, extra, mcfg.trust_remote_code)
    except OSError as exc:
        raise RunError(f"could not load model {mcfg.name!r}: {exc}") from exc
    if extra.get("gguf_file"):
        model.hf_quantizer = None  # dequantized on load; treat as a plain model from here on
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
    if model.generation_config is not None and model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    if adapter is not None:
        from peft import PeftModel

        with quiet_model_alias():  # peft reads the deprecated is_gradient_checkpointing
            model = PeftModel.from_pretrained(model, adapter, is_trainable=trainable)
    elif mcfg.lora is not None and trainable:
        from peft import get_peft_model

        with quiet_model_alias():
            model = get_peft_model(model, peft_config(mcfg.lora))
    return model, tokenizer


def peft_config(lora):
    from peft import LoraConfig as PeftLoraConfig

    return PeftLoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=lora.target_modules,
        task_type="CAUSAL_LM",
    )


def _load_unsloth(mcfg, adapter: str | None):
    if not optional.cuda_available():
        raise ConfigError("the unsloth backend needs a CUDA GPU; use model.backend: transformers with profile cpu")
    unsloth = optional.require("unsloth", "the unsloth backend")
    fast = unsloth.FastLanguageModel
    model, tokenizer = fast.from_pretrained(
        model_name=adapter or mcfg.name,
        max_seq_length=mcfg.max_seq_length,
        load_in_4bit=mcfg.load_in_4bit,
        dtype=None,
    )
    if adapter is None and mcfg.lora is not None:
        targets = mcfg.lora.target_modules
        if targets == "all-linear":
            targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
        model = fast.get_peft_model(
            model,
            r=mcfg.lora.r,
            lora_alpha=mcfg.lora.alpha,
            lora_dropout=mcfg.lora.dropout,
            target_modules=targets,
            use_gradient_checkpointing="unsloth",
        )
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    return model, tokenizer


def add_response_prefix(tokenizer, prefix: str) -> None:
    """Open every generated answer with `prefix` (a prefill), through the chat template.

    The text is emitted right after the template's generation prompt, so it is part of
    the prompt and the model's completion continues it. Works for templates that end with
    their generation prompt (the usual layout).
    """
    if not prefix:
        return
    if not tokenizer.chat_template:
        raise ConfigError("a response prefix needs a chat template; this tokenizer has none")
    literal = prefix.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
    tokenizer.chat_template = tokenizer.chat_template + "{% if add_generation_prompt %}{{ '" + literal + "' }}{% endif %}"
