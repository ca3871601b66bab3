"""Thin wrappers over the Linux calls the sandbox needs (ctypes where Python has none)."""
from __future__ import annotations

import ctypes
import os
import signal

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
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
_SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}
KEYCTL_JOIN_SESSION_KEYRING = 1


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


def clone_pid_namespace(extra_flags: int = 0) -> int:
    """fork(), but the child is the init of a new PID namespace (0 in the child, its pid in the parent).

    unshare(CLONE_NEWPID) works once per process, so the zygote, which starts
    a namespace per run, uses the raw clone syscall, wrapped in the same
    before/after-fork hooks os.fork() runs.
    """
    import platform

    api = ctypes.pythonapi
    api.PyOS_BeforeFork()
    pid = _pylib.syscall(ctypes.c_long(_SYS_CLONE[platform.machine()]), ctypes.c_ulong(CLONE_NEWPID | extra_flags | signal.SIGCHLD),
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


def join_fresh_session_keyring() -> None:
    """A new anonymous session keyring for this process, so no key of an earlier run is in reach."""
    number = _SYS_KEYCTL.get(os.uname().machine)
    if number is None:
        return
    if _libc.syscall(ctypes.c_long(number), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING), ctypes.c_void_p(0)) < 0:
        err = ctypes.get_errno()
        if err not in (38, 1):  # ENOSYS, EPERM: no keyrings here at all
            raise OSError(err, f"keyctl(JOIN_SESSION_KEYRING): {os.strerror(err)}")
