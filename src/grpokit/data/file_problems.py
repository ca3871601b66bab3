"""Find the line of a data file that the data library could not load, and say how to fix it.

`datasets` reports a broken JSON Lines file as "An error occurred while
generating the dataset" and a header-only CSV as "corresponds to no data". Only
when loading fails, these scans read the file again with the standard library
to name the line and what to change.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from grpokit.data.jsonl import JsonlError, read_objects


def find_problem(path: Path, fmt: str) -> str | None:
    """A message naming the file, the line and the fix, or None when the scan finds nothing wrong."""
    if fmt == "csv":
        return _csv_problem(path)
    if fmt == "json" and not _is_json_array(path):
        return _jsonl_problem(path)
    return None


def _utf8_lines(path: Path):
    """(line number, text) pairs; a line that is not UTF-8 stops the scan with a message instead."""
    with path.open("rb") as f:
        for number, raw in enumerate(f, 1):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _Found(f"{path}:{number}: not UTF-8 text ({exc.reason}); re-save the file as UTF-8") from None


class _Found(Exception):
    pass


def _is_json_array(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4096).lstrip().startswith(b"[")


def _csv_problem(path: Path) -> str | None:
    try:
        text = "".join(line for _, line in _utf8_lines(path))
    except _Found as found:
        return str(found)
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if not header:
        return f"{path}: the file is empty; its first line must name the columns, e.g. question,answer"
    rows = 0
    for row in reader:
        if not row:
            continue
        rows += 1
        if len(row) != len(header):
            return (f"{path}:{reader.line_num}: {len(row)} fields where the header has {len(header)}; "
                    "quote values that hold commas (\"a, b\") or fix that line")
    if rows == 0:
        return f"{path}: has a header line but no rows; add one row per prompt below the header"
    return None


def _jsonl_problem(path: Path) -> str | None:
    try:
        records = sum(1 for _ in read_objects(path))
    except JsonlError as exc:
        return str(exc)
    if records == 0:
        return f"{path}: has no records; write one JSON object per line"
    return None
