"""Isolated, killable, fast execution of untrusted Python programs.

    from grpokit.sandbox import Job, Limits, get_pool
    [result] = get_pool().run([Job("def f(x):\\n    return 2 * x", tests=["assert f(2) == 4"])])
    result.status, result.score, result.isolation   # 'passed', 1.0, 'full'

See isolation.py for what is isolated and how, supervisor.py for the grading
threat model, pool.py for batching and the per-step budget.
"""
from grpokit.sandbox.jobs import Job, Result
from grpokit.sandbox.limits import Limits
from grpokit.sandbox.pool import SandboxPool, SandboxUnavailable, get_pool, shutdown_pool

__all__ = ["Job", "Limits", "Result", "SandboxPool", "SandboxUnavailable", "get_pool", "shutdown_pool"]
