"""transformers 5 renamed gradient checkpointing to activation checkpointing; this keeps the rename quiet.

Two FutureWarnings would otherwise print on every run, from code that is not ours:

- `gradient_checkpointing` is deprecated ... Use `activation_checkpointing`: TrainingArguments
  warns whenever the old field is set and the new one is not. TRL's GRPOConfig (1.16) gives the old
  field a default of True, so it is always set. `new_names` passes the setting under the new name.
- `is_gradient_checkpointing` is deprecated ...: the old model property, still read by peft 0.21
  (PeftModel.__init__) and TRL 1.16 (unwrap_model_for_generation, disable_gradient_checkpointing
  around every generation); with checkpointing on, TRL also calls the old methods
  `gradient_checkpointing_disable` / `gradient_checkpointing_enable` there. Only they can move to
  the new names, so `quiet_model_alias` filters exactly these three messages around the calls
  that reach them.

Measured with transformers 5.24, TRL 1.16, peft 0.21. With a transformers that predates the
rename, neither warning exists and both helpers change nothing.
"""
from __future__ import annotations

import contextlib
import dataclasses
import warnings
from typing import Any, Iterator

RENAMED = (
    ("gradient_checkpointing", "activation_checkpointing"),
    ("gradient_checkpointing_kwargs", "activation_checkpointing_kwargs"),
)

# The exact start of transformers' messages for the three model aliases (modeling_utils.py); nothing else.
MODEL_ALIAS_MESSAGE = (
    r"`(is_gradient_checkpointing|gradient_checkpointing_enable|gradient_checkpointing_disable)` is deprecated"
)


def new_names(kwargs: dict[str, Any], config_class) -> dict[str, Any]:
    """GRPOConfig keywords with the checkpointing settings under the names `config_class` prefers.

    The meaning is kept: an explicit new-name value wins over the old name (as it does inside
    transformers), and where neither is given the old field's own default (TRL's True) is passed
    under the new name.
    """
    fields = {f.name: f for f in dataclasses.fields(config_class)}
    out = dict(kwargs)
    for old, new in RENAMED:
        if new not in fields or old not in fields:
            continue  # a transformers before the rename: the old name is the only one
        if out.get(new) is not None:
            out.pop(old, None)
        elif old in out:
            out[new] = out.pop(old)
        elif fields[old].default is not dataclasses.MISSING and fields[old].default is not None:
            out[new] = fields[old].default
    return out


@contextlib.contextmanager
def quiet_model_alias() -> Iterator[None]:
    """Silence only transformers' FutureWarnings for the old checkpointing model aliases inside the block."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=MODEL_ALIAS_MESSAGE, category=FutureWarning)
        yield
