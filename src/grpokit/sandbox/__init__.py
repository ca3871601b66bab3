"""Isolated, killable, fast execution of untrusted Python programs.

    from grpokit.sandbox import Job, Limits, get_pool
    [result] = get_pool().run([Job("def f(x):\\n    return 2 * x", tests=["assert f(2) == 4"])])
    result.status, result.score, result.isolation   # 'passed', 1.0, 'full'

See isolation.py for what is isolated and how, supervisor.py for the grading
threat model, pool.py for batching and the per-step budget.
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
