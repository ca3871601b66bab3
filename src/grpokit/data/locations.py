"""Where a loaded row came from in the user's file, so every data error names file and line.

The data library numbers rows from 0 after dropping blank lines, so "row 8" is
neither the 8th nor the 9th line a user sees in an editor. Only when an error is
raised, these scans read the file again with the standard library and map a row
back to the line its record starts on (CSV, JSON Lines); a JSON array or a
Parquet file has no useful lines and gets its record number instead.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from grpokit.data.jsonl import JsonlError, read_objects

BOM = "\ufeff"


def starts_with_bom(path: str | Path) -> bool:
    """True for a file saved with a UTF-8 byte-order mark (Excel's "CSV UTF-8", Notepad)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(3) == BOM.encode("utf-8")
    except OSError:
        return False


def _csv_record_lines(path: Path) -> list[int]:
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    reader = csv.reader(io.StringIO(text, newline=""))
    lines: list[int] = []
    if next(reader, None) is None:
        return lines
    end_of_previous = reader.line_num
    for row in reader:
        if row:  # a blank line is no record, for the data library as for us
            lines.append(end_of_previous + 1)
        end_of_previous = reader.line_num
    return lines


def _jsonl_record_lines(path: Path) -> list[int]:
    try:
        return [number for number, _ in read_objects(path)]
    except JsonlError:
        return []


def record_lines(path: str | Path, fmt: str | None) -> list[int]:
    """The 1-based line each record of a CSV or JSON Lines file starts on; empty when lines mean nothing."""
    path = Path(path)
    try:
        if fmt == "csv":
            return _csv_record_lines(path)
        if fmt == "json":
            with path.open("rb") as fh:
                if fh.read(4096).lstrip(BOM.encode("utf-8")).lstrip().startswith(b"["):
                    return []
            return _jsonl_record_lines(path)
    except OSError:
        return []
    return []


class RowLocator:
    """`locate(row)` -> "data.csv:9 (row 8)": the file, the line, and the 0-based row the data library uses.

    The scan runs once, on the first error, never on the happy path.
    """

    def __init__(self, path: str | Path | None, fmt: str | None, label: str | None = None):
        self.path = None if path is None else Path(path)
        self.fmt = fmt
        self.label = label  # how to name a source that is not a file (a hub data set, a synthetic task)
        self._lines: list[int] | None = None

    def __call__(self, row: int) -> str:
        if self.path is None:
            return f"{self.label}: row {row}" if self.label else f"row {row}"
        if self._lines is None:
            self._lines = record_lines(self.path, self.fmt)
        if row < len(self._lines):
            return f"{self.path}:{self._lines[row]} (row {row})"
        return f"{self.path}: record {row + 1}"
