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
  read-only to it. "full" also needs the syscall filter (syscalls.py); each run
  gets its own IPC namespace where the kernel allows it.
- "basic": anything less. Runs are killed by process group plus a sweep of
  orphans (the supervisor is a child subreaper, so double-forked daemons come
  back to it); rlimits still apply; network and the filesystem are NOT isolated
  and a thread cap cannot be enforced. The pool warns loudly.
"""
from __future__ import annotations

import os
import resource
import signal

from grpokit.sandbox.cgroups import SlotCgroups, autogroup_enabled, join_cgroup  # noqa: F401 - re-exported
from grpokit.sandbox.filesystem import build_root, expose_read_only
from grpokit.sandbox.kernel import (  # noqa: F401 - re-exported: the rest of the sandbox imports them from here
    CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWPID, MS_NODEV, MS_NOSUID, MS_PRIVATE, MS_REC, PR_SET_CHILD_SUBREAPER,
    PR_SET_NAME, PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG, can_clone_pid_namespace, clone_pid_namespace,
    join_fresh_session_keyring, mount, prctl,
    set_name, unshare,
)


_FIELDS = ("pid_namespace", "net_namespace", "mount_namespace", "private_tmp", "hidden_proc", "private_root",
           "uid_drop", "memory_cgroup", "cpu_cgroup", "private_shm", "ipc_namespace", "syscall_filter", "run_scope")


class Isolation:
    """What the zygote could set up (a plain class: dataclasses would drag `inspect`
    into the zygote, and every byte the zygote loads is paid again on each fork)."""

    def __init__(self) -> None:
        self.level = "basic"
        for name in _FIELDS:
            setattr(self, name, False)
        self.notes: tuple = ()
        self.root: str | None = None  # the directory runs chroot into (private_root)
        self.slot_roots: list[str] = []  # the same per slot, each with its own /dev/shm (private_shm)
        self.cpu_share: str | None = None  # how each run gets one CPU share: "session" (autogroup) or "cgroup"
        self.seccomp_bpf: bytes = b""  # the compiled syscall filter runs install (syscalls.py)

    def as_dict(self) -> dict:
        d = {"level": self.level, "root": self.root, "slot_roots": list(self.slot_roots), "cpu_share": self.cpu_share,
             **{name: getattr(self, name) for name in _FIELDS}}
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


def _probe_pid_namespace(extra_flags: int = 0) -> bool:
    # unshare(CLONE_NEWPID) works once per process, so try it in a throwaway child.
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            unshare(CLONE_NEWPID | extra_flags)
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
                # /tmp holds the run directories and is not writable by runs (0711): a run writes
                # only in its own home (a capped tmpfs, rundir.py), so it cannot fill what the
                # zygote and other runs need.
                sizes = {"/tmp": "size=512m,nr_inodes=65536,mode=0711", "/var/tmp": "size=64m,nr_inodes=4096,mode=1777",
                         "/dev/shm": "size=64m,nr_inodes=4096,mode=1777"}
                for target, options in sizes.items():
                    if os.path.isdir(target):
                        mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, options)
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
        else:
            # SysV shared memory, semaphores and message queues die with the run that made them.
            iso.ipc_namespace = _probe_pid_namespace(CLONE_NEWIPC)
            if not iso.ipc_namespace:
                notes.append("no IPC namespace per run: SysV IPC objects can outlive a run")
        try:
            from grpokit.sandbox import syscalls

            iso.seccomp_bpf = syscalls.compile_filter()
            iso.syscall_filter = True
        except OSError as exc:
            notes.append(f"no syscall filter ({exc}): AF_VSOCK and other socket families, keyrings reachable")
        iso.run_scope = syscalls.landlock_abi() >= 6
        if not iso.run_scope:
            notes.append("no Landlock scoping (Linux < 6.12): concurrent runs can meet on an abstract unix socket")
        iso.uid_drop = True
    if iso.pid_namespace and iso.net_namespace and iso.uid_drop and iso.syscall_filter:
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
