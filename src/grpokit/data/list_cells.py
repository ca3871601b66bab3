"""List columns: a cell that holds several items (the documents a citation may point to).

JSON Lines and Parquet store a list as a list. A CSV cell is text, so a list
column's cell is read as a JSON list (`["doc one", "doc two"]`, what a
spreadsheet exports when the cell was written that way) or, when it does not
start with `[`, as items separated by `data.list_separator` (`|` by default:
`doc one | doc two`). Anything else in a list column is an error naming the line.
"""
from __future__ import annotations

import json
import math
from typing import Any, Callable

from grpokit.errors import ConfigError

DEFAULT_SEPARATOR = "|"


def _problem(where: str, column: str, what: str, separator: str) -> ConfigError:
    return ConfigError(
        f"{where}: column `{column}` is a list column but holds {what}; write the cell as a JSON list "
        f"like [\"first document\", \"second document\"] or as items separated by `{separator}` "
        "(data.list_separator), or take the column out of data.list_columns"
    )


def to_list(value: Any, column: str, separator: str, where: Callable[[], str]) -> list:
    """One cell of a list column as a list; an empty cell is an empty list."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    if not isinstance(value, str):
        raise _problem(where(), column, f"{type(value).__name__} {value!r}"[:80], separator)
    text = value.strip()
    if not text:
        return []
    if text.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _problem(where(), column, f"text that starts like a JSON list but is not one ({exc.msg})", separator) from None
        if not isinstance(items, list) or not all(isinstance(i, (str, int, float)) for i in items):
            raise _problem(where(), column, "a JSON value that is not a list of texts", separator)
        return [str(i) for i in items]
    return [part.strip() for part in text.split(separator) if part.strip()]


def render_documents(items: list) -> str:
    """Numbered documents for a prompt, `[1] text` per line: the numbers a bracket citation cites."""
    lines = []
    for position, item in enumerate(items, 1):
        if isinstance(item, dict):
            label = item.get("id", position)
            title = item.get("title")
            body = item.get("text") or item.get("content") or ""
            text = f"{title}: {body}" if title and body else str(title or body)
        else:
            label, text = position, str(item)
        lines.append(f"[{label}] {' '.join(text.split())}")
    return "\n".join(lines)
