"""One reward call in a warm process that is killed when it runs past its time.

A thread cannot stop a reward stuck in C code (a backtracking `re` match, a sympy
computation, a tight loop in an extension): it holds the interpreter lock, so even the
thread waiting on it does not run until it lets go. A process can be killed. The reward
watchdog (grpokit.rewards.watchdog) sends the calls of rewards marked to be isolated
here:

    from grpokit.sandbox.callworker import CallTimeout, call
    scores = call(func, completions, columns, timeout=5.0)   # raises CallTimeout after 5 s

The reward, the completions and the columns are pickled (module-level functions and
grpokit's reward objects pickle by reference; a closure or a lambda does not, and the
call then fails with a clear error). Columns that are callables (TRL's `log_extra`,
`log_metric`: bound methods of the trainer) stay behind. The worker is a warm plain
interpreter started with the caller's sys.path (so it imports the modules the reward
lives in; a plugin loaded from a file path is loaded from that file), made by the same machinery as the math workers (mathcheck._Worker); a call
past its timeout kills it and the next call starts a fresh one. This file is also the
worker's program.
"""
from __future__ import annotations

import atexit
import base64
import json
import os
import pickle
import sys
import threading
import time
from typing import Any, Callable, Sequence

# How long a fresh worker may take to start (an interpreter and the reward's imports)
# before the call is given up; not charged against the call's own timeout.
STARTUP_TIMEOUT = 60.0


class CallTimeout(Exception):
    """The call did not return within its timeout; its worker was killed."""


class CallFailed(Exception):
    """The call could not be made in a worker (pickling, a worker that died or did not start)."""


# ----------------------------------------------------------------- worker side

def _worker_main() -> None:  # pragma: no cover - runs in the subprocess
    import asyncio
    import inspect

    sys.path[:0] = [p for p in json.loads(os.environ.get("GRPOKIT_CALL_PATH", "[]")) if p not in sys.path]
    # The protocol owns the real stdout; what the reward prints goes to stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def send(obj) -> None:
        out.write(json.dumps(obj).encode() + b"\n")
        out.flush()

    send({"ready": os.getpid()})
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
            _load_modules(message.get("modules") or {})
            func, completions, columns = pickle.loads(base64.b64decode(message["call"]))
            value = func(completions, **columns)
            if inspect.isawaitable(value):
                value = asyncio.run(_awaited(value))
            send({"r": base64.b64encode(pickle.dumps(list(value))).decode()})
        except BaseException as exc:  # noqa: BLE001 - the caller reports it; the worker lives on
            send({"error": f"{type(exc).__name__}: {exc}"[:300]})


def _load_modules(modules: dict) -> None:  # pragma: no cover - runs in the subprocess
    # A plugin loaded from a file path (a config's `imports:`) lives under a name no import finds.
    import importlib
    import importlib.util

    for name, path in modules.items():
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except ImportError:
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                continue
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)


async def _awaited(awaitable):
    return await awaitable


# ----------------------------------------------------------------- caller side

_idle: list = []  # warm workers no call is using
_lock = threading.Lock()


def _payload(func: Callable, completions: Sequence[Any], columns: dict) -> bytes:
    columns = {k: v for k, v in columns.items() if not callable(v)}
    try:
        return pickle.dumps((func, list(completions), columns))
    except Exception as first:  # noqa: BLE001 - find out which part, for the message
        try:
            pickle.dumps(func)
        except Exception as exc:  # noqa: BLE001
            raise CallFailed(f"the reward cannot be pickled to run in its own process ({exc}); define it at "
                             f"module level, or do not isolate it") from None
        kept = {}
        for key, value in columns.items():
            try:
                pickle.dumps(value)
                kept[key] = value
            except Exception:  # noqa: BLE001 - a column a reward rarely reads stays behind
                continue
        try:
            return pickle.dumps((func, list(completions), kept))
        except Exception:  # noqa: BLE001
            raise CallFailed(f"the completions cannot be pickled ({first})") from None


def _module_files(func: Callable) -> dict[str, str]:
    """The files of the modules the reward is defined in, for a worker that cannot import them by name."""
    out = {}
    for obj in (func, getattr(func, "func", None), getattr(func, "fn", None), type(func)):
        name = getattr(obj, "__module__", None)
        path = getattr(sys.modules.get(name), "__file__", None) if name and name != "__main__" else None
        if path:
            out[name] = path
    return out


def _start():
    from grpokit.sandbox.mathcheck import _Worker

    return _Worker(memory_mb=0, cpu_budget=0, program=__file__, run_name="__grpokit_call_worker__",
                   env={"GRPOKIT_CALL_PATH": json.dumps([p for p in sys.path if p])}, quiet=False)


def _wait(worker, deadline: float) -> dict | None:
    """The worker's next message, or None at the deadline or when it exits."""
    from grpokit.sandbox.mathcheck import _poll

    while True:
        messages = getattr(worker, "pending", None) or []
        if messages:
            worker.pending = messages[1:]
            return messages[0]
        left = deadline - time.monotonic()
        if left <= 0 or not _poll({worker.fd: worker}, left):
            if time.monotonic() >= deadline:
                return None
            continue
        got = worker.read_messages()
        if got is None:
            return None
        worker.pending = got


def _ready(worker) -> bool:
    if worker.ready:
        return True
    message = _wait(worker, worker.started + STARTUP_TIMEOUT)
    worker.ready = message is not None and "ready" in message
    return worker.ready


def call(func: Callable, completions: Sequence[Any], columns: dict, timeout: float) -> list:
    """`func(completions, **columns)` run in a worker process; raises CallTimeout after `timeout`
    seconds (the worker is killed), CallFailed when it cannot be run there, and a RuntimeError
    with the reward's own error text when the reward raised."""
    payload = base64.b64encode(_payload(func, completions, columns)).decode()
    with _lock:
        worker = _idle.pop() if _idle else None
    if worker is not None and worker.owner != os.getpid():
        _idle.clear()  # inherited through a fork: the parent's workers and pipes, not ours to use
        worker = None
    if worker is None or worker.proc.poll() is not None:
        worker = _start()
    if not _ready(worker):
        worker.kill()
        raise CallFailed("the reward's worker process did not start")
    if not worker.send_message({"call": payload, "modules": _module_files(func)}):
        worker.kill()
        raise CallFailed("the reward's worker process died")
    message = _wait(worker, time.monotonic() + timeout)
    if message is None:
        alive = worker.proc.poll() is None
        worker.kill()
        if alive:
            raise CallTimeout(f"no scores within {timeout:g} s; its process was killed")
        raise CallFailed("the reward's worker process died during the call")
    with _lock:
        _idle.append(worker)
    if "error" in message:
        raise RuntimeError(message["error"])
    return pickle.loads(base64.b64decode(message["r"]))


def close() -> None:
    """Stop the idle workers (they also go when the interpreter exits)."""
    with _lock:
        workers, _idle[:] = list(_idle), []
    for worker in workers:
        worker.kill()


atexit.register(close)

if __name__ == "__grpokit_call_worker__":
    _worker_main()
