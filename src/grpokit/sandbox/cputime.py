"""A run's time limit counted in CPU seconds of its own cgroup.

Wall-clock time is shared: a sibling that spins on every core stretches an
honest run's wall time however little CPU the honest run needs. CPU time of the
run's cgroup (all its processes, live and dead, and nobody else's) is its own.
So where the machine has the cgroup (cgroups.SlotCgroups.cpu), a run fails for
time once its processes together have used `limit` CPU seconds; a wall-clock
backstop (limits.WALL_FACTOR times the limit) still ends a run that waits
instead of computing (sleep, a blocking read).
"""
from __future__ import annotations

import os


class CpuClock:
    """The CPU time a run's cgroup used, checked no more often than it could run out."""

    def __init__(self, usage_path: str, limit_s: float, start: float) -> None:
        self.path, self.limit = usage_path, float(limit_s)
        # n CPUs spend at most n CPU-seconds per second: until then no read is needed,
        # so a program that answers in milliseconds never costs a read.
        self.cpus = max(1, os.cpu_count() or 1)
        self.next_read = start + self.limit / self.cpus

    def used(self) -> float | None:
        try:
            fd = os.open(self.path, os.O_RDONLY)
            try:
                return int(os.read(fd, 64)) / 1e9
            finally:
                os.close(fd)
        except (OSError, ValueError):
            return None  # unreadable: only the wall-clock backstop applies

    def spent(self, now: float) -> bool:
        """True once the run has used its CPU limit (as of `now`, time.monotonic())."""
        if now < self.next_read:
            return False
        used = self.used()
        if used is None:
            self.next_read = float("inf")
            return False
        if used >= self.limit:
            return True
        self.next_read = now + max((self.limit - used) / self.cpus, 0.01)
        return False

    def seconds_to_next_check(self, now: float) -> float:
        return max(0.0, self.next_read - now)
