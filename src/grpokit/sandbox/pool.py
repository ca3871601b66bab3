"""The trainer-side handle: a warm zygote, batch scoring, a per-step budget.

    pool = SandboxPool()
    results = pool.run([Job(program, tests=["assert f(1) == 2"])], budget_s=60)

One zygote process per pool runs up to `workers` jobs at once. `run` sends a
whole step's jobs, and when `budget_s` runs out it cancels what is left (those
results come back with status "cancelled" and score None), so one slow program
cannot stall training. The pool restarts its zygote if it dies, is safe to call
from several threads (calls are serialised), notices being inherited by a
forked process (and starts its own zygote there), and shuts down at exit.
"""
from __future__ import annotations

import atexit
import logging
import os
import select
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

from grpokit.sandbox import codec
from grpokit.sandbox.jobs import Job, Result

log = logging.getLogger(__name__)

_SRC = str(Path(__file__).resolve().parents[2])  # the directory holding the grpokit package
_BOOT = "import sys; sys.path.insert(0, sys.argv.pop(1)); from grpokit.sandbox.zygote import main; main()"
_ZYGOTE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


class SandboxUnavailable(RuntimeError):
    """The zygote could not be started."""


class SandboxPool:
    def __init__(self, workers: int | None = None, isolation: str = "auto", preload: tuple[str, ...] = ()) -> None:
        if isolation not in ("auto", "basic"):
            raise ValueError("isolation must be 'auto' (strongest available) or 'basic'")
        self.workers = int(workers or max(2, os.cpu_count() or 2))
        if not 1 <= self.workers <= 64:
            raise ValueError("workers must be between 1 and 64")
        self.want = isolation
        self.preload = tuple(preload)
        self._proc: subprocess.Popen | None = None
        self._owner_pid: int | None = None
        self._lock = threading.Lock()
        self._next_id = 0
        self._atexit = False
        self.hello: dict = {}

    # ---- lifecycle ----------------------------------------------------------
    @property
    def isolation(self) -> dict:
        """What the zygote could set up (see isolation.Isolation)."""
        self._ensure_started()
        return dict(self.hello.get("isolation", {}))

    @property
    def level(self) -> str:
        return self.isolation.get("level", "unknown")

    @property
    def zygote_pid(self) -> int | None:
        return self.hello.get("pid")

    @property
    def workdir_root(self) -> str | None:
        """Where run directories live, as a path this process can open (the zygote
        may have a private /tmp, reachable through /proc/<pid>/root)."""
        if not self.hello:
            return None
        return f"/proc/{self.hello['pid']}/root{self.hello['tmp']}"

    @property
    def sandbox_uids(self) -> range | None:
        """The uids programs run as (None when no uid drop)."""
        base = self.hello.get("uid_base")
        return None if base is None else range(base, base + int(self.hello.get("workers", 64)))

    def _ensure_started(self) -> None:
        if self._proc is not None and self._owner_pid == os.getpid() and self._proc.poll() is None:
            return
        if self._owner_pid != os.getpid():
            self._proc = None  # inherited across fork: that zygote belongs to our parent
        elif self._proc is not None:
            self._discard()
        cmd = [sys.executable, "-I", "-c", _BOOT, _SRC, str(self.workers), self.want, ",".join(self.preload)]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_ZYGOTE_ENV,
                                close_fds=True, cwd="/")
        try:
            hello = self._read_frame(proc, time.monotonic() + 30)
        except Exception as exc:
            proc.kill()
            proc.wait()
            raise SandboxUnavailable(f"the sandbox zygote did not start: {exc}") from exc
        if not isinstance(hello, dict) or hello.get("op") != "hello":
            proc.kill()
            raise SandboxUnavailable(f"unexpected greeting from the sandbox zygote: {hello!r}")
        self._proc, self._owner_pid, self.hello = proc, os.getpid(), hello
        if not self._atexit:
            atexit.register(self.close)  # the zygote also dies with us (PDEATHSIG); this is the clean way
            self._atexit = True
        self._reader = codec.FrameReader()
        self._pending: list = []
        iso = hello.get("isolation", {})
        if iso.get("level") != "full":
            message = (
                f"grpokit sandbox is running with {iso.get('level')!r} isolation, not 'full': "
                + "; ".join(iso.get("notes", [])) + ". Untrusted programs are less contained; "
                "run as root on Linux for namespaces and per-run uids."
            )
            warnings.warn(message, RuntimeWarning, stacklevel=3)
            log.warning(message)
        else:
            log.info("grpokit sandbox: full isolation (pid+net+mount namespaces, private uid per worker)")
            for note in iso.get("notes", []):  # what is missing even so (a cgroup controller, say)
                log.warning("grpokit sandbox: %s", note)

    def _read_frame(self, proc, deadline: float):
        buf = b""
        fd = proc.stdout.fileno()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no answer from the sandbox zygote")
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise EOFError("the sandbox zygote exited")
                buf += chunk
                reader = codec.FrameReader()
                frames = reader.feed(buf)
                if frames:
                    return frames[0]

    def _discard(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()

    def close(self) -> None:
        """Stop the zygote; every running program is killed."""
        with self._lock:
            if self._proc is not None and self._owner_pid == os.getpid():
                self._discard()
            self._proc = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- running --------------------------------------------------------------
    def run(self, jobs: list[Job], budget_s: float | None = None) -> list[Result]:
        """Grade every job, in parallel; never raises for anything a program does.

        budget_s: wall-clock seconds for the whole batch; jobs not finished by
        then are killed or skipped and come back "cancelled" (score None).
        """
        if not jobs:
            return []
        with self._lock:
            try:
                self._ensure_started()
            except SandboxUnavailable as exc:
                warnings.warn(str(exc), RuntimeWarning, stacklevel=2)
                return [Result(status="sandbox_error", error=str(exc)) for _ in jobs]
            return self._run_locked(jobs, budget_s)

    def _run_locked(self, jobs: list[Job], budget_s: float | None) -> list[Result]:
        proc = self._proc
        level = self.hello.get("isolation", {}).get("level", "unknown")
        ids = {}
        payloads = []
        for job in jobs:
            self._next_id += 1
            ids[self._next_id] = len(payloads)
            header, secret = job.frames(self._next_id)
            header["secret_len"] = len(secret)
            payloads.append(codec.dumps(header) + secret)
        results: list[Result | None] = [None] * len(jobs)
        stop = threading.Event()
        sent = [0]
        answered = [0]
        write_lock = threading.Lock()
        # Jobs in flight are bounded: the zygote holds an fd (the tests' memfd) per queued
        # job, and a cancel must not wait behind a pipe full of jobs.
        window = threading.Condition()
        max_in_flight = 4 * self.workers + 8

        def writer() -> None:
            try:
                for payload in payloads:
                    with window:
                        window.wait_for(lambda: stop.is_set() or sent[0] - answered[0] < max_in_flight)
                    with write_lock:
                        if stop.is_set():
                            return
                        proc.stdin.write(payload)
                        proc.stdin.flush()
                        sent[0] += 1
            except (OSError, ValueError):
                pass

        thread = threading.Thread(target=writer, name="grpokit-sandbox-writer", daemon=True)
        thread.start()
        deadline = None if budget_s is None else time.monotonic() + float(budget_s)
        cancelled, cancel_time = False, 0.0
        fd = proc.stdout.fileno()
        reader = codec.FrameReader()
        broken = None
        while True:
            outstanding = sum(r is None for r in results)
            if outstanding == 0:
                break
            if cancelled and outstanding == len(jobs) - sent[0] and thread_done(thread):
                break  # everything sent is answered; the rest never started
            if cancelled and time.monotonic() > cancel_time + 10:
                broken = "the sandbox zygote did not answer a cancel within 10 s"
                break
            timeout = 1.0
            if deadline is not None and not cancelled:
                timeout = min(timeout, max(0.0, deadline - time.monotonic()))
            ready, _, _ = select.select([fd], [], [], timeout)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    broken = "the sandbox zygote exited unexpectedly"
                    break
                try:
                    frames = reader.feed(chunk)
                except codec.ProtocolError as exc:
                    broken = f"garbled answer from the sandbox zygote: {exc}"
                    break
                for message in frames:
                    if message.get("op") == "result" and message.get("id") in ids:
                        results[ids[message["id"]]] = Result.from_message(message, level)
                        with window:
                            answered[0] += 1
                            window.notify()
            elif proc.poll() is not None:
                broken = "the sandbox zygote exited unexpectedly"
                break
            if deadline is not None and not cancelled and time.monotonic() >= deadline:
                cancelled = True
                cancel_time = time.monotonic()
                stop.set()
                with window:
                    window.notify()
                with write_lock:
                    try:
                        proc.stdin.write(codec.dumps({"op": "cancel"}))
                        proc.stdin.flush()
                    except (OSError, ValueError):
                        broken = "the sandbox zygote exited unexpectedly"
                        break
        stop.set()
        with window:
            window.notify()
        thread.join(timeout=5)
        if broken:
            log.error(broken)
            warnings.warn(f"grpokit sandbox: {broken}; affected samples score None", RuntimeWarning, stacklevel=3)
            self._discard()
        filler = "cancelled" if cancelled and not broken else "sandbox_error"
        why = broken or "the step's time budget ran out before it started"
        return [r if r is not None else Result(status=filler, error=why, isolation=level) for r in results]


def thread_done(thread: threading.Thread) -> bool:
    return not thread.is_alive()


_shared: SandboxPool | None = None
_shared_lock = threading.Lock()


def get_pool() -> SandboxPool:
    """The process-wide pool the rewards use (started on first use, stopped at exit)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = SandboxPool()
            atexit.register(shutdown_pool)
        return _shared


def shutdown_pool() -> None:
    global _shared
    with _shared_lock:
        pool, _shared = _shared, None
    if pool is not None:
        pool.close()
