import pytest

from grpokit.sandbox import SandboxPool
from grpokit.sandbox import pool as pool_module


@pytest.fixture(scope="session")
def sandbox_pool():
    """One warm pool for the tool tests, also the one get_pool() returns (so the python tool uses it)."""
    pool = SandboxPool(workers=2)
    pool.isolation  # start now
    previous = pool_module._shared
    pool_module._shared = pool
    yield pool
    pool_module._shared = previous
    pool.close()
