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
  size and open files, a fresh working directory removed afterwards, a private
  /tmp swept after each run, stdin from /dev/null or the case's input, stdout
  and stderr capped by the file-size limit.
- grader.py / remote.py: grading the program cannot forge. Test code and every
  comparison run in a grader process the program cannot reach; the program's
  functions are called over a pipe and only plain data comes back (type-strict:
  an always-equal object or an int subclass is not data). The tests are
  spliced into a memfd the program never sees and are read only after the
  program's process exists, so they are not in its memory either. A test
  passes only if its code runs to the end in the grader; exiting early,
  killing the parent, editing frames or printing "passed" cannot help.
- supervisor.py: the per-job path for stdin/stdout cases and for machines
  without PID namespaces.

Not covered: the kernel itself (no seccomp filter; a kernel exploit escapes),
and side channels between concurrent runs (CPU, memory bandwidth).
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
