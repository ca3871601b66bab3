"""Isolated, killable, fast execution of untrusted Python programs.

    from grpokit.sandbox import Job, Limits, get_pool
    [result] = get_pool().run([Job("def f(x):\\n    return 2 * x", tests=["assert f(2) == 4"])])
    result.status, result.score, result.isolation   # 'passed', 1.0, 'full'

How it is built (one file per part):
- zygote.py: a fresh interpreter with a scrubbed environment, inside its own
  network and mount namespaces, that forks every run (~1 ms, not ~20 ms for a
  new interpreter). pool.py talks to it; jobs of a step run in parallel under
  an optional time budget.
- isolation.py: what the machine allows, probed once and reported (a warning,
  and `Result.isolation`). "full" = each run is the init of its own PID
  namespace (killing it kills every descendant, setsid and double forks
  included), runs as an unprivileged uid of its own (RLIMIT_NPROC becomes a
  per-run process/thread cap), chrooted into a minimal read-only root (no data
  sets, no home directories), with no network, rlimits on CPU, memory, file
  size and open files, a home directory of its slot (a tmpfs with size and inode
  caps, emptied after each run), the harness's files out of its reach, a private
  /tmp it cannot write, stdin from /dev/null or the case's input, stdout and
  stderr capped by the file-size limit. Also per run: a fresh IPC namespace
  (SysV objects die with it), a seccomp filter (syscalls.py: no socket family
  but AF_UNIX, so no AF_VSOCK; no keyrings; no io_uring) and, on Linux 6.12+, a
  Landlock scope (no abstract unix socket or signal reaches another run).
- cgroups.py / cputime.py: per worker slot (so per run), a memory cgroup (a cap
  on all the run's processes together), a cpu cgroup (the CPU is shared per
  run, not per session: 24 setsid'd spinning children get one share, not 24)
  and a cpuacct cgroup on which runs (each stdin/stdout case too) are timed:
  Limits.wall_s is CPU seconds of the run's own processes together, with a
  wall-clock backstop of 2x wall_s for a run that waits instead of computing.
  A sibling cannot push a run past its limit. Missing controllers are named in the isolation
  notes (logged), and time limits are then wall-clock.
- filesystem.py: the read-only root runs chroot into, one per slot, each with
  a /dev/shm of its own (64 MB, 4096 inodes; emptied after every run), so one
  run can neither fill another's nor leave it a file.
- rundir.py: the slot homes and run directories; removal by file descriptor,
  so trees nested past PATH_MAX go too.
- grader.py / remote.py: grading the program cannot forge. Test code and every
  comparison run in a grader process the program cannot reach; the program's
  functions are called over a pipe and only plain data comes back (type-strict:
  an always-equal object or an int subclass is not data; Counter, Fraction,
  Decimal, namedtuple and friends travel as their data and are rebuilt by the
  grader). Test code gets its own builtins and sees only the program names it
  mentions, never one that shadows a builtin or a standard-library module
  (imported modules are imported by the grader itself); every reply is checked
  against the shape its request allows, so no control-flow signal crosses; the
  deadline is enforced on the grader's reads, never by raising inside test
  code. Replies are capped (codec.MAX_REPLY) and graders run under an address-
  space limit; a grader whose address space grew past 384 MB after a job is
  replaced by a fresh one before the next, and a grader that runs out of
  memory anyway scores the job None (ours), never 0. Helpers the row's prompt
  defines (Job.helpers) run in the grader and win over the program's names,
  so redefining HumanEval/32's `poly` cannot forge a pass. The tests are
  spliced into a memfd the program never sees and are read only after the
  program's process exists, so they are not in its memory either. A test
  passes only if its code runs to the end in the grader; exiting early,
  killing the parent, editing frames or printing "passed" cannot help.
- supervisor.py: the per-job path for stdin/stdout cases and for machines
  without PID namespaces.

Not covered: the kernel itself (the seccomp filter is a short deny list, not
an allow list; a kernel exploit escapes), side channels between concurrent
runs (caches, memory bandwidth), and cgroup v2-only machines (no cgroups are
used there: memory capped per process, time limits wall-clock).
"""
from importlib import import_module

# Resolved lazily: the zygote imports grpokit.sandbox.* and every byte it loads is
# copied into each fork, so it must not pull in the pool's threading/subprocess.
_EXPORTS = {
    "Job": "jobs", "Result": "jobs", "Limits": "limits",
    "SandboxPool": "pool", "SandboxUnavailable": "pool", "get_pool": "pool", "shutdown_pool": "pool",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_module(f"grpokit.sandbox.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'grpokit.sandbox' has no attribute {name!r}")
