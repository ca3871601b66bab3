"""Resource limits for one sandboxed run, and their validation."""
from __future__ import annotations

from dataclasses import asdict, dataclass

# Wall-clock backstop of a run timed in CPU seconds, as a multiple of wall_s: room for a run
# that gets half a CPU on a busy machine, and a bound on how long one that sleeps holds a slot.
WALL_FACTOR = 2.0


@dataclass(frozen=True)
class Limits:
    """What one run of a program may use.

    wall_s: time limit per run (the program plus its tests; each stdin/stdout case is its
        own run). Where the machine gives each run a CPU cgroup (isolation "cpu_cgroup"),
        runs are timed in CPU seconds of all their processes together, which concurrent
        runs cannot use up for them; a run that waits instead of computing is stopped
        after WALL_FACTOR x wall_s of wall-clock time. Otherwise wall-clock seconds. Each
        process's CPU time is also capped at wall_s (RLIMIT_CPU).
    memory_mb: address-space cap per process (RLIMIT_AS).
    max_processes: processes + threads the program may have at once (RLIMIT_NPROC on a
        uid of its own).
    max_file_mb: largest file it may write, stdout and stderr included (RLIMIT_FSIZE);
        going past it kills the program.
    max_open_files: RLIMIT_NOFILE.
    total_s: wall-clock seconds for all stdin/stdout cases of one program together
        (default: 3 x wall_s); past it the remaining cases are not run and the program
        scores 0, so a program that sleeps just under wall_s per case cannot hold a
        worker for cases x wall_s.
    """

    wall_s: float = 5.0
    memory_mb: int = 1024
    max_processes: int = 32
    max_file_mb: float = 8.0
    max_open_files: int = 64
    total_s: float | None = None

    def __post_init__(self) -> None:
        checks = [
            (self.wall_s > 0, "wall_s must be > 0 seconds (e.g. 5.0)"),
            (self.memory_mb >= 64, "memory_mb must be >= 64 (a Python process needs ~30 MB to start)"),
            (self.max_processes >= 1, "max_processes must be >= 1"),
            (self.max_file_mb > 0, "max_file_mb must be > 0"),
            (self.max_open_files >= 16, "max_open_files must be >= 16"),
            (self.total_s is None or self.total_s >= self.wall_s, "total_s must be None or >= wall_s"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(f"sandbox limits: {message}")

    def as_dict(self) -> dict:
        return asdict(self)
