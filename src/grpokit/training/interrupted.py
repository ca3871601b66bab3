"""What to tell a user who pressed Ctrl-C: where the last complete checkpoint is, and the command to resume."""
from __future__ import annotations

import shlex

from grpokit.config import profiles
from grpokit.training import checkpoints as ckpts


def last_checkpoint(cfg):
    """(stage name or None, checkpoint folder) of the newest complete checkpoint over the stages, or None."""
    found = None
    for stage in cfg.stages or [None]:
        ckpt = ckpts.latest_complete(profiles.checkpoint_root(cfg, stage))
        if ckpt is not None:
            found = (stage.name if stage is not None and cfg.stages else None, ckpt)
    return found


def interrupted_message(cfg, config_path: str, overrides: list[str]) -> str:
    """Two lines: the checkpoint a resume starts from (or that none is complete yet), and the command."""
    command = " ".join(["grpokit", "train", shlex.quote(str(config_path)),
                        *(f"--set {shlex.quote(o)}" for o in overrides), "--resume"])
    found = last_checkpoint(cfg)
    if found is None:
        return (f"interrupted before the first complete checkpoint (one is saved every save_steps steps); "
                f"--resume starts again from step 0:\n  {command}")
    stage, ckpt = found
    where = f"stage {stage}, " if stage else ""
    return (f"interrupted; the last complete checkpoint is {ckpt} ({where}step {ckpts.step_of(ckpt)}). "
            f"Resume from it with:\n  {command}")
