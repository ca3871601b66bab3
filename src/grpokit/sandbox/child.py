"""The untrusted side: runs the program, then answers the grader's calls.

This code runs in the sandboxed child after fork and before, then alongside,
the user's program. Nothing it says is trusted: the grader (supervisor.py)
only ever receives *values* from here (what a function returned, what it
raised) and runs every assertion itself, in its own process. A program that
patches this module, exits early, or prints "all tests passed" changes no
verdict; at most it makes its own functions look broken.
"""
from __future__ import annotations

import builtins
import os
import signal
import sys
import types

from grpokit.sandbox import codec, syscalls
from grpokit.sandbox.isolation import apply_limits, join_cgroup, join_fresh_session_keyring, set_name

# The compiled syscall filter (syscalls.py) and whether Landlock can scope a run: set once
# in the zygote, inherited by every fork.
SYSCALL_FILTER: syscalls.Filter | None = None
RUN_SCOPE = False
HARNESS_FAILED = 97  # exit code: the sandbox could not be set up (not the program's fault)
PROGRAM_ERROR = 1

SCRUBBED_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONIOENCODING": "utf-8",
    "USER": "sandbox",
}


def enter(run: dict, keep_fds: tuple[int, ...]) -> None:
    """Become the sandboxed process: stdio, fds, cwd, limits, uid, env.

    Runs as root right after fork. Any failure exits with HARNESS_FAILED so the
    supervisor can tell a broken sandbox from a broken program.
    """
    try:
        os.setsid()
        set_name("grpokit-run")
        workdir = run["workdir"]
        # Still root here, in a directory an earlier run of the same job owned: never
        # follow a link it may have planted (stdout-1 -> /etc/passwd), never reuse its files.
        stdin_fd = os.open(run.get("stdin_path") or "/dev/null", os.O_RDONLY | os.O_NOFOLLOW)
        os.dup2(stdin_fd, 0)
        for target, name in ((1, "stdout"), (2, "stderr")):
            # Root-owned files outside the program's home: it writes them through fds 1 and 2 only.
            fd = create_fresh(os.path.join(workdir, f"{name}-{run['index']}"))
            os.dup2(fd, target)
        _close_fds_except({0, 1, 2, *keep_fds})
        for path in run.get("cgroups") or ():
            join_cgroup(path)  # before the chroot hides /sys
        if run.get("root"):
            # Only system dirs, Python, /tmp, /dev and /proc exist in there; root could leave a
            # chroot, the unprivileged uid set just below cannot.
            os.chroot(run["root"])
        home = run["home"]
        os.chdir(home)
        if run.get("uid") is not None and not SYSCALL_FILTER:
            # Without the filter (which refuses every keyring call) at least start from an
            # empty session keyring; a key in the slot uid's user keyring stays reachable.
            join_fresh_session_keyring()  # as root, before the uid drop
        # Python ignores SIGXFSZ (so writes fail with EFBIG); the file-size cap should kill.
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        apply_limits(run["limits"], run.get("uid"))
        if RUN_SCOPE:
            syscalls.scope_to_this_run()
        if SYSCALL_FILTER:
            syscalls.install(SYSCALL_FILTER)
        # The zygote itself runs with SCRUBBED_ENV (zygote.py), so only the per-run entries change.
        os.environ["HOME"] = os.environ["TMPDIR"] = home
        # sys.stdin/stdout/stderr already wrap fds 0-2, which now point at the run's files
        # (the zygote never reads or writes through them, so no stale buffers).
        sys.argv = ["solution.py"]
        sys.path[0:0] = [home]
    except BaseException:
        os._exit(HARNESS_FAILED)


def create_fresh(path: str) -> int:
    """A new regular file at `path` for writing (whatever was there, link or not, is removed)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    try:
        return os.open(path, flags, 0o600)  # the usual case: a brand-new directory
    except FileExistsError:
        os.unlink(path)
        return os.open(path, flags, 0o600)


def _close_fds_except(keep: set[int]) -> None:
    # Every other fd (other jobs' channels, the zygote's pipes) closes before
    # user code exists, so it cannot be found later via /proc/self/fd.
    low = 0
    for fd in sorted(keep):
        if fd > low:
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)


def _fresh_main() -> dict:
    module = types.ModuleType("__main__")
    module.__dict__["__builtins__"] = builtins
    module.__file__ = "solution.py"
    sys.modules["__main__"] = module
    return module.__dict__


def run_script(program: str) -> None:
    """stdin/stdout mode: run the program like `python solution.py`, then exit."""
    namespace = _fresh_main()
    code = 0
    try:
        exec(compile(program, "solution.py", "exec"), namespace)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = PROGRAM_ERROR
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        code = code or PROGRAM_ERROR
    os._exit(code & 0xFF)


class _Server:
    """Answers the grader's requests about the program's objects."""

    def __init__(self, req_fd: int, resp_fd: int) -> None:
        self.req_fd, self.resp_fd = req_fd, resp_fd
        self.refs: dict[int, object] = {}
        # Bound now: the program may monkeypatch modules later; that only hurts itself.
        self._write, self._read = codec.write_frame, codec.read_frame
        self._encode = codec.encode

    def value(self, obj):
        try:
            return {"v": self._encode(obj)}
        except (codec.Unencodable, RecursionError, ValueError):
            ref = len(self.refs) + 1
            self.refs[ref] = obj
            return {"ref": ref, "callable": callable(obj)}

    def send(self, message) -> None:
        self._write(self.resp_fd, message)

    def serve(self) -> None:
        while True:
            try:
                request = self._read(self.req_fd)
            except BaseException:
                os._exit(0)
            try:
                reply = self.handle(request)
            except SystemExit as exc:  # sys.exit inside a called function
                reply = {"exc": "SystemExit", "msg": f"SystemExit({exc.code!r})"}
            except BaseException as exc:
                reply = {"exc": type(exc).__name__, "msg": _safe_str(exc)}
            try:
                self.send(reply)
            except (codec.Unencodable, ValueError, TypeError, RecursionError):
                self.send({"exc": "TypeError", "msg": "reply could not be encoded"})

    def handle(self, request: dict):
        op = request["op"]
        target = self.refs[request["ref"]] if "ref" in request else None
        if op == "call":
            args = [codec.decode(a, refs=self.refs) for a in request["args"]]
            kwargs = {k: codec.decode(v, refs=self.refs) for k, v in request["kwargs"]}
            result = target(*args, **kwargs)
            reply = self.value(result)
            # Lists/dicts/sets the test passed may have been changed in place.
            back = []
            for i in request.get("back", ()):
                try:
                    back.append([i, self._encode(args[i])])
                except (codec.Unencodable, RecursionError, ValueError):
                    pass
            reply["back"] = back
            return reply
        if op == "getattr":
            return self.value(getattr(target, request["name"]))
        if op == "iter":
            return self.value(iter(target))
        if op == "next":
            try:
                return self.value(next(target))
            except StopIteration:
                return {"stop": True}
        if op == "len":
            return self.value(len(target))
        if op == "getitem":
            return self.value(target[codec.decode(request["key"], refs=self.refs)])
        if op == "contains":
            return self.value(codec.decode(request["item"], refs=self.refs) in target)
        raise ValueError(f"unknown op {op!r}")


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)[:500]
    except BaseException:
        return "<unprintable>"


def run_module(program: str, req_fd: int, resp_fd: int) -> None:
    """Function mode: run the program's top level, publish its globals, serve calls."""
    server = _Server(req_fd, resp_fd)
    namespace = _fresh_main()
    try:
        exec(compile(program, "solution.py", "exec"), namespace)
    except BaseException as exc:  # SystemExit included: the tests never got to run
        try:
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
            server.send({"op": "error", "type": type(exc).__name__, "msg": _safe_str(exc)})
        finally:
            os._exit(PROGRAM_ERROR)
    published = []
    for name, obj in list(namespace.items()):
        if name.startswith("__"):
            continue
        if isinstance(obj, types.ModuleType):
            # Only the module's name travels: the grader imports it itself (standard library only).
            module = getattr(obj, "__name__", None)
            if type(module) is str:
                published.append([name, {"module": module}])
            continue
        published.append([name, server.value(obj)])
    try:
        sys.stdout.flush()
    except BaseException:
        pass
    server.send({"op": "ready", "globals": published})
    server.serve()
