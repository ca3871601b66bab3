"""Helpers shared by the sandbox tests: find a pool's leftovers."""
import os

from grpokit.sandbox import SandboxPool

SECRET_NAME = "GRPOKIT_TEST_SECRET"
SECRET_VALUE = "s3cr3t-6f1c2a9e-do-not-leak"


def processes_of(pool: SandboxPool) -> list[str]:
    """Every live process that belongs to the pool's runs: children of the zygote (but its
    persistent graders), or any process with a sandbox uid."""
    zygote = pool.zygote_pid
    uids = pool.sandbox_uids
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
            fields = stat[stat.rindex(b")") + 2 :].split()
            if fields[0] == b"Z" and int(fields[1]) != zygote:
                continue  # a zombie already dead and waiting for an unrelated parent
            with open(f"/proc/{entry}/status") as fh:
                uid = next(int(line.split()[1]) for line in fh if line.startswith("Uid:"))
        except (OSError, ValueError, StopIteration):
            continue
        try:
            with open(f"/proc/{entry}/comm") as fh:
                comm = fh.read().strip()
        except OSError:
            continue
        if comm in ("grpokit-grader", "grpokit-zygote") and uid == 0 and int(fields[1]) == zygote:
            continue  # the zygote's persistent graders (trusted; a respawned one is named a moment later)
        if int(fields[1]) == zygote or (uids is not None and uid in uids):
            found.append(f"pid {entry} uid {uid} state {fields[0].decode()}")
    return found


def run_dirs(pool: SandboxPool) -> list[str]:
    """Run directories left behind, plus anything a run left in the sandbox's own scratch dirs."""
    root = f"/proc/{pool.zygote_pid}/root"
    left = [n for n in os.listdir(pool.workdir_root) if not n.startswith("home-")]
    # Each slot's home (a tmpfs seen through the root runs chroot into) must be empty again.
    run_root = root + (pool.isolation.get("root") or "")
    for slot in range(pool.workers):
        home = f"{run_root}{pool.hello['tmp']}/home-{slot}"
        left += [f"home-{slot}/{n}" for n in os.listdir(home)]
    if pool.isolation.get("private_tmp"):
        own = os.path.basename(pool.hello["tmp"])
        for scratch in ("/tmp", "/var/tmp", "/dev/shm"):
            if os.path.isdir(root + scratch):
                # the zygote's own: its run-directory holder and the root runs chroot into
                left += [f"{scratch}/{n}" for n in os.listdir(root + scratch) if n not in (own, "grpokit-root")]
    return left
