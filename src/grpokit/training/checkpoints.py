"""Crash-safe checkpoints on top of the HF Trainer's checkpoint-N folders.

The Trainer writes checkpoint-N in place, file by file, so a crash mid-save leaves a
folder that looks like the newest checkpoint but is not loadable. grpokit adds a
marker file once the Trainer reports the save finished (`on_save` fires after every
file is written), written atomically (temp file, fsync, rename). Resume trusts only
folders with the marker whose files also check out, and removes the rest, because
the Trainer would otherwise save over a half-written folder and mix two states.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import struct
import tempfile
from pathlib import Path
from typing import Callable

from transformers import TrainerCallback

from grpokit.run_directory import layout

MARKER = layout.CHECKPOINT_DONE
_CKPT = re.compile(r"^checkpoint-(\d+)$")
WEIGHT_FILES = ("adapter_model.safetensors", "model.safetensors", "model.safetensors.index.json")


def atomic_write_text(path: Path, text: str) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _safetensors_ok(path: Path) -> bool:
    """The header parses and the file is as long as the header says (catches truncation)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            (n,) = struct.unpack("<Q", fh.read(8))
            if n > size - 8:
                return False
            header = json.loads(fh.read(n))
        end = max((v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"), default=0)
        return size >= 8 + n + end
    except (OSError, ValueError, KeyError, struct.error):
        return False


def checkpoint_problem(ckpt: Path) -> str | None:
    """Why `ckpt` cannot be resumed from, or None when it is complete."""
    ckpt = Path(ckpt)
    if not (ckpt / MARKER).is_file():
        return "no completion marker (the save was interrupted)"
    try:
        state = json.loads((ckpt / "trainer_state.json").read_text(encoding="utf-8"))
        int(state["global_step"])
    except (OSError, ValueError, KeyError, TypeError):
        return "trainer_state.json is missing or unreadable"
    weights = [ckpt / name for name in WEIGHT_FILES if (ckpt / name).is_file()]
    if not weights:
        return "no model weights"
    for w in weights:
        if w.suffix == ".safetensors" and not _safetensors_ok(w):
            return f"{w.name} is truncated or corrupt"
    return None


def list_checkpoints(root: Path) -> list[Path]:
    root = Path(root)
    if not root.is_dir():
        return []
    found = [p for p in root.iterdir() if p.is_dir() and _CKPT.match(p.name)]
    return sorted(found, key=lambda p: int(_CKPT.match(p.name).group(1)))


def latest_complete(root: Path, *, remove_broken: bool = False, log=print) -> Path | None:
    """The newest complete checkpoint under root; optionally deletes newer broken ones."""
    best = None
    for ckpt in reversed(list_checkpoints(root)):
        problem = checkpoint_problem(ckpt)
        if problem is None:
            best = ckpt
            break
        if remove_broken:
            log(f"removing broken checkpoint {ckpt}: {problem}")
            shutil.rmtree(ckpt, ignore_errors=True)
    return best


def step_of(ckpt: Path) -> int:
    return int(_CKPT.match(Path(ckpt).name).group(1))


class CompleteMarkerCallback(TrainerCallback):
    """Marks checkpoint-N complete once the Trainer has written all of it.

    `states`: file name -> a function returning a JSON-able dict (the health monitor's state), each
    written into the checkpoint before the marker, so a checkpoint resume trusts holds them too.
    """

    def __init__(self, states: dict[str, Callable[[], dict]] | None = None):
        self.states = dict(states or {})

    def on_save(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            ckpt = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if ckpt.is_dir():
                for name, get in self.states.items():
                    atomic_write_text(ckpt / name, json.dumps(get(), default=str))
                files = sorted(p.name for p in ckpt.iterdir() if p.is_file())
                atomic_write_text(ckpt / MARKER, json.dumps({"step": state.global_step, "files": files}))
        return control


class CadenceFromArgs(TrainerCallback):
    """The logging, saving and evaluation cadence of this invocation's arguments, also on a resume.

    transformers restores them from the checkpoint's trainer_state.json and only warns that the arguments
    differ, so a resume with another save_steps would keep the old one; a resume may change them
    (grpokit.training.resume), so they are computed again once the state is loaded.
    """

    def on_train_begin(self, args, state, control, **kwargs):
        state.compute_steps(args, state.max_steps)
        return control
