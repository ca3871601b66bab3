"""Reading a JSON Lines file people wrote by hand: one object per line, errors that name the line."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

_JSON_TYPES = {list: "a list", str: "text", bool: "true/false", int: "a number", float: "a number"}


class JsonlError(ValueError):
    """A line that is not a JSON object; the message is `path:line: what is wrong; what to do`."""


def read_objects(path: str | Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line, read as bytes so a bad byte names its line."""
    path = Path(path)
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")  # a byte-order mark opens some files
            except UnicodeDecodeError as exc:
                raise JsonlError(f"{path}:{number}: not UTF-8 text ({exc.reason}); re-save the file as UTF-8") from None
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise JsonlError(f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno}); fix or delete "
                                 "that line (JSON Lines: one object per line)") from None
            except RecursionError:
                raise JsonlError(f"{path}:{number}: nested too deeply to read; write one flat JSON object per line") from None
            if not isinstance(record, dict):
                raise JsonlError(f"{path}:{number}: {_JSON_TYPES.get(type(record), 'null')} where a JSON object "
                                 "belongs; write one JSON object per line")
            yield number, record
