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
