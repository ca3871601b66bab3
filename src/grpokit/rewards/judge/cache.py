"""An in-process LRU cache of judge verdicts, keyed by a hash of what was judged.

The key covers the rubric, scale, mode, model and endpoint as well as the prompt,
reference and completion(s), so changing any of them asks the judge again. Only
real verdicts are stored: a failed call is retried on the next step, not
remembered as a failure. The cache is never pickled; a copy of the reward in
another process starts with an empty one.
"""
from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any


def cache_key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, default=str).encode("utf-8")).hexdigest()


class VerdictCache:
    def __init__(self, size: int):
        self.size = size
        self._data: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self._lock:
            if key not in self._data:
                return None
            self._data.move_to_end(key)
            return self._data[key]

    def put(self, key: str, value: Any) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)

    def __getstate__(self) -> dict:
        return {"size": self.size}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["size"])
