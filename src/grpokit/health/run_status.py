"""A run's last word: run_status.json, so a run killed without warning still says what happened.

The out-of-memory killer sends SIGKILL: no Python code runs, no log line is written. So the run
writes its state *before* anything can go wrong and keeps it current: "running" (with its process
id, host, step and memory against the limit that binds) when the run starts (for a resume: once every
check passed, never for a refused or nothing-to-do one) and at every log, "finished" once the last
stage's final weights are saved, "failed" (with the error) when training raises. `post_mortem()` reads it
back as facts: "running" whose process is gone means the run was killed; a memory peak near the limit,
or an estimate above it, says by what. The words a report shows for each ending are its rule's
(grpokit.health.checks.run_end); this module only records and reads what happened.

    trainer = GRPOTrainer(..., callbacks=[RunStatusCallback(run_dir, estimate=...)])  # status_callback.py
    except Exception as exc: mark_failed(run_dir, exc)

Pure Python (no torch, no transformers): `grpokit report` reads it.
"""
from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from grpokit.health.memory import GIB, memory_limit, not_resident
from grpokit.run_directory import layout

STATUS_FILE = layout.RUN_STATUS


def write_status(run_dir: Path, status: dict[str, Any]) -> None:
    # Write beside, then rename: a kill mid-write must not leave half a file.
    run_dir.mkdir(parents=True, exist_ok=True)
    tmp = run_dir / f".{STATUS_FILE}.{os.getpid()}"
    tmp.write_text(json.dumps(status, indent=2, default=str), encoding="utf-8")
    os.replace(tmp, run_dir / STATUS_FILE)


def read_status(run_dir: str | Path) -> dict[str, Any] | None:
    path = Path(run_dir) / STATUS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def memory_snapshot() -> dict[str, Any]:
    m = memory_limit()
    if m is None:
        return {}
    out = {"used_gib": round(m.used / GIB, 3), "peak_gib": round(m.peak / GIB, 3),
           "limit_gib": round(m.limit / GIB, 3), "limit": m.how, "counts": m.kind}
    if m.kind == "address space":
        out["not_resident_gib"] = round(not_resident() / GIB, 3)  # counts against the cap, not in the estimate
    return out


def is_out_of_memory(exc: BaseException) -> bool:
    """True when `exc`, or an error it was raised from, is an allocation failure (CPU or GPU)."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
            return True
        text = str(exc).lower()
        if any(s in text for s in ("out of memory", "can't allocate memory", "cannot allocate memory",
                                   "std::bad_alloc", "failed to allocate")):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def mark_started(run_dir: str | Path, step: int = 0, stage: str | None = None) -> None:
    """Record "running" before anything heavy happens (loading the model can already run out of memory).
    `step`/`stage`: where a resumed run starts (its checkpoint), so a kill before its first log names it."""
    write_status(Path(run_dir), {"state": "running", "pid": os.getpid(), "host": socket.gethostname(),
                                 "started": time.time(), "updated": time.time(), "step": int(step), "stage": stage,
                                 "memory": memory_snapshot()})


def mark_finished(run_dir: str | Path, step: int | None = None) -> None:
    """Record "finished": called once the run's last weights are on disk (after the last stage's final/)."""
    run_dir = Path(run_dir)
    status = read_status(run_dir) or {}
    status.update({"state": "finished", "updated": time.time(), "memory": {**status.get("memory", {}),
                                                                         **memory_snapshot()}})
    if step is not None:
        status["step"] = int(step)
    status.pop("error", None)
    write_status(run_dir, status)


def mark_failed(run_dir: str | Path, exc: BaseException) -> None:
    """Record that training raised; an allocation failure is recorded as out of memory."""
    run_dir = Path(run_dir)
    status = read_status(run_dir) or {}
    # Ctrl-C is the user's choice, not a failure: the report says where to resume from.
    state = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
    status.update({"state": state, "updated": time.time(), "error": f"{type(exc).__name__}: {exc}"[:2000],
                   "out_of_memory": is_out_of_memory(exc), "memory": {**status.get("memory", {}),
                                                                      **memory_snapshot()}})
    try:
        write_status(run_dir, status)
    except OSError:
        pass  # the disk or the memory is gone too: the original error is what the user needs


def process_alive(pid: Any, host: Any) -> bool | None:
    """True/False for a process on this host; None when the run was on another machine (cannot tell)."""
    if host != socket.gethostname():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, TypeError, OverflowError):
        return True if isinstance(pid, int) else None
    return True


def post_mortem(run_dir: str | Path, finished: bool = False) -> dict[str, Any] | None:
    """What run_status.json says happened to a run that did not finish, as facts: `how` it ended
    (interrupted, failed, elsewhere: running on another host, killed: running and its process gone) and
    what the status recorded (step, max_steps, error, out_of_memory, host, pid, updated, memory,
    estimate_gib). None when it finished, runs, or left no status. Which rule that is and its words are
    the rule table's (grpokit.health.checks.run_end). `finished`: the run's last stage left its done
    marker (grpokit.run_directory.progress)."""
    status = read_status(run_dir)
    if not status or status.get("state") == "finished":
        return None
    if finished and status.get("state") == "running":
        return None  # gone after its last stage's done marker, before the status said so: it finished
    facts = {key: status.get(key) for key in ("step", "max_steps", "error", "out_of_memory", "host", "pid",
                                               "updated", "estimate_gib")}
    facts["memory"] = status.get("memory") or {}
    if status.get("state") in ("interrupted", "failed"):
        return {**facts, "how": status["state"]}
    alive = process_alive(status.get("pid"), status.get("host"))
    if alive:
        return None
    return {**facts, "how": "elsewhere" if alive is None else "killed"}
