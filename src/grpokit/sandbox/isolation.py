"""Kernel isolation primitives: namespaces, mounts, prctl, rlimits, uid drop.

What the machine allows is probed once, in the zygote (the prepared parent all
runs fork from), and reported as an `Isolation` record:

- "full": root. The zygote lives in its own network namespace (no interfaces
  but a downed loopback: no network) and mount namespace (private tmpfs on
  /tmp, /var/tmp and /dev/shm, /proc with hidepid so a program sees only its own
  processes, and a minimal read-only root that runs chroot into). Each run is the init of a fresh PID namespace, so killing it kills
  every descendant, including ones that setsid() or double-fork. Each worker
  slot runs programs as its own unprivileged uid, which makes RLIMIT_NPROC a
  real per-run process/thread cap and keeps files outside the run's directory
  read-only to it.
- "basic": anything less. Runs are killed by process group plus a sweep of
  orphans (the supervisor is a child subreaper, so double-forked daemons come
  back to it); rlimits still apply; network and the filesystem are NOT isolated
  and a thread cap cannot be enforced. The pool warns loudly.
"""
from __future__ import annotations

import ctypes
import os
import resource
import signal

CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_MOVE = 0x1, 0x2, 0x4, 0x20, 0x1000, 0x2000
MS_REC, MS_PRIVATE = 0x4000, 0x40000
PR_SET_PDEATHSIG, PR_SET_NAME, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 15, 36, 38

_libc = ctypes.CDLL(None, use_errno=True)
# Calls through PyDLL keep the GIL held: needed for clone(), whose child must not
# return into an interpreter that thinks another thread holds it.
_pylib = ctypes.PyDLL(None, use_errno=True)
_SYS_CLONE = {"x86_64": 56, "aarch64": 220}


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    # os.unshare only exists from Python 3.12.
    if hasattr(os, "unshare"):
        os.unshare(flags)
    else:
        _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def can_clone_pid_namespace() -> bool:
    import platform

    return platform.machine() in _SYS_CLONE and hasattr(ctypes.pythonapi, "PyOS_AfterFork_Child")


def clone_pid_namespace() -> int:
    """fork(), but the child is the init of a new PID namespace (0 in the child, its pid in the parent).

    unshare(CLONE_NEWPID) works once per process, so the zygote, which starts
    a namespace per run, uses the raw clone syscall, wrapped in the same
    before/after-fork hooks os.fork() runs.
    """
    import platform

    api = ctypes.pythonapi
    api.PyOS_BeforeFork()
    pid = _pylib.syscall(ctypes.c_long(_SYS_CLONE[platform.machine()]), ctypes.c_ulong(CLONE_NEWPID | signal.SIGCHLD),
                         ctypes.c_void_p(0), ctypes.c_void_p(0), ctypes.c_void_p(0), ctypes.c_ulong(0))
    if pid == 0:
        api.PyOS_AfterFork_Child()
        return 0
    err = ctypes.get_errno()
    api.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(err, f"clone(CLONE_NEWPID): {os.strerror(err)}")
    return pid


def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    _check(
        _libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None,
                    ctypes.c_ulong(flags), data.encode() if data else None),
        f"mount {target}",
    )


def prctl(option: int, arg: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), f"prctl({option})")


def set_name(name: str) -> None:
    """The process name `ps` and `top` show (grpokit-zygote, -supervisor, -run)."""
    _libc.prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)


_FIELDS = ("pid_namespace", "net_namespace", "mount_namespace", "private_tmp", "hidden_proc", "private_root",
           "uid_drop", "memory_cgroup")


class Isolation:
    """What the zygote could set up (a plain class: dataclasses would drag `inspect`
    into the zygote, and every byte the zygote loads is paid again on each fork)."""

    def __init__(self) -> None:
        self.level = "basic"
        for name in _FIELDS:
            setattr(self, name, False)
        self.notes: tuple = ()
        self.root: str | None = None  # the directory runs chroot into (private_root)

    def as_dict(self) -> dict:
        d = {"level": self.level, "root": self.root, **{name: getattr(self, name) for name in _FIELDS}}
        d["notes"] = list(self.notes)
        return d

    def describe(self) -> str:
        on = [k for k in _FIELDS if getattr(self, k)]
        off = [k for k in _FIELDS if not getattr(self, k)]
        text = f"sandbox isolation {self.level!r}: on={on}"
        if off:
            text += f" OFF={off}"
        if self.notes:
            text += " (" + "; ".join(self.notes) + ")"
        return text


def _probe_pid_namespace() -> bool:
    # unshare(CLONE_NEWPID) works once per process, so try it in a throwaway child.
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            unshare(CLONE_NEWPID)
            inner = os.fork()
            if inner == 0:
                os._exit(0 if os.getpid() == 1 else 1)
            _, status = os.waitpid(inner, 0)
            code = os.waitstatus_to_exitcode(status)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def setup_zygote(want: str = "auto") -> Isolation:
    """Put the calling (zygote) process into the strongest isolation available.

    want="basic" skips namespaces (used to test the fallback path).
    """
    iso = Isolation()
    notes = []
    if want == "basic":
        notes.append("basic isolation requested")
    elif os.geteuid() != 0:
        notes.append("not running as root: no namespaces, no uid drop")
    else:
        try:
            unshare(CLONE_NEWNET)
            iso.net_namespace = True
        except OSError as exc:
            notes.append(f"network namespace unavailable ({exc}); programs can reach the network")
        try:
            unshare(CLONE_NEWNS)
            mount("none", "/", None, MS_REC | MS_PRIVATE, None)
            iso.mount_namespace = True
        except OSError as exc:
            notes.append(f"mount namespace unavailable ({exc})")
        if iso.mount_namespace:
            try:
                # tmpfs is RAM: sizes and inode counts cap what runs can park there
                # (each run's directory lives in /tmp; everything is swept after it).
                sizes = {"/tmp": "size=512m,nr_inodes=65536", "/var/tmp": "size=64m,nr_inodes=4096",
                         "/dev/shm": "size=64m,nr_inodes=4096"}
                for target, options in sizes.items():
                    if os.path.isdir(target):
                        mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, options + ",mode=1777")
                iso.private_tmp = True
            except OSError as exc:
                notes.append(f"private /tmp unavailable ({exc})")
            try:
                mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV, "hidepid=2")
                iso.hidden_proc = True
            except OSError as exc:
                notes.append(f"/proc hidepid unavailable ({exc})")
        if iso.mount_namespace:
            try:
                expose_read_only(_python_paths())
            except OSError as exc:
                notes.append(f"could not expose the Python installation to sandbox uids ({exc})")
        if iso.private_tmp:
            try:
                iso.root = build_root(_python_paths())
                iso.private_root = True
            except OSError as exc:
                notes.append(f"no private root ({exc}): programs can read world-readable files (data sets!)")
        try:
            iso.pid_namespace = _probe_pid_namespace()
        except OSError as exc:
            notes.append(f"pid namespace probe failed ({exc})")
        if not iso.pid_namespace:
            notes.append("no pid namespace: kill by process group + orphan sweep")
        iso.uid_drop = True
    if iso.pid_namespace and iso.net_namespace and iso.uid_drop:
        iso.level = "full"
    elif iso.pid_namespace or iso.net_namespace or iso.uid_drop:
        iso.level = "partial"
    if iso.uid_drop:
        unreadable = _unreadable_as(PROBE_UID, _python_paths())
        if unreadable:
            notes.append(f"sandboxed programs cannot read {unreadable}: imports beyond the preloaded modules fail")
    iso.notes = tuple(notes)
    return iso


PROBE_UID = 999_999_999


def _python_paths() -> list[str]:
    """Directories a sandboxed program must be able to read to import modules."""
    import sys

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__)}
    paths.update(p for p in sys.path if p and os.path.isdir(p))
    return sorted(os.path.realpath(p) for p in paths if os.path.isdir(p))


def _blocking_ancestor(path: str) -> str | None:
    # The first directory on the way down that others cannot traverse (e.g. /root, 0700).
    current = "/"
    for part in path.strip("/").split("/"):
        current = os.path.join(current, part)
        if not os.stat(current).st_mode & 0o001:
            return current
    return None


def expose_read_only(paths: list[str]) -> None:
    """Inside the zygote's mount namespace, make `paths` readable to unprivileged uids.

    Python is often installed under a private home (pyenv in /root). Each private
    ancestor is covered with an empty tmpfs (hiding everything else in it from
    programs) and only the needed directories are bind-mounted back, read-only.
    """
    groups: dict[str, list[str]] = {}
    for path in paths:
        blocker = _blocking_ancestor(path)
        if blocker is not None:
            groups.setdefault(blocker, []).append(path)
    for n, (blocker, wanted) in enumerate(sorted(groups.items())):
        wanted = [p for p in sorted(set(wanted)) if not any(p != q and p.startswith(q + "/") for q in wanted)]
        staged = []
        for i, path in enumerate(wanted):
            stage = f"/tmp/.grpokit-stage-{n}-{i}"
            os.mkdir(stage, 0o700)
            mount(path, stage, None, MS_BIND | MS_REC, None)
            staged.append((stage, path))
        mount("tmpfs", blocker, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
        old_umask = os.umask(0o022)
        try:
            for stage, path in staged:
                os.makedirs(path, mode=0o755, exist_ok=True)
                mount(stage, path, None, MS_MOVE, None)
                mount("none", path, None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)
                os.rmdir(stage)
        finally:
            os.umask(old_umask)


ROOT_DIR = "/var/tmp/grpokit-root"
SYSTEM_DIRS = ("/usr", "/bin", "/lib", "/lib32", "/lib64", "/libx32", "/sbin", "/etc")


def build_root(python_paths: list[str]) -> str:
    """A minimal root for runs to chroot into: system dirs and Python, read-only; /tmp; /dev; /proc.

    Without it a program could read any world-readable file, such as the
    training data with its expected outputs sitting next to the project.
    Lives under /var/tmp, a tmpfs private to the zygote's mount namespace.
    """
    root = ROOT_DIR
    os.makedirs(root, exist_ok=True)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=0755")
    old_umask = os.umask(0o022)
    try:
        def bind(source: str, read_only: bool = True, recursive: bool = True) -> None:
            target = root + source
            if os.path.islink(source):  # merged /usr: /bin -> usr/bin
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.symlink(os.readlink(source), target)
                return
            if not os.path.isdir(source):
                return
            os.makedirs(target, exist_ok=True)
            mount(source, target, None, MS_BIND | (MS_REC if recursive else 0), None)
            if read_only:
                mount("none", target, None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)

        for path in SYSTEM_DIRS:
            bind(path)
        bind("/dev", read_only=False)  # /dev/null, /dev/urandom, and the private /dev/shm
        bind("/tmp", read_only=False, recursive=False)  # the private tmpfs that holds run directories
        for path in python_paths:
            if not any(path == d or path.startswith(d + "/") for d in SYSTEM_DIRS):
                bind(path)
        os.makedirs(root + "/proc", exist_ok=True)
        mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV, "hidepid=2")
    finally:
        os.umask(old_umask)
    return root


class MemoryCgroups:
    """One cgroup-v1 memory group per worker slot: a cap on a run's total memory.

    RLIMIT_AS caps each process; a program that forks 30 children of 1 GB each
    would still take 30 GB. The slot's group caps them together (the kernel
    OOM-kills inside the group, not on the host). Runs join their slot's group
    before dropping privileges. Absent or read-only cgroupfs: not used.
    """

    BASE = "/sys/fs/cgroup/memory"

    def __init__(self, slots: int) -> None:
        self.paths: dict[int, str] = {}
        self.limits: dict[int, int] = {}
        try:
            with open("/proc/self/cgroup") as fh:
                own = next(line.split(":", 2)[2].strip() for line in fh
                           if "memory" in line.split(":", 2)[1].split(","))
            parent = os.path.join(self.BASE, own.lstrip("/"))
            self._sweep_stale(parent)
            for slot in range(slots):
                path = os.path.join(parent, f"grpokit-{os.getpid()}-{slot}")
                os.mkdir(path)
                self.paths[slot] = path
        except (OSError, StopIteration):
            self.close()
            self.paths = {}

    @staticmethod
    def _sweep_stale(parent: str) -> None:
        # Groups left by zygotes that were killed outright.
        for name in os.listdir(parent):
            parts = name.split("-")
            if len(parts) == 3 and parts[0] == "grpokit" and parts[1].isdigit() \
                    and not os.path.exists(f"/proc/{parts[1]}"):
                try:
                    os.rmdir(os.path.join(parent, name))
                except OSError:
                    pass

    def prepare(self, slot: int, memory_mb: float) -> str | None:
        """The slot's group path with its cap set to memory_mb (None when unavailable)."""
        path = self.paths.get(slot)
        if path is None:
            return None
        limit = int(float(memory_mb) * 1024 * 1024)
        if self.limits.get(slot) != limit:
            try:
                with open(os.path.join(path, "memory.limit_in_bytes"), "w") as fh:
                    fh.write(str(limit))
                try:  # with swap accounting, swap counts against the same cap
                    with open(os.path.join(path, "memory.memsw.limit_in_bytes"), "w") as fh:
                        fh.write(str(limit))
                except OSError:
                    pass
                self.limits[slot] = limit
            except OSError:
                return None
        return path

    def close(self) -> None:
        for path in self.paths.values():
            try:
                os.rmdir(path)
            except OSError:
                pass


def join_cgroup(path: str) -> None:
    # "0" is the calling process, whatever PID namespace it sits in.
    with open(os.path.join(path, "cgroup.procs"), "w") as fh:
        fh.write("0")


def _unreadable_as(uid: int, paths: list[str]) -> list[str]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            bad = []
            for path in paths:
                try:
                    os.listdir(path)
                except OSError:
                    bad.append(path)
            os.write(w, "\n".join(bad).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return [p for p in data.decode().split("\n") if p]


def apply_limits(limits: dict, uid: int | None) -> None:
    """In the child, before any user code: rlimits, then drop to `uid`."""
    wall = float(limits["wall_s"])
    cpu = max(1, int(wall + 0.999))
    mem = int(limits["memory_mb"]) * 1024 * 1024
    fsize = int(float(limits["max_file_mb"]) * 1024 * 1024)
    nofile = int(limits["max_open_files"])
    # Soft CPU limit sends SIGXCPU (a program may ignore it); the hard one kills.
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if uid is not None:
        # RLIMIT_NPROC counts every task of the real uid, threads included; the
        # slot's uid is used by nothing else, so this caps this run alone.
        nproc = int(limits["max_processes"])
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    # The parent-death signal is cleared by a uid change, so set it after.
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
