"""The judge server's life as a process: it ends with whoever started it, and its port is its own.

A server left behind holds its port, and the next `grpokit judge serve` on that port would see the
old one answer and call itself ready. So:
- `launch_prefix`: the server is started through a few lines of Python that ask the kernel
  (prctl PR_SET_PDEATHSIG, Linux) to send it SIGTERM when the process that started it dies, however
  it dies (SIGKILL included), then exec the server. The setting survives exec; a launcher, not
  Popen's preexec_fn, because preexec_fn is unsafe in a process with threads (training has them).
  The kernel tracks the thread that forked: start the server from a thread that outlives it.
- `stop_on_signals`: SIGTERM and SIGHUP to the wrapper become an exception, so the `with` that
  holds the server ends it and its process group as Ctrl-C does.
- `port_holder` / `listening_pids`: who listens on a port (from /proc), for an error that names it
  before the server starts, and to check that what answers on the port is our server.
- `tail_lines`: the end of a log in whole lines, never cut mid-word.
"""
from __future__ import annotations

import contextlib
import errno
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Iterator

# Runs in the child before the server: argv = [parent pid, program, args...].
_LAUNCHER = (
    "import ctypes, os, signal, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    sys.exit(0)  # the parent died before the setting took: nobody is left to serve\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)


def launch_prefix() -> list[str]:
    """The argv to put before a server's own, so that it gets SIGTERM when this process dies ([] off Linux)."""
    if not sys.platform.startswith("linux"):
        return []
    return [sys.executable, "-c", _LAUNCHER, str(os.getpid())]


class Stopped(BaseException):
    """SIGTERM or SIGHUP reached the wrapper: unwind, ending the server on the way out.
    A BaseException, as KeyboardInterrupt is, so no `except Exception` on the way swallows it."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def stop_on_signals(signals: tuple[int, ...] = (signal.SIGTERM, signal.SIGHUP)) -> Iterator[None]:
    """While inside, the given signals raise Stopped in the main thread (and the old handlers come back after).
    Only the first raises: a second one while the server is being stopped must not cut that short."""
    raised = []

    def handler(signum, _frame):
        if not raised:
            raised.append(signum)
            raise Stopped(signum)

    old = {}
    for signum in signals:
        try:
            old[signum] = signal.signal(signum, handler)
        except (ValueError, OSError):  # not the main thread, or a signal this platform lacks
            pass
    try:
        yield
    finally:
        for signum, previous in old.items():
            signal.signal(signum, previous)


def port_in_use(host: str, port: int) -> bool:
    """Whether something listens on host:port (a bind as uvicorn makes it, with SO_REUSEADDR, fails)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        return False
    for family, kind, proto, _, address in infos:
        try:
            sock = socket.socket(family, kind, proto)
        except OSError:  # an address family this machine lacks (IPv6 off): nothing can listen there
            continue
        with sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    return True
    return False


def _listening_inodes(port: int) -> set[str]:
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            # local address "0100007F:1F9A", state 0A = LISTEN, inode at 9
            if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes


def listening_pids(port: int, pids: list[int] | None = None) -> set[int] | None:
    """The processes (among `pids`, default all) holding a socket that listens on `port`; None where
    this cannot be read (no /proc). Processes of other users may be unreadable and are skipped."""
    if not Path("/proc/net/tcp").exists():
        return None
    inodes = _listening_inodes(port)
    if not inodes:
        return set()
    wanted = {f"socket:[{inode}]" for inode in inodes}
    found = set()
    for pid in pids if pids is not None else [int(p) for p in os.listdir("/proc") if p.isdigit()]:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") in wanted:
                    found.add(pid)
                    break
            except OSError:
                continue
    return found


def group_pids(pgid: int) -> list[int]:
    """The processes of process group `pgid` (the server and what it spawned)."""
    out = []
    for entry in os.listdir("/proc") if Path("/proc").is_dir() else []:
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ")".
        fields = stat[stat.rindex(")") + 2:].split()
        if len(fields) > 2 and int(fields[2]) == pgid:
            out.append(int(entry))
    return out


def group_listens(port: int, pgid: int) -> bool | None:
    """Whether a process of group `pgid` listens on `port`: False when another process does, None where
    /proc cannot tell (another platform, or nothing listens yet)."""
    if not Path("/proc/net/tcp").exists() or not _listening_inodes(port):
        return None
    return bool(listening_pids(port, group_pids(pgid)))


def port_holder(port: int) -> str:
    """' by pid N (its command line)' for whoever listens on `port`, or '' where that cannot be told."""
    pids = listening_pids(port)
    if not pids:
        return ""
    pid = min(pids)
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        command = ""
    return f" by pid {pid}" + (f" ({tail_lines(command, 160, from_end=False)})" if command else "")


def tail_lines(text: str, max_chars: int = 1500, from_end: bool = True) -> str:
    """At most about max_chars of `text` in whole lines (the last ones, or the first with from_end=False);
    a single line longer than that is cut at a space and marked with '...', never mid-word."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    lines = text.splitlines()
    kept: list[str] = []
    size = 0
    for line in reversed(lines) if from_end else lines:
        if kept and size + len(line) + 1 > max_chars:
            break
        kept.append(line)
        size += len(line) + 1
    if len(kept) == 1 and len(kept[0]) > max_chars:
        kept = [_cut_line(kept[0], max_chars, from_end)]
    return "\n".join(reversed(kept) if from_end else kept)


def _cut_line(line: str, max_chars: int, from_end: bool) -> str:
    """One line cut to about max_chars at a space, marked '...'; a word longer than that is kept whole."""
    if from_end:
        at = len(line) - max_chars
        if line[at - 1] != " ":
            space = line.find(" ", at)
            at = space + 1 if space != -1 else line.rfind(" ", 0, at) + 1
        return ("..." if at > 0 else "") + line[at:]
    at = max_chars
    if at < len(line) and line[at] != " ":
        space = line.rfind(" ", 0, at)
        at = space if space > 0 else (line.find(" ", at) if " " in line[at:] else len(line))
    return line[:at] + ("..." if at < len(line) else "")
