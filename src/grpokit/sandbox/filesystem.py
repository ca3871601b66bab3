"""What a run can see of the filesystem: Python made readable, everything else hidden.

Both run inside the zygote's private mount namespace (isolation.setup_zygote),
so none of these mounts is visible to, or changes, the rest of the machine.
"""
from __future__ import annotations

import os

from grpokit.sandbox.kernel import (
    MS_BIND, MS_MOVE, MS_NODEV, MS_NOSUID, MS_RDONLY, MS_REC, MS_REMOUNT, mount,
)


def _blocking_ancestor(path: str) -> str | None:
    # The first directory on the way down that others cannot traverse (e.g. /root, 0700).
    current = "/"
    for part in path.strip("/").split("/"):
        current = os.path.join(current, part)
        if not os.stat(current).st_mode & 0o001:
            return current
    return None


def expose_read_only(paths: list[str]) -> None:
    """Inside the zygote's mount namespace, make `paths` readable to unprivileged uids.

    Python is often installed under a private home (pyenv in /root). Each private
    ancestor is covered with an empty tmpfs (hiding everything else in it from
    programs) and only the needed directories are bind-mounted back, read-only.
    """
    groups: dict[str, list[str]] = {}
    for path in paths:
        blocker = _blocking_ancestor(path)
        if blocker is not None:
            groups.setdefault(blocker, []).append(path)
    for n, (blocker, wanted) in enumerate(sorted(groups.items())):
        wanted = [p for p in sorted(set(wanted)) if not any(p != q and p.startswith(q + "/") for q in wanted)]
        staged = []
        for i, path in enumerate(wanted):
            stage = f"/tmp/.grpokit-stage-{n}-{i}"
            os.mkdir(stage, 0o700)
            mount(path, stage, None, MS_BIND | MS_REC, None)
            staged.append((stage, path))
        mount("tmpfs", blocker, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
        old_umask = os.umask(0o022)
        try:
            for stage, path in staged:
                os.makedirs(path, mode=0o755, exist_ok=True)
                mount(stage, path, None, MS_MOVE, None)
                mount("none", path, None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)
                os.rmdir(stage)
        finally:
            os.umask(old_umask)


ROOT_DIR = "/var/tmp/grpokit-root"
SYSTEM_DIRS = ("/usr", "/bin", "/lib", "/lib32", "/lib64", "/libx32", "/sbin", "/etc")


def build_root(python_paths: list[str]) -> str:
    """A minimal root for runs to chroot into: system dirs and Python, read-only; /tmp; /dev; /proc.

    Without it a program could read any world-readable file, such as the
    training data with its expected outputs sitting next to the project.
    Lives under /var/tmp, a tmpfs private to the zygote's mount namespace.
    """
    root = ROOT_DIR
    os.makedirs(root, exist_ok=True)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=0755")
    old_umask = os.umask(0o022)
    try:
        def bind(source: str, read_only: bool = True, recursive: bool = True) -> None:
            target = root + source
            if os.path.islink(source):  # merged /usr: /bin -> usr/bin
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.symlink(os.readlink(source), target)
                return
            if not os.path.isdir(source):
                return
            os.makedirs(target, exist_ok=True)
            mount(source, target, None, MS_BIND | (MS_REC if recursive else 0), None)
            if read_only:
                mount("none", target, None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)

        for path in SYSTEM_DIRS:
            bind(path)
        bind("/dev", read_only=False)  # /dev/null, /dev/urandom, and the private /dev/shm
        bind("/tmp", read_only=False, recursive=False)  # the private tmpfs that holds run directories
        for path in python_paths:
            if not any(path == d or path.startswith(d + "/") for d in SYSTEM_DIRS):
                bind(path)
        os.makedirs(root + "/proc", exist_ok=True)
        mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV, "hidepid=2")
    finally:
        os.umask(old_umask)
    return root


def slot_root(root: str, slot: int) -> str:
    """The root one worker slot's runs chroot into: `root` again, with a /dev/shm of its own.

    One /dev/shm for all concurrent runs is a channel between them (a file one
    writes, another reads) and a shared quota (one fills it, a sibling's
    `multiprocessing.Lock()` fails). A recursive bind of the root shares
    everything else (read-only system dirs, the slot homes, /proc); the slot's
    own tmpfs covers /dev/shm. Mounted once; emptied after every run.
    """
    path = f"{root}-slot{slot}"
    os.makedirs(path, exist_ok=True)
    mount(root, path, None, MS_BIND | MS_REC, None)
    mount("tmpfs", path + "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,nr_inodes=4096,mode=1777")
    return path
