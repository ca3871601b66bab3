"""Per-slot cgroups (cgroup v1): a run's total memory, its share of the CPU, its CPU time.

One group per worker slot in each hierarchy (a slot runs one program at a
time, so its groups are that run's):
- memory: RLIMIT_AS caps each process; a program that forks 30 children of
  1 GB each would still take 30 GB. The group caps them together (the kernel
  OOM-kills inside the group, not on the host).
- cpu: the kernel shares the CPU per session (autogroup), so a program whose
  24 children each setsid() and spin would get 24 shares to an honest
  sibling's one. Where autogroup is on, runs may not setsid() (syscalls.py)
  and each is one session: one share, no group needed. Elsewhere slot groups
  of equal weight share the CPU per run.
- cpuacct: the CPU time of every process of the run together, live or dead;
  the grader's time limit is counted on it (cputime.py), so siblings cannot
  push a run past its limit by taking the CPU from it.
Runs join their slot's groups before dropping privileges. A hierarchy that is
absent or read-only is not used, and the reason lands in `notes` (the pool logs
it). Only cgroup v1 is supported: on a v2-only machine there are none.
"""
from __future__ import annotations

import os

V1_ROOT = "/sys/fs/cgroup"
CONTROLLERS = ("memory", "cpu", "cpuacct")


def _own_groups() -> dict[str, str]:
    """This process's group per v1 controller, from /proc/self/cgroup ("4:memory:/a/b")."""
    own = {}
    with open("/proc/self/cgroup") as fh:
        for line in fh:
            _, names, path = line.rstrip("\n").split(":", 2)
            for name in names.split(","):  # "" is the cgroup-v2 line ("0::/a/b")
                own[name] = path
    return own


def autogroup_enabled() -> bool:
    """Whether the kernel shares this process's CPU per session (autogroup).

    Needs CONFIG_SCHED_AUTOGROUP switched on, and applies only to processes in the
    root CPU group: inside a container's or service's cpu cgroup, processes share
    the CPU one by one again.
    """
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as fh:
            if fh.read().strip() != "1":
                return False
        own = _own_groups()
    except OSError:
        return False
    return own.get("cpu", own.get("", "/")) == "/"


class SlotCgroups:
    """One cgroup-v1 group per worker slot in the memory, cpu and cpuacct hierarchies.

    controllers: which of them to use. The cpu group is only needed where the kernel
    does not already share the CPU per run: with autogroup on and setsid() refused to
    runs (syscalls.py), each run is one session and gets one share; joining one more
    group costs every run ~0.2 CPU-ms and more in wall time (measured).
    """

    def __init__(self, slots: int, controllers: tuple[str, ...] = CONTROLLERS) -> None:
        self.paths: dict[str, dict[int, str]] = {}
        self.limits: dict[int, int] = {}
        self.notes: list[str] = []
        try:
            own = _own_groups()
        except OSError as exc:
            self.notes.append(f"no cgroups ({exc})")
            return
        for controller in CONTROLLERS:  # groups of killed zygotes go, in hierarchies not used now too
            parent = os.path.join(V1_ROOT, controller, own.get(controller, "").lstrip("/"))
            if controller in own and os.path.isdir(parent):
                try:
                    _sweep_stale(parent)
                except OSError:
                    pass
        for controller in controllers:
            parent = os.path.join(V1_ROOT, controller, own.get(controller, "").lstrip("/"))
            if controller not in own or not os.path.isfile(os.path.join(parent, "cgroup.procs")):
                where = "no cgroup-v1 hierarchies (cgroup v2 only?)" if set(own) <= {""} else "hierarchy not mounted"
                self.notes.append(f"no {controller} cgroup: {where}")
                continue
            made: dict[int, str] = {}
            try:
                for slot in range(slots):
                    path = os.path.join(parent, f"grpokit-{os.getpid()}-{slot}")
                    os.mkdir(path)
                    made[slot] = path
                self.paths[controller] = made
            except OSError as exc:
                _remove(made.values())
                self.notes.append(f"no {controller} cgroup ({exc})")

    @property
    def memory(self) -> bool:
        return "memory" in self.paths

    @property
    def cpu(self) -> bool:
        """CPU-time accounting per run (the cpuacct hierarchy)."""
        return "cpuacct" in self.paths

    @property
    def cpu_share(self) -> bool:
        """A CPU share per run from a cpu group (the cpu hierarchy)."""
        return "cpu" in self.paths

    def prepare(self, slot: int, memory_mb: float) -> list[str]:
        """The slot's group paths for its next run: memory cap set, CPU time counter at zero."""
        joined = []
        path = self.paths.get("memory", {}).get(slot)
        if path is not None and self._set_memory(slot, path, memory_mb):
            joined.append(path)
        if self.cpu_share:
            joined.append(self.paths["cpu"][slot])
        if self.cpu:
            _write(os.path.join(self.paths["cpuacct"][slot], "cpuacct.usage"), b"0")
            joined.append(self.paths["cpuacct"][slot])
        return joined

    def cpu_usage_path(self, slot: int) -> str | None:
        """The file holding the slot's CPU time in nanoseconds (None without CPU accounting)."""
        return os.path.join(self.paths["cpuacct"][slot], "cpuacct.usage") if self.cpu else None

    def _set_memory(self, slot: int, path: str, memory_mb: float) -> bool:
        limit = int(float(memory_mb) * 1024 * 1024)
        if self.limits.get(slot) != limit:
            try:
                _write(os.path.join(path, "memory.limit_in_bytes"), str(limit).encode())
                try:  # with swap accounting, swap counts against the same cap
                    _write(os.path.join(path, "memory.memsw.limit_in_bytes"), str(limit).encode())
                except OSError:
                    pass
                self.limits[slot] = limit
            except OSError:
                return False
        return True

    def close(self) -> None:
        for made in self.paths.values():
            _remove(made.values())


def _sweep_stale(parent: str) -> None:
    # Groups left by zygotes that were killed outright.
    for name in os.listdir(parent):
        parts = name.split("-")
        if len(parts) == 3 and parts[0] == "grpokit" and parts[1].isdigit() \
                and not os.path.exists(f"/proc/{parts[1]}"):
            _remove([os.path.join(parent, name)])


def _remove(paths) -> None:
    for path in paths:
        try:
            os.rmdir(path)
        except OSError:
            pass


def _write(path: str, data: bytes) -> None:
    # os.open/os.write, not open(): in a freshly forked run Python's file objects cost
    # ~0.2 CPU-ms per join (measured), the raw calls ~0.02 ms.
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def join_cgroup(path: str) -> None:
    # "0" is the calling process, whatever PID namespace it sits in.
    _write(os.path.join(path, "cgroup.procs"), b"0")
