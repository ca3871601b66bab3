"""Reading and appending the run directory's JSON-lines files (metrics, completions, alerts)."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any


def read_jsonl(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Records from a JSON-lines file and how many lines could not be read.

    A run still writing can leave a partial last line; it is counted, not fatal.
    NaN/Infinity (as Python's json writes them) are accepted. A missing file is no records.
    """
    path = Path(path)
    if not path.is_file():
        return [], 0
    records, bad = [], 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, RecursionError):  # RecursionError: nested thousands deep
                bad += 1
                continue
            if isinstance(record, dict):
                records.append(record)
            else:
                bad += 1
    return records, bad


def read_records(path: Path) -> list[dict[str, Any]]:
    """The readable records of a JSON-lines file (see read_jsonl)."""
    return read_jsonl(path)[0]


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "item"):  # a 0-d tensor or numpy scalar
        try:
            return _jsonable(value.item())
        except (ValueError, RuntimeError):
            pass
    return str(value)


def append_jsonl(path: Path, record: dict) -> None:
    """Append one record as one line; non-finite numbers become null, other objects their text."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({k: _jsonable(v) for k, v in record.items()}, ensure_ascii=False) + "\n")


def _kind(record: dict[str, Any]) -> str | None:
    """Which step series a metrics record belongs to: a training log, a held-out evaluation, or neither."""
    keys = record.keys()
    if any(k in keys for k in ("loss", "reward", "reward_std", "grad_norm")) and "train_runtime" not in keys:
        return "train"
    if any(k.startswith("eval/") for k in keys):
        return "held_out"
    return None


def without_redone(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """metrics.jsonl records as the run's history: where a stage's steps start over (a resume from a
    checkpoint redoes the steps logged after it, and a crash before the resume trimmed them leaves both),
    the later records replace the earlier ones from that step on.

    A record starts a stage's steps over when its step is below the highest step that stage logged
    already, or equals it with a record of the same kind (training log or held-out evaluation) there.
    """
    kept: list[dict[str, Any]] = []
    seen: dict[Any, dict[str, Any]] = {}  # stage -> {"top": highest step, "kinds": kinds logged at it}
    for record in records:
        kind = _kind(record)
        step = record.get("step")
        if kind is None or not isinstance(step, (int, float)) or isinstance(step, bool):
            kept.append(record)
            continue
        stage = record.get("stage")
        mark = seen.get(stage)
        if mark is not None and (step < mark["top"] or (step == mark["top"] and kind in mark["kinds"])):
            kept = [r for r in kept if not (r.get("stage") == stage and isinstance(r.get("step"), (int, float))
                                            and r["step"] >= step)]
            mark = None
        if mark is None or step > mark["top"]:
            mark = {"top": step, "kinds": set()}
        mark["kinds"].add(kind)
        seen[stage] = mark
        kept.append(record)
    return kept
