"""The `search` tool: BM25 over the user's local documents; no network.

`path` is a folder of .txt/.md files (one document each) or a .jsonl file with a
`text` field (and optional `title`). The index is built once per process and
path, through the `bm25s` library (the optional extra `grpokit[tools]`).
"""
from __future__ import annotations

import threading
from pathlib import Path

from grpokit.tools.registry import ToolError, register_tool

_INDEXES: dict[tuple[str, float], "_Index"] = {}
_LOCK = threading.Lock()


def load_documents(path: str | Path) -> list[dict]:
    """[{"title", "text"}] from a folder of .txt/.md files or a .jsonl file; ValueError says what is wrong."""
    p = Path(path).expanduser()
    if p.is_dir():
        files = sorted(f for f in p.rglob("*") if f.suffix in (".txt", ".md") and f.is_file())
        docs = [{"title": str(f.relative_to(p)), "text": f.read_text(encoding="utf-8", errors="replace")} for f in files]
    elif p.is_file() and p.suffix == ".jsonl":
        from grpokit.data.jsonl import read_objects

        docs = []
        for number, row in read_objects(p):  # its JsonlError is a ValueError that names the line
            if not isinstance(row.get("text"), str):
                raise ValueError(f"{p}:{number} needs a string `text` field")
            docs.append({"title": str(row.get("title") or row.get("id") or f"doc {number}"), "text": row["text"]})
    else:
        raise ValueError(f"{p} is neither a folder of .txt/.md files nor a .jsonl file")
    docs = [d for d in docs if d["text"].strip()]
    if not docs:
        raise ValueError(f"{p} holds no documents with text")
    return docs


class _Index:
    def __init__(self, docs: list[dict]):
        from grpokit import optional

        bm25s = optional.require("bm25s", "the search tool")
        self.bm25s = bm25s
        self.docs = docs
        self.retriever = bm25s.BM25()
        self.retriever.index(bm25s.tokenize([d["text"] for d in docs], stopwords="en", show_progress=False),
                             show_progress=False)

    def search(self, query: str, k: int) -> list[tuple[dict, float]]:
        tokens = self.bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not any(len(ids) for ids in tokens.ids):
            return []
        k = min(k, len(self.docs))
        found, scores = self.retriever.retrieve(tokens, k=k, show_progress=False)
        return [(self.docs[int(i)], float(s)) for i, s in zip(found[0], scores[0]) if s > 0]


def index_for(path: str) -> _Index:
    p = Path(path).expanduser().resolve()
    key = (str(p), p.stat().st_mtime if p.exists() else 0.0)
    with _LOCK:
        if key not in _INDEXES:
            _INDEXES[key] = _Index(load_documents(p))
        return _INDEXES[key]


@register_tool("search")
class SearchTool:
    """BM25 search over local documents; `search(query)` is the tool."""

    def __init__(self, path: str = "", top_k: int = 3, max_chars: int = 500):
        if not path:
            raise ValueError("search needs params: {path: <folder of .txt/.md files or a .jsonl file>}")
        if not isinstance(top_k, int) or not 1 <= top_k <= 20:
            raise ValueError("top_k must be an integer from 1 to 20")
        if not isinstance(max_chars, int) or max_chars < 50:
            raise ValueError("max_chars must be an integer of at least 50")
        self.index = index_for(path)  # built (or found) here, so a bad path fails at config time
        self.top_k = top_k
        self.max_chars = max_chars

    def reset(self, **row) -> None:
        pass  # stateless; the index is shared by every episode

    def search(self, query: str) -> str:
        """Search the document collection and return the best-matching passages.

        Args:
            query: Keywords to search for.
        """
        if not isinstance(query, str) or not query.strip():
            raise ToolError("give keywords to search for in the `query` argument")
        hits = self.index.search(query[:1000], self.top_k)
        if not hits:
            return "no documents match"
        return "\n\n".join(f"[{n}] {doc['title']}: {_clip(doc['text'], self.max_chars)}"
                           for n, (doc, _score) in enumerate(hits, start=1))


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rstrip() + " ..."
