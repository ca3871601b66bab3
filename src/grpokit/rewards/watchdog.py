"""The reward watchdog: every reward call returns, in time, or is given up on.

A reward is user code as often as ours (a plugin, a judge behind a network, a sandbox):
it can hang, raise, or return the wrong number of scores. `call_reward` runs one call on
a fresh daemon thread and waits at most `timeout` seconds. A call that does not return in
time is abandoned: its thread keeps running (Python cannot kill a thread) but nobody waits
for it, and since it is a daemon it cannot keep the process alive at exit. A thread rather
than a worker process, because a process would have to pickle the reward, its closures and
every column of the batch on each call, and a plugin defined in a notebook cannot be
pickled at all; the thread costs one thread start per call (benchmarks/reward_watchdog.py
measures it). The price of abandoning: a hung call still holds whatever it held (a lock,
a socket), so a reward that hangs once may hang again on the next batch; each such call
is one more counted timeout, never a stuck step.

Async rewards (a coroutine function) are run to completion on the worker thread's own
event loop, so the caller always gets a list back. What is per thread in the caller and
a reward may depend on travels with the call: the context variables, and torch's grad
mode (TRL scores inside no_grad; a reward running a model must not build a graph).
"""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import sys
import threading
from typing import Any, Callable, Sequence

# Long enough for a slow judge model scoring a whole batch on a CPU, short enough that a hung
# reward costs minutes, not the run. Per reward: `rewards: [{name: ..., timeout: 30}]`.
DEFAULT_TIMEOUT = 600.0


class RewardTimeout(Exception):
    """A reward call did not return within its timeout."""


def _run(func: Callable, completions: Sequence[Any], columns: dict) -> Any:
    out = func(completions, **columns)
    if inspect.isawaitable(out):
        out = asyncio.run(_awaited(out))
    return out


async def _awaited(awaitable):
    return await awaitable


def call_with_timeout(func: Callable, completions: Sequence[Any], columns: dict, timeout: float | None) -> Any:
    """`func(completions, **columns)`; raises RewardTimeout after `timeout` seconds (None: wait forever,
    on the calling thread). Whatever the call raises is raised here."""
    if timeout is None:
        return _run(func, completions, columns)
    box: dict[str, Any] = {}
    done = threading.Event()
    context = contextvars.copy_context()
    torch = sys.modules.get("torch")  # looked up, not imported: the reward library runs without torch
    grad = torch.is_grad_enabled() if torch is not None else None

    def work() -> None:
        try:
            with torch.set_grad_enabled(grad) if grad is not None else contextlib.nullcontext():
                box["value"] = context.run(_run, func, completions, columns)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            box["error"] = exc
        finally:
            done.set()

    name = getattr(func, "__name__", None) or type(func).__name__
    threading.Thread(target=work, name=f"grpokit-reward-{name}", daemon=True).start()
    if not done.wait(timeout):
        raise RewardTimeout(f"no scores within {timeout:g} s; the call was abandoned and its batch scored None "
                            f"(raise this reward's `timeout:` if it is only slow)")
    if "error" in box:
        raise box["error"]
    return box["value"]
