"""Before a run: does every judge a reward set uses answer? (`grpokit doctor` calls this.)"""
from __future__ import annotations

from typing import Any, Iterable

from grpokit.rewards.judge.client import probe
from grpokit.rewards.judge.settings import JudgeSettings


def judges_in(funcs: Iterable[Any]) -> list[JudgeSettings]:
    """The JudgeSettings of every llm_judge among `funcs`, looking through wrappers (tracked, final-answer-only)."""
    found: list[JudgeSettings] = []
    seen: set[int] = set()

    def visit(obj: Any, depth: int = 0) -> None:
        if obj is None or id(obj) in seen or depth > 4:
            return
        seen.add(id(obj))
        if isinstance(obj, JudgeSettings):
            if obj not in found:
                found.append(obj)
            return
        settings = getattr(obj, "settings", None)
        if isinstance(settings, dict):
            for value in settings.values():
                visit(value, depth + 1)
        for attr in ("__wrapped__", "func", "inner", "reward"):
            visit(getattr(obj, attr, None), depth + 1)

    for func in funcs:
        visit(func)
    return found


def unreachable(funcs: Iterable[Any], timeout_s: float = 5.0) -> list[str]:
    """One line per judge endpoint that does not answer GET /models, saying what to do."""
    problems = []
    for settings in judges_in(funcs):
        problem = probe(settings.base_url, timeout_s=timeout_s, api_key=settings.api_key())
        if problem:
            problems.append(f"llm_judge: the judge at {settings.base_url} does not answer ({problem}); start it "
                            f"(`grpokit judge serve` for the local one) or fix params.base_url")
    return problems
