"""The system-call filter every run gets: no sockets but AF_UNIX, no kernel keyrings, no io_uring, no setsid.

The empty network namespace already leaves no route anywhere, but some address
families are not scoped by it (AF_VSOCK reaches the host), so every family but
AF_UNIX is refused outright. Keyrings are per uid, and a slot's uid is reused
by its next run: a key left there would be read by the next program. io_uring
could open sockets without a socket() call the filter sees.

The filter is compiled once, in the zygote, by libseccomp (the library that
knows each architecture's syscall numbers and blocks foreign-ABI entry points);
each run installs the compiled bytes with one prctl. No libseccomp: no filter,
and the isolation notes say so.
"""
from __future__ import annotations

import ctypes
import errno
import os
import socket

from grpokit.sandbox.kernel import _libc

SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_CMP_NE = 1
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2


def _errno_action(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


# (syscall, errno it fails with, argument rule or None)
_RULES = [
    ("socket", errno.EAFNOSUPPORT, (0, SCMP_CMP_NE, socket.AF_UNIX)),
    ("socketpair", errno.EAFNOSUPPORT, (0, SCMP_CMP_NE, socket.AF_UNIX)),
    ("keyctl", errno.EPERM, None),
    ("add_key", errno.EPERM, None),
    ("request_key", errno.EPERM, None),
    ("io_uring_setup", errno.ENOSYS, None),
    ("io_uring_enter", errno.ENOSYS, None),
    ("io_uring_register", errno.ENOSYS, None),
    # The kernel shares the CPU per session (autogroup): a run is one session, and children
    # that could setsid() would each get a share of their own (24 spinners, 24 shares).
    ("setsid", errno.EPERM, None),
]


def compile_filter() -> bytes:
    """The filter as raw BPF (struct sock_filter[]); raises OSError when libseccomp is missing or fails."""
    try:
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError:
        from ctypes.util import find_library  # runs ldconfig: only when the usual soname is not there

        name = find_library("seccomp")
        if name is None:
            raise OSError(errno.ENOENT, "libseccomp not found (apt install libseccomp2)") from None
        lib = ctypes.CDLL(name, use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        raise OSError(errno.ENOMEM, "seccomp_init failed")
    try:
        for syscall, code, rule in _RULES:
            number = lib.seccomp_syscall_resolve_name(syscall.encode())
            if number < 0:
                continue  # not on this architecture
            args = (_ArgCmp * 1)(_ArgCmp(*rule, 0)) if rule else None
            ret = lib.seccomp_rule_add_array(ctx, _errno_action(code), number, 1 if rule else 0, args)
            if ret < 0:
                raise OSError(-ret, f"seccomp rule for {syscall}: {os.strerror(-ret)}")
        fd = os.memfd_create("grpokit-seccomp", os.MFD_CLOEXEC)
        try:
            ret = lib.seccomp_export_bpf(ctx, fd)
            if ret < 0:
                raise OSError(-ret, f"seccomp_export_bpf: {os.strerror(-ret)}")
            return os.pread(fd, os.fstat(fd).st_size, 0)
        finally:
            os.close(fd)
    finally:
        lib.seccomp_release(ctx)


class Filter:
    """A compiled filter laid out for the kernel once (in the zygote); each run only calls prctl."""

    def __init__(self, bpf: bytes) -> None:
        if not bpf or len(bpf) % 8:
            raise ValueError("not a compiled seccomp filter")
        self._buffer = ctypes.create_string_buffer(bpf, len(bpf))
        self._program = _SockFprog(len(bpf) // 8, ctypes.addressof(self._buffer))


def install(compiled: Filter) -> None:
    """Install the filter on this process (after PR_SET_NO_NEW_PRIVS); everything it starts inherits it."""
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(compiled._program), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp filter: {os.strerror(err)}")


# Landlock (Linux 6.12+, ABI 6): a run may neither connect to abstract unix sockets nor
# signal processes outside its own Landlock domain, i.e. outside the run. The empty
# network namespace is shared by all runs of a zygote, so without this two concurrent
# runs could talk over an abstract socket.
_SYS_LANDLOCK_CREATE_RULESET, _SYS_LANDLOCK_RESTRICT_SELF = 444, 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_SCOPE = 0x1 | 0x2  # LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL


class _LandlockRulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: none)."""
    version = _libc.syscall(ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0),
                            ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION))
    return max(0, version)


_SCOPE_ATTR = _LandlockRulesetAttr(0, 0, _LANDLOCK_SCOPE)


def scope_to_this_run() -> None:
    """Confine abstract unix sockets and signals to this process and what it starts (needs ABI >= 6)."""
    fd = _libc.syscall(ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET), ctypes.byref(_SCOPE_ATTR),
                       ctypes.c_size_t(ctypes.sizeof(_SCOPE_ATTR)), ctypes.c_uint32(0))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock_create_ruleset: {os.strerror(err)}")
    try:
        if _libc.syscall(ctypes.c_long(_SYS_LANDLOCK_RESTRICT_SELF), ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"landlock_restrict_self: {os.strerror(err)}")
    finally:
        os.close(fd)
