"""Rows of a data set -> TRL's columns: `prompt`, `answer` and the reward columns."""
from __future__ import annotations

import json
import math
import re
from typing import Any, Callable

from grpokit.data.config import list_columns_of
from grpokit.data.list_cells import render_documents, to_list
from grpokit.errors import ConfigError

# GSM8K worked solutions end with "#### 72"; thousands separators appear in a
# few (e.g. "#### 67,500"), and a gold answer must compare as a number.
_THOUSANDS = re.compile(r"^-?\d{1,3}(,\d{3})+(\.\d+)?$")


def reduce_answer(value: Any) -> str | None:
    """A gold answer as text: GSM8K's `... #### 72` becomes `72`; missing, blank or NaN becomes None."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # CSV readers turn 72 into 72.0
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    text = str(value)
    if "####" in text:
        text = text.rsplit("####", 1)[1].strip()
        if _THOUSANDS.match(text):
            text = text.replace(",", "")
    # Blank text and "nan" (a spreadsheet's empty cell, exported) are no answer to compare against.
    if not text.strip() or text.strip().lower() == "nan":
        return None
    return text


def build_prompt(question: Any, system_prompt: str | None, conversational: bool, row: int | str,
                 documents: list | None = None) -> str | list[dict]:
    """The prompt TRL sees: chat messages [system?, user], or one string.

    `row` names the row in errors: an index, or a location like "data.csv:9 (row 8)".
    `documents` (data.context_column's items) are shown above the question as `[1] ...` lines.
    """
    where = row if isinstance(row, str) else f"row {row}"
    if isinstance(question, list):
        # Already chat messages: keep them; add the system prompt unless one is there.
        if not all(isinstance(m, dict) and "role" in m and "content" in m for m in question):
            raise ConfigError(f"{where}: the prompt column holds a list that is not chat messages ({{role, content}} dicts)")
        if not conversational:
            raise ConfigError(f"{where}: the prompt column holds chat messages; set data.conversational: true")
        messages = [{"role": m["role"], "content": m["content"]} for m in question]
        if system_prompt and not any(m["role"] == "system" for m in messages):
            messages.insert(0, {"role": "system", "content": system_prompt})
        return messages
    if question is None or (isinstance(question, float) and math.isnan(question)) or (
            isinstance(question, str) and not question.strip()):
        raise ConfigError(f"{where}: the prompt column is empty; fill it in or delete that row (or fix data.prompt_column)")
    text = str(question)
    if documents:
        text = f"Documents:\n{render_documents(documents)}\n\nQuestion: {text}"
    if conversational:
        return ([{"role": "system", "content": system_prompt}] if system_prompt else []) + [{"role": "user", "content": text}]
    return f"{system_prompt}\n\n{text}" if system_prompt else text


def to_training_rows(ds, cfg, passthrough: tuple[str, ...] = (), locate: Callable[[int], str] | None = None):
    """Map a raw data set onto `prompt`, `answer` and the configured reward columns.

    `locate(row)` names a row's file and line in errors (grpokit.data.locations.RowLocator).
    """
    locate = locate or (lambda row: f"row {row}")
    extra = {col: col for col in passthrough if col not in cfg.columns}
    extra.update(cfg.columns)
    lists = set(list_columns_of(cfg))

    def as_list(column: str, value: Any, row: int) -> list:
        return to_list(value, column, cfg.list_separator, lambda: locate(row))

    def convert(batch: dict, indices: list[int]) -> dict:
        questions = batch[cfg.prompt_column]
        documents = ([as_list(cfg.context_column, v, i) for v, i in zip(batch[cfg.context_column], indices)]
                     if cfg.context_column else [None] * len(indices))
        out: dict[str, list] = {
            "prompt": [build_prompt(q, cfg.system_prompt, cfg.conversational, i, d)
                       for q, i, d in zip(questions, indices, documents)]
        }
        if cfg.answer_column:
            out["answer"] = [reduce_answer(a) for a in batch[cfg.answer_column]]
        for source, target in extra.items():
            values = batch[source]
            out[target] = [as_list(source, v, i) for v, i in zip(values, indices)] if source in lists else values
        return out

    try:
        return ds.map(
            convert,
            batched=True,
            with_indices=True,
            remove_columns=ds.column_names,
            features=_features(ds, cfg, extra, lists),
            desc="Building prompts",
        )
    except ConfigError as exc:
        raise ConfigError(_located(str(exc), locate)) from None


_ROW = re.compile(r"^row (\d+): ")


def _located(message: str, locate: Callable[[int], str]) -> str:
    """A "row N: ..." message from a check that knew only the index, with the file and line in front."""
    match = _ROW.match(message)
    return f"{locate(int(match.group(1)))}: {message[match.end():]}" if match else message


def _features(ds, cfg, extra: dict[str, str], lists: set[str] = frozenset()):
    # Declared, not inferred: an integer `answer` column would otherwise keep its
    # int type, and an all-empty batch would infer `null` columns.
    from datasets import Features, List, Value

    message = {"role": Value("string"), "content": Value("string")}
    features = {"prompt": List(message) if cfg.conversational else Value("string")}
    if cfg.answer_column:
        features["answer"] = Value("string")
    for source, target in extra.items():
        kept = ds.features[source]
        # A CSV list cell arrives as text and leaves as a list of texts; a real list keeps its type.
        features[target] = List(Value("string")) if source in lists and isinstance(kept, Value) else kept
    return Features(features)
