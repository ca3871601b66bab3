"""Helpers shared by the sandbox tests: find a pool's leftovers."""
import os
import time

from grpokit.sandbox import SandboxPool

SECRET_NAME = "GRPOKIT_TEST_SECRET"
SECRET_VALUE = "s3cr3t-6f1c2a9e-do-not-leak"


def processes_of(pool: SandboxPool, settle_s: float = 5.0) -> list[str]:
    """Every live process that belongs to the pool's runs: children of the zygote (but its
    persistent graders), or any process with a sandbox uid. A killed run's processes die just after
    its verdict comes back, and on a loaded machine that takes a moment (seen: one `while True`
    still state R at the check, gone within the teardown), so the list is read again until it is
    empty or settle_s has passed: a leaked process lives on and is still reported."""
    deadline = time.monotonic() + settle_s
    while True:
        found = _live_processes(pool)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _live_processes(pool: SandboxPool) -> list[str]:
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
    for slot_root in pool.isolation.get("slot_roots", []):  # each slot's own /dev/shm
        left += [f"{slot_root}/dev/shm/{n}" for n in os.listdir(f"{root}{slot_root}/dev/shm")]
    if pool.isolation.get("private_tmp"):
        own = os.path.basename(pool.hello["tmp"])
        for scratch in ("/tmp", "/var/tmp", "/dev/shm"):
            if os.path.isdir(root + scratch):
                # the zygote's own: its run-directory holder and the root runs chroot into
                left += [f"{scratch}/{n}" for n in os.listdir(root + scratch)
                         if n not in (own, "grpokit-root") and not n.startswith("grpokit-root-slot")]
    return left


def sysv_ipc_objects(pool: SandboxPool) -> list[str]:
    """SysV shared memory, semaphores and message queues on the host owned by a sandbox uid."""
    uids = pool.sandbox_uids
    found = []
    for kind in ("shm", "sem", "msg"):
        with open(f"/proc/sysvipc/{kind}") as fh:
            header = fh.readline().split()
            col = header.index("uid")
            for line in fh:
                fields = line.split()
                if uids is None or int(fields[col]) in uids:
                    found.append(f"{kind}: {line.strip()}")
    return found


def keys_of(pool: SandboxPool) -> list[str]:
    """Kernel keys held by a sandbox uid (/proc/key-users: 'uid: usage nkeys/nikeys ...')."""
    uids = pool.sandbox_uids
    found = []
    with open("/proc/key-users") as fh:
        for line in fh:
            uid, rest = line.split(":", 1)
            nkeys = int(rest.split()[1].split("/")[0])
            if uids is not None and int(uid) in uids and nkeys:
                found.append(line.strip())
    return found


# Run in every slot after an attack: what a later program there can still see.
SLOT_PROBE = """
import os
def leftovers():
    seen = []
    for kind in ("shm", "sem", "msg"):
        seen += open(f"/proc/sysvipc/{kind}").read().splitlines()[1:]
    seen += os.listdir(".")
    return seen
"""
