"""The per-job path: a supervisor spawns the program, grades it, cleans up.

Used for stdin/stdout jobs (several runs of one program) and wherever PID
namespaces are missing; function-mode jobs otherwise take the zygote's fast
path (zygote.py, grader.py). A supervisor is forked from the zygote per job. Order matters for secrecy:
the program's process is forked *before* the supervisor reads the tests
(expected values, the `check` function) from the memfd the zygote spliced them
into, so the sandboxed process never has them in its memory, and it closes
the memfd's descriptor before user code runs.

Threat model: the program may do anything a Python process can (ctypes
included) inside its process and its namespace. It can lie about what its own
functions return (which is what is being graded anyway), but it cannot write
into the grader's process: the test code, every comparison and the verdict
live here, and the verdict goes to the zygote over a pipe the program never
had. A test counts as passed only when its code ran to the end in this
process; a run whose program vanished mid-test leaves the remaining tests
not run, hence failed.
"""
from __future__ import annotations

import json
import os
import signal
import time

from grpokit.sandbox import child as child_mod
from grpokit.sandbox import codec
from grpokit.sandbox.cputime import CpuClock
from grpokit.sandbox.isolation import CLONE_NEWIPC, CLONE_NEWPID, PR_SET_CHILD_SUBREAPER, PR_SET_PDEATHSIG, prctl, set_name, unshare
from grpokit.sandbox.grader import grade_functions
from grpokit.sandbox.limits import WALL_FACTOR
from grpokit.sandbox.remote import Conn
from grpokit.sandbox.rundir import remove_owned_by

_TAIL = 2000


class _Run:
    """One sandboxed process: the pid to wait for and the pid whose death kills all."""

    def __init__(self, wait_pid: int, kill_pid: int) -> None:
        self.wait_pid, self.kill_pid = wait_pid, kill_pid
        self.status: int | None = None

    def kill(self) -> None:
        if self.status is not None:
            return  # reaped: the pid may already belong to someone else
        for pid in {self.kill_pid, self.wait_pid}:
            for target in (lambda p: os.killpg(p, signal.SIGKILL), lambda p: os.kill(p, signal.SIGKILL)):
                try:
                    target(pid)
                except (ProcessLookupError, PermissionError):
                    pass

    def reap(self, timeout: float | None = None) -> int | None:
        if self.status is not None:
            return self.status
        if timeout is not None:
            pidfd = os.pidfd_open(self.wait_pid)
            try:
                import select

                ready, _, _ = select.select([pidfd], [], [], max(0.0, timeout))
            finally:
                os.close(pidfd)
            if not ready:
                return None
        _, status = os.waitpid(self.wait_pid, 0)
        self.status = status
        return status


class Supervisor:
    def __init__(self, job: dict, secret_fd: int, report_fd: int, iso: dict, uid: int | None, workdir: str) -> None:
        self.job, self.secret_fd, self.report_fd = job, secret_fd, report_fd
        self.iso, self.uid, self.workdir = iso, uid, workdir
        self.limits = job["limits"]
        self.wall = float(self.limits["wall_s"])
        self.runs: list[_Run] = []
        self.ipc = CLONE_NEWIPC if iso.get("ipc_namespace") else 0  # a fresh SysV IPC namespace per run

    # ---- spawning -------------------------------------------------------
    def _report(self, message: dict) -> None:
        codec.write_frame(self.report_fd, message)

    def spawn(self, index: int, keep_fds: tuple[int, ...], body) -> _Run:
        run = {
            "index": index,
            "workdir": self.workdir,
            "home": self.job["home"],
            "uid": self.uid,
            "limits": self.limits,
            "stdin_path": os.path.join(self.workdir, f"stdin-{index}") if self.job["mode"] == "io" else None,
            "root": self.job.get("root") or self.iso.get("root"),
            "cgroups": self.job.get("cgroups"),
        }

        def child() -> None:
            try:
                child_mod.enter(run, keep_fds)
                body()
            finally:
                os._exit(child_mod.HARNESS_FAILED)

        if not self.iso.get("pid_namespace"):
            pid = os.fork()
            if pid == 0:
                child()
            handle = _Run(pid, pid)
        elif self.job["mode"] == "function":
            # The one run becomes init of a fresh PID namespace: killing it kills all of it.
            # (After that init dies this process can fork no more, hence launchers for io cases.)
            unshare(CLONE_NEWPID | self.ipc)
            pid = os.fork()
            if pid == 0:
                child()
            handle = _Run(pid, pid)
        else:
            handle = self._spawn_via_launcher(child)
        self._report({"op": "pids", "pids": [handle.kill_pid, handle.wait_pid]})
        self.runs.append(handle)
        return handle

    def _spawn_via_launcher(self, child) -> _Run:
        # unshare(CLONE_NEWPID) works once per process; later runs get a
        # short-lived launcher that unshares, forks the run and relays its status.
        r, w = os.pipe()
        launcher = os.fork()
        if launcher == 0:
            code = child_mod.HARNESS_FAILED
            try:
                os.close(r)
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                unshare(CLONE_NEWPID | self.ipc)
                pid = os.fork()
                if pid == 0:
                    os.close(w)
                    child()
                os.write(w, str(pid).encode())
                os.close(w)
                _, status = os.waitpid(pid, 0)
                code = 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.waitstatus_to_exitcode(status)
            finally:
                os._exit(code)
        os.close(w)
        data = os.read(r, 32)
        os.close(r)
        pid = int(data) if data.isdigit() else launcher
        return _Run(launcher, pid)

    def read_secret(self) -> dict:
        size = os.fstat(self.secret_fd).st_size
        data = os.pread(self.secret_fd, size, 0) if size else b"{}"
        os.close(self.secret_fd)
        return json.loads(data.decode("utf-8", "surrogatepass"))

    # ---- function mode --------------------------------------------------
    def run_functions(self) -> dict:
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        program = self.job["program"]
        self.spawn(0, (req_r, resp_w), lambda: child_mod.run_module(program, req_r, resp_w))
        os.close(req_r)
        os.close(resp_w)
        deadline = time.monotonic() + self.wall
        return grade_functions(Conn(req_w, resp_r, deadline), self.read_secret(), self.wall)

    # ---- stdin/stdout mode ----------------------------------------------
    def run_io(self) -> dict:
        inputs = self.job.get("inputs", [])
        program = self.job["program"]
        got = []
        budget = io_budget_s(self.limits, len(inputs))
        budget_end, budget_spent = time.monotonic() + budget, False
        for i, text in enumerate(inputs):
            left = budget_end - time.monotonic()
            if left <= 0:
                budget_spent = True  # the rest are not run: the program fails as a whole
                break
            path = os.path.join(self.workdir, f"stdin-{i}")
            fd = child_mod.create_fresh(path)
            with open(fd, "w", encoding="utf-8", errors="surrogatepass") as fh:
                fh.write(text)
            os.chmod(path, 0o644)
            clock = self._case_clock()
            run = self.spawn(i, (), lambda: child_mod.run_script(program))
            status, window = self._wait_case(run, left, clock)
            if status is None:
                budget_spent = budget_spent or left < window
                run.kill()
                run.reap()
                got.append(("timeout", None))
            else:
                got.append(_script_status(status))
            out_path = os.path.join(self.workdir, f"stdout-{i}")
            output = read_run_file(out_path, int(float(self.limits["max_file_mb"]) * 1024 * 1024) + 1)
            got[-1] = (got[-1][0], output)
            self._sweep(run)
        expected = self.read_secret().get("outputs", [])
        flags, first_error = [], None
        ran = len(got)
        got += [("timeout", None)] * (len(expected) - ran)
        for (status, output), want in zip(got, expected):
            ok = status == "ok" and _same_output(output, want)
            flags.append(ok)
            if not ok and first_error is None:
                first_error = status if status != "ok" else "wrong output"
        passed = sum(flags)
        if budget_spent:
            first_error = f"timeout: the program's {budget:g}s for all its cases ran out"
        return {
            "status": "timeout" if budget_spent or first_error == "timeout" else
                      ("passed" if passed == len(expected) else "failed"),
            "passed": passed,
            "total": len(expected),
            "all_ran": ran == len(expected),
            "error": first_error,
            "tests": flags,
        }

    def _case_clock(self) -> CpuClock | None:
        """The CPU clock of the slot's cgroup, zeroed for the next case (None without one)."""
        path = self.job.get("cpu_usage")
        if not path:
            return None
        try:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)
        except OSError:
            return None
        return CpuClock(path, self.wall, time.monotonic())

    def _wait_case(self, run: _Run, left: float, clock: CpuClock | None) -> tuple[int | None, float]:
        """(exit status or None when out of time, the wall-clock window the case had).

        With a clock the case is timed in CPU seconds of its own cgroup (a sibling spinning
        on every core cannot push it past wall_s), with WALL_FACTOR x wall_s of wall-clock
        as the backstop; without one, wall_s of wall-clock.
        """
        if clock is None:
            window = min(self.wall, left)
            return run.reap(window), window
        window = min(self.wall * WALL_FACTOR, left)
        end = time.monotonic() + window
        while True:
            now = time.monotonic()
            if now >= end:
                return None, window
            if clock.spent(now):
                return None, float("inf")  # its own CPU time ran out, not the program's total budget
            status = run.reap(min(end - now, clock.seconds_to_next_check(now)))
            if status is not None:
                return status, window

    # ---- teardown -------------------------------------------------------
    def _sweep(self, run: _Run) -> None:
        run.kill()
        run.reap()
        if not self.iso.get("pid_namespace"):
            _kill_orphans()

    def finish(self) -> None:
        for run in self.runs:
            self._sweep(run)
        if not self.iso.get("pid_namespace"):
            _kill_orphans()
        if self.iso.get("private_tmp") and self.uid is not None:
            remove_owned_by(self.uid)

    def tails(self) -> tuple[str, str]:
        out = err = ""
        if self.runs:
            index = len(self.runs) - 1
            out = _tail(os.path.join(self.workdir, f"stdout-{index}"))
            err = _tail(os.path.join(self.workdir, f"stderr-{index}"))
        return out, err


def io_budget_s(limits: dict, cases: int) -> float:
    """Seconds all stdin/stdout cases of one program may take together (Limits.total_s)."""
    wall = float(limits["wall_s"])
    total = limits.get("total_s")
    return min(wall * max(1, cases), float(total) if total is not None else 3 * wall)


def _script_status(status: int) -> tuple[str, None]:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
    else:
        code = os.waitstatus_to_exitcode(status)
        sig = code - 128 if code > 128 else None
        if sig is None:
            if code == child_mod.HARNESS_FAILED:
                return ("sandbox_error", None)
            return ("ok", None) if code == 0 else (f"exit code {code}", None)
    names = {signal.SIGXFSZ: "output_limit", signal.SIGXCPU: "cpu_limit", signal.SIGKILL: "killed"}
    return (names.get(sig, f"signal {sig}"), None)


def _same_output(output: bytes | None, want) -> bool:
    if output is None:
        return False
    text = output.decode("utf-8", "replace")
    want = want if isinstance(want, str) else str(want)

    def norm(s: str) -> list[str]:
        # Judges compare tokens line by line, ignoring trailing spaces and blank lines.
        return [line.rstrip() for line in s.replace("\r\n", "\n").rstrip().split("\n")]

    return norm(text) == norm(want)


def read_run_file(path: str, limit: int, tail: bool = False) -> bytes:
    """Up to `limit` bytes of a file the program could have tampered with.

    The program owns its directory: stdout-0 may have been replaced by a symlink
    (to a root-only file) or a FIFO (reading it would block forever). Only a
    regular file, opened without following links or blocking, is read.
    """
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return b""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return b""
        start = max(0, info.st_size - limit) if tail else 0
        return os.pread(fd, limit, start)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _tail(path: str) -> str:
    return read_run_file(path, _TAIL, tail=True).decode("utf-8", "replace")


def _children(ppid: int) -> list[int]:
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
            if int(stat[stat.rindex(b")") + 2 :].split()[1]) == ppid:
                kids.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return kids


def _kill_orphans() -> None:
    """Kill and reap every remaining descendant (they were reparented here: we are a subreaper)."""
    me = os.getpid()
    for _ in range(200):
        kids = _children(me)
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return
        if not kids:
            time.sleep(0.002)


def supervise(job: dict, secret_fd: int, report_fd: int, iso: dict, uid: int | None, workdir: str) -> None:
    """Entry point in the forked supervisor; never returns."""
    start = time.monotonic()
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        prctl(PR_SET_CHILD_SUBREAPER, 1)
        set_name("grpokit-super")
        sup = Supervisor(job, secret_fd, report_fd, iso, uid, workdir)
        try:
            outcome = sup.run_io() if job["mode"] == "io" else sup.run_functions()
            outcome["stdout"], outcome["stderr"] = sup.tails()
        finally:
            sup.finish()
        outcome["op"] = "result"
        outcome["duration_s"] = time.monotonic() - start
        codec.write_frame(report_fd, outcome)
    except BaseException as exc:
        try:
            codec.write_frame(report_fd, {"op": "result", "status": "sandbox_error", "passed": 0, "total": 0,
                                          "all_ran": False, "error": f"{type(exc).__name__}: {exc}"[:500]})
        except BaseException:
            pass
    finally:
        os._exit(0)
