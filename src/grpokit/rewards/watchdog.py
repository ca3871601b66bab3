"""The reward watchdog: every reward call returns, in time, or is given up on and counted.

A reward is user code as often as ours (a plugin, a judge behind a network, a sandbox):
it can hang, raise, or return the wrong number of scores. Two ways to watch a call:

- On a thread (the default). `call_with_timeout` runs the call on a fresh daemon thread
  and waits at most `timeout` seconds. A call that does not return in time is
  abandoned: its thread keeps running (Python cannot kill a thread) but nobody waits
  for it, and as a daemon it cannot keep the process alive at exit. A thread cannot
  stop code that holds the interpreter lock (a backtracking `re` match, a long C
  computation): the waiting thread itself does not run until the lock is released, so
  the wait can end late. The watchdog is honest about it: a call that took longer than
  its timeout, however it ended, is a timeout and its scores are discarded. So every
  shipped reward keeps its C-level work bounded instead (user regexes on the `regex`
  module with a time limit, sympy in killed-on-timeout workers, linear regexes on
  completions): grpokit.rewards._user_patterns, grpokit.sandbox.mathcheck.
- In a process (`isolate`): the call is pickled to a warm worker process
  (grpokit.sandbox.callworker) that is killed at the timeout, so the caller gets its
  answer at the timeout whatever the reward is doing. For a plugin that runs
  someone else's regexes or C code: mark it with `isolated(func)` or give its config
  entry `isolate: true`. The price: the reward and its batch are pickled on each call
  (a closure or a notebook function cannot be isolated), and its process holds none of
  the trainer's state (no model on the GPU).

A thread rather than a process by default because a process would have to pickle the
reward, its closures and every column of the batch on each call; the thread costs one
thread start per call (benchmarks/reward_watchdog.py measures it). The price of
abandoning: a hung call still holds whatever it held (a lock, a socket), so a reward
that hangs once may hang again on the next batch; each such call is one more counted
timeout, never a stuck step.

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
import time
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


def isolated(func: Callable) -> Callable:
    """Mark a reward to be run in a process of its own, killed at its timeout (see the module doc)."""
    func.grpokit_isolate = True
    return func


def is_isolated(func: Callable) -> bool:
    return getattr(func, "grpokit_isolate", False) is True


def call_with_timeout(func: Callable, completions: Sequence[Any], columns: dict, timeout: float | None,
                      isolate: bool = False) -> Any:
    """`func(completions, **columns)`; raises RewardTimeout after `timeout` seconds (None: wait forever,
    on the calling thread). Whatever the call raises is raised here. With `isolate` (or a reward marked
    by `isolated`) the call runs in a worker process that is killed at the timeout."""
    if isolate or is_isolated(func):
        return _call_isolated(func, completions, columns, DEFAULT_TIMEOUT if timeout is None else timeout)
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
    start = time.monotonic()
    threading.Thread(target=work, name=f"grpokit-reward-{name}", daemon=True).start()
    if not done.wait(timeout):
        raise RewardTimeout(f"no scores within {timeout:g} s; the call was abandoned and its batch scored None "
                            f"(raise this reward's `timeout:` if it is only slow)")
    elapsed = time.monotonic() - start
    if elapsed > timeout:
        # It held the interpreter lock past the limit, so this wait could not end on time:
        # still a timeout (the step waited for it), and scores that came too late do not count.
        raise RewardTimeout(f"scores came after {elapsed:.1f} s, past the {timeout:g} s limit, and were discarded; "
                            f"the reward held the interpreter (C code such as a regex): isolate it to have it "
                            f"stopped at its timeout, or raise its `timeout:` if it is only slow")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _call_isolated(func: Callable, completions: Sequence[Any], columns: dict, timeout: float) -> Any:
    from grpokit.sandbox import callworker

    try:
        return callworker.call(func, completions, columns, timeout)
    except callworker.CallTimeout:
        raise RewardTimeout(f"no scores within {timeout:g} s; its process was killed and its batch scored None "
                            f"(raise this reward's `timeout:` if it is only slow)") from None
