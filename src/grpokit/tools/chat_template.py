"""Make sure the tokenizer's chat template can carry tool calls, before training starts.

TRL needs two things from the tokenizer for its tool loop: a chat template that
renders assistant tool calls and tool messages, and a response parser that reads
tool calls back out of generated text (TRL ships parsers for known templates).
Many small models' templates (SmolLM2's among them) render neither, yet speak
ChatML (`<|im_start|>`); for those `chat_template: auto` swaps in TRL's
Qwen2.5 ChatML template, which TRL can parse. Anything else is a ConfigError
that says what to change.
"""
from __future__ import annotations

from grpokit.errors import ConfigError

CHATML_MARKER = "<|im_start|>"


def prepare_tokenizer(tokenizer, mode: str = "auto"):
    """Return `tokenizer` ready for TRL's tool loop (its template may be replaced); ConfigError if it cannot be."""
    from trl.chat_template_utils import add_response_schema, qwen2_5_chat_template, supports_tool_calling

    if mode == "chatml" or (mode == "auto" and not _usable(tokenizer)):
        if CHATML_MARKER not in tokenizer.get_vocab():
            raise ConfigError(
                "the model's chat template cannot render tool calls and the model does not speak ChatML "
                f"(no {CHATML_MARKER} token), so no tool template fits it; use a tool-calling model "
                "(Qwen2.5/Qwen3/Llama-3.1 instruct) or give the tokenizer a tool-capable chat template")
        tokenizer.chat_template = qwen2_5_chat_template
        add_response_schema(tokenizer)
        return tokenizer
    if not supports_tool_calling(tokenizer):
        raise ConfigError("environment.chat_template is 'model' but the model's chat template does not render "
                          "tool calls; set environment.chat_template: auto (or chatml for a ChatML model), "
                          "or use a tool-calling model")
    if not _has_parser(tokenizer):
        try:
            add_response_schema(tokenizer)
        except ValueError as exc:
            raise ConfigError(f"TRL cannot read tool calls out of this model's replies ({exc}); use a model "
                              "TRL knows (Qwen, Llama 3.x, ...) or environment.chat_template: chatml") from None
    return tokenizer


def _has_parser(tokenizer) -> bool:
    return (getattr(tokenizer, "response_template", None) is not None
            or getattr(tokenizer, "response_schema", None) is not None)


def _usable(tokenizer) -> bool:
    """The model's own template renders tool calls and TRL knows how to parse its replies."""
    from trl.chat_template_utils import add_response_schema, supports_tool_calling

    if not supports_tool_calling(tokenizer):
        return False
    if _has_parser(tokenizer):
        return True
    try:
        add_response_schema(tokenizer)
    except ValueError:
        return False
    return True
