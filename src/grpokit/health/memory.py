"""How much memory this process may use, and how much it uses: the limit that kills a run.

A run dies of memory at the smallest of three limits, and each is measured differently:
- an address-space cap (`ulimit -v`, RLIMIT_AS): counts virtual memory, so the process's VmSize;
- a container's cgroup (memory.max, or memory.limit_in_bytes on cgroup v1): counts the cgroup's usage;
- the machine's RAM: counts resident memory (VmRSS) against MemTotal.
`memory_limit()` names the one that binds, `memory_metrics()` puts it in a training log, so the
health rule and the post-mortem compare like with like. Linux only; elsewhere both return None.
"""
from __future__ import annotations

import resource
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

GIB = 1024 ** 3
_UNLIMITED = 1 << 60  # cgroup v1 writes a huge number for "no limit"


@dataclass(frozen=True)
class MemoryLimit:
    limit: float        # bytes
    used: float         # bytes, as this limit counts them
    peak: float         # bytes, the process's peak as this limit counts it (VmPeak or VmHWM), or `used`
    kind: str           # "address space" | "cgroup" | "RAM"
    how: str            # where the limit was read, in words a user can act on

    @property
    def share(self) -> float:
        return self.used / self.limit if self.limit else 0.0


_STATUS_KEYS = ("VmPeak", "VmSize", "VmHWM", "VmRSS")


def _proc_status() -> dict[str, float]:
    # Read at every training log: one read of the bytes and a look at the Vm lines only is half the
    # cost of decoding and partitioning each of /proc/self/status's ~55 lines.
    out: dict[str, float] = {}
    try:
        with open("/proc/self/status", "rb") as f:
            data = f.read()
    except OSError:
        return out
    for line in data.split(b"\n"):
        if line.startswith(b"Vm"):
            key, _, rest = line.partition(b":")
            name = key.decode()
            if name in _STATUS_KEYS:
                out[name] = float(rest.split()[0]) * 1024
    return out


def _read_number(path: str) -> float | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    if not text or text == "max":
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value < _UNLIMITED else None


@lru_cache(maxsize=1)
def _cgroup_files() -> tuple[tuple[str, str, str], ...]:
    """(limit file, usage file, cgroup dir) of each memory cgroup this process is in whose files exist.
    Where the files are is fixed for the process; working it out (parsing /proc/self/cgroup, building
    paths, failing on absent ones) cost ~95 us, most of the health callback's time per log. The values in
    them are still read at every call."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return ()
    found = []
    for line in lines:
        _, controllers, rel = line.split(":", 2)
        rel = rel.lstrip("/")
        if controllers == "":  # cgroup v2
            base = Path("/sys/fs/cgroup") / rel
            names = ("memory.max", "memory.current")
        elif "memory" in controllers.split(","):
            base = Path("/sys/fs/cgroup/memory") / rel
            names = ("memory.limit_in_bytes", "memory.usage_in_bytes")
        else:
            continue
        if (base / names[0]).is_file():
            found.append((str(base / names[0]), str(base / names[1]), str(base)))
    return tuple(found)


def _cgroup_limit() -> tuple[float, float, str] | None:
    """(limit, usage, path) of this process's memory cgroup, when one is set."""
    for limit_file, usage_file, where in _cgroup_files():
        limit = _read_number(limit_file)
        if limit:
            return limit, _read_number(usage_file) or 0.0, where
    return None


@lru_cache(maxsize=1)
def _ram() -> float | None:
    return meminfo("MemTotal")  # the machine's RAM does not change during a run


def meminfo(key: str) -> float | None:
    """A /proc/meminfo field in bytes (`MemTotal`, `MemAvailable`); None off Linux or when absent."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(f"{key}:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def memory_limit() -> MemoryLimit | None:
    """The limit this process will hit first (the smallest headroom), with its use as that limit counts it."""
    status = _proc_status()
    found: list[MemoryLimit] = []
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY and soft > 0 and "VmSize" in status:
        found.append(MemoryLimit(float(soft), status["VmSize"], status.get("VmPeak", status["VmSize"]),
                                 "address space", "ulimit -v (RLIMIT_AS)"))
    cgroup = _cgroup_limit()
    if cgroup:
        limit, usage, where = cgroup
        found.append(MemoryLimit(limit, usage, usage, "cgroup", f"the memory cgroup {where}"))
    ram = _ram()
    if ram and "VmRSS" in status:
        found.append(MemoryLimit(ram, status["VmRSS"], status.get("VmHWM", status["VmRSS"]), "RAM",
                                 "the machine's RAM"))
    if not found:
        return None
    return min(found, key=lambda m: m.limit - m.used)


def memory_metrics() -> dict[str, float]:
    """memory/used_gib, memory/peak_gib and memory/limit_gib for a training log (empty off Linux)."""
    m = memory_limit()
    if m is None:
        return {}
    return {"memory/used_gib": m.used / GIB, "memory/peak_gib": m.peak / GIB, "memory/limit_gib": m.limit / GIB}


def not_resident() -> float:
    """Address space this process maps but does not hold in RAM (library code, reserved arenas), in bytes:
    it counts against `ulimit -v` though no estimate of training memory includes it."""
    status = _proc_status()
    return max(0.0, status.get("VmSize", 0.0) - status.get("VmRSS", 0.0))
