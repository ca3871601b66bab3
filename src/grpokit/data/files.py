"""Local data files: a cheap look at their columns, and loading them.

`columns_of` reads only the header (CSV), the first record (JSON Lines, JSON)
or the schema (Parquet), so config validation stays instant on large files.
"""
from __future__ import annotations

import csv
import json
import logging
from pathlib import Path

from grpokit.data.file_problems import find_problem
from grpokit.errors import ConfigError


def _check_path(path: str) -> Path:
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"data file not found: {p} (looked from {Path.cwd()}); fix data.source or create the file")
    if p.is_dir():
        raise ConfigError(f"data.source {p} is a directory: point it at a .csv, .jsonl, .json or .parquet file inside it")
    return p


def columns_of(path: str, fmt: str) -> list[str]:
    """Column names of a local data file, read from its first bytes."""
    p = _check_path(path)
    try:
        if fmt == "csv":
            return _csv_columns(p)
        if fmt == "json":
            return _json_columns(p)
        import pyarrow.parquet as pq

        return list(pq.read_schema(p).names)
    except ConfigError:
        raise
    except UnicodeDecodeError:
        raise ConfigError(find_problem(p, fmt) or f"cannot read {p}: it is not UTF-8 text; re-save it as UTF-8") from None
    except PermissionError:
        raise ConfigError(f"cannot read {p}: permission denied") from None
    except Exception as exc:  # pyarrow and json raise many types; all mean "unreadable"
        raise ConfigError(f"cannot read {p} as {fmt}: {type(exc).__name__}: {exc}") from None


def _csv_columns(p: Path) -> list[str]:
    # utf-8-sig: Excel's "CSV UTF-8" starts with a byte-order mark, which would stick to the first column's name.
    with p.open(newline="", encoding="utf-8-sig") as f:
        header = next(csv.reader(f), None)
    if not header or not any(h.strip() for h in header):
        raise ConfigError(f"cannot read {p}: the CSV file is empty or has no header row; its first line must name the columns")
    return header


def _json_columns(p: Path) -> list[str]:
    with p.open(encoding="utf-8-sig") as f:
        line = ""
        for line in f:
            if line.strip():
                break
        if not line.strip():
            raise ConfigError(f"cannot read {p}: the file is empty")
        if line.lstrip().startswith("["):
            # A JSON array of records: needs the whole document to parse.
            f.seek(0)
            records = json.load(f)
            first = records[0] if isinstance(records, list) and records else None
        else:
            try:
                first = json.loads(line)
            except json.JSONDecodeError:
                raise ConfigError(
                    f"cannot read {p}: its first line is not a JSON object; write one record per line (JSON Lines) or a JSON array of records"
                ) from None
    if not isinstance(first, dict):
        raise ConfigError(f"cannot read {p}: records must be JSON objects like {{\"question\": ..., \"answer\": ...}}")
    return list(first)


def load_file(path: str, fmt: str):
    """The whole file as a datasets.Dataset (memory-mapped through the datasets cache)."""
    import datasets

    p = _check_path(path)
    # The reader logs its own error (with pandas' or pyarrow's wording) before raising; ours replaces it.
    library_log = logging.getLogger("datasets")
    level = library_log.level
    library_log.setLevel(logging.CRITICAL)
    try:
        # A CSV saved with a byte-order mark (Excel's "CSV UTF-8") reads like any other.
        options = {"encoding": "utf-8-sig"} if fmt == "csv" else {}
        return datasets.load_dataset(fmt, data_files=str(p.resolve()), split="train", **options)
    except Exception as exc:
        cause = exc.__cause__ or exc  # datasets wraps the reader's own error in DatasetGenerationError
        problem = find_problem(p, fmt)
        raise ConfigError(problem or f"cannot load {p} as {fmt}: {type(cause).__name__}: {cause}") from None
    finally:
        library_log.setLevel(level)
