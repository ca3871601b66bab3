import os

import pytest
from sandbox_helpers import SECRET_NAME, SECRET_VALUE

from grpokit.sandbox import SandboxPool
from grpokit.sandbox import pool as pool_module

@pytest.fixture(scope="session")
def sandbox_pool():
    """One warm pool for the sandbox tests, also used by get_pool() (so rewards use it).

    A secret is put into this process's environment before the zygote starts: no
    sandboxed program may be able to see it.
    """
    os.environ[SECRET_NAME] = SECRET_VALUE
    pool = SandboxPool(workers=2)
    pool.isolation  # start now
    previous = pool_module._shared
    pool_module._shared = pool
    yield pool
    pool_module._shared = previous
    pool.close()
    os.environ.pop(SECRET_NAME, None)


