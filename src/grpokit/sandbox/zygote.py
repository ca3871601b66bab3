"""The prepared parent every run forks from.

Started once per pool as a fresh interpreter with a scrubbed environment (so
no secret of the trainer's environment exists anywhere in its memory, which
every run inherits), it enters the isolation namespaces, imports what programs
commonly use, and forks the programs: a fork costs about a millisecond, an
interpreter start tens of milliseconds.

Two ways to run a job:
- fast path (function-mode jobs, when PID namespaces work): the zygote clones
  the program straight into a new PID namespace and hands the pipes to it, plus
  the memfd with the tests, to the slot's persistent grader (grader.py). One
  fork per job.
- supervisor path (stdin/stdout jobs, or no PID namespaces): a supervisor is
  forked per job and spawns the program itself (supervisor.py).

Protocol on stdin: a frame {"op": "job", ...} followed by exactly
`secret_len` raw bytes of test data, which are spliced straight into a memfd
and never pass through this process's memory. {"op": "cancel"} kills every
running job and answers the rest as cancelled. EOF shuts down. Results go out
on stdout as frames.
"""
from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import sys
import time

from grpokit.sandbox import child as child_mod
from grpokit.sandbox import codec, grader, isolation, syscalls
from grpokit.sandbox.filesystem import slot_root
from grpokit.sandbox.limits import WALL_FACTOR
from grpokit.sandbox.rundir import empty_home, make_home, make_run_dir, remove_owned_by, remove_tree
from grpokit.sandbox.supervisor import _tail, io_budget_s, supervise  # loaded before forking

# Modules generated programs import all the time (HumanEval prompts start with
# `from typing import List`): loaded once here, free after fork. Kept short on
# purpose: fork and page-fault cost grow with the zygote's memory (measured: a
# 19 MB zygote forks at half the rate of a 9 MB one), so heavy modules (numpy,
# decimal, statistics) are better imported by the few programs that use them.
# SandboxPool(preload=...) adds more.
PRELOAD = ("math", "itertools", "collections", "functools", "heapq", "bisect", "re", "string", "typing")

# Run once in the zygote so that what every program does first is already
# initialised in the memory it inherits. Measured: a child's first compile()
# costs ~3.5 CPU-ms and ~300 page faults when the zygote never compiled
# anything (the parser and AST types initialise lazily), ~0.2 ms afterwards.
_WARM_UP = """
from typing import List, Optional
import math, re

class Point:
    def __init__(self, x: int, y: int = 0) -> None:
        self.x, self.y = x, y

def solve(values: List[int], key: Optional[str] = None) -> dict:
    seen = {v: i for i, v in enumerate(values) if v % 2 == 0}
    total = sum(x * x for x in values) + math.floor(1.5)
    words = [w.strip().lower() for w in re.split(r"\\s+", f"{key!r} a b")]
    try:
        assert total >= 0, "negative"
    except (AssertionError, ValueError) as exc:
        raise RuntimeError(str(exc)) from None
    while values and values[-1] < 0:
        values = values[:-1]
    return {"seen": seen, "total": total, "words": words, "p": Point(1).x, "f": lambda t: t + 1.0}

assert solve([1, 2, 3])["total"] == 15
"""


def warm_up() -> None:
    namespace = {"__name__": "__warm_up__"}
    exec(compile(_WARM_UP, "warm_up.py", "exec"), namespace)
    value = namespace["solve"]([4, 5])
    codec.dumps({"op": "ready", "globals": [["total", codec.encode(value["total"])],
                                            ["words", codec.encode((value["words"], {1: 2.5}, b"x"))]]})
    json.loads(json.dumps({"id": 1, "status": "passed", "tests": [True]}))


class Zygote:
    def __init__(self, workers: int, want: str, preload: tuple[str, ...]) -> None:
        self.workers = workers
        for name in PRELOAD + preload:
            try:
                __import__(name)
            except Exception:
                pass
        warm_up()
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < hard:  # a queued job holds an fd; runs set their own (lower) limit
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        # Every run inherits this environment: make it the scrubbed one once, here.
        os.environ.clear()
        os.environ.update(child_mod.SCRUBBED_ENV)
        self.iso = isolation.setup_zygote(want)
        child_mod.SYSCALL_FILTER = syscalls.Filter(self.iso.seccomp_bpf) if self.iso.seccomp_bpf else None
        child_mod.RUN_SCOPE = self.iso.run_scope
        self.clone_flags = isolation.CLONE_NEWIPC if self.iso.ipc_namespace else 0
        isolation.prctl(isolation.PR_SET_PDEATHSIG, signal.SIGKILL)
        isolation.set_name("grpokit-zygote")
        self.tmp = os.path.join("/tmp", f"grpokit-sandbox-{os.getpid()}-{os.urandom(4).hex()}")
        os.mkdir(self.tmp, 0o711)
        os.chmod(self.tmp, 0o711)  # runs as other uids must reach their own subdirectory
        # A block of uids nobody else uses, one per worker slot (see isolation.apply_limits).
        self.uid_base = 1_000_000_000 + (os.getpid() % 10_000_000) * 64 if self.iso.uid_drop else None
        # Each slot's home (its runs' cwd): a capped tmpfs, mounted once, emptied after every run.
        self.homes = {slot: os.path.join(self.tmp, f"home-{slot}") for slot in range(workers)}
        for slot, path in self.homes.items():
            make_home(path, None if self.uid_base is None else self.uid_base + slot, self.iso.root)
        # Each slot's root: the shared one plus a /dev/shm of its own (see filesystem.slot_root).
        self.roots = {slot: self.iso.root for slot in range(workers)}
        if self.iso.root:
            try:
                self.roots = {slot: slot_root(self.iso.root, slot) for slot in range(workers)}
                self.iso.private_shm = True
                self.iso.slot_roots = [self.roots[slot] for slot in range(workers)]
            except OSError as exc:
                self.roots = {slot: self.iso.root for slot in range(workers)}
                self.iso.notes += (f"no /dev/shm per run ({exc}): concurrent runs share one",)
        # The CPU is shared per run by the kernel's autogroup when runs cannot setsid()
        # (the syscall filter refuses it); a cpu group per slot only where that is missing.
        per_session = self.iso.syscall_filter and isolation.autogroup_enabled()
        controllers = ("memory", "cpuacct") if per_session else ("memory", "cpu", "cpuacct")
        self.cgroups = isolation.SlotCgroups(workers, controllers) if self.iso.uid_drop else None
        self.iso.memory_cgroup = bool(self.cgroups and self.cgroups.memory)
        self.iso.cpu_cgroup = bool(self.cgroups and self.cgroups.cpu)
        self.iso.cpu_share = "session" if per_session else ("cgroup" if self.cgroups and self.cgroups.cpu_share
                                                             else None)
        if self.iso.uid_drop and self.iso.cpu_share is None:
            self.iso.notes += (("no CPU share per run (no autogroup with a syscall filter, no cpu cgroup): "
                                "a program's many processes get many shares of the CPU"),)
        if self.cgroups is not None:
            self.iso.notes += tuple(self.cgroups.notes)
        if self.iso.uid_drop and not self.iso.memory_cgroup:
            self.iso.notes += ("no memory cgroup: memory is capped per process (RLIMIT_AS), not per run",)
        if self.iso.uid_drop and not self.iso.cpu_cgroup:
            self.iso.notes += (("no cpuacct cgroup: time limits are wall-clock, which concurrent runs "
                                "share (a sibling spinning on every core can push a run past its limit)"),)
        self.queue: list[tuple[dict, int]] = []
        self.free = list(range(workers))
        self.active: dict[int, dict] = {}  # report fd -> job state
        self.sel = selectors.DefaultSelector()
        self.counter = 0
        # Persistent graders, one per slot, forked now: before any job (and its tests) exists.
        self.fast = self.iso.pid_namespace and isolation.can_clone_pid_namespace()
        self.graders: dict[int, tuple[int, socket.socket]] = {}
        self.grader_slot: dict[int, int] = {}  # socket fd -> slot
        if self.fast:
            for slot in range(workers):
                self._spawn_grader(slot)

    # ---- I/O with the pool ----------------------------------------------
    def send(self, message: dict) -> None:
        try:
            codec.write_frame(1, message)
        except OSError:
            pass  # the pool is gone; we are shutting down

    def read_request(self) -> bool:
        try:
            message = codec.read_frame(0)
        except (EOFError, OSError, codec.ProtocolError):
            return False
        op = message.get("op")
        if op == "job":
            memfd = os.memfd_create("grpokit-tests", os.MFD_CLOEXEC)
            remaining = int(message.pop("secret_len", 0))
            while remaining:
                moved = os.splice(0, memfd, remaining)
                if moved == 0:
                    return False
                remaining -= moved
            self.queue.append((message, memfd))
        elif op == "cancel":
            self.cancel()
            self.send({"op": "cancel_done"})
        return True

    # ---- graders ----------------------------------------------------------
    def _spawn_grader(self, slot: int) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            try:
                null = os.open("/dev/null", os.O_RDWR)
                os.dup2(null, 0)
                os.dup2(null, 1)  # never write into the pool's result stream
                child_mod._close_fds_except({0, 1, 2, theirs.fileno()})
                grader.serve(theirs)
            finally:
                os._exit(0)
        theirs.close()
        self.graders[slot] = (pid, ours)
        self.grader_slot[ours.fileno()] = slot
        self.sel.register(ours, selectors.EVENT_READ)

    def _replace_grader(self, slot: int) -> None:
        pid, sock = self.graders.pop(slot)
        self.grader_slot.pop(sock.fileno(), None)
        self.sel.unregister(sock)
        sock.close()
        _kill(pid)
        _reap(pid)
        self._spawn_grader(slot)

    # ---- jobs -------------------------------------------------------------
    def start_jobs(self) -> None:
        while self.queue and self.free:
            job, memfd = self.queue.pop(0)
            slot = self.free.pop(0)
            self.counter += 1
            workdir = os.path.join(self.tmp, f"run-{self.counter}")
            uid = None if self.uid_base is None else self.uid_base + slot
            limits = job["limits"]
            cpu_timed = job["mode"] == "function" and self.fast and self.iso.cpu_cgroup
            seconds = float(limits["wall_s"]) * (WALL_FACTOR if cpu_timed else 1.0) if job["mode"] == "function" \
                else io_budget_s(limits, len(job.get("inputs") or ()))
            state = {
                "job": job, "slot": slot, "uid": uid, "workdir": workdir, "start": time.monotonic(),
                "result": None, "pids": set(), "pid": None, "kind": None,
                # Supervisors and graders enforce the limits; this is the backstop if they cannot.
                "deadline": time.monotonic() + seconds + 2.0, "wall_s": seconds,
                "cpu_usage": self.cgroups.cpu_usage_path(slot) if cpu_timed else None,
            }
            try:
                if self.cgroups is not None:
                    job["cgroups"] = self.cgroups.prepare(slot, limits["memory_mb"])
                job["root"] = self.roots[slot]
                if job["mode"] == "io" and self.iso.cpu_cgroup:
                    job["cpu_usage"] = self.cgroups.cpu_usage_path(slot)  # each case is timed on it
                job["home"] = self.homes[slot]
                make_run_dir(workdir)
            except OSError as exc:
                # Our side failed (out of memory, descriptors, space): the job is unjudged, the zygote lives on.
                self._unstarted(state, memfd, [], exc)
                continue
            if self.fast and job["mode"] == "function":
                self._start_fast(state, memfd)
            else:
                self._start_supervised(state, memfd)

    def _start_fast(self, state: dict, memfd: int) -> None:
        job, workdir, uid = state["job"], state["workdir"], state["uid"]
        run = {"index": 0, "workdir": workdir, "home": job["home"], "uid": uid, "limits": job["limits"],
               "stdin_path": None, "root": job["root"], "cgroups": job.get("cgroups")}
        fds: list[int] = []
        try:
            req_r, req_w = os.pipe()
            fds += (req_r, req_w)
            resp_r, resp_w = os.pipe()
            fds += (resp_r, resp_w)
            pid = isolation.clone_pid_namespace(self.clone_flags)
        except OSError as exc:
            self._unstarted(state, memfd, fds, exc)
            return
        if pid == 0:
            try:
                child_mod.enter(run, (req_r, resp_w))
                child_mod.run_module(job["program"], req_r, resp_w)
            finally:
                os._exit(child_mod.HARNESS_FAILED)
        os.close(req_r)
        os.close(resp_w)
        state.update(kind="fast", upid=pid)
        gpid, sock = self.graders[state["slot"]]
        self.active[sock.fileno()] = state
        try:
            # Timed in CPU seconds of the slot's cgroup where there is one, wall_s then being the backstop.
            message = json.dumps({"id": job["id"], "wall_s": state["wall_s"], "cpu_usage": state["cpu_usage"],
                                  "cpu_s": float(job["limits"]["wall_s"])}).encode()
            socket.send_fds(sock, [message], [req_w, resp_r, memfd])
        except OSError as exc:
            self.finish(sock.fileno(), {"status": "sandbox_error", "error": f"grader unreachable: {exc}"})
            self._replace_grader(state["slot"])
        finally:
            for fd in (req_w, resp_r, memfd):
                os.close(fd)

    def _start_supervised(self, state: dict, memfd: int) -> None:
        fds: list[int] = []
        try:
            r, w = os.pipe()
            fds += (r, w)
            pid = os.fork()
        except OSError as exc:
            self._unstarted(state, memfd, fds, exc)
            return
        if pid == 0:
            try:
                self._become_supervisor(state["job"], memfd, w, state["uid"], state["workdir"])
            finally:
                os._exit(0)
        os.close(w)
        os.close(memfd)
        os.set_blocking(r, False)
        state.update(kind="supervised", pid=pid, reader=codec.FrameReader())
        self.active[r] = state
        self.sel.register(r, selectors.EVENT_READ)

    def _become_supervisor(self, job: dict, memfd: int, report_fd: int, uid, workdir: str) -> None:
        null = os.open("/dev/null", os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)  # never write into the pool's result stream by accident
        child_mod._close_fds_except({0, 1, 2, memfd, report_fd})
        supervise(job, memfd, report_fd, self.iso.as_dict(), uid, workdir)

    def on_report(self, fd: int) -> None:
        state = self.active[fd]
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            try:
                for message in state["reader"].feed(data):
                    if message.get("op") == "pids":
                        state["pids"].update(p for p in message.get("pids", []) if type(p) is int and p > 1)
                    elif message.get("op") == "result":
                        state["result"] = message
            except codec.ProtocolError:
                state["result"] = {"status": "sandbox_error", "error": "supervisor sent a malformed report"}
            return
        self.finish(fd)

    def on_grader(self, fd: int) -> None:
        slot = self.grader_slot[fd]
        try:
            data = self.graders[slot][1].recv(1 << 20)
        except OSError:
            data = b""
        state = self.active.get(fd)
        if not data:  # the grader died
            if state is not None:
                self.finish(fd, {"status": "sandbox_error", "error": "the grader process died"})
            self._replace_grader(slot)
            return
        try:
            result = json.loads(data)
        except ValueError:
            result = {"status": "sandbox_error", "error": "the grader sent a malformed result"}
        retire = result.pop("retire", False) is True
        if state is not None and result.get("id") == state["job"]["id"]:
            self.finish(fd, result)
        if retire:  # it grew past its bound (grader.GRADER_RETIRE_MB) or failed: a fresh one before the next job
            self._replace_grader(slot)

    def kill(self, state: dict) -> None:
        for pid in [*state["pids"], state.get("pid"), state.get("upid")]:
            if pid:
                _kill(pid)

    def finish(self, fd: int, result: dict | None = None) -> None:
        state = self.active.pop(fd)
        if state["kind"] == "fast":
            # The grader is done with it: killing the namespace's init kills everything in it.
            _kill(state["upid"])
            _reap(state["upid"])
            result = dict(result or {})
            result["stdout"] = _tail(os.path.join(state["workdir"], "stdout-0"))
            result["stderr"] = _tail(os.path.join(state["workdir"], "stderr-0"))
            if self.iso.private_tmp and state["uid"] is not None:
                remove_owned_by(state["uid"])
        else:
            self.sel.unregister(fd)
            os.close(fd)
            if state["result"] is None or result is not None:
                # The supervisor died or was killed: make sure nothing it started survives.
                self.kill(state)
            _reap(state["pid"])
            result = result or state["result"] or {
                "status": "sandbox_error", "error": "the supervisor exited without a verdict"}
        result.setdefault("passed", 0)
        result.setdefault("total", 0)
        result.setdefault("all_ran", False)
        result.update(op="result", id=state["job"]["id"])
        result.setdefault("duration_s", time.monotonic() - state["start"])
        remove_tree(state["workdir"])
        empty_home((self.iso.root or "") + self.homes[state["slot"]])  # the path the run saw
        if self.iso.private_shm:
            empty_home(self.roots[state["slot"]] + "/dev/shm")
        self.free.append(state["slot"])
        self.send(result)

    def _unstarted(self, state: dict, memfd: int, fds: list[int], exc: OSError) -> None:
        """A job our side could not start: answered as a sandbox error (None), the zygote lives on."""
        for fd in (memfd, *fds):
            os.close(fd)
        remove_tree(state["workdir"])
        self.free.append(state["slot"])
        self.send({"op": "result", "id": state["job"]["id"], "status": "sandbox_error", "passed": 0, "total": 0,
                   "all_ran": False, "error": f"could not start the run: {exc}"})

    def _abort(self, fd: int, status: str, error: str) -> None:
        state = self.active[fd]
        self.kill(state)
        self.finish(fd, {"status": status, "error": error})
        if state["kind"] == "fast":
            self._replace_grader(state["slot"])  # it may be stuck; a fresh one is a fork away

    def check_deadlines(self) -> None:
        now = time.monotonic()
        for fd, state in list(self.active.items()):
            if now > state["deadline"]:
                self._abort(fd, "timeout", "killed by the zygote's backstop deadline")

    def cancel(self) -> None:
        for fd in list(self.active):
            self._abort(fd, "cancelled", "the step's time budget ran out")
        for job, memfd in self.queue:
            os.close(memfd)
            self.send({"op": "result", "id": job["id"], "status": "cancelled", "passed": 0, "total": 0,
                       "all_ran": False, "error": "the step's time budget ran out before it started"})
        self.queue.clear()

    # ---- main loop --------------------------------------------------------
    def serve(self) -> None:
        import gc

        self.sel.register(0, selectors.EVENT_READ)
        self.send({"op": "hello", "pid": os.getpid(), "isolation": self.iso.as_dict(), "tmp": self.tmp,
                   "uid_base": self.uid_base, "workers": self.workers})
        gc.collect()
        gc.freeze()  # forked children then do not dirty these pages by refcount scans
        open_input = True
        while open_input or self.active:
            self.start_jobs()
            timeout = None
            if self.active:
                timeout = max(0.0, min(s["deadline"] for s in self.active.values()) - time.monotonic())
            for key, _ in self.sel.select(timeout):
                if key.fd == 0:
                    if not self.read_request():
                        open_input = False
                        self.sel.unregister(0)
                        self.cancel_all_quietly()
                elif key.fd in self.grader_slot:
                    self.on_grader(key.fd)
                elif key.fd in self.active:
                    self.on_report(key.fd)
            self.check_deadlines()
        remove_tree(self.tmp)
        if self.cgroups is not None:
            self.cgroups.close()

    def cancel_all_quietly(self) -> None:
        for fd in list(self.active):
            self._abort(fd, "cancelled", "the pool shut down")
        for _, memfd in self.queue:
            os.close(memfd)
        self.queue.clear()


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def main() -> None:
    workers = int(sys.argv[1])
    want = sys.argv[2]
    preload = tuple(p for p in sys.argv[3].split(",") if p) if len(sys.argv) > 3 else ()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the trainer is the pool's to handle
    Zygote(workers, want, preload).serve()
