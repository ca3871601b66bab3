"""A tiny random Llama and a small byte-level tokenizer, built offline in about a second.

For whatever needs a real transformers model (generation, saving, LoRA, GRPO training)
but not a good one, with no download: the tests and the benchmarks both build it from
here, so neither imports the other. Two tokenizer flavours, so a check can cover both
kinds grpokit meets:

- chat_format="chatml" (default): ChatML turns and a BOS token, like SmolLM2's.
- chat_format="roles": `<|user|>...<|end|>` turns whose role markers are special tokens,
  and no BOS token, so code that assumes ChatML or a BOS token shows up.

vocab_size > 0 trains BPE merges on a small corpus (prompts tokenize into fewer,
longer tokens, as with a real model); vocab_size=0 keeps bytes only (one token per byte).
"""
from __future__ import annotations

from pathlib import Path

CHAT_FORMATS = {
    "chatml": {
        "template": (
            "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
            "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
        ),
        "specials": {"pad_token": "<|endoftext|>", "bos_token": "<|im_start|>", "eos_token": "<|im_end|>"},
        "extra": [],
    },
    "roles": {
        "template": (
            "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}"
        ),
        "specials": {"eos_token": "<|end|>", "pad_token": "<pad>"},
        "extra": ["<|system|>", "<|user|>", "<|assistant|>"],
    },
}
_CORPUS = [
    "<reasoning>\nAdd the numbers first, then subtract.\n</reasoning>\n<answer>\n42\n</answer>",
    "Ana has 12 apples. Ana gets 7 more. How many apples does Ana have now?",
    "Think about the problem step by step, then give your final answer.",
    "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 + - * / = ( ) { } [ ] : , .",
]


def make_tokenizer(chat_format: str = "chatml", vocab_size: int = 320):
    """A byte-level BPE tokenizer with a chat template; padding on the left, as generation needs."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    if chat_format not in CHAT_FORMATS:
        raise ValueError(f"chat_format={chat_format!r}: use one of {sorted(CHAT_FORMATS)}")
    fmt = CHAT_FORMATS[chat_format]
    specials = list(dict.fromkeys(fmt["specials"].values()))
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    if vocab_size:
        core = Tokenizer(models.BPE())
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, initial_alphabet=alphabet,
                                      show_progress=False)
    else:
        core = Tokenizer(models.BPE(vocab={ch: i for i, ch in enumerate(sorted(alphabet))}, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    if vocab_size:
        core.train_from_iterator(_CORPUS * 4, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=core, **fmt["specials"])
    if fmt["extra"]:
        tok.add_special_tokens({"additional_special_tokens": fmt["extra"]})
    tok.chat_template = fmt["template"]
    tok.padding_side = "left"
    return tok


def build_tiny_model(seed: int = 0, *, chat_format: str = "chatml", vocab_size: int = 320, hidden_size: int = 32,
                     num_attention_heads: int = 2, num_key_value_heads: int = 2):
    """(model, tokenizer): a 2-layer random Llama in memory.

    num_key_value_heads < num_attention_heads gives grouped-query attention, whose
    k/v projections are narrower than q's (as in most current models).
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = make_tokenizer(chat_format, vocab_size)
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=2,
        num_attention_heads=num_attention_heads,
        num_key_value_heads=num_key_value_heads,
        max_position_embeddings=512,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def make_tiny_model(directory: str | Path, seed: int = 0, **options) -> Path:
    """Save build_tiny_model(seed, **options) with its tokenizer to `directory`; returns it."""
    directory = Path(directory)
    model, tokenizer = build_tiny_model(seed, **options)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
