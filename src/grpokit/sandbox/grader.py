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
import json
import os
import signal
import socket

from grpokit.sandbox.isolation import PR_SET_PDEATHSIG, prctl, set_name
from grpokit.sandbox.remote import Conn, Lost

MAX_TEST_FLAGS = 10_000


class Deadline(BaseException):
    """The run's wall-clock time is up (raised by SIGALRM in the grader)."""


def _on_alarm(signum, frame):
    raise Deadline()


def read_secret(fd: int) -> dict:
    size = os.fstat(fd).st_size
    data = os.pread(fd, size, 0) if size else b"{}"
    return json.loads(data.decode("utf-8", "surrogatepass"))


def grade_functions(conn: Conn, tests: list[str], wall: float) -> dict:
    """Wait for the program to finish its top level, then run each test here."""
    outcome = {"status": "failed", "passed": 0, "total": len(tests), "all_ran": False, "error": None, "tests": []}
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, wall)
    try:
        first = conn.recv()
        if not isinstance(first, dict) or first.get("op") != "ready":
            kind = first.get("type", "Error") if isinstance(first, dict) else "Error"
            msg = first.get("msg", "") if isinstance(first, dict) else ""
            outcome.update(status="error", error=f"{kind}: {msg}"[:500])
            return outcome
        base = _namespace(conn, first.get("globals", []))
        for index, code in enumerate(tests):
            ok, why = _run_test(code, base, conn)
            outcome["tests"].append(ok)
            if not ok and outcome["error"] is None:
                outcome["error"] = f"test {index}: {why}"[:500]
        outcome["all_ran"] = True
    except Deadline:
        outcome.update(status="timeout", error=f"wall-clock limit of {wall:g}s reached")
    except Lost as exc:
        outcome.update(status="crashed", error=str(exc))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    outcome["passed"] = sum(outcome["tests"])
    if outcome["all_ran"]:
        outcome["status"] = "passed" if outcome["passed"] == outcome["total"] else "failed"
    if len(outcome["tests"]) > MAX_TEST_FLAGS:
        outcome["tests"] = outcome["tests"][:MAX_TEST_FLAGS]
    return outcome


def _namespace(conn: Conn, published) -> dict:
    namespace = {}
    for item in published:
        name, reply = item
        if isinstance(name, str) and not name.startswith("__"):
            namespace[name] = conn.unwrap(reply)
    return namespace


def _run_test(code: str, base: dict, conn: Conn) -> tuple[bool, str]:
    namespace = dict(base, __builtins__=builtins, __name__="__test__")
    try:
        exec(compile(code, "<test>", "exec"), namespace)
    except (Deadline, Lost):
        raise
    except BaseException as exc:
        if conn.lost:
            raise Lost(conn.lost) from None
        return False, _describe_failure(exc)
    # A test whose program died mid-way did not really run, even if its code swallowed the error.
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


def serve(sock: socket.socket) -> None:
    """Persistent grader loop: one job at a time from the zygote; never returns."""
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        set_name("grpokit-grader")
        while True:
            try:
                data, fds, _, _ = socket.recv_fds(sock, 65536, 4)
            except OSError:
                break
            if not data:
                break
            for fd in fds[3:]:
                os.close(fd)
            try:
                job = json.loads(data)
                req_w, resp_r, secret_fd = fds[:3]
                try:
                    tests = read_secret(secret_fd).get("tests", [])
                    outcome = grade_functions(Conn(req_w, resp_r), tests, float(job["wall_s"]))
                finally:
                    for fd in fds[:3]:
                        os.close(fd)
            except BaseException as exc:  # noqa: BLE001 - a grader bug must become a loud result, not a hang
                outcome = {"status": "sandbox_error", "passed": 0, "total": 0, "all_ran": False,
                           "error": f"grader: {type(exc).__name__}: {exc}"[:500]}
            outcome["id"] = job.get("id") if isinstance(job, dict) else None
            sock.sendall(json.dumps(outcome).encode())
            del tests, job  # nothing of a job outlives it by reference
    finally:
        os._exit(0)
