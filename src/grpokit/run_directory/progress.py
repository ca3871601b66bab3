"""How far a run got, read from its own files: each stage's done marker against the steps it was asked for.

A stage is finished when checkpoints[/STAGE]/final/ holds its done marker (written last, after the
weights) and the marker's step reaches the stage's max_steps. The step matters: a finished run whose
max_steps was raised for a resume keeps its old final/ (with its marker) until the longer run saves a
new one, and until then it is not finished. The run is finished when its last stage is.

Pure Python on the config as config.yaml holds it (a dict): training, the report and the post-mortem
share this one reading.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grpokit.run_directory import layout


def stage_names(config: dict[str, Any]) -> list[str | None]:
    """The stages in order; [None] for a run without `stages:`."""
    stages = config.get("stages") if isinstance(config, dict) else None
    names = [s.get("name") for s in stages or [] if isinstance(s, dict)]
    return [n if isinstance(n, str) else None for n in names] or [None]


def stage_max_steps(config: dict[str, Any], stage: str | None) -> int | None:
    """The steps `stage` was asked for (its own max_steps, its training override, else the run's)."""
    training = config.get("training") if isinstance(config.get("training"), dict) else {}
    value = training.get("max_steps")
    for spec in config.get("stages") or []:
        if isinstance(spec, dict) and spec.get("name") == stage:
            own = spec.get("training") if isinstance(spec.get("training"), dict) else {}
            value = spec.get("max_steps") if spec.get("max_steps") is not None else own.get("max_steps", value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def final_dir(run_dir: str | Path, stage: str | None) -> Path:
    root = Path(run_dir) / layout.CHECKPOINTS
    return (root / stage if stage is not None else root) / layout.FINAL


def done_marker(run_dir: str | Path, stage: str | None) -> dict[str, Any] | None:
    """The stage's done marker ({"step": N, ...}), or None when final/ has none (or it cannot be read)."""
    try:
        data = json.loads((final_dir(run_dir, stage) / layout.STAGE_DONE).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def marker_finishes(marker: dict[str, Any] | None, max_steps: int | None) -> bool:
    """A done marker finishes a stage of `max_steps` when its step reaches them (any marker does when
    the length is not a step count: max_steps -1 trains epochs)."""
    if marker is None:
        return False
    step = marker.get("step")
    if not max_steps or max_steps <= 0 or not isinstance(step, int):
        return True
    return step >= max_steps


def run_finished(run_dir: str | Path, config: dict[str, Any]) -> bool | None:
    """True when the last stage finished; False when it did not; None when no stage left a done marker
    at all (a run trained outside `grpokit train`, or one from before the markers): the caller judges."""
    names = stage_names(config)
    markers = [done_marker(run_dir, name) for name in names]
    if all(m is None for m in markers):
        return None
    return marker_finishes(markers[-1], stage_max_steps(config, names[-1]))
