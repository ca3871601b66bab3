"""The run's completion budget, in the policy's own tokens: what the probe may write.

A policy cannot produce a completion longer than `max_completion_length` tokens
(the trainer cuts it there), so an exploit that needs more is no threat to that
run: the probe leaves it out and says so. Token counts come from the run's
tokenizer: its tokenizer.json (a bundled model, a local folder, or the Hugging
Face cache) read with the `tokenizers` library, so the reward library needs
neither transformers nor torch. Where there is no such file on the machine
(a hub model never downloaded here), counts are estimated from the text, and
the report says so.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

# Characters per token where the tokenizer cannot be loaded. Low on purpose: model
# tokenizers split digits and markup finely (SmolLM2 and Qwen2.5 give each digit its own
# token), and overestimating a length only leaves an exploit out, which the report names.
ESTIMATED_CHARS_PER_TOKEN = 3.0


@dataclass(frozen=True)
class TokenBudget:
    """`tokens`: the most a completion may hold; `count(text)`: its length in them; `how`: where counts come from."""

    tokens: int
    count: Callable[[str], int]
    how: str = "estimated"
    cut: Callable[[str, int], str] | None = None

    def fits(self, text: str) -> bool:
        return self.count(text) <= self.tokens

    def truncate(self, text: str) -> str:
        """The text as the trainer would leave it: its first `tokens` tokens."""
        if self.fits(text):
            return text
        if self.cut is not None:
            return self.cut(text, self.tokens)
        return text[: int(self.tokens * ESTIMATED_CHARS_PER_TOKEN)]

    def describe(self) -> str:
        return f"{self.tokens} tokens ({self.how})"


def estimated(tokens: int) -> TokenBudget:
    """A budget whose counts are estimated from the text's length."""
    return TokenBudget(int(tokens), lambda text: math.ceil(len(text) / ESTIMATED_CHARS_PER_TOKEN),
                       "estimated from characters: the model's tokenizer is not available here")


def of_tokenizer(tokens: int, tokenizer: Any, name: str) -> TokenBudget:
    """A budget counted by a `tokenizers.Tokenizer`."""
    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    def cut(text: str, n: int) -> str:
        return tokenizer.decode(tokenizer.encode(text, add_special_tokens=False).ids[:n])

    return TokenBudget(int(tokens), count, f"counted with {name}'s tokenizer", cut)


def load_tokenizer(model: str) -> Any | None:
    """The model's tokenizer from its tokenizer.json on this machine; None when there is none."""
    path = _tokenizer_file(model)
    if path is None:
        return None
    try:
        from tokenizers import Tokenizer

        return Tokenizer.from_file(str(path))
    except Exception:  # noqa: BLE001 - an unreadable file: the budget is estimated instead
        return None


def _tokenizer_file(model: str) -> Path | None:
    folder = _local_folder(model)
    if folder is not None:
        path = folder / "tokenizer.json"
        return path if path.is_file() else None
    if model.endswith(".gguf") or "/" not in model:
        return None
    try:  # a hub model downloaded before: its cached file, without touching the network
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(model, "tokenizer.json")
    except Exception:  # noqa: BLE001 - no hub library, or a name it rejects
        return None
    return Path(cached) if isinstance(cached, str) else None


def _local_folder(model: str) -> Path | None:
    if model.startswith("bundled:"):
        try:
            from grpokit.bundled import ensure_bundled

            return ensure_bundled(model)
        except Exception:  # noqa: BLE001 - the bundled model's package is missing: estimate
            return None
    path = Path(model).expanduser()
    if model.endswith(".gguf"):
        return None
    return path if path.is_dir() else None


def budget_for(model: str, tokens: int | None) -> TokenBudget | None:
    """The budget of a run on `model` with `max_completion_length` = tokens (None: no budget known)."""
    if tokens is None:
        return None
    tokenizer = load_tokenizer(model)
    return estimated(tokens) if tokenizer is None else of_tokenizer(tokens, tokenizer, model)
