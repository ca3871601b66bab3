"""Grading: run the tests in a trusted process against the sandboxed program.

`grade_functions` is the verdict. Test code runs here, with each name the
program defined bound to plain data or a `Remote` handle (remote.py); a test
passes only when its code runs to the end in this process. The program's
process can lie about what its functions return (that is what is graded) but
cannot reach this process's memory, frames or verdict.

`serve` is the body of a persistent grader process: the zygote forks one per
worker slot before any job exists, then hands it, per job, the pipes to a
freshly forked program and the memfd holding that job's tests. A grader never
forks, so the tests it has read can never end up in a program's memory; and
because it lives on, a job costs one fork (the program's), not two.
"""
from __future__ import annotations

import builtins
import importlib
import json
import os
import resource
import signal
import socket
import sys
import time

from grpokit.sandbox.cputime import CpuClock
from grpokit.sandbox.isolation import PR_SET_PDEATHSIG, prctl, set_name
from grpokit.sandbox.remote import Conn, GraderOutOfMemory, Lost

MAX_TEST_FLAGS = 10_000
# Graders decode replies the program wrote; this caps what one can make a grader hold
# (a run's own memory is capped in its cgroup, the grader's is not in there).
GRADER_MEMORY_MB = 1024
# A grader lives across jobs; one whose address space grew past this after a job is
# retired and replaced by a fresh fork, so no program can leave it too full to decode a
# later program's (capped) reply. The gap to GRADER_MEMORY_MB holds the largest job.
GRADER_RETIRE_MB = 384
_BUILTIN_NAMES = frozenset(dir(builtins))
# Standard-library modules a test may use through the solution's own `import`,
# minus the ones whose import does something (opens a browser, prints, needs a display).
_NOT_IMPORTED = frozenset({"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "__hello__",
                           "__phello__", "pydoc", "webbrowser", "ensurepip", "venv", "pip"})


def read_secret(fd: int) -> dict:
    size = os.fstat(fd).st_size
    data = os.pread(fd, size, 0) if size else b"{}"
    return json.loads(data.decode("utf-8", "surrogatepass"))


class _ProtocolBroken(Exception):
    """The program's first frame is not a well-formed ready/error report."""


def grade_functions(conn: Conn, secret: dict, wall: float) -> dict:
    """Wait for the program to finish its top level, then run each test here.

    `conn` carries the run's deadline: a program that outlives it is marked
    lost, every later request fails at once, and the run scores 0.
    """
    tests = secret.get("tests", [])
    outcome = {"status": "failed", "passed": 0, "total": len(tests), "all_ran": False, "error": None, "tests": []}
    try:
        kind, payload = _first_report(conn.recv())
        if kind == "error":
            outcome.update(status="error", error=payload[:500])
            return outcome
        program = _ProgramNames(conn, payload, secret.get("entry_point"), _helper_names(secret.get("helpers")))
        for index, code in enumerate(tests):
            ok, why = _run_test(code, program, conn)
            outcome["tests"].append(ok)
            if not ok and outcome["error"] is None:
                outcome["error"] = f"test {index}: {why}"[:500]
        conn.check_cpu()  # children spinning while the program answered fast still count
        outcome["all_ran"] = True
    except _ProtocolBroken as exc:
        outcome.update(status="error", error=f"the program broke the grading protocol: {exc}")
        return outcome
    except GraderOutOfMemory as exc:
        # Ours, not the program's: unjudged (None), and this grader is replaced.
        outcome.update(status="sandbox_error", error=f"grader: {exc}", tests=[], passed=0, all_ran=False)
        return outcome
    except Lost:
        if conn.timed_out and conn.cpu is not None and conn.lost.startswith("CPU"):
            outcome.update(status="timeout", error=conn.lost, tests=[])
        elif conn.timed_out:
            outcome.update(status="timeout", error=f"wall-clock limit of {wall:g}s reached", tests=[])
        else:
            outcome.update(status="crashed", error=conn.lost)
    outcome["passed"] = sum(outcome["tests"])
    if outcome["all_ran"]:
        outcome["status"] = "passed" if outcome["passed"] == outcome["total"] else "failed"
    if len(outcome["tests"]) > MAX_TEST_FLAGS:
        outcome["tests"] = outcome["tests"][:MAX_TEST_FLAGS]
    return outcome


def _first_report(first) -> tuple[str, object]:
    # ("error", message) when the top level raised, ("ready", {name: reply}) when it finished.
    if isinstance(first, dict) and first.get("op") == "error" and set(first) == {"op", "type", "msg"}:
        if isinstance(first["type"], str) and isinstance(first["msg"], str):
            return "error", f"{first['type']}: {first['msg']}"
    if isinstance(first, dict) and first.get("op") == "ready" and set(first) == {"op", "globals"} \
            and type(first["globals"]) is list:
        names = {}
        for item in first["globals"]:
            if not (type(item) is list and len(item) == 2 and type(item[0]) is str and type(item[1]) is dict):
                raise _ProtocolBroken("malformed entry in the ready report")
            names[item[0]] = item[1]
        return "ready", names
    raise _ProtocolBroken("malformed ready report")


class _ProgramNames:
    """The program's top-level names, as the tests may see them.

    A test sees only the program names its own code mentions, never a builtin
    name or a standard-library module name (a program's `abs` or class `math`
    must not change what the test code calls), except the row's explicit entry
    point. A module the program imported is imported here, from the standard
    library only, so tests that lean on the solution's `import math` still run.
    """

    def __init__(self, conn: Conn, published: dict, entry_point, helpers: dict | None = None) -> None:
        self.conn, self.published = conn, published
        self.entry_point = entry_point if isinstance(entry_point, str) else None
        self.helpers = helpers or {}  # the prompt's own definitions: they win over the program's
        self.cache: dict = {}

    def visible(self, name: str) -> bool:
        if name == self.entry_point:
            return True
        return not (name.startswith("__") or name in _BUILTIN_NAMES or name in sys.stdlib_module_names)

    def bind(self, names, namespace: dict) -> None:
        for name in names:
            reply = self.published.get(name)
            if reply is None:
                continue
            if name not in self.cache:
                self.cache[name] = self._resolve(name, reply)
            value = self.cache[name]
            if value is not _HIDDEN:
                namespace[name] = value
        for name in names:
            if name in self.helpers and name != self.entry_point:
                namespace[name] = self.helpers[name]

    def _resolve(self, name: str, reply: dict):
        if set(reply) == {"module"}:
            module = reply["module"]
            if type(module) is not str or module.partition(".")[0] not in sys.stdlib_module_names \
                    or module.partition(".")[0] in _NOT_IMPORTED:
                return _HIDDEN
            if name != module and not self.visible(name):
                return _HIDDEN  # `import cmath as math`: a real module, but not the one the tests mean
            try:
                return importlib.import_module(module)
            except Exception:  # noqa: BLE001 - a module we cannot import is simply not offered
                return _HIDDEN
        if not self.visible(name):
            return _HIDDEN
        if set(reply) not in ({"v"}, {"ref", "callable"}):
            raise self.conn._fail(f"malformed value for {name!r} in the ready report")
        return self.conn.unwrap(reply)


_HIDDEN = object()


def _helper_names(source) -> dict:
    """The names the row's trusted helper code defines (run here, in the grader, never in the program).

    Code that fails to run provides no helpers: the row is graded as before, on the program's names.
    """
    if not isinstance(source, str) or not source.strip():
        return {}
    namespace = {"__builtins__": dict(builtins.__dict__), "__name__": "__helpers__"}
    try:
        exec(compile(source, "<prompt>", "exec"), namespace)  # noqa: S102 - the data set's code, not the program's
    except Exception:  # noqa: BLE001 - data-set code we cannot run is simply not used
        return {}
    return {k: v for k, v in namespace.items() if not k.startswith("__")}


def _names_in(code) -> set[str]:
    # Every name the compiled test mentions, nested functions included (over-inclusive: attributes too).
    names, stack = set(), [code]
    while stack:
        current = stack.pop()
        names.update(current.co_names)
        names.update(current.co_varnames)
        stack.extend(c for c in current.co_consts if hasattr(c, "co_names"))
    return names


def _run_test(code: str, program: _ProgramNames, conn: Conn) -> tuple[bool, str]:
    namespace = {"__builtins__": dict(builtins.__dict__), "__name__": "__test__"}
    try:
        compiled = compile(code, "<test>", "exec")
        program.bind(_names_in(compiled), namespace)
        exec(compiled, namespace)
    except (Lost, GraderOutOfMemory):
        raise
    except MemoryError:
        # The program's own MemoryError arrives as a SandboxedException (remote._NOT_MAPPED);
        # this one is the grader's process running out while running the test code.
        raise GraderOutOfMemory("the grader ran out of memory running the test code") from None
    except BaseException as exc:
        if conn.lost:
            raise Lost(conn.lost) from None
        return False, _describe_failure(exc)
    # A test whose program died or timed out mid-way did not really run, even if its code swallowed the error.
    if conn.lost:
        raise Lost(conn.lost)
    return True, ""


def _describe_failure(exc: BaseException) -> str:
    # Which assertion failed: the line of the test code, from the traceback.
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<test>":
            line = tb.tb_lineno
        tb = tb.tb_next
    where = f" (test line {line})" if line else ""
    try:
        return f"{type(exc).__name__}{where}: {exc}"[:300]
    except Exception:
        return f"{type(exc).__name__}{where}"


def _address_space_mb() -> float:
    # What RLIMIT_AS counts (VmSize). Garbage not yet collected counts too: at worst a
    # grader is replaced early (a fork), never kept too full.
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
    except (OSError, ValueError, IndexError):
        return 0.0


def serve(sock: socket.socket) -> None:
    """Persistent grader loop: one job at a time from the zygote; never returns."""
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        set_name("grpokit-grader")
        limit = GRADER_MEMORY_MB * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        while True:
            try:
                data, fds, _, _ = socket.recv_fds(sock, 65536, 4)
            except OSError:
                break
            if not data:
                break
            for fd in fds[3:]:
                os.close(fd)
            secret = job = None
            try:
                job = json.loads(data)
                req_w, resp_r, secret_fd = fds[:3]
                try:
                    secret = read_secret(secret_fd)
                    wall = float(job["wall_s"])  # the wall-clock backstop when the run is timed in CPU
                    start = time.monotonic()
                    cpu = CpuClock(job["cpu_usage"], float(job["cpu_s"]), start) if job.get("cpu_usage") else None
                    outcome = grade_functions(Conn(req_w, resp_r, start + wall, cpu), secret, wall)
                finally:
                    for fd in fds[:3]:
                        os.close(fd)
            except BaseException as exc:  # noqa: BLE001 - a grader bug must become a loud result, not a hang
                outcome = {"status": "sandbox_error", "passed": 0, "total": 0, "all_ran": False,
                           "error": f"grader: {type(exc).__name__}: {exc}"[:500]}
            outcome["id"] = job.get("id") if isinstance(job, dict) else None
            del secret, job  # nothing of a job outlives it by reference
            # Asked to be replaced before the zygote hands it another job (see GRADER_RETIRE_MB).
            outcome["retire"] = outcome.get("status") == "sandbox_error" or _address_space_mb() > GRADER_RETIRE_MB
            sock.sendall(json.dumps(outcome).encode())
    finally:
        os._exit(0)
