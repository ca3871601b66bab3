"""The llm_judge batch function: views, group, look up the cache, ask the judge, parse, record.

Each completion is graded as written and, unless answer_check is off, as its
answer alone (views.py: the committed answer, hidden channels stripped, cut to
the reference's size); the score is the lower of the two grades, so text
beyond the answer can lower a score but never raise it. Identical texts of one
prompt and reference are asked once per batch, whichever completion or view
they come from: "Berlin." and the answer view of "Berlin. <a note>" are the
same request, graded once. Completions of one step that commit to the same
answer share that request, so the answer check costs one extra request per
distinct answer, none where the answer view is the completion itself.

Pointwise mode asks once per text; group mode asks once per prompt with all
of that prompt's texts side by side (split into chunks of `max_group`), so
the judge grades them relative to each other, as GRPO's advantages are. Grades are
divided by `scale`, giving scores in [0, 1]. A completion the judge did not grade
(unreachable, timed out, out of budget, an unreadable reply) scores None, is counted in
judge/<name>/failure_frac and logged: never a 0 that looks like a bad answer. Where only the
response went ungraded and its answer view was graded, the answer's grade is paid: text that
garbles the judge's reply cannot buy a None either.

Two fixed rules come first, without asking: a completion that addresses the
grader (injection.py) scores 0.0, the lowest grade, counted in
judge/<name>/addressed_frac; a completion whose answer view is empty (nothing
but comments, markup or invisible characters) scores 0.0 as no answer.
judge/<name>/answer_lower_frac counts completions paid their answer view's
lower grade: the rest of the text had raised the judge's grade.
"""
from __future__ import annotations

import logging
import time

from grpokit.completions import prompt_text, texts
from grpokit.rewards.judge import client, injection, rubrics, stats, views
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


def _views(items: list[str], refs: list[str | None], rows: list[int], settings: JudgeSettings) -> dict[int, list[str]]:
    """The texts each row is graded by: the completion, and its answer view where that differs."""
    out = {}
    for i in rows:
        shown = [items[i]]
        if settings.answer_check:
            committed = settings.answer_format.marked(items[i])
            view = views.answer_view(items[i] if committed is None else committed, refs[i], settings.max_chars)
            if view.split() != items[i].split():  # a view that only respaces the text would cost a request
                shown.append(view)
        out[i] = shown
    return out


def _units(wanted: dict[tuple, list[str]], settings: JudgeSettings) -> list[tuple[str, str | None, list[str]]]:
    """(prompt, reference, texts) judged together: one text each (pointwise) or a prompt's texts in chunks (group)."""
    units = []
    for (prompt, ref), shown in wanted.items():
        step = 1 if settings.mode == "pointwise" else settings.max_group
        units.extend((prompt, ref, shown[j:j + step]) for j in range(0, len(shown), step))
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
    # The fixed rules: a completion that talks to the grader, or one with no answer in it, gets the lowest
    # grade without asking.
    addressed = [i for i, text in enumerate(items) if injection.addresses_grader(text, settings.max_chars)]
    for i in addressed:
        scores[i] = 0.0
    shown_by_row = _views(items, refs, [i for i in range(size) if scores[i] is None], settings)
    for i, shown in list(shown_by_row.items()):
        if not shown[-1].strip():
            scores[i] = 0.0
            del shown_by_row[i]
    wanted: dict[tuple, list[str]] = {}
    for i, shown in shown_by_row.items():
        texts_of = wanted.setdefault((prompts[i], refs[i]), [])
        texts_of.extend(t for t in shown if t not in texts_of)
    grades: dict[tuple, float] = {}
    from_cache: set[tuple] = set()
    asked: list[tuple[str, str | None, list[str], str, dict]] = []
    for prompt, ref, shown in _units(wanted, settings):
        key = cache_key(settings.mode, settings.model, settings.base_url, rubric, settings.scale, prompt, ref, shown)
        verdict = cache.get(key)
        if verdict is not None:
            for text, grade in zip(shown, verdict):
                grades[(prompt, ref, text)] = grade
                from_cache.add((prompt, ref, text))
            continue
        if settings.mode == "pointwise":
            messages = rubrics.pointwise_messages(rubric, settings.scale, prompt, shown[0], ref, settings.max_chars)
            body = client.build_body(settings, messages, rubrics.pointwise_schema(settings.scale), _POINTWISE_TOKENS)
        else:
            messages = rubrics.group_messages(rubric, settings.scale, prompt, shown, ref, settings.max_chars)
            body = client.build_body(settings, messages, rubrics.group_schema(settings.scale, len(shown)),
                                     12 + _PER_GRADE_TOKENS * len(shown))
        asked.append((prompt, ref, shown, key, body))
    replies = client.ask_all(settings, [body for *_, body in asked]) if asked else []
    first_error, latencies = None, []
    for (prompt, ref, shown, key, _), reply in zip(asked, replies):
        if reply.latency_s is not None:
            latencies.append(reply.latency_s)
        verdict, error = _grades(reply, settings, len(shown))
        if error is None:
            cache.put(key, verdict)
            for text, grade in zip(shown, verdict):
                grades[(prompt, ref, text)] = grade
        else:
            first_error = first_error or error
    failed = cached = lowered = 0
    for i, shown in shown_by_row.items():
        keys = [(prompts[i], refs[i], text) for text in shown]
        if keys[-1] not in grades:  # the answer (the completion itself, or its view) went ungraded
            failed += 1
            continue
        # The lower grade: text beyond the answer can cost the completion, never pay it. A response whose
        # own grade the judge's reply did not hold (text beyond the answer can garble a reply) is paid its
        # answer's grade, no more: making the response unscorable must not pay either.
        scores[i] = min(grades[k] for k in keys if k in grades)
        cached += all(k in from_cache for k in keys)
        lowered += len(keys) > 1 and keys[0] in grades and grades[keys[1]] < grades[keys[0]]
    stats.record(label, completions=size, failed=failed, cached=cached, seconds=time.perf_counter() - started,
                 latencies=latencies, first_error=first_error, addressed=len(addressed), lowered=lowered)
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

