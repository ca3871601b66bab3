"""The llm_judge batch function: group, look up the cache, ask the judge, parse, record.

Pointwise mode asks once per completion; group mode asks once per prompt with all
of that prompt's completions side by side (split into chunks of `max_group`), so
the judge grades them relative to each other, as GRPO's advantages are. Grades are
divided by `scale`, giving scores in [0, 1]. A completion the judge did not grade
(unreachable, timed out, out of budget, an unreadable reply) scores None, is
counted in judge/<name>/failure_frac and logged: never a 0 that looks like a bad answer.

A completion that addresses the grader (injection.py) is not sent: it scores 0.0,
the lowest grade, and is counted in judge/<name>/addressed_frac.
"""
from __future__ import annotations

import logging
import time

from grpokit.completions import prompt_text, texts
from grpokit.rewards.judge import client, injection, rubrics, stats
from grpokit.rewards.judge.cache import VerdictCache, cache_key
from grpokit.rewards.judge.settings import JudgeSettings

log = logging.getLogger(__name__)
_POINTWISE_TOKENS = 16   # {"score": 10} and some slack
_PER_GRADE_TOKENS = 6    # "10, " per completion in a group reply


def _column(kwargs: dict, name: str, size: int) -> list:
    values = kwargs.get(name)
    if values is None:
        return [None] * size
    values = list(values)
    if len(values) != size:  # a data-pipeline bug, not model output: be loud
        raise ValueError(f"column {name!r} has {len(values)} rows for {size} completions; align it")
    return values


def _references(kwargs: dict, size: int, settings: JudgeSettings) -> list[str | None]:
    if not settings.use_reference:
        return [None] * size
    column = "reference" if kwargs.get("reference") is not None else "answer"
    return [None if v is None or v == "" else _sendable(str(v)) for v in _column(kwargs, column, size)]


def _sendable(text: str) -> str:
    # A model (or a data set) can hold lone surrogates, which no UTF-8 request body or cache key can carry.
    return text.encode("utf-8", "replace").decode("utf-8")


def _units(prompts: list[str], refs: list[str | None], settings: JudgeSettings, judged: list[int]) -> list[list[int]]:
    """Row indices judged together, of `judged`: one row each (pointwise) or a prompt's group in chunks (group)."""
    if settings.mode == "pointwise":
        return [[i] for i in judged]
    groups: dict[tuple, list[int]] = {}
    for i in judged:
        groups.setdefault((prompts[i], refs[i]), []).append(i)
    units = []
    for rows in groups.values():
        units.extend(rows[j:j + settings.max_group] for j in range(0, len(rows), settings.max_group))
    return units


def judge_batch(completions, kwargs: dict, settings: JudgeSettings, cache: VerdictCache, label: str
                ) -> list[float | None]:
    started = time.perf_counter()
    items = [_sendable(t) for t in texts(completions)]
    size = len(items)
    prompts = [_sendable(prompt_text(p)) if p is not None else "" for p in _column(kwargs, "prompts", size)]
    refs = _references(kwargs, size, settings)
    rubric = settings.rubric_text()
    scores: list[float | None] = [None] * size
    # The fixed rule for completions that talk to the grader: the lowest grade, without asking.
    addressed = [i for i, text in enumerate(items) if injection.addresses_grader(text)]
    for i in addressed:
        scores[i] = 0.0
    judged = [i for i in range(size) if scores[i] is None]
    asked: list[tuple[list[int], str, dict]] = []
    cached = 0
    for rows in _units(prompts, refs, settings, judged):
        prompt, ref = prompts[rows[0]], refs[rows[0]]
        shown = [items[i] for i in rows]
        key = cache_key(settings.mode, settings.model, settings.base_url, rubric, settings.scale, prompt, ref, shown)
        verdict = cache.get(key)
        if verdict is not None:
            cached += len(rows)
            for i, grade in zip(rows, verdict):
                scores[i] = grade
            continue
        if settings.mode == "pointwise":
            messages = rubrics.pointwise_messages(rubric, settings.scale, prompt, shown[0], ref, settings.max_chars)
            body = client.build_body(settings, messages, rubrics.pointwise_schema(settings.scale), _POINTWISE_TOKENS)
        else:
            messages = rubrics.group_messages(rubric, settings.scale, prompt, shown, ref, settings.max_chars)
            body = client.build_body(settings, messages, rubrics.group_schema(settings.scale, len(rows)),
                                     12 + _PER_GRADE_TOKENS * len(rows))
        asked.append((rows, key, body))
    replies = client.ask_all(settings, [body for _, _, body in asked]) if asked else []
    failed, first_error, latencies = 0, None, []
    for (rows, key, _), reply in zip(asked, replies):
        if reply.latency_s is not None:
            latencies.append(reply.latency_s)
        grades, error = _grades(reply, settings, len(rows))
        if error is None:
            cache.put(key, grades)
            for i, grade in zip(rows, grades):
                scores[i] = grade
        else:
            failed += len(rows)
            first_error = first_error or error
    stats.record(label, completions=size, failed=failed, cached=cached, seconds=time.perf_counter() - started,
                 latencies=latencies, first_error=first_error, addressed=len(addressed))
    if failed:
        log.warning("%s: the judge left %d of %d completions unscored (None); first error: %s",
                    label, failed, size, first_error)
    return scores


def _grades(reply: client.Reply, settings: JudgeSettings, size: int) -> tuple[list[float] | None, str | None]:
    if reply.error is not None:
        return None, reply.error
    text = reply.text or ""
    if settings.mode == "pointwise" and size == 1:
        grade = rubrics.parse_score(text, settings.scale)
        values = None if grade is None else [grade]
    else:
        values = rubrics.parse_scores(text, settings.scale, size)
    if values is None or any(v is None for v in values):
        return None, f"the judge's reply held no valid grade: {text[:120]!r}"
    return [v / settings.scale for v in values], None

