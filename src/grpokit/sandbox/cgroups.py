"""Per-slot memory cgroups (cgroup v1): a cap on a run's total memory."""
from __future__ import annotations

import os


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
