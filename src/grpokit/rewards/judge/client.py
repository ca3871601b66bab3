"""Async calls to an OpenAI-compatible chat endpoint: a concurrency limit, retries with backoff, a deadline.

`ask_all(settings, requests)` sends every request (a message list and a JSON schema
for the reply) with at most `settings.concurrency` in flight, retries connection
errors, timeouts, 429 and 5xx answers with exponential backoff, and gives up on
whatever is unfinished when the step's budget runs out. It never raises: each
request comes back as a Reply with the text or the error.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import random
import time
from dataclasses import dataclass

import httpx2 as httpx

from grpokit.rewards.judge.settings import JudgeSettings

_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


@dataclass
class Reply:
    text: str | None = None
    error: str | None = None
    latency_s: float | None = None  # of the request that answered (the last try)


def build_body(settings: JudgeSettings, messages: list[dict], schema: dict, max_tokens: int) -> dict:
    """The chat-completions request body: greedy, short, and (structured) held to the reply's JSON schema."""
    body = {"model": settings.model, "messages": messages, "temperature": 0.0, "max_tokens": max_tokens}
    if settings.structured:
        # json_object with a schema: llama.cpp's server turns it into a grammar, vLLM and hosted
        # APIs at least hold the reply to JSON; parsing accepts plain text too.
        body["response_format"] = {"type": "json_object", "schema": schema}
    return body


def describe_error(exc: BaseException, url: str, elapsed_s: float | None, timeout_s: float | None) -> str:
    """A request's failure in words that say something: the exception's type, how long it waited and where
    to, and its message where it has one. httpx's timeouts carry an empty message, which left
    "first error: ReadTimeout: " and nothing after it."""
    name = type(exc).__name__
    detail = " ".join(str(exc).split())
    if isinstance(exc, httpx.TimeoutException):
        waited = elapsed_s if elapsed_s is not None else timeout_s
        after = f" after {waited:.3g} s" if waited is not None else ""
        limit = f" (timeout_s: {timeout_s:g})" if timeout_s is not None else ""
        text = f"{name}{after} to {url}{limit}" + (f": {detail}" if detail else "")
    else:
        text = f"{name} ({url}): {detail or 'no message from the connection library'}"
    return text[:300]


async def _ask(client: httpx.AsyncClient, settings: JudgeSettings, gate: asyncio.Semaphore, body: dict,
               deadline: float | None) -> Reply:
    error = "not sent"
    async with gate:
        for attempt in range(settings.retries + 1):
            start = time.perf_counter()
            try:
                response = await client.post("/chat/completions", json=body)
                if response.status_code in _RETRY_STATUS:
                    error = f"HTTP {response.status_code}: {response.text[:200]}"
                else:
                    response.raise_for_status()
                    data = response.json()
                    text = data["choices"][0]["message"]["content"] or ""
                    return Reply(text=text, latency_s=time.perf_counter() - start)
            except httpx.HTTPStatusError as exc:  # 4xx other than the retried ones: the request is wrong
                return Reply(error=f"HTTP {exc.response.status_code}: {exc.response.text[:200]}")
            except (httpx.TransportError, httpx.TimeoutException) as exc:
                error = describe_error(exc, settings.base_url.rstrip("/") + "/chat/completions",
                                       time.perf_counter() - start, settings.timeout_s)
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                return Reply(error=f"unreadable answer from the judge: {type(exc).__name__}: {exc}"[:300])
            if attempt == settings.retries:
                break
            pause = settings.backoff_s * (2 ** attempt) * (1 + 0.25 * random.random())
            if deadline is not None and time.monotonic() + pause >= deadline:
                break
            await asyncio.sleep(pause)
    return Reply(error=error)


async def _ask_all(settings: JudgeSettings, bodies: list[dict]) -> list[Reply]:
    headers = {}
    key = settings.api_key()
    if key:
        headers["Authorization"] = f"Bearer {key}"
    budget = settings.budget_s
    deadline = time.monotonic() + budget if budget else None
    gate = asyncio.Semaphore(settings.concurrency)
    limits = httpx.Limits(max_connections=settings.concurrency, max_keepalive_connections=settings.concurrency)
    timeout = httpx.Timeout(settings.timeout_s, connect=min(settings.timeout_s, 5.0))
    async with httpx.AsyncClient(base_url=settings.base_url.rstrip("/"), headers=headers, timeout=timeout,
                                 limits=limits, trust_env=False) as client:
        tasks = [asyncio.ensure_future(_ask(client, settings, gate, body, deadline)) for body in bodies]
        if not tasks:
            return []
        done, pending = await asyncio.wait(tasks, timeout=budget)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
    out = []
    for task in tasks:
        if task in pending:
            out.append(Reply(error=f"budget: the step's {budget:g}s for judging ran out (budget_s)"))
        elif task.exception() is not None:
            out.append(Reply(error=f"{type(task.exception()).__name__}: {task.exception()}"[:300]))
        else:
            out.append(task.result())
    return out


def ask_all(settings: JudgeSettings, bodies: list[dict]) -> list[Reply]:
    """Run the requests to completion (or to the budget) from synchronous code, even inside a running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_ask_all(settings, bodies))
    # Called from a thread that runs an event loop (an async trainer): run ours on a helper thread.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, _ask_all(settings, bodies)).result()


def probe(base_url: str, timeout_s: float = 5.0, api_key: str | None = None) -> str | None:
    """None when an OpenAI-compatible endpoint answers GET {base_url}/models, else what went wrong."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        response = httpx.get(base_url.rstrip("/") + "/models", timeout=timeout_s, headers=headers, trust_env=False)
    except httpx.HTTPError as exc:
        return describe_error(exc, base_url.rstrip("/") + "/models", None, timeout_s)
    if response.status_code >= 400:
        return f"HTTP {response.status_code} from {base_url}/models"
    return None
