"""Where a run writes: its slot's home, and a run directory for the harness's files.

    /tmp/grpokit-sandbox-*/
      home-K/         slot K's home: the program's cwd, HOME and TMPDIR, owned by the
                      slot's uid; a tmpfs of its own (size and inode caps) where mounts
                      are available, mounted once and emptied after every run
      run-N/          root-owned, 0711: stdin-i, stdout-i, stderr-i of run N

The program cannot plant anything where the harness writes next (a directory
named stdin-1 would otherwise turn the next case into a sandbox error), and
filling its home cannot starve other runs or the zygote of space or inodes.
Removal walks directories by file descriptor, so a tree nested past PATH_MAX,
or deeper than Python's recursion limit, goes too. (A tmpfs per run would
unmount all at once, but a mount and unmount per run cost ~10% of throughput.)
"""
from __future__ import annotations

import os
import stat

from grpokit.sandbox.kernel import MS_NODEV, MS_NOSUID, mount

HOME_SIZE_MB = 512  # pages written there are charged to the run's memory cgroup too
HOME_INODES = 8192  # files + directories a run may keep in its home


def make_home(path: str, uid: int | None, root: str | None) -> bool:
    """Create a slot's home; True when it is a capped tmpfs of its own.

    `root` is the directory runs chroot into: the tmpfs is mounted where the
    chrooted program sees it (the zygote only ever empties it, through the same path).
    """
    os.mkdir(path, 0o700)
    if uid is None:
        return False
    try:
        mount("tmpfs", (root or "") + path, "tmpfs", MS_NOSUID | MS_NODEV,
              f"size={HOME_SIZE_MB}m,nr_inodes={HOME_INODES},mode=0700,uid={uid},gid={uid}")
        return True
    except OSError:
        os.chown(path, uid, uid)  # no mount namespace: a plain directory, emptied the same way
        return False


def empty_home(path: str) -> None:
    """Remove everything a run left in its home (the home itself stays)."""
    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        remove_tree(os.path.join(path, name))


def make_run_dir(workdir: str) -> None:
    os.mkdir(workdir, 0o711)


def remove_tree(path: str) -> None:
    """rm -rf that never follows links, never recurses in Python, and never builds long paths.

    Each directory is opened relative to its parent's descriptor and emptied
    depth first; the walk holds one descriptor per level it is inside.
    """
    parent, name = os.path.split(path.rstrip("/"))
    try:
        top = os.open(parent or "/", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    stack: list[tuple[int, str, int]] = []  # (parent's fd, name in the parent, own fd)
    try:
        fd = _open_dir(name, top)
        if fd is None:
            _unlink(name, top)
            return
        stack.append((top, name, fd))
        while stack:
            parent_fd, name, fd = stack[-1]
            subdir = _empty_files_of(fd)
            if subdir is not None:
                child = _open_dir(subdir, fd)
                if child is None:
                    break  # cannot go deeper (out of descriptors?): leave the rest rather than spin
                stack.append((fd, subdir, child))
                continue
            os.close(fd)
            stack.pop()
            try:
                os.rmdir(name, dir_fd=parent_fd)
            except OSError:
                pass
    finally:
        for _, _, fd in stack:
            os.close(fd)
        os.close(top)


def _open_dir(name: str, dir_fd: int) -> int | None:
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError:
        return None


def _empty_files_of(fd: int) -> str | None:
    """Unlink every non-directory in the directory `fd`; the name of one subdirectory left, if any."""
    subdir = None
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                if stat.S_ISDIR(entry.stat(follow_symlinks=False).st_mode):
                    subdir = subdir or entry.name
                else:
                    os.unlink(entry.name, dir_fd=fd)
            except OSError:
                pass
    return subdir


def _unlink(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def remove_owned_by(uid: int) -> None:
    """Delete what the run left in the shared scratch dirs (private to the zygote; the uid is the run's own)."""
    for base in ("/tmp", "/var/tmp", "/dev/shm"):
        try:
            entries = list(os.scandir(base))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid == uid:
                    remove_tree(entry.path)
            except OSError:
                pass
