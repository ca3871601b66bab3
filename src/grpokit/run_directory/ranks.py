"""Which process of a multi-process launch this is, so files and console lines come from one of them.

Before the Trainer starts, torch.distributed is not set up yet, but the launchers
(torchrun, `accelerate launch`, deepspeed) have already exported RANK; after it starts,
torch.distributed is the authority. A plain `python` run has neither and is rank 0.
"""
from __future__ import annotations

import os
import sys


def rank() -> int:
    """This process's global rank (0 outside a distributed launch)."""
    # Looked up in sys.modules rather than imported: a process that never imported torch
    # cannot have a process group, and `grpokit --help` must stay free of the torch import.
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        return int(dist.get_rank())
    try:
        return int(os.environ.get("RANK", "0") or 0)
    except ValueError:
        return 0


def is_main_process() -> bool:
    return rank() == 0
