"""Random-weight stand-ins for the production models, built from their configs (no download).

A GPU check measures time and memory, which depend on a model's shape, not on what its
weights learned; so Qwen2.5-1.5B-Instruct and SmolLM2-135M-Instruct are rebuilt here from
their published config values with random weights, next to a byte-level tokenizer
(grpokit/models/tiny.py). The tokenizer is far smaller than the models' vocabularies:
token ids it does not know decode to nothing, while the embedding and LM head keep their
full width, so generation and the loss cost what they cost with the real tokenizer.

`tiny=True` gives the same architectures at toy width (seconds on a CPU), for the
test that keeps the GPU check from rotting.
"""
from __future__ import annotations

from pathlib import Path

# The values of the models' config.json on the Hugging Face hub that change compute or memory.
SHAPES = {
    "qwen2.5-1.5b": {
        "model_type": "qwen2", "vocab_size": 151936, "hidden_size": 1536, "intermediate_size": 8960,
        "num_hidden_layers": 28, "num_attention_heads": 12, "num_key_value_heads": 2,
        "max_position_embeddings": 32768, "rope_theta": 1000000.0, "rms_norm_eps": 1e-6,
        "tie_word_embeddings": True, "hidden_act": "silu",
    },
    "smollm2-135m": {
        "model_type": "llama", "vocab_size": 49152, "hidden_size": 576, "intermediate_size": 1536,
        "num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3,
        "max_position_embeddings": 8192, "rope_theta": 100000.0, "rms_norm_eps": 1e-5,
        "tie_word_embeddings": True, "hidden_act": "silu",
    },
}

# Toy widths of the same architectures. The Qwen stand-in is wide enough (256) that its
# activations, not the Python runtime, decide how peak memory moves with the batch.
TINY = {
    "qwen2.5-1.5b": {"vocab_size": 2048, "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 1024},
    "smollm2-135m": {"vocab_size": 1024, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 1024},
}


def model_config(name: str, tokenizer, *, tiny: bool = False):
    """The transformers config of stand-in `name`, its special tokens taken from `tokenizer`."""
    from transformers import AutoConfig

    if name not in SHAPES:
        raise ValueError(f"unknown model shape {name!r}; choose one of {', '.join(SHAPES)}")
    values = {**SHAPES[name], **(TINY[name] if tiny else {})}
    model_type = values.pop("model_type")
    return AutoConfig.for_model(model_type, **values, bos_token_id=tokenizer.bos_token_id,
                                eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)


def save_random_model(name: str, directory: Path, *, tiny: bool = False, device: str = "cpu", seed: int = 0):
    """Build stand-in `name` with random bf16 weights on `device`, save it with its tokenizer; return the model.

    The weights are initialised on `device` (a GPU fills 1.5B parameters in well under a second,
    a CPU takes tens of seconds) and saved in bf16, the dtype the real checkpoints ship in.
    """
    import torch
    from transformers import AutoModelForCausalLM

    from grpokit.models.tiny import make_tokenizer

    tokenizer = make_tokenizer("chatml")
    config = model_config(name, tokenizer, tiny=tiny)
    torch.manual_seed(seed)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    directory = Path(directory)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return model, tokenizer
